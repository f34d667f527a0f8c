// The check registry and runner. The rules each check applies name their kernel source; the
// messages quote what the kernel prints (Debian 6.1.192 / 6.12.117 trees, kernel-facts.md §3–5).
#include "cmalign/checks/checks.hpp"

#include <algorithm>
#include <array>
#include <bit>

#include <fmt/format.h>

#include "cmalign/core/interval.hpp"
#include "cmalign/core/size.hpp"
#include "cmalign/reserved/bootargs.hpp"

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

namespace {

using reserved::Kind;
using reserved::Region;

std::string hex(std::uint64_t value) {
    return fmt::format("{:#x}", value);
}

// The kernel's %pa: phys_addr_t in full width, zero-padded ("0x0000000080000000").
std::string pa(std::uint64_t value, const kernel::Model& m) {
    return m.phys_addr_64bit ? fmt::format("0x{:016x}", value)
                             : fmt::format("0x{:08x}", static_cast<std::uint32_t>(value));
}

// "0x400000 (4 MiB)"
std::string amount(std::uint64_t value) {
    return fmt::format("{:#x} ({})", value, format_size(value));
}

bool at_least(const kernel::Model& m, int major, int minor) {
    return m.version.major > major || (m.version.major == major && m.version.minor >= minor);
}

// Local so the checks do not depend on the kernel layer's implementation files.

std::string kernel_name(const kernel::Model& m) {
    return fmt::format("{} {}", kernel::to_string(m.arch), m.version.str());
}

// pr_fmt of the file that prints reserved-memory parsing errors: drivers/of/fdt.c ("OF: fdt: ")
// in 6.1, drivers/of/of_reserved_mem.c ("OF: reserved mem: ") once the restructure (v6.13,
// backported to 6.12.y) moved the code.
const char* parse_prefix(const kernel::Model& m) {
    return at_least(m, 6, 12) ? "OF: reserved mem: " : "OF: fdt: ";
}

std::string alignment_words(const kernel::Model& m, std::uint64_t alignment) {
    // Name the formula only when it is the one that produced the number: ≥ v5.19 uses
    // PAGE_SIZE << pageblock_order, earlier kernels PAGE_SIZE << max(MAX_ORDER - 1,
    // pageblock_order).
    if (m.pageblock_order && *m.pageblock_order < 64 &&
        m.page_size << *m.pageblock_order == alignment)
        return fmt::format("the CMA alignment {:#x} ({} = PAGE_SIZE {} << pageblock_order {}) "
                           "of {}",
                           alignment, format_size(alignment), format_size(m.page_size),
                           *m.pageblock_order, kernel_name(m));
    if (m.max_page_order > 0 && m.max_page_order < 64 &&
        m.page_size << m.max_page_order == alignment)
        return fmt::format("the CMA alignment {:#x} ({} = PAGE_SIZE {} << max order {}) of {}",
                           alignment, format_size(alignment), format_size(m.page_size),
                           m.max_page_order, kernel_name(m));
    return fmt::format("the CMA alignment {} of {}", amount(alignment), kernel_name(m));
}

// What rmem_cma_setup() rejecting a pool looks like in the log, and what happens to the memory.
std::string rejected_pool_words(const Region& r) {
    return fmt::format("the kernel prints \"Reserved memory: incorrect alignment of CMA region\" "
                       "and \"OF: reserved mem: node {} compatible matching fail\", then frees the "
                       "region: the pool is lost",
                       r.name);
}

bool active(const Region& r) {
    return r.kind != Kind::inactive;
}

// ---------------------------------------------------------------------------------------------
// cma-base-alignment / cma-size-alignment: kernel/dma/contiguous.c rmem_cma_setup(),
// `!IS_ALIGNED(rmem->base | rmem->size, CMA_MIN_ALIGNMENT_BYTES)` (all versions ≥ 5.19 with
// CMA_MIN_ALIGNMENT_BYTES = PAGE_SIZE << pageblock_order; the model supplies older formulas).

void check_cma_base(const Context& ctx, Findings& out) {
    auto facts = alignment_facts(ctx.model);
    for (const auto& r : ctx.reservations.regions) {
        // Dynamic pools get their base aligned by __reserved_mem_alloc_size(); only reg can be off.
        if (r.kind != Kind::cma || r.dynamic || !r.base || !r.base_ref) continue;
        std::uint64_t base = *r.base;
        Location where = r.base_ref->where;
        if (facts.exact) {
            if (base % *facts.exact == 0) continue;
            auto down = base - base % *facts.exact;
            out.add(Severity::error, where, r.path,
                    fmt::format("CMA pool base {} is not a multiple of {}: {}; the nearest aligned "
                                "bases are {} and {} (a base is never moved automatically)",
                                hex(base), alignment_words(ctx.model, *facts.exact),
                                rejected_pool_words(r), hex(down), hex(down + *facts.exact)));
        } else if (facts.smallest && facts.largest) {
            if (base % *facts.smallest != 0)
                out.add(Severity::error, where, r.path,
                        fmt::format("CMA pool base {} is not a multiple of even the smallest CMA "
                                    "alignment {} that {} may choose at boot: {}",
                                    hex(base), amount(*facts.smallest), kernel_name(ctx.model),
                                    rejected_pool_words(r)));
            else if (base % *facts.largest != 0)
                out.add(Severity::warning, where, r.path,
                        fmt::format("CMA pool base {} is not a multiple of the CMA alignment {} "
                                    "that {} uses when it picks the largest pageblock_order at "
                                    "boot; then {}",
                                    hex(base), amount(*facts.largest), kernel_name(ctx.model),
                                    rejected_pool_words(r)));
        }
    }
}

void check_cma_size(const Context& ctx, Findings& out) {
    auto facts = alignment_facts(ctx.model);
    for (const auto& r : ctx.reservations.regions) {
        if (r.kind != Kind::cma || !r.size || !r.size_ref) continue;
        std::uint64_t size = *r.size;
        Location where = r.size_ref->where;
        auto fix_for = [&](std::uint64_t alignment) {
            std::vector<FixHint> fix;
            if (auto bigger = round_up(size, alignment))
                fix.push_back({r.size_ref->property, size, *bigger});
            return fix;
        };
        auto fix_words = [&](std::uint64_t alignment) {
            auto bigger = round_up(size, alignment);
            return bigger ? fmt::format("; the smallest valid size is {}", amount(*bigger))
                          : std::string{};
        };
        if (facts.exact) {
            if (size % *facts.exact == 0) continue;
            out.add(Severity::error, where, r.path,
                    fmt::format("CMA pool size {} is not a multiple of {}: {}{}", amount(size),
                                alignment_words(ctx.model, *facts.exact), rejected_pool_words(r),
                                fix_words(*facts.exact)),
                    fix_for(*facts.exact));
        } else if (facts.smallest && facts.largest) {
            if (size % *facts.smallest != 0)
                out.add(Severity::error, where, r.path,
                        fmt::format("CMA pool size {} is not a multiple of even the smallest CMA "
                                    "alignment {} that {} may choose at boot: {}{}",
                                    amount(size), amount(*facts.smallest), kernel_name(ctx.model),
                                    rejected_pool_words(r), fix_words(*facts.largest)),
                        fix_for(*facts.largest));
            else if (size % *facts.largest != 0)
                out.add(Severity::warning, where, r.path,
                        fmt::format("CMA pool size {} is not a multiple of the CMA alignment {} "
                                    "that {} uses when it picks the largest pageblock_order at "
                                    "boot; then {}{}",
                                    amount(size), amount(*facts.largest), kernel_name(ctx.model),
                                    rejected_pool_words(r), fix_words(*facts.largest)),
                        fix_for(*facts.largest));
        } else {
            out.add(Severity::note, where, r.path,
                    fmt::format("{} decides the CMA alignment at boot and the configuration gives "
                                "no bound: the size {} cannot be checked",
                                kernel_name(ctx.model), amount(size)));
        }
    }
}

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
// property-length: __reserved_mem_reserve_reg(), fdt_scan_reserved_mem_reg_nodes(),
// __reserved_mem_alloc_size() (6.1–6.12; from ~6.19 a bad reg/alloc-ranges is silently absent).

void check_property_length(const Context& ctx, Findings& out) {
    const auto& rs = ctx.reservations;
    if (rs.has_reserved_memory && !rs.rm_format_ok) return; // everything ignored already
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
        // 6.12.117: only the first reg tuple becomes the rmem region (pools use only it).
        if (active(r) && r.reg.size() > 1 && r.kind != Kind::static_) {
            std::string words =
                at_least(m, 6, 12)
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

// ---------------------------------------------------------------------------------------------
// zero-size: __reserved_mem_reserve_reg() "failed to reserve memory"; the node is not saved.

void check_zero_size(const Context& ctx, Findings& out) {
    const auto& rs = ctx.reservations;
    if (rs.has_reserved_memory && !rs.rm_format_ok) return;
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

// ---------------------------------------------------------------------------------------------
// reusable-no-map: rmem_cma_setup() refuses no-map (silently), rmem_dma_setup() refuses reusable
// (silently) → __reserved_mem_init_node() fails → "compatible matching fail", nomap cleared.

void check_reusable_no_map(const Context& ctx, Findings& out) {
    for (const auto& r : ctx.reservations.regions) {
        if (!r.reusable || !r.no_map || r.disabled || !r.accepted_by_parser) continue;
        if (ctx.reservations.has_reserved_memory && !ctx.reservations.rm_format_ok) continue;
        if (r.shared_dma_pool)
            out.add(Severity::error, r.where, r.path,
                    fmt::format("shared-dma-pool with both `reusable` and `no-map`: CMA refuses "
                                "no-map and the coherent allocator refuses reusable, so the kernel "
                                "prints \"OF: reserved mem: node {} compatible matching fail\" and "
                                "gives the memory back to the page allocator (no pool)",
                                r.name));
        else
            // Not a pool: the kernel marks it no-map, ignores `reusable` and only lists it
            // ("OF: reserved mem: 0x…..0x… (… KiB) nomap reusable <name>"): nothing is lost.
            out.add(Severity::note, r.where, r.path,
                    "`reusable` and `no-map` are mutually exclusive (reserved-memory binding); "
                    "the kernel marks the region no-map, ignores `reusable` and says nothing "
                    "about it");
    }
}

// ---------------------------------------------------------------------------------------------
// coherent-no-map: kernel/dma/coherent.c rmem_dma_setup(), CONFIG_ARM only.

void check_coherent_no_map(const Context& ctx, Findings& out) {
    if (ctx.model.arch != kernel::Arch::arm) return;
    for (const auto& r : ctx.reservations.regions) {
        if (r.kind != Kind::coherent || r.no_map) continue;
        out.add(Severity::error, r.where, r.path,
                fmt::format("non-reusable shared-dma-pool without `no-map` on arm: {} prints "
                            "\"Reserved memory: regions without no-map are not yet supported\" "
                            "and \"OF: reserved mem: node {} compatible matching fail\", then "
                            "frees the region",
                            kernel_name(ctx.model), r.name));
    }
}

// ---------------------------------------------------------------------------------------------
// overlap: __rmem_check_for_overlap() over the saved (first-tuple) static regions.

void check_overlap(const Context& ctx, Findings& out) {
    struct Item {
        const Region* region;
        std::uint64_t base, end; // end exclusive, saturated
    };
    std::vector<Item> items;
    for (const auto& r : ctx.reservations.regions) {
        if (!active(r) || r.dynamic || !r.base || !r.size || *r.size == 0) continue;
        items.push_back({&r, *r.base, Interval::of(*r.base, *r.size).end});
    }
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
        return a.base != b.base ? a.base < b.base : a.end < b.end;
    });
    for (std::size_t i = 0; i + 1 < items.size(); ++i) {
        const auto& a = items[i];
        const auto& b = items[i + 1];
        if (a.end <= b.base) continue;
        out.add(Severity::warning, b.region->base_ref ? b.region->base_ref->where : b.region->where,
                b.region->path,
                fmt::format("{} overlaps {}: the kernel prints \"OF: reserved mem: OVERLAP "
                            "DETECTED!\" and \"{} ({}--{}) overlaps with {} ({}--{})\"; both stay "
                            "reserved but share memory",
                            b.region->name, a.region->name, a.region->name, pa(a.base, ctx.model),
                            pa(a.end, ctx.model), b.region->name, pa(b.base, ctx.model),
                            pa(b.end, ctx.model)));
    }
    // /memreserve/ entries overlapping a CMA pool: the pool's pages would also be in use.
    for (const auto& r : ctx.reservations.regions) {
        if (r.kind != Kind::cma || r.dynamic || !r.base || !r.size) continue;
        for (const auto& mr : ctx.reservations.memreserve) {
            if (mr.size == 0) continue;
            if (overlaps(Interval::of(mr.address, mr.size), Interval::of(*r.base, *r.size)))
                out.add(Severity::warning, r.base_ref ? r.base_ref->where : r.where, r.path,
                        fmt::format("CMA pool {} overlaps /memreserve/ {}+{}: the kernel prints "
                                    "nothing (memblock_reserve() takes the range twice) and "
                                    "cma_activate_area() hands memory the firmware reserved to "
                                    "the page allocator",
                                    r.name, hex(mr.address), hex(mr.size)));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// outside-memory: static reservations and alloc-ranges against the /memory banks.

// The /memory banks as RAM spans (adjacent banks are one span, as memblock merges them).
IntervalSet ram_of(const std::vector<reserved::MemoryBank>& banks) {
    IntervalSet ram;
    for (const auto& b : banks)
        ram.add(Interval::of(b.range.base, b.range.size));
    return ram;
}

// A CMA pool outside RAM: memblock_reserve() accepts any range, cma_init_reserved_mem() only
// asks that it be reserved, so the pool is created; cma_activate_area() (mm/cma.c, 6.1 and 6.12)
// then finds pfns without a valid struct page in its zone: WARN_ON_ONCE(!pfn_valid(pfn)) and
// "CMA area <name> could not be activated", and the pool is unusable.
std::string cma_outside_words(const Region& r) {
    return fmt::format(
        "the kernel warns (WARN_ON_ONCE(!pfn_valid(pfn)) in cma_activate_area()) "
        "and prints \"cma: CMA area {} could not be activated\": CMA can only manage "
        "RAM the kernel knows (unless the bootloader adds more /memory)",
        r.name);
}

void check_outside_memory(const Context& ctx, Findings& out) {
    const auto& banks = ctx.reservations.memory;
    if (banks.empty()) return; // the bootloader fills /memory; nothing to compare against
    auto ram = ram_of(banks);
    for (const auto& r : ctx.reservations.regions) {
        if (!active(r)) continue;
        // Non-CMA regions outside RAM (SRAM, VRAM, firmware carve-outs) are what the kernel
        // expects: see outside-memory-device.
        if (r.kind == Kind::cma && !r.dynamic && r.base && r.size && *r.size > 0 &&
            !ram.covers(Interval::of(*r.base, *r.size)))
            out.add(
                Severity::warning, r.base_ref ? r.base_ref->where : r.where, r.path,
                fmt::format("CMA pool {} {}+{} is not inside the /memory banks of this tree: {}",
                            r.name, hex(*r.base), hex(*r.size), cma_outside_words(r)));
        if (r.dynamic && !r.alloc_ranges.empty() && r.size) {
            bool any =
                std::any_of(r.alloc_ranges.begin(), r.alloc_ranges.end(), [&](const auto& a) {
                    return ram.largest_piece_within(Interval::of(a.base, a.size)) >= *r.size;
                });
            if (!any)
                out.add(Severity::warning, r.where, r.path,
                        fmt::format("no alloc-ranges entry of {} overlaps the /memory banks of "
                                    "this tree by {} or more: memblock_phys_alloc_range() only "
                                    "allocates RAM, so the kernel prints \"OF: reserved mem: "
                                    "failed to allocate memory for node '{}': size {} MiB\" "
                                    "(unless the bootloader adds more /memory)",
                                    r.name, amount(*r.size), r.name, *r.size >> 20));
        }
    }
}

// outside-memory-device (off by default): non-CMA regions outside RAM. The kernel says nothing:
// early_init_dt_reserve_memory() reserves or marks no-map any range, rmem_dma_setup() accepts a
// coherent pool anywhere (dma_init_coherent_memory() memremaps it: on-chip SRAM, VRAM).
void check_outside_memory_device(const Context& ctx, Findings& out) {
    const auto& banks = ctx.reservations.memory;
    if (banks.empty()) return;
    auto ram = ram_of(banks);
    for (const auto& r : ctx.reservations.regions) {
        if (!active(r) || r.kind == Kind::cma || r.dynamic || !r.base || !r.size || *r.size == 0)
            continue;
        if (ram.covers(Interval::of(*r.base, *r.size))) continue;
        out.add(Severity::note, r.base_ref ? r.base_ref->where : r.where, r.path,
                fmt::format("{} {}+{} is not inside the /memory banks of this tree (device "
                            "memory, or RAM the bootloader adds): the kernel reserves it and "
                            "prints nothing",
                            r.name, hex(*r.base), hex(*r.size)));
    }
}

// ---------------------------------------------------------------------------------------------
// cma-alloc-ranges: __reserved_mem_alloc_size() raises the alignment of a dynamic CMA pool to
// CMA_MIN_ALIGNMENT_BYTES, then memblock_phys_alloc_range(size, align, start, end) must find an
// aligned block inside one alloc-ranges entry; with none, "failed to allocate memory for node".

void check_cma_alloc_ranges(const Context& ctx, Findings& out) {
    auto facts = alignment_facts(ctx.model);
    if (!facts.exact) return;
    for (const auto& r : ctx.reservations.regions) {
        if (r.kind != Kind::cma || !r.dynamic || r.alloc_ranges.empty() || !r.size) continue;
        std::uint64_t align = std::max(r.alignment.value_or(0), *facts.exact);
        bool fits = std::any_of(r.alloc_ranges.begin(), r.alloc_ranges.end(), [&](const auto& a) {
            auto start = round_up(a.base, align);
            std::uint64_t end = Interval::of(a.base, a.size).end;
            return start && *start <= end && end - *start >= *r.size;
        });
        if (fits) continue;
        out.add(Severity::error, r.where, r.path,
                fmt::format("no alloc-ranges entry of {} holds {} at an address aligned to {} "
                            "(the CMA alignment of {} raises the node's alignment): the kernel "
                            "prints \"OF: reserved mem: failed to allocate memory for node '{}': "
                            "size {} MiB\" and creates no pool",
                            r.name, amount(*r.size), amount(align), kernel_name(ctx.model), r.name,
                            *r.size >> 20));
    }
}

// ---------------------------------------------------------------------------------------------
// cma-default: rmem_cma_setup() sets dma_contiguous_default_area for every linux,cma-default
// pool it accepts, so with several the last one set up wins and the others are plain pools.

void check_cma_default(const Context& ctx, Findings& out) {
    std::vector<const Region*> defaults;
    for (const auto& r : ctx.reservations.regions)
        if (r.kind == Kind::cma && r.cma_default) defaults.push_back(&r);
    if (defaults.size() < 2) return;
    for (std::size_t i = 1; i < defaults.size(); ++i)
        out.add(Severity::warning, defaults[i]->where, defaults[i]->path,
                fmt::format("{} linux,cma-default pools ({} and {}): {} makes each one it sets up "
                            "the default CMA area in turn, so only the last one is used for "
                            "dma_alloc_coherent() and the others are plain pools",
                            defaults.size(), defaults[0]->name, defaults[i]->name,
                            kernel_name(ctx.model)));
}

// ---------------------------------------------------------------------------------------------
// cma-areas: mm/cma.c cma_init_reserved_mem() "Not enough slots for CMA reserved regions!"
// (MAX_CMA_AREAS = CONFIG_CMA_AREAS from ~6.9, 1 + CONFIG_CMA_AREAS before).

void check_cma_areas(const Context& ctx, Findings& out) {
    int limit = ctx.model.cma_areas;
    if (limit <= 0) return;
    // Dynamic nodes are set up first (fdt_scan_reserved_mem), static ones later (6.12.117).
    std::vector<const Region*> pools;
    for (const auto& r : ctx.reservations.regions)
        if (r.kind == Kind::cma && r.dynamic) pools.push_back(&r);
    for (const auto& r : ctx.reservations.regions)
        if (r.kind == Kind::cma && !r.dynamic) pools.push_back(&r);
    int count = static_cast<int>(pools.size());
    for (int i = limit; i < count; ++i) {
        const Region& r = *pools[static_cast<std::size_t>(i)];
        out.add(Severity::error, r.where, r.path,
                fmt::format("{} CMA pools but MAX_CMA_AREAS is {} on {}: for {} the kernel prints "
                            "\"cma: Not enough slots for CMA reserved regions!\" and \"Reserved "
                            "memory: unable to setup CMA region\", then frees it",
                            count, limit, kernel_name(ctx.model), r.name));
    }
    bool has_default =
        std::any_of(pools.begin(), pools.end(), [](const Region* r) { return r->cma_default; });
    if (count == limit && !has_default && count > 0)
        out.add(Severity::warning, pools.back()->where, pools.back()->path,
                fmt::format("the {} CMA pools fill all {} MAX_CMA_AREAS slots of {}: a default CMA "
                            "area (cma= or CONFIG_CMA_SIZE_*) or hugetlb CMA would find none",
                            count, limit, kernel_name(ctx.model)));
}

// ---------------------------------------------------------------------------------------------
// reserved-regions-limit: MAX_RESERVED_REGIONS (64, drivers/of/of_private.h). Before the v6.13
// restructure (6.1) every saved node takes a slot of a fixed array, in document order, and the
// rest get "not enough space for all defined regions."; since then (6.12.117) only dynamic nodes
// are bounded ("too many defined dynamic regions, skip '%s'").

void check_reserved_regions_limit(const Context& ctx, Findings& out) {
    constexpr std::size_t max_regions = 64;
    const auto& rs = ctx.reservations;
    if (rs.has_reserved_memory && !rs.rm_format_ok) return;
    const bool restructured = at_least(ctx.model, 6, 12);
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

// ---------------------------------------------------------------------------------------------
// cma-disabled: without CONFIG_DMA_CMA (which depends on CONFIG_CMA) kernel/dma/contiguous.c and
// its rmem_cma_setup() are not built. drivers/of/of_reserved_mem.c __reserved_mem_init_node()
// (6.1 and 6.12) then tries the other "shared-dma-pool" handler, rmem_dma_setup() of
// kernel/dma/coherent.c (built with CONFIG_DMA_DECLARE_COHERENT), which returns -EINVAL for a
// `reusable` node; any error but -ENOENT makes the caller print "node %s compatible matching fail"
// and give the memory back (memblock_phys_free). With no handler at all (-ENOENT) the memory stays
// reserved but rmem->ops stays NULL, so of_reserved_mem_device_init() fails with -EINVAL for every
// device that names the region. Either way the pool is lost: an error (issue 7, item 6).

void check_cma_disabled(const Context& ctx, Findings& out) {
    const auto& m = ctx.model;
    if (m.cma && m.dma_cma) return;
    for (const auto& r : ctx.reservations.regions) {
        if (r.declared_kind != Kind::cma || r.disabled || r.no_map || !r.accepted_by_parser)
            continue;
        if (ctx.reservations.has_reserved_memory && !ctx.reservations.rm_format_ok) continue;
        std::string freed = fmt::format(
            "rmem_dma_setup() (kernel/dma/coherent.c) refuses `reusable` with -EINVAL, so the "
            "kernel prints \"OF: reserved mem: node {} compatible matching fail\" and frees the "
            "memory",
            r.name);
        std::string kept = "no handler claims shared-dma-pool, so the memory stays reserved but "
                           "unusable: of_reserved_mem_device_init() fails with -EINVAL for the "
                           "devices that use it";
        std::string outcome;
        if (!m.dma_declare_coherent)
            outcome =
                fmt::format("with CONFIG_DMA_DECLARE_COHERENT=y {}; without it {}", freed, kept);
        else if (*m.dma_declare_coherent)
            outcome = "CONFIG_DMA_DECLARE_COHERENT=y: " + freed;
        else
            outcome = "CONFIG_DMA_DECLARE_COHERENT is not set either: " + kept;
        out.add(Severity::error, r.where, r.path,
                fmt::format("{} is a reusable shared-dma-pool (a CMA pool) but {} is not set, so "
                            "rmem_cma_setup() is not built; {}: no pool ({})",
                            r.name, m.cma ? "CONFIG_DMA_CMA" : "CONFIG_CMA", outcome,
                            kernel_name(m)));
    }
}

// ---------------------------------------------------------------------------------------------
// cmdline-params: cma_pernuma=, numa_cma= (kernel/dma/contiguous.c), pcp_batch_scale_max= (not
// upstream), transparent_hugepage= (mm/huge_memory.c). Shared with `cmalign pcp`.

void check_cmdline_params(const Context& ctx, Findings& out) {
    const auto& rs = ctx.reservations;
    if (!rs.boot_params) return;
    const auto& bp = *rs.boot_params;
    Location where = rs.bootargs_where;
    if (!where.known()) where = Location{rs.input, 0, 0};
    std::string node = rs.bootargs_from_option ? std::string{} : std::string{"/chosen"};
    if (bp.pcp_batch_scale_max_text) {
        out.add(Severity::warning, where, node,
                fmt::format("pcp_batch_scale_max={} is not an upstream kernel parameter (an RFC of "
                            "Nov 2024, not merged): the kernel passes it to init and keeps "
                            "CONFIG_PCP_BATCH_SCALE_MAX; set that option instead",
                            *bp.pcp_batch_scale_max_text));
    }
    if (bp.cma_pernuma_text && !bp.cma_pernuma_trailing.empty())
        out.add(Severity::warning, where, node,
                fmt::format("cma_pernuma={}: the kernel ignores the trailing \"{}\"",
                            *bp.cma_pernuma_text, bp.cma_pernuma_trailing));
    if (bp.numa_cma_text) {
        if (!at_least(ctx.model, 6, 5))
            out.add(Severity::warning, where, node,
                    fmt::format("numa_cma={}: {} has no numa_cma= (added with CONFIG_DMA_NUMA_CMA "
                                "in v6.5 [likely]); only cma_pernuma= exists",
                                *bp.numa_cma_text, kernel_name(ctx.model)));
        else if (!bp.numa_cma_ignored.empty())
            out.add(Severity::warning, where, node,
                    fmt::format("numa_cma={}: early_numa_cma() stops at \"{}\" and ignores the "
                                "rest silently (expected NODE:SIZE[,NODE:SIZE...])",
                                *bp.numa_cma_text, bp.numa_cma_ignored));
    }
    if (bp.transparent_hugepage && !bp.transparent_hugepage_valid)
        out.add(Severity::warning, where, node,
                fmt::format("transparent_hugepage={}: the kernel prints \"transparent_hugepage= "
                            "cannot parse, ignored\"",
                            *bp.transparent_hugepage));
}

// ---------------------------------------------------------------------------------------------
// cmdline-cma: kernel/dma/contiguous.c early_cma(), dma_contiguous_reserve(), rmem_cma_setup();
// mm/cma.c cma_declare_contiguous_nid().

void check_cmdline_cma(const Context& ctx, Findings& out) {
    const auto& rs = ctx.reservations;
    if (!rs.cma_cmdline) return;
    const auto& cma = *rs.cma_cmdline;
    const auto& m = ctx.model;
    Location where = rs.bootargs_where;
    if (!where.known()) where = Location{rs.input, 0, 0};
    std::string node = rs.bootargs_from_option ? std::string{} : std::string{"/chosen"};
    if (!cma.has_value) {
        out.add(Severity::warning, where, node,
                "`cma` without a value: the kernel prints \"cma: Config string not provided\" and "
                "ignores it");
        return;
    }
    if (!cma.trailing.empty())
        out.add(
            Severity::warning, where, node,
            fmt::format("cma={}: the kernel ignores the trailing \"{}\"", cma.text, cma.trailing));
    if (cma.occurrences > 1)
        out.add(Severity::note, where, node,
                fmt::format("cma= is given {} times; the last one (cma={}) wins", cma.occurrences,
                            cma.text));
    // A DT linux,cma-default pool loses against cma=.
    if (m.cma && m.dma_cma) {
        for (const auto& r : rs.regions) {
            if (r.kind != Kind::cma || !r.cma_default) continue;
            std::string words =
                at_least(m, 6, 19)
                    ? fmt::format("{} prints \"OF: reserved mem: Skipping dt linux,cma-default for "
                                  "\\\"cma=\\\" kernel param.\" and does not reserve it",
                                  kernel_name(m))
                    : fmt::format("{} prints \"Reserved memory: bypass {} node, using cmdline CMA "
                                  "params instead\" and \"OF: reserved mem: node {} compatible "
                                  "matching fail\", then frees the region",
                                  kernel_name(m), r.name, r.name);
            out.add(Severity::warning, r.where, r.path,
                    fmt::format("cma={} on the command line overrides the linux,cma-default pool "
                                "{}: {}",
                                cma.text, r.name, words));
        }
    }
    if (cma.size == 0) {
        out.add(Severity::note, where, node,
                fmt::format("cma={} asks for 0 bytes: no default CMA area is created", cma.text));
        return;
    }
    auto facts = alignment_facts(m);
    if (!facts.exact) return;
    std::uint64_t align = *facts.exact;
    std::uint64_t base = cma.base.value_or(0);
    std::uint64_t limit = cma.limit.value_or(0);
    if (cma.fixed && base % align != 0) {
        out.add(Severity::error, where, node,
                fmt::format("cma={}: the fixed base {} is not a multiple of {}: the kernel prints "
                            "\"cma: Region at {} must be aligned to {} bytes\" and creates no "
                            "default CMA area",
                            cma.text, hex(base), alignment_words(m, align), pa(base, m),
                            pa(align, m)));
        return;
    }
    auto size = round_up(cma.size, align);
    auto aligned_base = round_up(base, align);
    if (!size || !aligned_base) return;
    if (*size != cma.size)
        out.add(Severity::note, where, node,
                fmt::format("cma={}: the size {} is rounded up to {} ({})", cma.text,
                            amount(cma.size), amount(*size), alignment_words(m, align)));
    limit &= ~(align - 1);
    if (limit == 0) {
        // Only the memblock end bounds it; we know it when /memory is in the tree.
        limit = ram_of(rs.memory).top();
    }
    if (limit != 0 && Interval::of(*aligned_base, *size).end > limit)
        out.add(Severity::error, where, node,
                fmt::format("cma={}: after alignment to {} the area {}+{} exceeds the limit {}: "
                            "the kernel prints \"cma: Size ({}) of region at {} exceeds limit "
                            "({})\" and creates no default CMA area",
                            cma.text, amount(align), hex(*aligned_base), hex(*size), hex(limit),
                            pa(*size, m), pa(*aligned_base, m), pa(limit, m)));
}

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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

constexpr std::array<CheckInfo, 20> checks_table{{
    {"reserved-memory-format", Severity::error, true,
     "/reserved-memory must have #address-cells/#size-cells equal to the root's and `ranges`, "
     "else the kernel ignores every reservation",
     check_reserved_memory_format},
    {"property-length", Severity::error, true,
     "reg/size/alignment/alloc-ranges of a reserved-memory node must have the length the root "
     "cells give, else the kernel skips the node",
     check_property_length},
    {"zero-size", Severity::warning, true, "a reservation of size 0 reserves nothing",
     check_zero_size},
    {"cell-overflow", Severity::warning, true,
     "values wider than the kernel reads (over 64 bits, or 32-bit phys_addr_t) are truncated",
     check_cell_overflow},
    {"alignment-cells", Severity::warning, true,
     "`alignment` is read with #address-cells, which differs from #size-cells here",
     check_alignment_cells},
    {"alignment-not-power-of-2", Severity::warning, true,
     "an `alignment` that is not a power of 2 makes memblock placement undefined",
     check_alignment_power_of_2},
    {"cma-disabled", Severity::error, true,
     "a reusable shared-dma-pool needs CONFIG_CMA and CONFIG_DMA_CMA, else the pool is lost",
     check_cma_disabled},
    {"reusable-no-map", Severity::error, true,
     "a shared-dma-pool with both reusable and no-map is refused by CMA and the coherent allocator",
     check_reusable_no_map},
    {"coherent-no-map", Severity::error, true, "on arm a non-reusable shared-dma-pool needs no-map",
     check_coherent_no_map},
    {"cma-base-alignment", Severity::error, true,
     "a CMA pool's base must be a multiple of CMA_MIN_ALIGNMENT_BYTES, else the pool is lost",
     check_cma_base},
    {"cma-size-alignment", Severity::error, true,
     "a CMA pool's size must be a multiple of CMA_MIN_ALIGNMENT_BYTES, else the pool is lost",
     check_cma_size},
    {"cma-alloc-ranges", Severity::error, true,
     "a dynamic CMA pool needs an alloc-ranges entry that holds its size at the CMA alignment",
     check_cma_alloc_ranges},
    {"cma-default", Severity::warning, true,
     "several linux,cma-default pools: only the last one set up becomes the default CMA area",
     check_cma_default},
    {"cma-areas", Severity::error, true,
     "more CMA pools than MAX_CMA_AREAS slots: the extra pools are lost", check_cma_areas},
    {"reserved-regions-limit", Severity::error, true,
     "more reserved-memory nodes than MAX_RESERVED_REGIONS (64) slots: the extra ones are dropped",
     check_reserved_regions_limit},
    {"cmdline-cma", Severity::error, true,
     "problems of the cma= kernel parameter, and linux,cma-default pools it overrides",
     check_cmdline_cma},
    {"cmdline-params", Severity::warning, true,
     "cma_pernuma=, numa_cma=, transparent_hugepage= problems, and the non-upstream "
     "pcp_batch_scale_max=",
     check_cmdline_params},
    {"overlap", Severity::warning, true, "reservations that overlap each other or /memreserve/",
     check_overlap},
    {"outside-memory", Severity::warning, true,
     "CMA pools outside the /memory banks (the kernel cannot activate them) and alloc-ranges "
     "that hold no RAM",
     check_outside_memory},
    {"outside-memory-device", Severity::note, false,
     "non-CMA reservations outside the /memory banks (SRAM, VRAM: the kernel accepts them)",
     check_outside_memory_device},
}};

Severity max_severity(Severity a, Severity b) {
    return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

} // namespace

std::span<const CheckInfo> registry() {
    return checks_table;
}

const CheckInfo* find_check(std::string_view name) {
    for (const auto& c : checks_table)
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
    Context ctx{result.reservations, model};
    for (const auto& check : checks_table) {
        auto level = level_of(check, options);
        if (!level.enabled) continue;
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
    out.addr_size_helpers = at_least(model, 6, 19);
    return out;
}

Result run(const dt::Tree& tree, const kernel::Model& model, const Options& options) {
    return run(reserved::read(tree, read_options(model, options.bootargs)), model, options);
}

} // namespace cmalign::checks
