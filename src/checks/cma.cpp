// The checks of CMA pools: alignment of base and size (one ladder), CMA configured, alloc-ranges
// that can hold the pool, the default pool, and the number of CMA areas.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cmalign/core/interval.hpp"
#include "cmalign/internal/core/amount.hpp"
#include "cmalign/internal/kernel/default_cma.hpp"
#include "cmalign/internal/kernel/reserved_mem.hpp"
#include "internal.hpp"

namespace cmalign::checks::entries {

using reserved::Kind;
using reserved::Region;

// ---------------------------------------------------------------------------------------------
// cma-base-alignment / cma-size-alignment: kernel/dma/contiguous.c rmem_cma_setup(),
// `!IS_ALIGNED(rmem->base | rmem->size, CMA_MIN_ALIGNMENT_BYTES)` (all versions ≥ 5.19 with
// CMA_MIN_ALIGNMENT_BYTES = PAGE_SIZE << pageblock_order; the model supplies older formulas).
// Base and size climb the same ladder: exact alignment, else the range the kernel may pick at
// boot, else (size only) a note that nothing bounds it.

// One value of a pool the ladder judges, and how its findings are worded.
struct AlignedValue {
    const char* what; // "base", "size"
    std::uint64_t value;
    Location where;
    std::string shown;        // how the value is written in the message
    bool note_when_unbounded; // say so when the kernel decides at boot and nothing bounds it
    // The words after the kernel's reaction, for the alignment that makes the value valid
    // (`at_boot`: the alignment is the largest one the kernel may pick at boot).
    std::string (*tail)(std::uint64_t value, std::uint64_t alignment, bool at_boot);
    // The mechanical fix for that alignment, if any.
    std::vector<FixHint> (*fix)(const Region& r, std::uint64_t value, std::uint64_t alignment);
};

void check_aligned(const Context& ctx, const Region& r, const AlignedValue& v, Findings& out) {
    auto facts = alignment_facts(ctx.model);
    if (facts.exact) {
        if (v.value % *facts.exact == 0) return;
        out.add(Severity::error, v.where, r.path,
                fmt::format("CMA pool {} {} is not a multiple of {}: {}{}", v.what, v.shown,
                            alignment_words(ctx.model, *facts.exact), rejected_pool_words(r),
                            v.tail(v.value, *facts.exact, false)),
                v.fix(r, v.value, *facts.exact));
    } else if (facts.smallest && facts.largest) {
        if (v.value % *facts.smallest != 0)
            out.add(Severity::error, v.where, r.path,
                    fmt::format("CMA pool {} {} is not a multiple of even the smallest CMA "
                                "alignment {} that {} may choose at boot: {}{}",
                                v.what, v.shown, amount(*facts.smallest), kernel_name(ctx.model),
                                rejected_pool_words(r), v.tail(v.value, *facts.largest, true)),
                    v.fix(r, v.value, *facts.largest));
        else if (v.value % *facts.largest != 0)
            out.add(Severity::warning, v.where, r.path,
                    fmt::format("CMA pool {} {} is not a multiple of the CMA alignment {} "
                                "that {} uses when it picks the largest pageblock_order at "
                                "boot; then {}{}",
                                v.what, v.shown, amount(*facts.largest), kernel_name(ctx.model),
                                rejected_pool_words(r), v.tail(v.value, *facts.largest, true)),
                    v.fix(r, v.value, *facts.largest));
    } else if (v.note_when_unbounded) {
        out.add(Severity::note, v.where, r.path,
                fmt::format("{} decides the CMA alignment at boot and the configuration gives "
                            "no bound: the {} {} cannot be checked",
                            kernel_name(ctx.model), v.what, v.shown));
    }
}

std::vector<FixHint> no_fix(const Region&, std::uint64_t, std::uint64_t) {
    return {};
}

// A linux,cma-default pool that cma= overrides is never checked for alignment: rmem_cma_setup()
// (≤ 7.0) bypasses it first, rmem_cma_validate() (7.1+) declines it (cmdline-cma says so).
bool overridden_by_cmdline(const Context& ctx, const Region& r) {
    const auto& cma = ctx.reservations.cma_cmdline;
    return r.cma_default && cma && cma->has_value;
}

void check_cma_base(const Context& ctx, Findings& out) {
    for (const auto& r : ctx.reservations.regions) {
        // Dynamic pools get their base aligned by __reserved_mem_alloc_size(); only reg can be off.
        if (r.kind != Kind::cma || r.dynamic || !r.base || !r.base_ref) continue;
        if (overridden_by_cmdline(ctx, r)) continue;
        auto nearest = [](std::uint64_t base, std::uint64_t alignment, bool at_boot) {
            if (at_boot) return std::string{};
            auto down = base - base % alignment;
            return fmt::format("; the nearest aligned bases are {} and {} (a base is never moved "
                               "automatically)",
                               hex(down), hex(down + alignment));
        };
        check_aligned(ctx, r,
                      {"base", *r.base, r.base_ref->where, hex(*r.base), false, nearest, no_fix},
                      out);
    }
}

void check_cma_size(const Context& ctx, Findings& out) {
    for (const auto& r : ctx.reservations.regions) {
        if (r.kind != Kind::cma || !r.size || !r.size_ref) continue;
        if (overridden_by_cmdline(ctx, r)) continue;
        auto smallest_valid = [](std::uint64_t size, std::uint64_t alignment, bool) {
            auto bigger = round_up(size, alignment);
            return bigger ? fmt::format("; the smallest valid size is {}", amount(*bigger))
                          : std::string{};
        };
        auto grow = [](const Region& region, std::uint64_t size, std::uint64_t alignment) {
            std::vector<FixHint> fix;
            if (auto bigger = round_up(size, alignment))
                fix.push_back({region.size_ref->property, size, *bigger});
            return fix;
        };
        check_aligned(
            ctx, r,
            {"size", *r.size, r.size_ref->where, amount(*r.size), true, smallest_valid, grow}, out);
    }
}

extern const CheckInfo cma_base_alignment{
    "cma-base-alignment", Severity::error, true,
    "a CMA pool's base must be a multiple of CMA_MIN_ALIGNMENT_BYTES, else the pool is lost",
    check_cma_base};
extern const CheckInfo cma_size_alignment{
    "cma-size-alignment", Severity::error, true,
    "a CMA pool's size must be a multiple of CMA_MIN_ALIGNMENT_BYTES, else the pool is lost",
    check_cma_size};

// cma-disabled: without CONFIG_DMA_CMA (which depends on CONFIG_CMA) kernel/dma/contiguous.c and
// its rmem_cma_setup() are not built. drivers/of/of_reserved_mem.c __reserved_mem_init_node()
// (6.1 and 6.12) then tries the other "shared-dma-pool" handler, rmem_dma_setup() of
// kernel/dma/coherent.c (built with CONFIG_DMA_DECLARE_COHERENT), which returns -EINVAL for a
// `reusable` node; any error but -ENOENT makes the caller print "node %s compatible matching fail"
// and give the memory back (memblock_phys_free). With no handler at all (-ENOENT) the memory stays
// reserved but rmem->ops stays NULL, so of_reserved_mem_device_init() fails with -EINVAL for every
// device that names the region. Either way the pool is lost: an error.
// From v7.1 rmem_dma_setup() declines `reusable` with -ENODEV like a missing handler, so the
// memory stays reserved in both cases (7.2.13 kernel/dma/coherent.c).

void check_cma_disabled(const Context& ctx, Findings& out) {
    const auto& m = ctx.model;
    if (m.cma && m.dma_cma) return;
    for (const auto& r : ctx.reservations.regions) {
        if (r.declared_kind != Kind::cma || r.disabled || r.no_map || !r.accepted_by_parser)
            continue;
        std::string freed = fmt::format(
            "rmem_dma_setup() (kernel/dma/coherent.c) refuses `reusable` with -EINVAL, so the "
            "kernel prints \"OF: reserved mem: node {} compatible matching fail\" and frees the "
            "memory",
            r.name);
        std::string kept = "no handler claims shared-dma-pool, so the memory stays reserved but "
                           "unusable: of_reserved_mem_device_init() fails with -EINVAL for the "
                           "devices that use it";
        std::string outcome;
        if (kernel::reserved_mem_rules(m.version).declined_is_enodev)
            outcome = "rmem_dma_setup() (kernel/dma/coherent.c) declines `reusable` with -ENODEV "
                      "as if there were no handler, so without a message " +
                      kept;
        else if (!m.dma_declare_coherent)
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

extern const CheckInfo cma_disabled{
    "cma-disabled",
    Severity::error,
    true,
    "a reusable shared-dma-pool needs CONFIG_CMA and CONFIG_DMA_CMA, else the pool is lost",
    check_cma_disabled,
    &reserved_memory_well_formed};

// cma-alloc-ranges: __reserved_mem_alloc_size() raises the alignment of a dynamic CMA pool to
// CMA_MIN_ALIGNMENT_BYTES, then memblock_phys_alloc_range(size, align, start, end) must find an
// aligned block inside one alloc-ranges entry; with none, "failed to allocate memory for node".

void check_cma_alloc_ranges(const Context& ctx, Findings& out) {
    auto facts = alignment_facts(ctx.model);
    if (!facts.exact) return;
    for (const auto& r : ctx.reservations.regions) {
        if (r.kind != Kind::cma || !r.dynamic || r.alloc_ranges.empty() || !r.size) continue;
        std::uint64_t align = std::max(r.alignment.value_or(0), *facts.exact);
        if (alloc_ranges_hold(ctx, r, align)) continue;
        out.add(Severity::error, r.where, r.path,
                fmt::format("no alloc-ranges entry of {} holds {} at an address aligned to {} "
                            "(the CMA alignment of {} raises the node's alignment): the kernel "
                            "prints \"OF: reserved mem: failed to allocate memory for node '{}': "
                            "size {} MiB\" and creates no pool",
                            r.name, amount(*r.size), amount(align), kernel_name(ctx.model), r.name,
                            *r.size >> 20));
    }
}

extern const CheckInfo cma_alloc_ranges{
    "cma-alloc-ranges", Severity::error, true,
    "a dynamic CMA pool needs an alloc-ranges entry that holds its size at the CMA alignment",
    check_cma_alloc_ranges};

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

extern const CheckInfo cma_default{
    "cma-default", Severity::warning, true,
    "several linux,cma-default pools: only the last one set up becomes the default CMA area",
    check_cma_default};

// cma-areas: mm/cma.c cma_init_reserved_mem() "Not enough slots for CMA reserved regions!"
// (MAX_CMA_AREAS = CONFIG_CMA_AREAS from ~6.9, 1 + CONFIG_CMA_AREAS before).

// The CMA pools in the order the kernel sets them up (saved_order(): 6.12+ dynamic nodes first,
// then static ones, in tree order; before, the heapsort of fdt_init_reserved_mem() — booted: with
// 22 dynamic pools 5.10 and 6.1 lose the first and the last, 6.12 and 7.2 the last two), without
// the dynamic ones memblock found no room for (dynamic-no-room).
std::vector<const Region*> cma_setup_order(const Context& ctx) {
    std::set<const Region*> unplaced;
    for (const auto& p : place_dynamic(ctx))
        if (!p.base) unplaced.insert(p.region);
    std::vector<const Region*> pools;
    for (const Region* r : saved_order(ctx))
        if (r->kind == Kind::cma && !unplaced.count(r)) pools.push_back(r);
    return pools;
}

// A dynamic pool's base is CMA-aligned by its allocation; a static one's is its reg.
bool rejected_before_slot(const Context& ctx, const Region& r) {
    return cma_rejects_before_slot(ctx, r, r.dynamic ? 0 : r.base.value_or(0));
}

// The pools that ask for a MAX_CMA_AREAS slot when none is left.
// On arm and riscv from 6.12 a default CMA area the kernel creates takes its slot between the
// dynamic pools and the static ones (kernel::default_cma_before_static_setup()).
std::vector<const Region*> slotless_pools(const Context& ctx, std::size_t* asking = nullptr,
                                          bool* area_slot = nullptr) {
    std::vector<const Region*> out;
    std::size_t slots = 0;
    const auto limit = static_cast<std::size_t>(std::max(ctx.model.cma_areas, 0));
    bool area_counted = !kernel::default_cma_before_static_setup(ctx.model);
    for (const Region* r : cma_setup_order(ctx)) {
        if (rejected_before_slot(ctx, *r)) continue;
        if (!area_counted && !r->dynamic) {
            area_counted = true;
            const auto area = default_area(ctx);
            if (area && area->outcome == DefaultArea::Outcome::created) {
                ++slots;
                if (area_slot) *area_slot = true;
            }
        }
        if (++slots > limit && limit > 0) out.push_back(r);
    }
    if (asking) *asking = slots;
    return out;
}

void check_cma_areas(const Context& ctx, Findings& out) {
    int limit = ctx.model.cma_areas;
    if (limit <= 0) return;
    std::size_t asking = 0;
    bool area_slot = false;
    const auto slotless = slotless_pools(ctx, &asking, &area_slot);
    for (const Region* r : slotless)
        out.add(Severity::error, r->where, r->path,
                fmt::format("{} ask for a slot but MAX_CMA_AREAS is {} on {}: for {} the kernel "
                            "prints \"cma: Not enough slots for CMA reserved regions!\" and "
                            "\"Reserved memory: unable to setup CMA region\", then frees it",
                            area_slot ? fmt::format("{} CMA pools and the default CMA area (set "
                                                    "up before the static pools)",
                                                    asking - 1)
                                      : fmt::format("{} CMA pools", asking),
                            limit, kernel_name(ctx.model), r->name));
    // The pools set up before the default area: all, or on arm and riscv from 6.12 the dynamic
    // ones only.
    const bool before_static = kernel::default_cma_before_static_setup(ctx.model);
    const auto pools = cma_setup_order(ctx);
    std::vector<const Region*> holders;
    for (const Region* r : pools)
        if (!rejected_before_slot(ctx, *r) && (!before_static || r->dynamic)) holders.push_back(r);
    bool has_default =
        std::any_of(holders.begin(), holders.end(), [](const Region* r) { return r->cma_default; });
    // Booted: with the slots full the kernel prints "cma: Not enough slots for CMA reserved
    // regions!" and "cma: Failed to reserve N MiB" for its default area too, which no node names.
    const auto slots = static_cast<std::size_t>(limit);
    if (holders.size() >= slots && !has_default) {
        const Region* last = holders[slots - 1];
        out.add(Severity::warning, last->where, last->path,
                fmt::format("{} CMA pools fill all {} MAX_CMA_AREAS slots of {}: a default CMA "
                            "area (cma= or CONFIG_CMA_SIZE_*) or hugetlb CMA finds none "
                            "(\"cma: Failed to reserve … MiB\")",
                            holders.size() == slots
                                ? fmt::format("the {}", slots)
                                : fmt::format("the first {} of {}", slots, holders.size()),
                            limit, kernel_name(ctx.model)));
    }
}

extern const CheckInfo cma_areas{
    "cma-areas", Severity::error, true,
    "more CMA pools than MAX_CMA_AREAS slots: the extra pools are lost", check_cma_areas};

// arm-dma-remap: on 32-bit arm, dma_contiguous_early_fixup() (arch/arm/mm/dma-mapping.c, built
// with CONFIG_DMA_CMA) queues a region for dma_contiguous_remap(), which in paging_init() clears
// every 2 MiB PMD the region touches in the linear map and then maps back only the region itself
// (iotable_init). Since the restructure of drivers/of/of_reserved_mem.c (v6.13, in 6.12.y) the
// fixup runs when a reusable shared-dma-pool is reserved, before rmem_cma_setup() checks its
// alignment (7.1+: rmem_cma_fixup(), skipped for no-map and for a linux,cma-default pool that
// cma= overrides); 5.10 and 6.1 ran it only for pools rmem_cma_setup() accepted, aligned to
// CMA_MIN_ALIGNMENT_BYTES (≥ 2 MiB there). A region whose base or end is not on a 2 MiB boundary
// thus leaves the rest of its first and last 2 MiB unmapped, also after the region is freed;
// the memory there is in use (memblock allocates top-down in lowmem, the page allocator later),
// so the kernel hangs before its vectors are set up or oopses later. Booted: Debian's 7.2 armmp
// and armmp-lpae hang right after "cma: Reserved … MiB" with such a pool at the top of RAM.
// Only lowmem is remapped (below arm_lowmem_limit: 768 MiB above the start of RAM with
// VMSPLIT_3G and the default vmalloc size; more with the other splits, less with vmalloc=).
// Read in 5.10.223, 6.1.192, 6.12.117 and 7.2.13 (contiguous.c, of_reserved_mem.c,
// arch/arm/mm/dma-mapping.c, mmu.c, mm/vmalloc.c); booted on 7.2 only (no older armmp image).

// Whether the kernel queues `r` for dma_contiguous_remap(): when reserving it (6.12+), or once
// rmem_cma_setup() accepted it (before).
bool queued_for_remap(const Context& ctx, const Region& r) {
    const auto& rules = kernel::reserved_mem_rules(ctx.model.version);
    if (!r.shared_dma_pool || !r.reusable || r.disabled || !r.accepted_by_parser || !r.size ||
        !r.size_ref)
        return false;
    if (rules.cma_fixup_at_reservation)
        return !(rules.declined_is_enodev &&
                 (r.no_map || (r.cma_default && ctx.reservations.cma_cmdline)));
    auto facts = alignment_facts(ctx.model);
    return !r.no_map && facts.exact && *r.size % *facts.exact == 0 &&
           (r.dynamic || (r.base && *r.base % *facts.exact == 0));
}

// Two queued regions that overlap: iotable_init() registers each remapped range as a static
// vm area, and vm_area_add_early() (mm/vmalloc.c) has BUG_ON() for overlapping ones, hit in
// paging_init() before the exception vectors exist: a silent hang (booted: 7.2 armmp).
void check_remap_overlaps(const Context& ctx, Findings& out) {
    std::vector<const Region*> fixed;
    for (const auto& r : ctx.reservations.regions)
        if (!r.dynamic && r.base && r.base_ref && queued_for_remap(ctx, r)) fixed.push_back(&r);
    for (std::size_t i = 0; i < fixed.size(); ++i)
        for (std::size_t j = 0; j < i; ++j) {
            const auto& a = *fixed[j];
            const auto& b = *fixed[i];
            if (!overlaps(Interval::of(*a.base, *a.size), Interval::of(*b.base, *b.size))) continue;
            out.add(Severity::error, b.base_ref->where, b.path,
                    fmt::format("{} overlaps {}, and {} queues both reusable shared-dma-pools for "
                                "dma_contiguous_remap(): the second overlapping remap hits "
                                "BUG_ON() in vm_area_add_early() during paging_init(), before the "
                                "console, so the boot hangs right after \"cma: Reserved … MiB\"",
                                b.name, a.name, kernel_name(ctx.model)));
        }
}

// dma_mmu_remap[] has MAX_CMA_AREAS entries and dma_contiguous_early_fixup() does not check
// its count: since 6.12 every reusable pool is queued, rejected or not, plus the default CMA
// area, so more of them than slots write past the array. What that overwrites is the kernel's
// build's business (booted: 22 pools on 7.2 armmp did not hang by themselves): a warning.
void check_remap_slots(const Context& ctx, Findings& out) {
    std::vector<const Region*> queued;
    for (const auto& r : ctx.reservations.regions)
        if (queued_for_remap(ctx, r)) queued.push_back(&r);
    const auto limit = static_cast<std::size_t>(std::max(ctx.model.cma_areas, 0));
    if (limit == 0 || queued.size() < limit) return;
    // The default CMA area (CONFIG_CMA_SIZE_* or cma=) is queued after the tree's pools.
    const Region& r = *queued[limit - 1];
    out.add(Severity::warning, r.where, r.path,
            fmt::format("{} reusable shared-dma-pools are queued for dma_contiguous_remap() on {}, "
                        "rejected ones included, and with the default CMA area that is more than "
                        "the {} entries of dma_mmu_remap[] (MAX_CMA_AREAS), which "
                        "dma_contiguous_early_fixup() fills without a bound check: the kernel "
                        "writes past the array (undefined behaviour in early boot)",
                        queued.size(), kernel_name(ctx.model), limit));
}

// A queued dynamic pool that is then lost — rejected for its size, or left without a CMA slot —
// is freed at the top of lowmem, where memblock places the default CMA area (CONFIG_CMA_SIZE_*
// or cma=) next when all RAM is lowmem; both stay queued, so the remaps overlap: BUG_ON() in
// vm_area_add_early(). Booted on 7.2: 22 dynamic 4 MiB pools in 512 MiB hang armmp (rejected
// for the 8 MiB alignment) and armmp-lpae (14 without a slot); in 1 GiB, where the default
// area goes to highmem and is not remapped, both boot.
void check_freed_dynamic(const Context& ctx, Findings& out) {
    auto facts = alignment_facts(ctx.model);
    const auto& banks = ctx.reservations.memory;
    if (!facts.exact || banks.empty()) return;
    auto ram = ram_of(banks);
    if (ram.top() > ram.spans().front().begin + arm_lowmem_3g) return; // the default area: highmem
    const auto lost = slotless_pools(ctx);
    const std::set<const Region*> slotless(lost.begin(), lost.end());
    for (const auto& r : ctx.reservations.regions) {
        if (!r.dynamic || !queued_for_remap(ctx, r)) continue;
        const bool rejected = *r.size % *facts.exact != 0;
        if (!rejected && !slotless.count(&r)) continue;
        if (rejected && *r.size % arm_pmd_size) continue; // arm-dma-remap's 2 MiB finding
        out.add(Severity::error, r.size_ref->where, r.path,
                fmt::format("{} is lost after {} queued it for dma_contiguous_remap() ({}), and "
                            "its memory is freed at the top of lowmem, where the default CMA area "
                            "(CONFIG_CMA_SIZE_* or cma=) is placed next: the two remaps overlap "
                            "and vm_area_add_early() hits BUG_ON(), so the boot hangs right after "
                            "\"cma: Reserved … MiB\" when the kernel has a default CMA area",
                            r.name, kernel_name(ctx.model),
                            rejected ? fmt::format("its size {} is not a multiple of the CMA "
                                                   "alignment {}",
                                                   amount(*r.size), amount(*facts.exact))
                                     : "no MAX_CMA_AREAS slot is left for it"));
    }
}

void check_arm_dma_remap(const Context& ctx, Findings& out) {
    const auto& m = ctx.model;
    if (m.arch != kernel::Arch::arm || !m.cma || !m.dma_cma) return;
    check_remap_overlaps(ctx, out);
    const auto& rules = kernel::reserved_mem_rules(m.version);
    if (!rules.cma_fixup_at_reservation) return; // accepted pools are CMA-aligned (≥ 2 MiB)
    check_remap_slots(ctx, out);
    check_freed_dynamic(ctx, out);
    const auto& res = ctx.reservations;
    std::optional<std::uint64_t> ram_start;
    for (const auto& bank : res.memory)
        if (bank.range.size && (!ram_start || bank.range.base < *ram_start))
            ram_start = bank.range.base;
    for (const auto& r : res.regions) {
        if (!queued_for_remap(ctx, r)) continue;
        // A dynamic pool's base is aligned to at least CMA_MIN_ALIGNMENT_BYTES (≥ 2 MiB on arm).
        std::uint64_t base = r.dynamic ? 0 : r.base.value_or(0);
        if (!r.dynamic && !r.base) continue;
        if (base % arm_pmd_size == 0 && *r.size % arm_pmd_size == 0) continue;
        auto end = Interval::of(base, *r.size).end;
        std::string where;
        if (r.dynamic) {
            where = fmt::format("the last {} block it is placed in (memblock places it at the top "
                                "of lowmem unless alloc-ranges say otherwise)",
                                amount(arm_pmd_size));
        } else {
            auto first = base - base % arm_pmd_size;
            auto last = round_up(end, arm_pmd_size).value_or(end);
            std::vector<std::string> spans;
            if (first < base) spans.push_back(fmt::format("{}..{}", hex(first), hex(base - 1)));
            if (last > end) spans.push_back(fmt::format("{}..{}", hex(end), hex(last - 1)));
            where = fmt::format("{}", fmt::join(spans, " and "));
        }
        // Above the 3G split's lowmem the region may be highmem, which is not remapped.
        bool surely_lowmem = r.dynamic || (ram_start && base < *ram_start + arm_lowmem_3g);
        Location at = (!r.dynamic && r.base_ref && base % arm_pmd_size) ? r.base_ref->where
                                                                        : r.size_ref->where;
        out.add(surely_lowmem ? Severity::error : Severity::warning, at, r.path,
                fmt::format("{} {} on a 2 MiB boundary: {} queues this reusable shared-dma-pool "
                            "for dma_contiguous_remap() when it reserves it, before its alignment "
                            "is checked, and that remap clears the whole 2 MiB PMDs of the linear "
                            "map and maps back only the region, so {} stays unmapped while the "
                            "kernel uses that memory: the boot hangs early (right after \"cma: "
                            "Reserved … MiB\", before the console) or oopses later{}",
                            r.name, base % arm_pmd_size ? "does not start" : "does not end",
                            kernel_name(m), where,
                            surely_lowmem
                                ? ""
                                : " — if the region is in lowmem (below arm_lowmem_limit: 768 "
                                  "MiB above the start of RAM with VMSPLIT_3G); above it, in "
                                  "highmem, nothing is remapped"));
    }
}

extern const CheckInfo arm_dma_remap{
    "arm-dma-remap",
    Severity::error,
    true,
    "arm (32-bit) 6.12+: a reusable shared-dma-pool not on 2 MiB boundaries unmaps the memory "
    "beside it (dma_contiguous_remap): the boot hangs or oopses",
    check_arm_dma_remap,
    &reserved_memory_well_formed};

} // namespace cmalign::checks::entries
