// The checks of where reservations lie: reusable/no-map combinations, overlaps, and regions
// outside the /memory banks.
#include "internal.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h> // fmt::join (fmt 11 moved it here)

#include "cmalign/core/interval.hpp"
#include "cmalign/internal/core/amount.hpp"
#include "cmalign/internal/kernel/reserved_mem.hpp"

namespace cmalign::checks::entries {

using reserved::Kind;
using reserved::Region;

// reusable-no-map: rmem_cma_setup() refuses no-map, rmem_dma_setup() refuses reusable, both
// silently. Until v7.0 they return -EINVAL → __reserved_mem_init_node() fails → "compatible
// matching fail" and the memory is given back (nomap cleared). From v7.1 they return -ENODEV,
// which of_reserved_mem.c treats as "no handler": the region stays reserved no-map, no pool.

void check_reusable_no_map(const Context& ctx, Findings& out) {
    const auto& rules = kernel::reserved_mem_rules(ctx.model.version);
    for (const auto& r : ctx.reservations.regions) {
        if (!r.reusable || !r.no_map || r.disabled || !r.accepted_by_parser) continue;
        if (r.shared_dma_pool && rules.declined_is_enodev)
            out.add(Severity::error, r.where, r.path,
                    fmt::format("shared-dma-pool with both `reusable` and `no-map`: in {} CMA "
                                "(no-map) and the coherent allocator (reusable) both decline it "
                                "with -ENODEV, which the kernel treats as \"no driver\": no "
                                "error, only \"OF: reserved mem: 0x…..0x… (… KiB) nomap reusable "
                                "{}\", and the region stays reserved as no-map: the memory is "
                                "lost to Linux and there is no pool (a device using it gets "
                                "-EINVAL from of_reserved_mem_device_init())",
                                kernel_name(ctx.model), r.name));
        else if (r.shared_dma_pool)
            out.add(Severity::error, r.where, r.path,
                    fmt::format("shared-dma-pool with both `reusable` and `no-map`: CMA refuses "
                                "no-map and the coherent allocator refuses reusable, so the kernel "
                                "prints \"OF: reserved mem: node {} compatible matching fail\" and "
                                "gives the memory back to the page allocator (no pool)",
                                r.name));
        else if (r.declared_kind == Kind::restricted)
            continue; // restricted-pool: rmem_swiotlb_setup() refuses both flags
        else
            // Not a pool: the kernel marks it no-map, ignores `reusable` and only lists it
            // ("OF: reserved mem: 0x…..0x… (… KiB) nomap reusable <name>"): nothing is lost.
            out.add(Severity::note, r.where, r.path,
                    "`reusable` and `no-map` are mutually exclusive (reserved-memory binding); "
                    "the kernel marks the region no-map, ignores `reusable` and says nothing "
                    "about it");
    }
}

extern const CheckInfo reusable_no_map{
    "reusable-no-map",
    Severity::error,
    true,
    "a shared-dma-pool with both reusable and no-map is refused by CMA and the coherent allocator",
    check_reusable_no_map,
    &reserved_memory_well_formed};

// coherent-no-map: kernel/dma/coherent.c rmem_dma_setup(), CONFIG_ARM only.

void check_coherent_no_map(const Context& ctx, Findings& out) {
    if (!kernel::coherent_pool_needs_no_map(ctx.model.arch)) return;
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

extern const CheckInfo coherent_no_map{"coherent-no-map", Severity::error, true,
                                       "on arm a non-reusable shared-dma-pool needs no-map",
                                       check_coherent_no_map};

// restricted-pool: "restricted-dma-pool" is claimed only by kernel/dma/swiotlb.c
// rmem_swiotlb_setup(), built with CONFIG_DMA_RESTRICTED_POOL (v5.15 on). Without it no handler
// matches: the region stays reserved, rmem->ops stays NULL, so of_reserved_mem_device_init()
// fails with -EINVAL for every device naming it, and the kernel prints nothing but the region's
// "… map non-reusable <name>" line. With it, `reusable`, `no-map`, `linux,cma-default` or
// `linux,dma-default` make the handler return -EINVAL: "compatible matching fail", memory freed.
// A configuration that does not mention the option gets Kconfig's answer, n (nothing selects it).

void check_restricted_pool(const Context& ctx, Findings& out) {
    const auto& m = ctx.model;
    const auto& rules = kernel::restricted_pool_rules(m.version);
    // The "<base>..<end> (<n> KiB) map non-reusable <name>" listing came with the v6.12 rows.
    bool listed = kernel::reserved_mem_rules(m.version).restructured;
    auto lost = [listed](const Region& r) {
        return fmt::format("the region stays reserved but there is no pool: the kernel prints no "
                           "error ({}) and of_reserved_mem_device_init() fails with -EINVAL for "
                           "every device that uses it",
                           listed
                               ? fmt::format("only the \"… map non-reusable {}\" listing", r.name)
                               : "nothing at all");
    };
    for (const auto& r : ctx.reservations.regions) {
        if (r.declared_kind != Kind::restricted || r.disabled || !r.accepted_by_parser) continue;
        if (!rules.handler) {
            out.add(Severity::error, r.where, r.path,
                    fmt::format("{} is a restricted-dma-pool, which {} has no handler for "
                                "(rmem_swiotlb_setup() came with v5.15): {}",
                                r.name, kernel_name(m), lost(r)));
            continue;
        }
        if (!m.dma_restricted_pool.value_or(false)) {
            out.add(Severity::error, r.where, r.path,
                    fmt::format("{} is a restricted-dma-pool but CONFIG_DMA_RESTRICTED_POOL {}, "
                                "so rmem_swiotlb_setup() (kernel/dma/swiotlb.c) is not built: {} "
                                "({})",
                                r.name,
                                m.dma_restricted_pool
                                    ? "is not set"
                                    : "is not in the inputs (taken as not set: its Kconfig "
                                      "default is n and nothing selects it)",
                                lost(r), kernel_name(m)));
            continue;
        }
        std::vector<std::string> refused;
        if (r.reusable) refused.emplace_back("`reusable`");
        if (r.no_map) refused.emplace_back("`no-map`");
        if (r.cma_default) refused.emplace_back("`linux,cma-default`");
        if (r.dma_default) refused.emplace_back("`linux,dma-default`");
        if (refused.empty()) continue;
        out.add(Severity::error, r.where, r.path,
                fmt::format("restricted-dma-pool with {}: rmem_swiotlb_setup() "
                            "(kernel/dma/swiotlb.c) refuses it with -EINVAL, so the kernel prints "
                            "\"OF: reserved mem: node {} compatible matching fail\" and gives "
                            "the memory back (no pool)",
                            fmt::join(refused, " and "), r.name));
    }
}

extern const CheckInfo restricted_pool{
    "restricted-pool",
    Severity::error,
    true,
    "a restricted-dma-pool needs CONFIG_DMA_RESTRICTED_POOL (v5.15+) and none of reusable, "
    "no-map, linux,cma-default, linux,dma-default",
    check_restricted_pool,
    &reserved_memory_well_formed};

// overlap: __rmem_check_for_overlap() over the saved (first-tuple) static regions.

namespace {

bool overlaps_ram(const IntervalSet& ram, Interval span) {
    return std::any_of(ram.spans().begin(), ram.spans().end(),
                       [&](const Interval& piece) { return overlaps(piece, span); });
}

// The static no-map regions the kernel refuses, with what holds their memory first: the early
// reservations (kernel image, DTB), /memreserve/ and the static nodes before them in tree order
// (fdt_scan_reserved_mem(): one pass over the nodes, 5.10 to 7.2).
std::map<const Region*, std::string> refused_no_map(const Context& ctx) {
    std::map<const Region*, std::string> out;
    const auto& rules = kernel::no_map_overlap_rules(ctx.model.version);
    const IntervalSet ram = ram_of(ctx.reservations.memory);
    std::vector<std::pair<Interval, std::string>> held;
    // Only where the kernel and the DTB really are (boot-check): an assumed place is no ground
    // for an error.
    for (const auto& e : ctx.early)
        if (!e.assumed) held.push_back({e.span, e.what});
    for (const auto& m : ctx.reservations.memreserve)
        if (m.size) held.push_back({Interval::of(m.address, m.size), "a /memreserve/ entry"});
    for (const auto& r : ctx.reservations.regions) {
        if (r.disabled || !r.accepted_by_parser || r.reg.empty() || !r.base || !r.size ||
            *r.size == 0)
            continue;
        const Interval span = Interval::of(*r.base, *r.size);
        if (r.no_map) {
            if (!rules.only_over_ram || overlaps_ram(ram, span))
                for (const auto& [h, what] : held)
                    if (overlaps(h, span)) {
                        out.emplace(&r, what);
                        break;
                    }
            continue; // memblock_mark_nomap() reserves nothing later nodes could meet
        }
        held.push_back({span, r.name});
    }
    return out;
}

} // namespace

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
    // Two CMA pools the kernel accepts: each becomes a CMA area, and cma_activate_area() hands
    // the shared pages to the page allocator twice. Booted: 7.2 arm64 and riscv64 panic at boot
    // on some layouts ("Attempted to kill init!", "Fatal exception in interrupt"), 6.1 arm64 on
    // every one tried (a BUG in __list_add_valid()); with two identical 32 MiB pools 5.10 and
    // 6.12 arm64 reached the root mount after 8 "BUG: Bad page state", 7.2 arm64 silently.
    auto facts = alignment_facts(ctx.model);
    auto becomes_area = [&](const Region& r) {
        return r.kind == Kind::cma && !r.no_map && facts.exact && *r.base % *facts.exact == 0 &&
               *r.size % *facts.exact == 0;
    };
    // The no-map regions early_init_dt_reserve_memory() refuses (-EBUSY): their memory, or the
    // RAM part of it (≥ v5.13 [likely]), is already reserved when the node is reached.
    const auto refused = refused_no_map(ctx);
    for (std::size_t i = 0; i + 1 < items.size(); ++i) {
        const auto& a = items[i];
        const auto& b = items[i + 1];
        if (a.end <= b.base) continue;
        if (refused.count(a.region) || refused.count(b.region)) continue; // said below
        const bool two_areas = becomes_area(*a.region) && becomes_area(*b.region);
        out.add(two_areas ? Severity::error : Severity::warning,
                b.region->base_ref ? b.region->base_ref->where : b.region->where, b.region->path,
                fmt::format("{} overlaps {}: the kernel prints \"OF: reserved mem: OVERLAP "
                            "DETECTED!\" and \"{} ({}--{}) overlaps with {} ({}--{})\"; {}",
                            b.region->name, a.region->name, a.region->name, pa(a.base, ctx.model),
                            pa(a.end, ctx.model), b.region->name, pa(b.base, ctx.model),
                            pa(b.end, ctx.model),
                            two_areas ? "both become CMA areas over the same pages, which "
                                        "cma_activate_area() gives to the page allocator twice: "
                                        "the page lists are corrupted and the boot dies or runs "
                                        "on corrupted (booted: 6.1 and 7.2 hit a kernel BUG in "
                                        "the list checks and \"Attempted to kill init!\", 5.10 "
                                        "and 6.12 print \"BUG: Bad page state\")"
                                      : "both stay reserved but share memory"));
    }
    for (const auto& [r, what] : refused) {
        const auto& rules = kernel::no_map_overlap_rules(ctx.model.version);
        out.add(Severity::error, r->base_ref ? r->base_ref->where : r->where, r->path,
                fmt::format("{} is no-map over memory already reserved ({}): "
                            "early_init_dt_reserve_memory() refuses it with -EBUSY{}, so the "
                            "kernel prints \"{}Reserved memory: failed to reserve memory for node "
                            "'{}': base {}, size {} MiB\" and neither reserves it nor takes it out "
                            "of the linear map: what {} does not cover goes to the page allocator",
                            r->name, what, rules.only_over_ram ? " (it overlaps RAM)" : "",
                            kernel::reserved_mem_rules(ctx.model.version).log_prefix, r->name,
                            pa(*r->base, ctx.model), *r->size >> 20, what));
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

extern const CheckInfo overlap{"overlap", Severity::error, true,
                               "reservations that overlap each other or /memreserve/",
                               check_overlap};

// A CMA pool outside RAM: memblock_reserve() accepts any range, cma_init_reserved_mem() only
// asks that it be reserved, so the pool is created; cma_activate_area() (mm/cma.c, 6.1 and 6.12)
// then finds pfns without a valid struct page in its zone: WARN_ON_ONCE(!pfn_valid(pfn)), then
// page_zone(pfn_to_page(pfn)). When some RAM shares the range's memory section its struct pages
// exist and the kernel prints "CMA area <name> could not be activated"; when none does there is
// no memory map there and the read faults: booted on Debian's arm64 4K kernels 6.1, 6.12 and
// 7.2 (4K and 16K pages) in QEMU (scripts/boot-truth), a pool in a hole of RAM oopses in
// cma_init_reserved_areas() (v7.2: cma_validate_zones()) and the boot ends in "Attempted to kill
// init!"; 5.10 only warns (mm/cma.c:106 and :114) and keeps the pool over memory it has not got.
std::string cma_outside_words(const Region& r) {
    return fmt::format(
        "the kernel warns (WARN_ON_ONCE(!pfn_valid(pfn)) in cma_activate_area()) "
        "and prints \"cma: CMA area {} could not be activated\", or, when no RAM shares the "
        "range's memory section, faults in page_zone(pfn_to_page(pfn)) and panics at boot: "
        "CMA can only manage RAM the kernel knows (unless the bootloader adds more /memory)",
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
            !ram.covers(Interval::of(*r.base, *r.size))) {
            // Past the end of RAM (crossing it or wholly beyond) there is no memory map for the
            // pages: booted on the suite's kernels from 6.1, every such board died before the
            // root mount (an oops in cma_init_reserved_areas(), "Bad page state" floods); 5.10
            // oopsed with the pool 64 MiB past the end and reached the root mount after 60
            // "BUG: Bad page state" with it crossing the end or right after it (the page
            // allocator was given pages it has not got). In a hole between banks the section's
            // memory map may exist: the area is only not activated.
            const bool beyond_end = Interval::of(*r.base, *r.size).end > ram.top();
            out.add(beyond_end ? Severity::error : Severity::warning,
                    r.base_ref ? r.base_ref->where : r.where, r.path,
                    beyond_end
                        ? fmt::format("CMA pool {} {}+{} {} the end of RAM ({}) in this tree: "
                                      "cma_activate_area() walks pages that have no memory map, "
                                      "and the boot dies (booted: an oops in "
                                      "cma_init_reserved_areas() or \"BUG: Bad page state\", "
                                      "then \"Attempted to kill init!\"; 5.10 may instead go on "
                                      "with the page allocator corrupted), unless the bootloader "
                                      "adds more /memory",
                                      r.name, hex(*r.base), hex(*r.size),
                                      *r.base >= ram.top() ? "lies beyond" : "crosses",
                                      hex(ram.top()))
                        : fmt::format("CMA pool {} {}+{} is not inside the /memory banks of this "
                                      "tree: {}",
                                      r.name, hex(*r.base), hex(*r.size), cma_outside_words(r)));
        }
        if (r.dynamic && !r.alloc_ranges.empty() && r.size) {
            bool any = alloc_ranges_overlap_ram(ctx, r);
            // The pool is lost on the memory this tree describes: an error (booted: every kernel
            // of scripts/boot-truth prints the line, 5.10 prints nothing and has no pool).
            if (!any)
                out.add(Severity::error, r.where, r.path,
                        fmt::format("no alloc-ranges entry of {} overlaps the /memory banks of "
                                    "this tree by {} or more: memblock_phys_alloc_range() only "
                                    "allocates RAM, so the kernel prints \"OF: reserved mem: "
                                    "failed to allocate memory for node '{}': size {} MiB\" "
                                    "(unless the bootloader adds more /memory)",
                                    r.name, amount(*r.size), r.name, *r.size >> 20));
        }
    }
}

extern const CheckInfo outside_memory{
    "outside-memory", Severity::error, true,
    "CMA pools outside the /memory banks (the kernel cannot activate them) and alloc-ranges "
    "that hold no RAM",
    check_outside_memory};

// arm-section-split: 32-bit arm without LPAE maps lowmem in 1 MiB sections, two to a 2 MiB PMD
// (map_lowmem(), arch/arm/mm/mmu.c). When the RAM before a no-map hole ends in the first half of
// a PMD (its last MiB mapped as a section) and the RAM after the hole resumes inside the same
// PMD off a 1 MiB boundary, mapping that RAM needs a page table there: arm_pte_alloc() finds the
// section instead and hits BUG_ON(pmd_bad(*pmd)) — in paging_init(), before the console or the
// exception vectors, so the boot hangs silently (every version read: 5.10 to 7.2). Booted on
// Debian's 7.2 armmp: a 64 KiB no-map region at 0x4e100000 hangs it right after "cma: Reserved
// … MiB", the same region grown to 1 MiB boots; armmp-lpae (2 MiB sections) boots both.
// No-map holes as map_lowmem() sees them: 6.12+ sets up static nodes after paging_init(), so
// every no-map region is still a hole; before, a reusable no-map shared-dma-pool has been
// refused and memblock_clear_nomap()ed by then.

void check_arm_section_split(const Context& ctx, Findings& out) {
    const auto& m = ctx.model;
    if (m.arch != kernel::Arch::arm || m.phys_addr_64bit) return;
    const auto& banks = ctx.reservations.memory;
    if (banks.empty()) return;
    const bool restructured = kernel::reserved_mem_rules(m.version).restructured;
    auto ram = ram_of(banks);
    IntervalSet holes;
    std::vector<const Region*> hole_regions;
    for (const auto& r : ctx.reservations.regions) {
        if (r.disabled || !r.accepted_by_parser || !r.no_map || r.dynamic || !r.base || !r.size ||
            *r.size == 0)
            continue;
        if (!restructured && r.shared_dma_pool && r.reusable) continue; // refused, nomap cleared
        holes.add(Interval::of(*r.base, *r.size));
        hole_regions.push_back(&r);
    }
    const std::uint64_t ram_start = ram.spans().front().begin;
    for (const auto& h : holes.spans()) {
        if (h.begin % arm_pmd_size != arm_section_size)
            continue; // the hole starts in a PMD's second MiB
        const std::uint64_t pmd_end = h.begin - arm_section_size + arm_pmd_size;
        if (h.end >= pmd_end) continue; // RAM resumes in the next PMD: no shared table
        if (!ram.covers({h.begin - arm_section_size, h.begin}) || !ram.covers({h.end, h.end + 1}))
            continue; // a section before it, and RAM after it in the same PMD
        const Region* r = *std::find_if(hole_regions.begin(), hole_regions.end(),
                                        [&](const Region* x) { return *x->base == h.begin; });
        const bool lowmem = h.begin < ram_start + arm_lowmem_3g;
        out.add(lowmem ? Severity::error : Severity::warning,
                r->base_ref ? r->base_ref->where : r->where, r->path,
                fmt::format("no-map {} ends at {}, inside the 2 MiB PMD whose first MiB {} maps "
                            "as a section; the RAM after it needs a page table in that PMD, and "
                            "arm_pte_alloc() hits BUG_ON(pmd_bad()) in paging_init(), before the "
                            "console: the boot hangs right after \"cma: Reserved … MiB\" ({} "
                            "without LPAE maps lowmem in 1 MiB sections); ending the region at "
                            "{} avoids it{}",
                            r->name, hex(h.end), kernel_name(m), kernel_name(m), hex(pmd_end),
                            lowmem ? ""
                                   : " — if it is in lowmem (768 MiB above the start of RAM "
                                     "with VMSPLIT_3G)"));
    }
}

extern const CheckInfo arm_section_split{
    "arm-section-split",
    Severity::error,
    true,
    "arm without LPAE: a no-map region that splits a 2 MiB PMD after a 1 MiB section hangs the "
    "boot (BUG_ON in arm_pte_alloc)",
    check_arm_section_split,
    &reserved_memory_well_formed};

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

extern const CheckInfo outside_memory_device{
    "outside-memory-device", Severity::note, false,
    "non-CMA reservations outside the /memory banks (SRAM, VRAM: the kernel accepts them)",
    check_outside_memory_device};

} // namespace cmalign::checks::entries
