// `cmalign heap`: the dma-buf system heap's chunk plan for one allocation, as JSON and text.
#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/tune.hpp"

namespace cmalign {

using nlohmann::json;

HeapOutcome run_heap(const HeapRequest& request) {
    HeapOutcome out;
    out.model = load_model(request.config, out.diags);
    if (!out.model || out.diags.has_errors()) return out;
    auto size = parse_size(request.size);
    if (!size) {
        out.diags.error({}, fmt::format("--size {}: expected a size (4194304, 0x400000, 4M, "
                                        "4MiB, SZ_4M)",
                                        request.size));
        return out;
    }
    calc::HeapInput in;
    in.version = out.model->version;
    in.page_size = out.model->page_size;
    in.max_page_order = out.model->max_page_order;
    in.size = *size;
    in.available_order = request.available_order;
    std::string error;
    out.plan = calc::compute_heap(in, error);
    if (!out.plan) out.diags.error({}, error);
    return out;
}

json heap_json(const HeapOutcome& o) {
    const auto& p = *o.plan;
    json j;
    j["kernel_version"] = o.model->version.str();
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
    j["assumptions"] = o.model->assumptions;
    return j;
}

std::string heap_text(const HeapOutcome& o) {
    const auto& p = *o.plan;
    std::string s = fmt::format("dma-buf system heap, kernel {} {}, {} pages: {} requested, {} "
                                "allocated in {} sg entries\n",
                                kernel::to_string(o.model->arch), o.model->version.str(),
                                format_size(p.page_size), format_size(p.requested),
                                format_size(p.total_bytes), p.sg_entries);
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

} // namespace cmalign
