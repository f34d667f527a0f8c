// The calculators' versioned kernel rules (PCP, watermarks, dma-buf heap, numa_cma=) as rows; see
// cmalign/calc/rules.hpp. Kernel knowledge, so it lives with the other rule tables.
#include "cmalign/calc/rules.hpp"

#include <array>

namespace cmalign::calc::rules {

namespace {

constexpr VersionRange all_versions{0, 0, 99, 99};
constexpr VersionRange since(int major, int minor) {
    return {major, minor, 99, 99};
}
constexpr VersionRange until(int major, int minor) {
    return {0, 0, major, minor};
}

constexpr std::array rows = {
    Rule{Topic::pcp_batch, all_versions, 0,
         "batch = max(1, rounddown_pow_of_two(b + b/2) - 1), b = max(1, min(managed >> 10, "
         "SZ_1M / PAGE_SIZE) / 4)",
         "mm/page_alloc.c zone_batchsize(), zone_set_pageset_high_and_batch() (v5.10–v6.12; "
         "later rewrites give the same numbers)"},
    // variant 0: one pcp->high; variant 1: high_min (low watermark based) and high_max
    // (managed / MIN_PERCPU_PAGELIST_HIGH_FRACTION = 8), Huang Ying's PCP high auto-tuning.
    Rule{Topic::pcp_high, until(6, 6), 0,
         "high = max(total / (cpus of the node + cpu_online), batch << 2), total = "
         "low watermark (fraction 0) or managed / percpu_pagelist_high_fraction",
         "mm/page_alloc.c zone_highsize(), zone_set_pageset_high_and_batch() (≤ v6.6)"},
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
         "(≥ v6.7, 52166607ecc9)"},
    Rule{Topic::min_free_kbytes, all_versions, 0,
         "min_free_kbytes = clamp(int_sqrt(lowmem_kbytes * 16), 128, 262144), lowmem_kbytes = "
         "nr_free_buffer_pages() * PAGE_SIZE/1024 (zones up to Normal, managed - high watermark)",
         "mm/page_alloc.c calculate_min_free_kbytes(), init_per_zone_wmark_min() (postcore "
         "initcall)"},
    Rule{Topic::thp_min_free_kbytes, all_versions, 0,
         "recommended = min(pageblock_nr_pages * nr_zones * (2 + MIGRATE_PCPTYPES^2 = 9), "
         "nr_free_buffer_pages() / 20) pages in KiB; replaces min_free_kbytes when larger",
         "mm/khugepaged.c set_recommended_min_free_kbytes() (subsys_initcall hugepage_init → "
         "start_stop_khugepaged)"},
    Rule{Topic::thp_small_memory, all_versions, 0,
         "totalram_pages() < 512 MiB: THP is switched off and khugepaged never starts",
         "mm/huge_memory.c hugepage_init()"},
    // variant 0: lowmem = every !highmem zone; 1: also without ZONE_MOVABLE.
    Rule{Topic::watermark_lowmem, until(6, 5), 0, "lowmem_pages = Σ managed of !highmem zones",
         "mm/page_alloc.c __setup_per_zone_wmarks() (≤ v6.5)"},
    Rule{Topic::watermark_lowmem, since(6, 6), 1,
         "lowmem_pages = Σ managed of zones that are neither highmem nor ZONE_MOVABLE; Movable "
         "gets the highmem cap",
         "mm/page_alloc.c __setup_per_zone_wmarks() (≥ v6.6 [likely]: \"mm/page_alloc: fix "
         "min_free_kbytes calculation regarding ZONE_MOVABLE\", June 2023; absent in 6.1, present "
         "in 6.12)"},
    Rule{Topic::watermarks, all_versions, 0,
         "min = pages_min * managed / lowmem_pages (highmem: clamp(managed / 1024, 32, 128)); "
         "delta = max(tmp >> 2, mult_frac(managed, watermark_scale_factor, 10000)); low = min + "
         "delta, high = low + delta, promo = high + delta",
         "mm/page_alloc.c __setup_per_zone_wmarks()"},
    Rule{Topic::lowmem_reserve, all_versions, 0,
         "lowmem_reserve[j] of zone i = Σ managed of zones i+1..j / lowmem_reserve_ratio[i] (0 "
         "when the ratio or the zone's managed pages are 0); defaults DMA 256, DMA32 256, Normal "
         "32, HighMem 0, Movable 0",
         "mm/page_alloc.c setup_per_zone_lowmem_reserve(), sysctl_lowmem_reserve_ratio[]"},
    Rule{Topic::heap_orders, all_versions, 0,
         "orders {8, 4, 0}, greedy largest-first; the order never goes back up after a fallback",
         "drivers/dma-buf/heaps/system_heap.c orders[], alloc_largest_available()"},
    // variant 1: order 4 may enter reclaim (MID_ORDER_GFP); 0: it may not (HIGH_ORDER_GFP).
    Rule{Topic::heap_order4_gfp, until(6, 3), 1,
         "order_flags = {HIGH_ORDER_GFP, MID_ORDER_GFP, LOW_ORDER_GFP}: order 4 may reclaim",
         "drivers/dma-buf/heaps/system_heap.c (≤ v6.3)"},
    Rule{Topic::heap_order4_gfp, since(6, 4), 0,
         "order_flags = {HIGH_ORDER_GFP, HIGH_ORDER_GFP, LOW_ORDER_GFP}: orders 8 and 4 never "
         "reclaim (~__GFP_RECLAIM), order 0 may",
         "drivers/dma-buf/heaps/system_heap.c (≥ v6.4, \"dma-buf: system_heap: avoid reclaim for "
         "order 4\")"},
    // variant 0: cma_pernuma= only (CONFIG_DMA_PERNUMA_CMA); 1: also numa_cma=
    // (CONFIG_DMA_NUMA_CMA).
    Rule{Topic::numa_cma_params, until(6, 4), 0,
         "cma_pernuma=SIZE with CONFIG_DMA_PERNUMA_CMA; no numa_cma=",
         "kernel/dma/contiguous.c early_cma_pernuma() (≤ v6.4 [likely])"},
    Rule{Topic::numa_cma_params, since(6, 5), 1,
         "cma_pernuma=SIZE and numa_cma=NODE:SIZE[,NODE:SIZE] with CONFIG_DMA_NUMA_CMA",
         "kernel/dma/contiguous.c early_cma_pernuma(), early_numa_cma() (≥ v6.5 [likely]; present "
         "in 6.12)"},
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

} // namespace cmalign::calc::rules
