// `cmalign pcp`'s and `cmalign heap`'s JSON and text output.
#include "cmalign/internal/report/tune_report.hpp"

#include <fmt/format.h>

#include "cmalign/core/size.hpp"

namespace cmalign::report {

using nlohmann::json;

namespace {

void add_zone_json(json& j, const calc::ZoneResult& z, bool autotuned) {
    j["managed_pages"] = z.managed_pages;
    j["batch"] = z.batch;
    j["high_min"] = z.high_min;
    j["high_max"] = z.high_max;
    if (!autotuned) j["high"] = z.high_min;
    j["watermarks"] = {{"min", z.watermarks.min},
                       {"low", z.watermarks.low},
                       {"high", z.watermarks.high},
                       {"promo", z.watermarks.promo}};
    j["lowmem_reserve"] = z.lowmem_reserve;
    j["max_pages_per_lock"] = z.max_pages_per_lock;
    j["max_pages_high_order_free"] = z.max_pages_high_order_free;
}

} // namespace

json pcp_json(const calc::PcpAnalysis& o, const std::optional<kernel::Model>& model) {
    const auto& r = o.result;
    const auto* top = r.largest_zone();
    json j;
    j["kernel_version"] = model ? model->version.str() : "";
    j["arch"] = model ? kernel::to_string(model->arch) : "";
    j["page_size"] = o.input.page_size;
    j["pageblock_order"] = o.input.pageblock_order;
    j["thp"] = calc::to_string(o.input.thp);
    j["cpus_per_node"] = o.input.cpus_per_node;
    j["memory_source"] = o.memory_source;
    j["scale_max"] = r.scale_max;
    j["high_autotuned"] = r.high_autotuned;
    if (top) {
        j["zone"] = calc::zone_name(top->type);
        add_zone_json(j, *top, r.high_autotuned);
    }
    j["min_free_kbytes"] = r.min_free_kbytes;
    j["min_free_kbytes_sqrt"] = r.min_free_kbytes_sqrt;
    j["thp_recommended_min_free_kbytes"] =
        r.thp_recommended_kbytes ? json(*r.thp_recommended_kbytes) : json(nullptr);
    j["thp_raised"] = r.thp_raised;
    j["watermark_scale_factor"] = r.watermark_scale_factor;
    j["lowmem_reserve_ratio"] = r.lowmem_reserve_ratio;
    json rows = json::array();
    for (const auto& s : r.by_scale)
        rows.push_back({{"scale", s.scale},
                        {"max_pages_per_lock", s.max_pages_per_lock},
                        {"max_bytes_per_lock", s.max_bytes_per_lock}});
    j["by_scale"] = rows;
    json zones = json::array();
    for (const auto& z : r.zones) {
        if (!z.populated) continue;
        json zj;
        zj["node"] = z.node;
        zj["name"] = calc::zone_name(z.type);
        add_zone_json(zj, z, r.high_autotuned);
        zones.push_back(std::move(zj));
    }
    j["zones"] = zones;
    json sysctls = json::array();
    for (const auto& s : o.sysctls)
        sysctls.push_back({{"name", s.name},
                           {"value", s.value},
                           {"kernel_default", s.kernel_default},
                           {"differs", s.differs}});
    j["sysctls"] = sysctls;
    if (o.bootargs) {
        json b;
        b["text"] = *o.bootargs;
        const auto& bp = *o.boot;
        if (bp.pcp_batch_scale_max_text)
            b["pcp_batch_scale_max"] = {
                {"text", *bp.pcp_batch_scale_max_text},
                {"value", bp.pcp_batch_scale_max ? json(*bp.pcp_batch_scale_max) : json(nullptr)},
                {"upstream", false}};
        if (bp.cma)
            b["cma"] = {{"text", bp.cma->text},
                        {"size", bp.cma->size},
                        {"base", bp.cma->base ? json(*bp.cma->base) : json(nullptr)},
                        {"limit", bp.cma->limit ? json(*bp.cma->limit) : json(nullptr)}};
        if (bp.cma_pernuma_text)
            b["cma_pernuma"] = {{"text", *bp.cma_pernuma_text}, {"size", bp.cma_pernuma}};
        if (bp.numa_cma_text) {
            json entries = json::array();
            for (const auto& e : bp.numa_cma)
                entries.push_back({{"node", e.node}, {"size", e.size}});
            b["numa_cma"] = {{"text", *bp.numa_cma_text},
                             {"entries", entries},
                             {"ignored", bp.numa_cma_ignored}};
        }
        if (bp.transparent_hugepage) b["transparent_hugepage"] = *bp.transparent_hugepage;
        j["bootargs"] = b;
    } else {
        j["bootargs"] = nullptr;
    }
    if (o.zoneinfo) {
        json diffs = json::array();
        for (const auto& d : o.differences) {
            json row = {{"node", d.node},         {"zone", d.zone},         {"field", d.field},
                        {"reported", d.reported}, {"computed", d.computed}, {"file", d.where.file},
                        {"line", d.where.line}};
            if (d.computed_max) row["computed_max"] = *d.computed_max; // high: a range
            diffs.push_back(std::move(row));
        }
        j["comparison"] = {{"file", o.zoneinfo->path},
                           {"matches", o.differences.empty()},
                           {"differences", diffs},
                           {"not_compared", o.not_compared}};
    }
    json steps = json::array();
    for (const auto& s : r.derivation)
        steps.push_back(
            {{"quantity", s.quantity}, {"value", s.value}, {"rule", s.rule}, {"source", s.source}});
    j["derivation"] = steps;
    j["assumptions"] = r.assumptions;
    j["notes"] = o.notes;
    return j;
}

std::string pcp_text(const calc::PcpAnalysis& o, const std::optional<kernel::Model>& model) {
    const auto& r = o.result;
    std::string s;
    auto line = [&](std::string text) { s += text + "\n"; };
    line(fmt::format("kernel {} {}, {} pages, pageblock order {}, THP {}, {} CPU(s) per node",
                     model ? kernel::to_string(model->arch) : "", model ? model->version.str() : "",
                     format_size(o.input.page_size), o.input.pageblock_order,
                     calc::to_string(o.input.thp), o.input.cpus_per_node));
    line(fmt::format("memory from {}", o.memory_source));
    line(fmt::format(
        "min_free_kbytes {} (sqrt rule {}{}{})", r.min_free_kbytes, r.min_free_kbytes_sqrt,
        r.thp_recommended_kbytes ? fmt::format(", THP recommendation {}", *r.thp_recommended_kbytes)
                                 : "",
        r.thp_raised ? ", raised by khugepaged" : ""));
    line(fmt::format("PCP_BATCH_SCALE_MAX {}; watermark_scale_factor {}", r.scale_max,
                     r.watermark_scale_factor));
    line("");
    std::string high_head = r.high_autotuned ? fmt::format("{:>9} {:>9}", "high_min", "high_max")
                                             : fmt::format("{:>9}", "high");
    line(fmt::format("{:<4} {:<8} {:>10} {:>6} {} {:>9} {:>9} {:>9} {:>10}  {}", "node", "zone",
                     "managed", "batch", high_head, "wmark_min", "wmark_low", "wmark_hi",
                     "pages/lock", "lowmem_reserve"));
    for (const auto& z : r.zones) {
        if (!z.populated) continue;
        std::string high = r.high_autotuned ? fmt::format("{:>9} {:>9}", z.high_min, z.high_max)
                                            : fmt::format("{:>9}", z.high_min);
        std::string reserve;
        for (auto v : z.lowmem_reserve)
            reserve += (reserve.empty() ? "" : ", ") + std::to_string(v);
        line(fmt::format("{:<4} {:<8} {:>10} {:>6} {} {:>9} {:>9} {:>9} {:>10}  ({})", z.node,
                         calc::zone_name(z.type), z.managed_pages, z.batch, high, z.watermarks.min,
                         z.watermarks.low, z.watermarks.high, z.max_pages_per_lock, reserve));
    }
    if (const auto* top = r.largest_zone()) {
        line("");
        line(fmt::format("pages per zone-lock hold in {} (batch {} << scale):",
                         calc::zone_name(top->type), top->batch));
        for (const auto& row : r.by_scale)
            line(fmt::format("  scale {}: {:>6} pages {:>12}{}", row.scale, row.max_pages_per_lock,
                             format_size(row.max_bytes_per_lock),
                             row.scale == r.scale_max ? "  <- PCP_BATCH_SCALE_MAX" : ""));
        if (!top->high_order_free_capped)
            line(fmt::format("  a batch free of high-order pages is not bounded by the scale on "
                             "this kernel: nr_pcp_free() returns the whole list, up to {} pages "
                             "(high) under one lock hold",
                             top->max_pages_high_order_free));
    }
    if (o.zoneinfo) {
        line("");
        if (o.differences.empty()) {
            line(fmt::format("{}: every batch, high limit, watermark and protection matches",
                             o.zoneinfo->path));
        } else {
            line(fmt::format("{}: {} difference(s) from the computation:", o.zoneinfo->path,
                             o.differences.size()));
            for (const auto& d : o.differences)
                line(fmt::format("  {}:{}: node {} {} {}: file {}, computed {}", d.where.file,
                                 d.where.line, d.node, d.zone, d.field, d.reported,
                                 d.computed_max
                                     ? fmt::format("between {} and {}", d.computed, *d.computed_max)
                                     : std::to_string(d.computed)));
        }
        for (const auto& what : o.not_compared)
            line(fmt::format("  not compared: {}", what));
    }
    for (const auto& sv : o.sysctls)
        line(fmt::format("{} = {} (kernel's own value {}){}", sv.name, sv.value, sv.kernel_default,
                         sv.differs ? ": CHANGED on the board" : ""));
    if (!o.notes.empty()) {
        line("");
        for (const auto& n : o.notes)
            line("note: " + n);
    }
    line("");
    line("how:");
    for (const auto& st : r.derivation)
        line(fmt::format("  {} = {}: {} [{}]", st.quantity, st.value, st.rule, st.source));
    for (const auto& a : r.assumptions)
        line("  assumed: " + a);
    return s;
}

json heap_json(const calc::HeapPlan& p, const kernel::Model& model) {
    json j;
    j["kernel_version"] = model.version.str();
    j["page_size"] = p.page_size;
    j["requested_bytes"] = p.requested;
    j["total_bytes"] = p.total_bytes;
    j["orders"] = p.orders;
    json chunks = json::array();
    for (const auto& c : p.chunks)
        chunks.push_back({{"order", c.order},
                          {"bytes", c.bytes},
                          {"count", c.count},
                          {"reclaim", c.reclaim},
                          {"available", c.available}});
    j["chunks"] = chunks;
    j["sg_entries"] = p.sg_entries;
    j["notes"] = p.notes;
    j["sources"] = p.sources;
    j["assumptions"] = model.assumptions;
    return j;
}

std::string heap_text(const calc::HeapPlan& p, const kernel::Model& model) {
    std::string s =
        fmt::format("dma-buf system heap, kernel {} {}, {} pages: {} requested, {} "
                    "allocated in {} sg entries\n",
                    kernel::to_string(model.arch), model.version.str(), format_size(p.page_size),
                    format_size(p.requested), format_size(p.total_bytes), p.sg_entries);
    s += fmt::format("{:>5} {:>12} {:>8} {:>8}\n", "order", "chunk", "count", "reclaim");
    for (const auto& c : p.chunks)
        s += fmt::format("{:>5} {:>12} {:>8} {:>8}{}\n", c.order, format_size(c.bytes), c.count,
                         c.reclaim ? "may" : "never", c.available ? "" : "  (unavailable)");
    for (const auto& n : p.notes)
        s += "note: " + n + "\n";
    for (const auto& src : p.sources)
        s += "source: " + src + "\n";
    return s;
}

} // namespace cmalign::report
