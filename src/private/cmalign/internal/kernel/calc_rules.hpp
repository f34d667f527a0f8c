// The versioned rules of the memory-tuning calculators (calc/), as data. Kernel knowledge, so it
// lives in the kernel layer: the calculators ask it, the kernel layer includes nothing of calc/.
//
// Each row names a topic, the kernel versions it holds for, the rule in words and the kernel file
// it was read from (Debian 6.1.192 and 6.12.117 trees; other versions through their mainline
// history). Boundaries not confirmed in a tagged tree say "[likely]" in their source.
#pragma once

#include <span>

#include "cmalign/core/version.hpp"

namespace cmalign::kernel::calc_rules {

enum class Topic {
    pcp_batch,           // zone_batchsize()
    pcp_high,            // zone_set_pageset_high_and_batch(): one high, or high_min/high_max
    pcp_batch_scale_max, // CONFIG_PCP_BATCH_SCALE_MAX
    min_free_kbytes,     // calculate_min_free_kbytes()
    thp_min_free_kbytes, // set_recommended_min_free_kbytes()
    thp_small_memory,    // hugepage_init(): no THP below 512 MiB
    watermark_lowmem,    // __setup_per_zone_wmarks(): which zones count as lowmem
    watermarks,          // __setup_per_zone_wmarks(): min/low/high/promo
    lowmem_reserve,      // setup_per_zone_lowmem_reserve()
    heap_orders,         // system_heap.c orders[]
    heap_order4_gfp,     // system_heap.c order_flags[1]
    numa_cma_params,     // cma_pernuma= / numa_cma=
};

struct Rule {
    Topic topic;
    VersionRange versions;
    // A discrete variant of the rule (e.g. 1 = high_min/high_max exist); its meaning per topic
    // is documented at the row.
    int variant;
    const char* rule;
    const char* source;
};

std::span<const Rule> all();

// The row of `topic` that holds for `v`; the nearest row when `v` is outside every range.
const Rule& find(Topic topic, const KernelVersion& v);

// A Kconfig int the calculators read: its default and range.
struct KconfigInt {
    const char* symbol; // no CONFIG_ prefix
    int default_value;
    int lo, hi;
    const char* source;
};
// CONFIG_PCP_BATCH_SCALE_MAX (mm/Kconfig ≥ v6.7 and the 6.1.y backport: default 5, range 0 6);
// whether mainline `v` has it: find(Topic::pcp_batch_scale_max, v).variant == 1.
const KconfigInt& pcp_batch_scale_max();

} // namespace cmalign::kernel::calc_rules
