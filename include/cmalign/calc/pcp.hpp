// Per-CPU page lists (PCP), watermarks and min_free_kbytes, computed as mm/page_alloc.c and
// mm/khugepaged.c of a given kernel version compute them at boot.
//
// The calculator works on plain numbers (zones, managed pages, CPUs, page size, pageblock order,
// THP mode, PCP_BATCH_SCALE_MAX, sysctls) so that every formula can be tested by hand;
// calc/pcp_setup.cpp turns a configuration and a board description into a PcpInput, step by step
// as run_pcp() (cmalign/tune.hpp) takes them. Versioned rules live in
// cmalign/internal/kernel/calc_rules.hpp as data naming their kernel file and version range.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/core/version.hpp"
#include "cmalign/kernel/zones.hpp"

namespace cmalign::calc {

// enum zone_type of include/linux/mmzone.h, in the kernel's order (kernel/zones.hpp).
using ZoneType = kernel::ZoneType;

const char* zone_name(ZoneType z); // as /proc/zoneinfo prints it: "DMA", "DMA32", "Normal", ...
std::optional<ZoneType> parse_zone_name(std::string_view name); // case-insensitive

// The THP mode the kernel boots with (CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS/MADVISE/NEVER, or the
// transparent_hugepage= boot parameter); not_built: CONFIG_TRANSPARENT_HUGEPAGE=n.
enum class ThpMode { not_built, always, madvise, never };
const char* to_string(ThpMode m);

// vm.* sysctls. nullopt: the kernel's default (the value it computes itself).
struct Sysctls {
    std::optional<long long> min_free_kbytes;
    std::optional<long long> watermark_scale_factor;            // default 10 (1/10000 units)
    std::optional<long long> percpu_pagelist_high_fraction;     // default 0 (auto)
    std::optional<std::vector<long long>> lowmem_reserve_ratio; // one per zone type, kernel order
};

struct ZoneInput {
    int node = 0;
    ZoneType type = ZoneType::normal;
    std::uint64_t managed_pages = 0;
    // populated_zone() tests present_pages; without /proc/zoneinfo managed > 0 stands in for it.
    std::optional<std::uint64_t> present_pages;
    bool populated() const { return present_pages ? *present_pages > 0 : managed_pages > 0; }
};

struct PcpInput {
    KernelVersion version;
    std::uint64_t page_size = 4096;
    int page_shift = 12;
    int pageblock_order = 9;
    ThpMode thp = ThpMode::never;
    int scale_max = 5; // CONFIG_PCP_BATCH_SCALE_MAX in effect
    // Every zone of every node, in the kernel's order (node, then zone type); unpopulated zones
    // included, because the kernel's loops (watermarks, lowmem_reserve) visit them too.
    std::vector<ZoneInput> zones;
    unsigned cpus_per_node = 1; // cpumask_weight(cpumask_of_node(nid)) after SMP bring-up
    Sysctls sysctls;
};

struct Watermarks {
    std::uint64_t min = 0;
    std::uint64_t low = 0;
    std::uint64_t high = 0;
    std::uint64_t promo = 0; // WMARK_PROMO (≥ v6.1)
};

struct ZoneResult {
    int node = 0;
    ZoneType type = ZoneType::normal;
    std::uint64_t managed_pages = 0;
    bool populated = false;
    int batch = 0;
    // ≥ v6.7: the auto-tuning bounds; before v6.7 both equal the single pcp->high.
    std::uint64_t high_min = 0;
    std::uint64_t high_max = 0;
    Watermarks watermarks;
    std::vector<std::uint64_t> lowmem_reserve; // one per zone type of the node
    std::uint64_t max_pages_per_lock = 0;      // batch << scale_max
    // The most pages one batch free of high-order pages (free_high) frees under the lock:
    // ≥ v6.7 min(count, batch << scale_max) = max_pages_per_lock; before (6.1) nr_pcp_free()
    // returns the whole count, bounded only by pcp->high (high_max).
    std::uint64_t max_pages_high_order_free = 0;
    bool high_order_free_capped = true;
};

// One line of the explanation: which formula of which kernel file gave a number.
struct CalcStep {
    std::string quantity;
    long long value = 0;
    std::string rule;
    std::string source;
};

struct ScaleRow {
    int scale = 0;
    std::uint64_t max_pages_per_lock = 0;
    std::uint64_t max_bytes_per_lock = 0;
};

struct PcpResult {
    bool high_autotuned = true;         // ≥ v6.7: high_min/high_max; before: one `high`
    long long min_free_kbytes = 0;      // in effect after boot (or the sysctl when given)
    long long min_free_kbytes_sqrt = 0; // calculate_min_free_kbytes() at boot (clamped)
    std::optional<long long> thp_recommended_kbytes; // set_recommended_min_free_kbytes()
    bool thp_raised = false;
    long long watermark_scale_factor = 10;
    std::vector<long long> lowmem_reserve_ratio;
    int scale_max = 5;
    std::vector<ZoneResult> zones;  // every zone, kernel order; `populated` marks the listed ones
    std::vector<ScaleRow> by_scale; // 0..6 for the largest zone
    std::vector<CalcStep> derivation;
    std::vector<std::string> assumptions;

    // The populated zone with the most managed pages (the top-level keys of docs/json.md).
    const ZoneResult* largest_zone() const;
};

// What the kernel computes; never fails (inputs are validated by the caller).
PcpResult compute_pcp(const PcpInput& input);

// The pieces, exposed so tests can check each rounding step by hand.
int zone_batchsize(std::uint64_t managed_pages, std::uint64_t page_size); // with max(1, …)
std::uint64_t zone_highsize(std::uint64_t total_pages, unsigned split_cpus, int batch);
long long int_sqrt(unsigned long long x);
std::uint64_t mult_frac(std::uint64_t x, std::uint64_t numer, std::uint64_t denom);

} // namespace cmalign::calc
