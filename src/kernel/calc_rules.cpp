// The calculators' versioned kernel rules (PCP, watermarks, dma-buf heap, numa_cma=) as rows; see
// cmalign/internal/kernel/calc_rules.hpp. Kernel knowledge, so it lives with the other rule tables.
#include "cmalign/internal/kernel/calc_rules.hpp"

#include <array>

namespace cmalign::kernel::calc_rules {

namespace {

constexpr VersionRange all_versions{0, 0, 99, 99};
constexpr VersionRange since(int major, int minor) {
    return {major, minor, 99, 99};
}
constexpr VersionRange until(int major, int minor) {
    return {0, 0, major, minor};
}
constexpr VersionRange between_versions(int first_major, int first_minor, int last_major,
                                        int last_minor) {
    return {first_major, first_minor, last_major, last_minor};
}

constexpr std::array rows = {
    // 7.2.13 writes it as b = min(managed >> 12, SZ_256K / PAGE_SIZE), "if (batch <= 1) return
    // 1": the same numbers for every managed count and page size.
    Rule{Topic::pcp_batch, all_versions, 0,
         "batch = max(1, rounddown_pow_of_two(b + b/2) - 1), b = max(1, min(managed >> 10, "
         "SZ_1M / PAGE_SIZE) / 4)",
         "mm/page_alloc.c zone_batchsize() (read in 5.10.223, 6.1.192, 6.12.117; 7.2.13 spells "
         "it min(managed >> 12, SZ_256K / PAGE_SIZE), the same numbers)"},
    // variant 2: pcp->high = 6 * batch (or managed / percpu_pagelist_fraction with batch =
    // clamp(high / 4, 1, PAGE_SHIFT * 8)); variant 0: one pcp->high from zone_highsize();
    // variant 1: high_min (low watermark based) and high_max (managed /
    // MIN_PERCPU_PAGELIST_HIGH_FRACTION = 8), Huang Ying's PCP high auto-tuning.
    Rule{Topic::pcp_high, until(5, 13), 2,
         "high = 6 * batch; with vm.percpu_pagelist_fraction: high = managed / fraction and "
         "batch = clamp(high / 4, 1, PAGE_SHIFT * 8)",
         "mm/page_alloc.c pageset_set_batch(), pageset_set_high() (5.10.223; zone_highsize() "
         "came with \"mm/page_alloc: calculate pcp->high based on zone sizes and active CPUs\" "
         "[likely v5.14])"},
    Rule{Topic::pcp_high, between_versions(5, 14, 6, 6), 0,
         "high = max(total / (cpus of the node + cpu_online), batch << 2), total = "
         "low watermark (fraction 0) or managed / percpu_pagelist_high_fraction",
         "mm/page_alloc.c zone_highsize(), zone_set_pageset_high_and_batch() (6.1.192; "
         "v5.14–v6.6)"},
    Rule{Topic::pcp_high, since(6, 7), 1,
         "high_min = zone_highsize(low watermark), high_max = zone_highsize(managed / 8); both "
         "= zone_highsize(managed / fraction) when vm.percpu_pagelist_high_fraction is set",
         "mm/page_alloc.c zone_set_pageset_high_and_batch() (≥ v6.7, \"mm: tune PCP high "
         "automatically\")"},
    // variant 0: no such symbol in mainline (6.1.y stable backported it); 1: Kconfig int.
    Rule{Topic::pcp_batch_scale_max, until(6, 6), 0,
         "no cap in mainline; the 6.1.y backport caps free_factor and drains at "
         "batch << CONFIG_PCP_BATCH_SCALE_MAX",
         "mm/page_alloc.c nr_pcp_free(), drain_pages_zone() (6.1.y backport of 52166607ecc9)"},
    Rule{Topic::pcp_batch_scale_max, since(6, 7), 1,
         "at most batch << CONFIG_PCP_BATCH_SCALE_MAX pages freed or drained under one zone "
         "lock hold (default 5, range 0–6)",
         "mm/Kconfig PCP_BATCH_SCALE_MAX, mm/page_alloc.c nr_pcp_free(), drain_pages_zone() "
         "(≥ v6.7, 52166607ecc9; read in 6.12.117 and 7.2.13)"},
    Rule{Topic::min_free_kbytes, all_versions, 0,
         "min_free_kbytes = clamp(int_sqrt(lowmem_kbytes * 16), 128, 262144), lowmem_kbytes = "
         "nr_free_buffer_pages() * PAGE_SIZE/1024 (zones up to Normal, managed - high watermark)",
         "mm/page_alloc.c calculate_min_free_kbytes(), init_per_zone_wmark_min() (postcore "
         "initcall; read in 5.10.223, 6.1.192, 6.12.117, 7.2.13)"},
    // variant 1: THP "never" leaves min_free_kbytes alone (5.10.223 start_stop_khugepaged()
    // calls set_recommended_min_free_kbytes() only when khugepaged runs); variant 0: "never"
    // recomputes the sqrt rule (bd3400ea173f "mm: khugepaged: recalculate min_free_kbytes after
    // stopping khugepaged", with the v5.16 hugetlb demote series [likely v5.16]; in 6.1.192).
    Rule{Topic::thp_min_free_kbytes, until(5, 15), 1,
         "recommended = min(pageblock_nr_pages * nr_zones * (2 + MIGRATE_PCPTYPES^2 = 9), "
         "nr_free_buffer_pages() / 20) pages in KiB, only while khugepaged runs (THP always or "
         "madvise); replaces min_free_kbytes when larger",
         "mm/khugepaged.c start_stop_khugepaged(), set_recommended_min_free_kbytes() (5.10.223)"},
    Rule{Topic::thp_min_free_kbytes, since(5, 16), 0,
         "recommended = min(pageblock_nr_pages * nr_zones * (2 + MIGRATE_PCPTYPES^2 = 9), "
         "nr_free_buffer_pages() / 20) pages in KiB; replaces min_free_kbytes when larger",
         "mm/khugepaged.c set_recommended_min_free_kbytes() (subsys_initcall hugepage_init → "
         "start_stop_khugepaged; read in 6.1.192, 6.12.117, 7.2.13)"},
    Rule{Topic::thp_small_memory, all_versions, 0,
         "totalram_pages() < 512 MiB: THP is switched off and khugepaged never starts",
         "mm/huge_memory.c hugepage_init() (5.10.223 … 7.2.13)"},
    // variant 0: lowmem = every !highmem zone; 1: also without ZONE_MOVABLE.
    Rule{Topic::watermark_lowmem, until(6, 5), 0, "lowmem_pages = Σ managed of !highmem zones",
         "mm/page_alloc.c __setup_per_zone_wmarks() (≤ v6.5; read in 5.10.223 and 6.1.192)"},
    Rule{Topic::watermark_lowmem, since(6, 6), 1,
         "lowmem_pages = Σ managed of zones that are neither highmem nor ZONE_MOVABLE; Movable "
         "gets the highmem cap",
         "mm/page_alloc.c __setup_per_zone_wmarks() (≥ v6.6 [likely]: \"mm/page_alloc: fix "
         "min_free_kbytes calculation regarding ZONE_MOVABLE\", June 2023; absent in 6.1, present "
         "in 6.12.117 and 7.2.13)"},
    Rule{Topic::watermarks, all_versions, 0,
         "min = pages_min * managed / lowmem_pages (highmem: clamp(managed / 1024, 32, 128)); "
         "delta = max(tmp >> 2, mult_frac(managed, watermark_scale_factor, 10000)); low = min + "
         "delta, high = low + delta, promo = high + delta",
         "mm/page_alloc.c __setup_per_zone_wmarks() (read in 5.10.223, 6.1.192, 6.12.117, "
         "7.2.13)"},
    Rule{Topic::lowmem_reserve, all_versions, 0,
         "lowmem_reserve[j] of zone i = Σ managed of zones i+1..j / lowmem_reserve_ratio[i] (0 "
         "when the ratio or the zone's managed pages are 0); defaults DMA 256, DMA32 256, Normal "
         "32, HighMem 0, Movable 0",
         "mm/page_alloc.c setup_per_zone_lowmem_reserve(), sysctl_lowmem_reserve_ratio[] (read "
         "in 5.10.223, 6.1.192, 6.12.117, 7.2.13)"},
    // variant 1: order-0 pages only (the heap-helpers system heap of v5.6–v5.10).
    Rule{Topic::heap_orders, until(5, 10), 1,
         "order-0 pages only: alloc_page(GFP_KERNEL | __GFP_ZERO) for each page (may reclaim)",
         "drivers/dma-buf/heaps/system_heap.c system_heap_allocate() (5.10.223; orders {8, 4, 0} "
         "came with \"dma-buf: system_heap: Allocate higher order pages if available\" [likely "
         "v5.11])"},
    Rule{Topic::heap_orders, since(5, 11), 0,
         "orders {8, 4, 0}, greedy largest-first; the order never goes back up after a fallback",
         "drivers/dma-buf/heaps/system_heap.c orders[], alloc_largest_available() (6.1.192, "
         "6.12.117, 7.2.13)"},
    // variant 1: order 4 may enter reclaim (MID_ORDER_GFP); 0: it may not (HIGH_ORDER_GFP).
    Rule{Topic::heap_order4_gfp, until(6, 3), 1,
         "order_flags = {HIGH_ORDER_GFP, MID_ORDER_GFP, LOW_ORDER_GFP}: order 4 may reclaim",
         "drivers/dma-buf/heaps/system_heap.c (≤ v6.3)"},
    Rule{Topic::heap_order4_gfp, since(6, 4), 0,
         "order_flags = {HIGH_ORDER_GFP, HIGH_ORDER_GFP, LOW_ORDER_GFP}: orders 8 and 4 never "
         "reclaim (~__GFP_RECLAIM), order 0 may",
         "drivers/dma-buf/heaps/system_heap.c (≥ v6.4, \"dma-buf: system_heap: avoid reclaim for "
         "order 4\"; read in 6.12.117 and 7.2.13)"},
    // variant 0: cma_pernuma= only (CONFIG_DMA_PERNUMA_CMA); 1: also numa_cma=
    // (CONFIG_DMA_NUMA_CMA).
    Rule{Topic::numa_cma_params, until(6, 4), 0,
         "cma_pernuma=SIZE with CONFIG_DMA_PERNUMA_CMA; no numa_cma=",
         "kernel/dma/contiguous.c early_cma_pernuma() (≤ v6.4 [likely]; as in 5.10.223 and "
         "6.1.192)"},
    Rule{Topic::numa_cma_params, since(6, 5), 1,
         "cma_pernuma=SIZE and numa_cma=NODE:SIZE[,NODE:SIZE] with CONFIG_DMA_NUMA_CMA",
         "kernel/dma/contiguous.c early_cma_pernuma(), early_numa_cma() (≥ v6.5 [likely]; present "
         "in 6.12.117 and 7.2.13)"},
};

} // namespace

std::span<const Rule> all() {
    return rows;
}

const Rule& find(Topic topic, const KernelVersion& v) {
    const Rule* nearest = nullptr;
    for (const auto& r : rows) {
        if (r.topic != topic) continue;
        if (r.versions.contains(v)) return r;
        // Outside every range (older or newer than modelled): the last row of the topic is the
        // newest, the first the oldest.
        if (!nearest ||
            v.major * 1000 + v.minor > r.versions.first_major * 1000 + r.versions.first_minor)
            nearest = &r;
    }
    return *nearest;
}

const KconfigInt& pcp_batch_scale_max() {
    static constexpr KconfigInt symbol{"PCP_BATCH_SCALE_MAX", 5, 0, 6,
                                       "mm/Kconfig (read in 6.12.117 and 7.2.13)"};
    return symbol;
}

} // namespace cmalign::kernel::calc_rules
