// The check registry and runner: the checks in the order they run, -W/-E switches as dtc has
// them, prerequisites, and how reservations are read for a kernel.
#include <algorithm>

#include <fmt/format.h>

#include "cmalign/internal/kernel/reserved_mem.hpp"
#include "internal.hpp"

namespace cmalign::checks {

void Findings::add(Severity severity, Location where, std::string node, std::string message,
                   std::vector<FixHint> fix) {
    Diagnostic d;
    d.severity = severity;
    d.where = std::move(where);
    d.node = std::move(node);
    d.message = std::move(message);
    d.fix = std::move(fix);
    items_.push_back(std::move(d));
}

AlignmentFacts alignment_facts(const kernel::Model& model) {
    AlignmentFacts facts;
    if (model.cma_min_alignment_bytes) {
        facts.exact = model.cma_min_alignment_bytes;
    } else if (model.pageblock_order_range && model.page_size > 0) {
        facts.smallest = model.page_size << model.pageblock_order_range->first;
        facts.largest = model.page_size << model.pageblock_order_range->second;
    }
    return facts;
}

const Prerequisite reserved_memory_well_formed{
    "reserved-memory well formed", [](const Context& ctx) {
        return !ctx.reservations.has_reserved_memory || ctx.reservations.rm_format_ok;
    }};

namespace {

// The order checks run in (and their findings are listed in), as dtc's check_table[].
const std::vector<CheckInfo>& in_order() {
    using namespace entries;
    static const std::vector<CheckInfo> all = {
        reserved_memory_format,
        property_length,
        zero_size,
        cell_overflow,
        alignment_cells,
        alignment_not_power_of_2,
        cma_disabled,
        reusable_no_map,
        coherent_no_map,
        restricted_pool,
        cma_base_alignment,
        cma_size_alignment,
        cma_alloc_ranges,
        dynamic_no_room,
        cma_default,
        cma_areas,
        arm_dma_remap,
        reserved_regions_limit,
        cmdline_cma,
        cma_default_area,
        cmdline_params,
        overlap,
        outside_memory,
        outside_memory_device,
        arm_section_split,
    };
    return all;
}

Severity max_severity(Severity a, Severity b) {
    return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

} // namespace

std::span<const CheckInfo> registry() {
    return in_order();
}

const CheckInfo* find_check(std::string_view name) {
    for (const auto& c : in_order())
        if (name == c.name) return &c;
    return nullptr;
}

std::optional<Switch> parse_switch(char flag, std::string_view value, Diagnostics& diags) {
    bool negative = value.starts_with("no-");
    std::string_view name = negative ? value.substr(3) : value;
    if (flag != 'W' && flag != 'E') {
        diags.error({}, fmt::format("unknown check switch -{}{}", flag, value));
        return std::nullopt;
    }
    if (name != "all" && find_check(name) == nullptr) {
        // A check literally called "no-…" does not exist, so the prefix is unambiguous.
        diags.error({}, fmt::format("unknown check \"{}\" in -{}{}", name, flag, value));
        return std::nullopt;
    }
    Switch s;
    s.check = std::string(name);
    if (flag == 'W')
        s.kind = negative ? Switch::Kind::disable_warning : Switch::Kind::enable_warning;
    else
        s.kind = negative ? Switch::Kind::disable_error : Switch::Kind::enable_error;
    return s;
}

Level level_of(const CheckInfo& check, const Options& options) {
    // dtc keeps two flags per check (warn, error); the check reports if either is set and at
    // error level if `error` is set.
    bool warn = check.enabled_by_default;
    bool error = false;
    for (const auto& s : options.switches) {
        if (s.check != "all" && s.check != check.name) continue;
        switch (s.kind) {
        case Switch::Kind::enable_warning:
            warn = true;
            break;
        case Switch::Kind::disable_warning:
            warn = false;
            break;
        case Switch::Kind::enable_error:
            error = true;
            break;
        case Switch::Kind::disable_error:
            error = false;
            break;
        }
    }
    return Level{warn || error, error};
}

std::size_t Result::count(Severity s) const {
    return static_cast<std::size_t>(
        std::count_if(diagnostics.begin(), diagnostics.end(),
                      [s](const Diagnostic& d) { return d.severity == s; }));
}

bool Result::failed(bool werror) const {
    return count(Severity::error) > 0 || (werror && count(Severity::warning) > 0);
}

Result run(reserved::Reservations reservations, const kernel::Model& model,
           const Options& options) {
    Result result;
    result.reservations = std::move(reservations);
    const auto early = options.early_reservations
                           ? *options.early_reservations
                           : assumed_early_reservations(result.reservations, model);
    Context ctx{result.reservations, model, early};
    result.default_area = default_area(ctx);
    for (const auto& check : in_order()) {
        auto level = level_of(check, options);
        if (!level.enabled) continue;
        if (check.prerequisite && !check.prerequisite->holds(ctx)) continue;
        Findings findings;
        check.function(ctx, findings);
        for (auto& d : findings.items()) {
            d.check = check.name;
            d.input = result.reservations.input;
            if (!d.where.known()) d.where = Location{d.input, 0, 0}; // always located

            if (level.promote_to_error) d.severity = max_severity(d.severity, Severity::error);
            result.diagnostics.push_back(std::move(d));
        }
    }
    return result;
}

reserved::ReadOptions read_options(const kernel::Model& model,
                                   std::optional<std::string> bootargs) {
    reserved::ReadOptions out;
    out.bootargs = std::move(bootargs);
    out.cma_enabled = model.cma;
    out.dma_cma_enabled = model.dma_cma;
    out.addr_size_helpers = kernel::reserved_mem_rules(model.version).addr_size_helpers;
    out.first_reg_tuple_only = kernel::reserved_mem_rules(model.version).first_reg_tuple_only;
    return out;
}

Result run(const dt::Tree& tree, const kernel::Model& model, const Options& options) {
    return run(reserved::read(tree, read_options(model, options.bootargs)), model, options);
}

} // namespace cmalign::checks
