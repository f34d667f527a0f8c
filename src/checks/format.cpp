// The checks of /reserved-memory's shape: root cells, property lengths, empty, too wide and
// misaligned-by-spelling values, and the kernel's limit on the number of nodes.
#include "internal.hpp"

#include <bit>

#include <fmt/format.h>

#include "cmalign/internal/core/amount.hpp"
#include "cmalign/internal/kernel/reserved_mem.hpp"

namespace cmalign::checks::entries {

using reserved::Kind;
using reserved::Region;

// reserved-memory-format: __reserved_mem_check_root() (fdt.c in 6.1, of_reserved_mem.c later).

void check_reserved_memory_format(const Context& ctx, Findings& out) {
    const auto& rs = ctx.reservations;
    if (!rs.has_reserved_memory || rs.rm_format_ok) return;
    std::vector<std::string> problems;
    Location where = rs.reserved_memory_where;
    auto root_cells = [](std::uint32_t value, bool defaulted) {
        return defaulted ? fmt::format("{} (the default: the root has none)", value)
                         : fmt::format("{}", value);
    };
    if (!rs.rm_address_cells) {
        problems.push_back("#address-cells is missing");
    } else if (*rs.rm_address_cells != rs.address_cells) {
        problems.push_back(fmt::format("#address-cells is {}, the root's is {}",
                                       *rs.rm_address_cells,
                                       root_cells(rs.address_cells, rs.address_cells_defaulted)));
        if (rs.rm_address_cells_where.known()) where = rs.rm_address_cells_where;
    }
    if (!rs.rm_size_cells) {
        problems.push_back("#size-cells is missing");
    } else if (*rs.rm_size_cells != rs.size_cells) {
        problems.push_back(fmt::format("#size-cells is {}, the root's is {}", *rs.rm_size_cells,
                                       root_cells(rs.size_cells, rs.size_cells_defaulted)));
        if (rs.rm_size_cells_where.known() && where == rs.reserved_memory_where)
            where = rs.rm_size_cells_where;
    }
    if (!rs.rm_has_ranges) problems.push_back("`ranges` is missing");
    std::string joined;
    for (const auto& p : problems)
        joined += (joined.empty() ? "" : ", ") + p;
    std::size_t lost = rs.regions.size();
    out.add(
        Severity::error, where, rs.reserved_memory_path,
        fmt::format("{}: {} prints \"{}Reserved memory: unsupported node format, ignoring\" and "
                    "ignores all {} reservation{} under it",
                    rs.reserved_memory_path + ": " + joined, kernel_name(ctx.model),
                    parse_prefix(ctx.model), lost, lost == 1 ? "" : "s"));
}

extern const CheckInfo reserved_memory_format{
    "reserved-memory-format", Severity::error, true,
    "/reserved-memory must have #address-cells/#size-cells equal to the root's and `ranges`, "
    "else the kernel ignores every reservation",
    check_reserved_memory_format};

// property-length: __reserved_mem_reserve_reg(), fdt_scan_reserved_mem_reg_nodes(),
// __reserved_mem_alloc_size() (6.1–6.12; from ~6.19 a bad reg/alloc-ranges is silently absent).

void check_property_length(const Context& ctx, Findings& out) {
    const auto& rs = ctx.reservations;
    const auto& m = ctx.model;
    for (const auto& r : rs.regions) {
        if (r.disabled) continue; // of_fdt_device_is_available() is tested first
        for (const auto& p : r.length_problems) {
            std::string expected =
                p.tuple_multiple
                    ? fmt::format("a non-zero multiple of {} bytes ((#address-cells {} + "
                                  "#size-cells {}) cells)",
                                  p.expected, rs.address_cells, rs.size_cells)
                    : fmt::format("exactly {} bytes ({} cell{} of the root's {})", p.expected,
                                  p.expected / 4, p.expected == 4 ? "" : "s",
                                  p.property == "alignment" ? "#address-cells" : "#size-cells");
            std::string kernel_says;
            Severity severity = Severity::error;
            if (p.ignored) {
                // ≥ v6.19 [likely]: of_flat_dt_get_addr_size_prop() treats it as absent, silently.
                std::string then;
                if (p.property == "alloc-ranges")
                    then = "so the pool is allocated anywhere in memory";
                else if (r.dynamic)
                    then = "so the node is placed dynamically by its `size`";
                else
                    then = "so nothing is reserved";
                kernel_says = fmt::format("{} treats `{}` as absent without a message, {}",
                                          kernel_name(m), p.property, then);
                bool lost = !r.accepted_by_parser && r.declared_kind != Kind::static_;
                severity = lost ? Severity::error : Severity::warning;
            } else if (p.property == "reg" && p.length == 0)
                kernel_says = "the kernel reserves nothing for it";
            else if (p.property == "reg")
                kernel_says = fmt::format("{} prints \"{}Reserved memory: invalid reg property in "
                                          "'{}', skipping node.\" and skips the node",
                                          kernel_name(m), parse_prefix(m), r.name);
            else if (p.property == "alloc-ranges")
                kernel_says =
                    fmt::format("{} prints \"OF: reserved mem: invalid alloc-ranges "
                                "property in '{}', skipping node.\" and allocates nothing",
                                kernel_name(m), r.name);
            else
                kernel_says = fmt::format("{} prints \"OF: reserved mem: invalid {} property in "
                                          "'{}' node.\" and allocates nothing",
                                          kernel_name(m), p.property, r.name);
            out.add(severity, p.where, r.path,
                    fmt::format("`{}` is {} bytes, the kernel wants {}: {}", p.property, p.length,
                                expected, kernel_says));
        }
        // ≥ v6.19 [likely]: fdt_scan_reserved_mem_reg_nodes() records only single-tuple nodes.
        if (r.multi_tuple_dropped && !r.disabled) {
            bool pool = r.declared_kind != Kind::static_;
            out.add(pool ? Severity::error : Severity::warning,
                    r.reg_refs.size() > 2 ? r.reg_refs[2].where : r.where, r.path,
                    fmt::format("`reg` has {} (address, size) tuples: {} reserves them but keeps "
                                "only nodes with exactly one, so {} gets no init function{}",
                                r.reg.size(), kernel_name(m), r.name,
                                pool ? " and no pool is created" : ""));
        }
        // ≥ v7.2 [likely]: __reserved_mem_reserve_reg() reserves only the first tuple and says
        // so (7.2.13 drivers/of/of_reserved_mem.c); the other ranges go to the page allocator.
        if (r.extra_tuples_unreserved && !r.disabled) {
            out.add(Severity::error, r.reg_refs.size() > 2 ? r.reg_refs[2].where : r.where, r.path,
                    fmt::format("`reg` has {} (address, size) tuples: {} prints \"{}Reserved "
                                "memory: node '{}' has {} <base size> entries, only the first is "
                                "used\" and reserves only the first, so the other {} range(s) are "
                                "given to the page allocator",
                                r.reg.size(), kernel_name(m), parse_prefix(m), r.name, r.reg.size(),
                                r.reg.size() - 1));
            continue;
        }
        // 6.12.117: only the first reg tuple becomes the rmem region (pools use only it).
        if (active(r) && r.reg.size() > 1 && r.kind != Kind::static_) {
            std::string words =
                kernel::reserved_mem_rules(m.version).restructured
                    ? fmt::format("{} prints \"OF: reserved mem: fdt_scan_reserved_mem_reg_nodes() "
                                  "ignores {} regions in node '{}'\"",
                                  kernel_name(m), r.reg.size() - 1, r.name)
                    : fmt::format("{} reserves every tuple but silently uses only the first",
                                  kernel_name(m));
            out.add(Severity::warning, r.reg_refs.size() > 2 ? r.reg_refs[2].where : r.where,
                    r.path,
                    fmt::format("`reg` has {} (address, size) tuples but a {} pool uses only the "
                                "first: {}",
                                r.reg.size(), reserved::to_string(r.kind), words));
        }
    }
}

extern const CheckInfo property_length{
    "property-length",
    Severity::error,
    true,
    "reg/size/alignment/alloc-ranges of a reserved-memory node must have the length the root "
    "cells give, else the kernel skips the node",
    check_property_length,
    &reserved_memory_well_formed};

// zero-size: __reserved_mem_reserve_reg() "failed to reserve memory"; the node is not saved.

void check_zero_size(const Context& ctx, Findings& out) {
    const auto& rs = ctx.reservations;
    for (const auto& r : rs.regions) {
        if (r.disabled || !r.size || *r.size != 0 || !r.size_ref) continue;
        if (!r.dynamic)
            out.add(Severity::warning, r.size_ref->where, r.path,
                    fmt::format("the reservation has size 0: the kernel prints \"{}Reserved "
                                "memory: failed to reserve memory for node '{}': base {}, size 0 "
                                "MiB\" and keeps no region",
                                parse_prefix(ctx.model), r.name,
                                pa(r.base.value_or(0), ctx.model)));
        else
            out.add(Severity::warning, r.size_ref->where, r.path,
                    "the dynamic reservation has size 0: memblock allocates nothing and the kernel "
                    "prints \"OF: reserved mem: failed to allocate memory for node '" +
                        r.name + "': size 0 MiB\"");
    }
}

extern const CheckInfo zero_size{
    "zero-size",     Severity::warning,           true, "a reservation of size 0 reserves nothing",
    check_zero_size, &reserved_memory_well_formed};

// cell-overflow: of_read_number() keeps the low 64 bits; 32-bit phys_addr_t keeps the low 32.

void check_cell_overflow(const Context& ctx, Findings& out) {
    for (const auto& r : ctx.reservations.regions) {
        if (r.disabled) continue;
        for (const auto& v : r.overflowed_values)
            out.add(Severity::warning, v.where, r.path,
                    fmt::format("`{}` uses more than 2 cells and its high cells are not zero: the "
                                "kernel keeps only the low 64 bits ({})",
                                v.property, hex(v.value)));
        if (!ctx.model.phys_addr_64bit) {
            auto check_32 = [&](const std::optional<reserved::ValueRef>& v) {
                if (v && v->value > 0xffffffffull)
                    out.add(Severity::warning, v->where, r.path,
                            fmt::format("`{}` value {} does not fit the 32-bit phys_addr_t of {}: "
                                        "the kernel truncates it to {}",
                                        v->property, hex(v->value), kernel_name(ctx.model),
                                        hex(v->value & 0xffffffffull)));
            };
            check_32(r.base_ref);
            check_32(r.size_ref);
            check_32(r.alignment_ref);
        }
    }
}

extern const CheckInfo cell_overflow{
    "cell-overflow", Severity::warning, true,
    "values wider than the kernel reads (over 64 bits, or 32-bit phys_addr_t) are truncated",
    check_cell_overflow};

// alignment-cells: `alignment` is read with #address-cells (kernel) while the binding says
// #size-cells; 267b21d0bef8 switched it in v6.14-rc1 and stable, 75f1f311d883 reverted it.

void check_alignment_cells(const Context& ctx, Findings& out) {
    const auto& rs = ctx.reservations;
    if (rs.address_cells == rs.size_cells) return;
    for (const auto& r : rs.regions) {
        if (r.disabled || !r.alignment_ref) continue;
        out.add(Severity::warning, r.alignment_ref->where, r.path,
                fmt::format("`alignment` with root #address-cells {} != #size-cells {}: the kernel "
                            "reads it with #address-cells, the binding says #size-cells, and a few "
                            "stable releases of Feb 2025 (≈6.1.128–129, 6.12.13–17) used "
                            "#size-cells and reject this node",
                            rs.address_cells, rs.size_cells));
    }
    for (const auto& r : rs.regions) {
        if (r.disabled) continue;
        for (const auto& p : r.length_problems) {
            if (p.property != "alignment" || p.length != std::size_t{rs.size_cells} * 4) continue;
            out.add(Severity::note, p.where, r.path,
                    "`alignment` is written with #size-cells cells (as the binding says); the "
                    "kernel reads it with #address-cells");
        }
    }
}

extern const CheckInfo alignment_cells{
    "alignment-cells", Severity::warning, true,
    "`alignment` is read with #address-cells, which differs from #size-cells here",
    check_alignment_cells};

// alignment-not-power-of-2: memblock_phys_alloc_range() assumes a power of 2.

void check_alignment_power_of_2(const Context& ctx, Findings& out) {
    for (const auto& r : ctx.reservations.regions) {
        if (r.disabled || !r.alignment || *r.alignment == 0) continue;
        if (std::has_single_bit(*r.alignment)) continue;
        out.add(Severity::warning, r.alignment_ref ? r.alignment_ref->where : r.where, r.path,
                fmt::format("`alignment` {} is not a power of 2: memblock's rounding assumes one, "
                            "so where the region lands is undefined",
                            amount(*r.alignment)));
    }
}

extern const CheckInfo alignment_not_power_of_2{
    "alignment-not-power-of-2", Severity::warning, true,
    "an `alignment` that is not a power of 2 makes memblock placement undefined",
    check_alignment_power_of_2};

// reserved-regions-limit: MAX_RESERVED_REGIONS (64, drivers/of/of_private.h). Before the v6.13
// restructure (6.1) every saved node takes a slot of a fixed array, in document order, and the
// rest get "not enough space for all defined regions."; since then (6.12.117) only dynamic nodes
// are bounded ("too many defined dynamic regions, skip '%s'").

void check_reserved_regions_limit(const Context& ctx, Findings& out) {
    constexpr std::size_t max_regions = 64;
    const auto& rs = ctx.reservations;
    const bool restructured = kernel::reserved_mem_rules(ctx.model.version).restructured;
    std::size_t used = 0;
    for (const auto& r : rs.regions) {
        if (r.disabled || !r.accepted_by_parser) continue;
        if (restructured && !r.dynamic) continue;
        if (++used <= max_regions) continue;
        bool pool = r.declared_kind != Kind::static_;
        std::string words =
            restructured
                ? fmt::format("\"OF: reserved mem: too many defined dynamic regions, skip '{}'\": "
                              "nothing is allocated for it",
                              r.name)
                : fmt::format("\"OF: reserved mem: not enough space for all defined regions.\": "
                              "{} gets no init function{}",
                              r.name,
                              r.dynamic ? " and no memory" : " (its memory stays reserved)");
        out.add(
            pool ? Severity::error : Severity::warning, r.where, r.path,
            fmt::format("reserved-memory node number {} of at most {} the kernel keeps ({}): it "
                        "prints {}",
                        used, max_regions,
                        restructured ? "dynamic nodes" : "nodes with reg or size", words));
    }
}

extern const CheckInfo reserved_regions_limit{
    "reserved-regions-limit",
    Severity::error,
    true,
    "more reserved-memory nodes than MAX_RESERVED_REGIONS (64) slots: the extra ones are dropped",
    check_reserved_regions_limit,
    &reserved_memory_well_formed};

} // namespace cmalign::checks::entries
