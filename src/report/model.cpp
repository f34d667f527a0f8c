// The kernel Model as `calc` and `table` print it (JSON, text, markdown): the report layer.
#include "cmalign/internal/kernel/report.hpp"

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/kernel/default_cma.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/report/report.hpp"

namespace cmalign::kernel {

using nlohmann::json;

namespace {

const char* selection_name(DefaultCmaConfig::Selection s) {
    switch (s) {
    case DefaultCmaConfig::Selection::mbytes:
        return "mbytes";
    case DefaultCmaConfig::Selection::percentage:
        return "percentage";
    case DefaultCmaConfig::Selection::min:
        return "min";
    case DefaultCmaConfig::Selection::max:
        return "max";
    }
    return "mbytes";
}

// The default CMA area as far as the configuration says (no board: no RAM, no cma=).
json default_cma_json(const Model& m) {
    if (!m.default_cma) return nullptr;
    const auto& d = *m.default_cma;
    const auto size = default_cma_config_size(m, std::nullopt);
    json j;
    j["selection"] = selection_name(d.selection);
    j["mbytes"] = d.mbytes;
    j["percentage"] = d.percentage;
    j["size_bytes"] = size ? json(*size) : json(nullptr);
    j["aligned_size_bytes"] = size && m.cma_min_alignment_bytes
                                  ? json(*round_up(*size, *m.cma_min_alignment_bytes))
                                  : json(nullptr);
    const auto& row = default_cma_limit_row(m.arch, m.version);
    j["limit_rule"] = default_cma_limit_rule(m);
    j["limit_source"] = fmt::format("{} ({})", row.source, row.versions.str());
    j["placement_source"] = default_cma_rules(m.version).source;
    return j;
}

std::string default_cma_text(const Model& m) {
    if (!m.default_cma) return "none (no CONFIG_CMA / CONFIG_DMA_CMA)";
    const auto size = default_cma_config_size(m, std::nullopt);
    if (!size) return fmt::format("{}, decided at boot from the RAM", default_cma_config_words(m));
    if (*size == 0)
        return fmt::format("none ({}; cma= can ask for one)", default_cma_config_words(m));
    std::string out = fmt::format("{} ({})", format_size(*size), default_cma_config_words(m));
    if (m.cma_min_alignment_bytes) {
        const auto aligned = round_up(*size, *m.cma_min_alignment_bytes);
        if (aligned && *aligned != *size)
            out += fmt::format(", {} after alignment", format_size(*aligned));
    }
    return out;
}

} // namespace

json to_json(const Model& m) {
    json j;
    j["kernel_version"] = m.version.str();
    j["arch"] = to_string(m.arch);
    j["page_size"] = m.page_size;
    j["max_page_order"] = m.max_page_order;
    j["pageblock_order"] = m.pageblock_order ? json(*m.pageblock_order) : json(nullptr);
    if (!m.pageblock_order && m.pageblock_order_range)
        j["pageblock_order_range"] = {m.pageblock_order_range->first,
                                      m.pageblock_order_range->second};
    j["cma_min_alignment_bytes"] =
        m.cma_min_alignment_bytes ? json(*m.cma_min_alignment_bytes) : json(nullptr);
    j["default_cma_area"] = default_cma_json(m);
    json steps = json::array();
    for (const auto& s : m.derivation) {
        json inputs = json::array();
        for (const auto& in : s.inputs) {
            inputs.push_back({{"symbol", in.symbol},
                              {"value", in.value},
                              {"file", in.where.file.empty() ? json(nullptr) : json(in.where.file)},
                              // docs/json.md fixes these four keys; Kconfig's reason (decided_by)
                              // is in the text rendering only.
                              {"line", in.where.line > 0 ? json(in.where.line) : json(nullptr)}});
        }
        steps.push_back({{"quantity", s.quantity},
                         {"value", s.value ? json(*s.value) : json(nullptr)},
                         {"rule", s.rule},
                         {"source", s.source},
                         {"inputs", std::move(inputs)}});
    }
    j["derivation"] = std::move(steps);
    j["assumptions"] = m.assumptions;
    j["diagnostics"] = report::diagnostics_json(m.diagnostics, report::DiagnosticKeys::config);
    return j;
}

json to_json(const std::vector<TableRow>& rows) {
    json out = json::array();
    for (const auto& r : rows) {
        json j;
        j["page_size"] = r.page_size;
        j["max_page_order"] = r.max_page_order;
        j["max_order_is_largest"] = r.max_order_is_largest;
        j["pageblock_order"] = r.pageblock_order ? json(*r.pageblock_order) : json(nullptr);
        if (!r.pageblock_order && r.pageblock_order_range)
            j["pageblock_order_range"] = {r.pageblock_order_range->first,
                                          r.pageblock_order_range->second};
        j["cma_min_alignment_bytes"] =
            r.cma_min_alignment_bytes ? json(*r.cma_min_alignment_bytes) : json(nullptr);
        j["hugetlb"] = r.hugetlb;
        j["thp"] = r.thp;
        j["page_block_max_order"] =
            r.page_block_max_order ? json(*r.page_block_max_order) : json(nullptr);
        out.push_back(std::move(j));
    }
    return json{{"rows", std::move(out)}};
}

namespace {

std::string value_text(const Step& s) {
    if (!s.value) return "decided at boot";
    if (s.quantity == "page_size" || s.quantity == "cma_min_alignment_bytes" ||
        s.quantity == "default_cma_size")
        return fmt::format("{} ({})", *s.value,
                           format_size(static_cast<std::uint64_t>(*s.value), ByteUnit::bytes));
    if (s.quantity == "hugetlb" || s.quantity == "thp") return *s.value ? "yes" : "no";
    return std::to_string(*s.value);
}

std::string input_text(const StepInput& in) {
    if (!in.where.known()) return fmt::format("{}={} (assumed default)", in.symbol, in.value);
    if (!in.decided_by.empty())
        return fmt::format("{}={} ({}, Kconfig {}:{})", in.symbol, in.value, in.decided_by,
                           in.where.file, in.where.line);
    if (in.where.line > 0)
        return fmt::format("{}={} ({}:{})", in.symbol, in.value, in.where.file, in.where.line);
    return fmt::format("{}={} ({})", in.symbol, in.value, in.where.file);
}

std::string alignment_text(const std::optional<std::uint64_t>& a) {
    return a ? fmt::format("{} ({:#x}, {})", *a, *a, format_size(*a, ByteUnit::bytes))
             : "decided at boot";
}

std::string pageblock_text(const std::optional<int>& order,
                           const std::optional<std::pair<int, int>>& range) {
    if (order) return std::to_string(*order);
    if (range) return fmt::format("{}..{} (decided at boot)", range->first, range->second);
    return "decided at boot";
}

} // namespace

std::string render_text(const Model& m) {
    std::string out;
    out += fmt::format("kernel {} {}\n", to_string(m.arch), m.version.str());
    out += fmt::format("  page size:               {} ({})\n", m.page_size,
                       format_size(m.page_size, ByteUnit::bytes));
    out += fmt::format("  max page order:          {} (inclusive)\n", m.max_page_order);
    out += fmt::format("  pageblock_order:         {}\n",
                       pageblock_text(m.pageblock_order, m.pageblock_order_range));
    out +=
        fmt::format("  CMA_MIN_ALIGNMENT_BYTES: {}\n", alignment_text(m.cma_min_alignment_bytes));
    out += fmt::format("  default CMA area:        {}\n", default_cma_text(m));
    if (m.default_cma) {
        const auto& row = default_cma_limit_row(m.arch, m.version);
        out += fmt::format("    placed below:          {} ({}; {}); cma= overrides the size\n",
                           default_cma_limit_rule(m), row.source, row.versions.str());
    }
    out += "\nderivation:\n";
    for (const auto& s : m.derivation) {
        out += fmt::format("  {} = {}\n", s.quantity, value_text(s));
        out += fmt::format("      rule:   {}\n", s.rule);
        out += fmt::format("      source: {}\n", s.source);
        for (const auto& in : s.inputs)
            out += fmt::format("      from:   {}\n", input_text(in));
    }
    if (!m.assumptions.empty()) {
        out += "\nassumptions:\n";
        for (const auto& a : m.assumptions)
            out += fmt::format("  - {}\n", a);
    }
    if (!m.diagnostics.empty()) {
        out += "\ndiagnostics:\n";
        for (const auto& d : m.diagnostics)
            out += fmt::format("  {}\n", format_gcc(d));
    }
    return out;
}

namespace {

struct Cells {
    std::string page, max_order, huge, block_option, pageblock, alignment;
};

Cells cells(const TableRow& r) {
    Cells c;
    c.page = format_size(r.page_size, ByteUnit::bytes);
    c.max_order = fmt::format("{}{}", r.max_page_order, r.max_order_is_largest ? " (largest)" : "");
    c.huge = r.hugetlb ? "HugeTLB" : r.thp ? "THP only" : "neither";
    c.block_option = r.page_block_max_order ? std::to_string(*r.page_block_max_order) : "-";
    c.pageblock = pageblock_text(r.pageblock_order, r.pageblock_order_range);
    c.alignment = r.cma_min_alignment_bytes
                      ? format_size(*r.cma_min_alignment_bytes, ByteUnit::bytes)
                      : "at boot";
    return c;
}

} // namespace

std::string render_table_text(const std::vector<TableRow>& rows, Arch arch,
                              const KernelVersion& version) {
    std::string out = fmt::format("CMA alignment for {} {}\n", to_string(arch), version.str());
    out += fmt::format("{:<9} {:<14} {:<9} {:<16} {:<24} {}\n", "page", "max order", "huge",
                       "page block opt", "pageblock_order", "CMA alignment");
    for (const auto& r : rows) {
        auto c = cells(r);
        out += fmt::format("{:<9} {:<14} {:<9} {:<16} {:<24} {}\n", c.page, c.max_order, c.huge,
                           c.block_option, c.pageblock, c.alignment);
    }
    return out;
}

std::string render_table_markdown(const std::vector<TableRow>& rows, Arch arch,
                                  const KernelVersion& version) {
    std::string out =
        fmt::format("### CMA alignment for {} {}\n\n", to_string(arch), version.str());
    out += "| page size | max order | huge pages | PAGE_BLOCK_(MAX_)ORDER | pageblock_order | "
           "CMA alignment |\n";
    out += "|---|---|---|---|---|---|\n";
    for (const auto& r : rows) {
        auto c = cells(r);
        out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", c.page, c.max_order, c.huge,
                           c.block_option, c.pageblock, c.alignment);
    }
    return out;
}

} // namespace cmalign::kernel
