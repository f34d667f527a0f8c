#include "cmalign/calc/pcp.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "cmalign/internal/kernel/calc_rules.hpp"

namespace cmalign::calc {

namespace rules = kernel::calc_rules;

namespace {

__extension__ typedef unsigned __int128 u128;

constexpr std::array zone_names = {"DMA", "DMA32", "Normal", "HighMem", "Movable", "Device"};

// include/linux/mmzone.h: MIGRATE_UNMOVABLE, MIGRATE_MOVABLE, MIGRATE_RECLAIMABLE.
constexpr std::uint64_t migrate_pcptypes = 3;
// mm/page_alloc.c: calculate_min_free_kbytes() clamp (since v5.7, so every modelled version).
constexpr long long min_free_kbytes_floor = 128;
constexpr long long min_free_kbytes_ceiling = 262144;
// include/linux/swap.h SWAP_CLUSTER_MAX and the cap of __setup_per_zone_wmarks().
constexpr std::uint64_t swap_cluster_max = 32;
constexpr std::uint64_t highmem_min_cap = 128;
// mm/page_alloc.c MIN_PERCPU_PAGELIST_HIGH_FRACTION (≥ v6.7 high_max).
constexpr std::uint64_t min_percpu_pagelist_high_fraction = 8;
// mm/page_alloc.c `static int watermark_scale_factor = 10;` (6.1 and 6.12): the value every
// boot-time watermark setup uses; a vm.watermark_scale_factor sysctl comes after the initcalls.
constexpr long long boot_watermark_scale_factor = 10;

// sysctl_lowmem_reserve_ratio[] defaults (mm/page_alloc.c; Device is not initialised: 0).
long long default_lowmem_reserve_ratio(ZoneType z) {
    switch (z) {
    case ZoneType::dma:
    case ZoneType::dma32:
        return 256;
    case ZoneType::normal:
        return 32;
    default:
        return 0;
    }
}

std::uint64_t rounddown_pow_of_two(std::uint64_t x) {
    std::uint64_t p = 1;
    while (p <= x / 2)
        p <<= 1;
    return p;
}

// Zones gfp_zone(GFP_USER) reaches: DMA, DMA32, Normal (nr_free_buffer_pages(), the THP count).
bool up_to_normal(ZoneType z) {
    return z == ZoneType::dma || z == ZoneType::dma32 || z == ZoneType::normal;
}

class Computation {
public:
    explicit Computation(const PcpInput& in) : in_(in) {
        out_.zones.resize(in.zones.size());
        for (std::size_t i = 0; i < in.zones.size(); ++i) {
            out_.zones[i].node = in.zones[i].node;
            out_.zones[i].type = in.zones[i].type;
            out_.zones[i].managed_pages = in.zones[i].managed_pages;
            out_.zones[i].populated = in.zones[i].populated();
        }
        out_.watermark_scale_factor = in.sysctls.watermark_scale_factor.value_or(10);
        out_.scale_max = in.scale_max;
    }

    PcpResult run() {
        min_free_kbytes();
        pcp_lists();
        lowmem_reserve();
        by_scale();
        return std::move(out_);
    }

private:
    void step(std::string quantity, long long value, std::string rule, std::string source) {
        out_.derivation.push_back({std::move(quantity), value, std::move(rule), std::move(source)});
    }

    std::uint64_t nr_free_buffer_pages() const {
        std::uint64_t sum = 0;
        for (const auto& z : out_.zones) {
            if (!up_to_normal(z.type)) continue;
            if (z.managed_pages > z.watermarks.high) sum += z.managed_pages - z.watermarks.high;
        }
        return sum;
    }

    long long sqrt_rule(std::uint64_t free_buffer_pages) const {
        unsigned long long lowmem_kbytes = free_buffer_pages * (in_.page_size >> 10);
        long long v = int_sqrt(lowmem_kbytes * 16);
        return std::clamp(v, min_free_kbytes_floor, min_free_kbytes_ceiling);
    }

    // __setup_per_zone_wmarks() with the values in effect at that moment.
    void setup_wmarks(long long min_free_kbytes, long long scale_factor) {
        const auto& lowmem_rule = rules::find(rules::Topic::watermark_lowmem, in_.version);
        bool movable_capped = lowmem_rule.variant == 1;
        auto capped = [&](ZoneType t) {
            return t == ZoneType::highmem || (movable_capped && t == ZoneType::movable);
        };
        std::uint64_t pages_min =
            static_cast<std::uint64_t>(min_free_kbytes) >> (in_.page_shift - 10);
        std::uint64_t lowmem_pages = 0;
        for (const auto& z : out_.zones)
            if (!capped(z.type)) lowmem_pages += z.managed_pages;
        for (auto& z : out_.zones) {
            // u64 in the kernel; 128 bits here so that absurd sysctl values cannot wrap.
            std::uint64_t tmp = lowmem_pages
                                    ? static_cast<std::uint64_t>(static_cast<u128>(pages_min) *
                                                                 z.managed_pages / lowmem_pages)
                                    : 0;
            if (capped(z.type))
                z.watermarks.min =
                    std::clamp(z.managed_pages / 1024, swap_cluster_max, highmem_min_cap);
            else
                z.watermarks.min = tmp;
            std::uint64_t delta =
                std::max(tmp >> 2, mult_frac(z.managed_pages,
                                             static_cast<std::uint64_t>(scale_factor), 10000));
            z.watermarks.low = z.watermarks.min + delta;
            z.watermarks.high = z.watermarks.low + delta;
            z.watermarks.promo = z.watermarks.high + delta;
        }
    }

    void min_free_kbytes() {
        const auto& sqrt_rule_row = rules::find(rules::Topic::min_free_kbytes, in_.version);
        // postcore_initcall init_per_zone_wmark_min(): the watermarks are still zero, so
        // nr_free_buffer_pages() is the managed memory of DMA/DMA32/Normal.
        std::uint64_t boot_free = nr_free_buffer_pages();
        long long kb = sqrt_rule(boot_free);
        out_.min_free_kbytes_sqrt = kb;
        step("min_free_kbytes (sqrt rule)", kb,
             fmt::format("clamp(int_sqrt({} KiB * 16), 128, 262144)",
                         boot_free * (in_.page_size >> 10)),
             sqrt_rule_row.source);
        out_.assumptions.push_back(
            "min_free_kbytes is first computed at the postcore initcall, before any watermark is "
            "set, so nr_free_buffer_pages() there is the managed memory of DMA/DMA32/Normal");
        // Boot order (init/main.c, 6.1 and 6.12): postcore_initcall init_per_zone_wmark_min(),
        // subsys_initcall hugepage_init() (mm/huge_memory.c), both with the boot-time scale
        // factor 10; only then do_sysctl_args() applies sysctl.vm.* (and /etc/sysctl.conf later).
        setup_wmarks(kb, boot_watermark_scale_factor);

        std::uint64_t totalram = 0;
        for (const auto& z : out_.zones)
            totalram += z.managed_pages;
        std::uint64_t small = std::uint64_t{512} << (20 - in_.page_shift);
        if (in_.thp == ThpMode::not_built) {
            // No khugepaged: the sqrt value stays.
        } else if (totalram < small) {
            const auto& r = rules::find(rules::Topic::thp_small_memory, in_.version);
            step("thp_disabled_small_memory", static_cast<long long>(totalram),
                 fmt::format("totalram {} pages < 512 MiB ({} pages): THP off, no "
                             "set_recommended_min_free_kbytes()",
                             totalram, small),
                 r.source);
        } else if (in_.thp == ThpMode::always || in_.thp == ThpMode::madvise) {
            const auto& r = rules::find(rules::Topic::thp_min_free_kbytes, in_.version);
            std::uint64_t nr_zones = 0;
            for (const auto& z : out_.zones)
                if (z.populated && up_to_normal(z.type)) ++nr_zones;
            std::uint64_t pageblock_nr_pages = std::uint64_t{1} << in_.pageblock_order;
            std::uint64_t recommended =
                pageblock_nr_pages * nr_zones * (2 + migrate_pcptypes * migrate_pcptypes);
            std::uint64_t cap = nr_free_buffer_pages() / 20;
            std::uint64_t pages = std::min(recommended, cap);
            long long rec_kb = static_cast<long long>(pages << (in_.page_shift - 10));
            out_.thp_recommended_kbytes = rec_kb;
            step("thp_recommended_min_free_kbytes", rec_kb,
                 fmt::format("min({} pageblock pages * {} zones * 11 = {}, nr_free_buffer_pages {} "
                             "/ 20 = {}) = {} pages = {} KiB{}",
                             pageblock_nr_pages, nr_zones, recommended, nr_free_buffer_pages(), cap,
                             pages, rec_kb, recommended > cap ? " (5% cap)" : ""),
                 r.source);
            if (rec_kb > kb) {
                kb = rec_kb;
                out_.thp_raised = true;
            }
            setup_wmarks(kb, boot_watermark_scale_factor);
        } else if (rules::find(rules::Topic::thp_min_free_kbytes, in_.version).variant == 1) {
            // ≤ v5.15: "never" stops khugepaged without touching min_free_kbytes.
            step("min_free_kbytes (THP never)", kb,
                 "khugepaged never starts: the postcore value stays",
                 rules::find(rules::Topic::thp_min_free_kbytes, in_.version).source);
        } else {
            // THP built but "never": start_stop_khugepaged() still calls
            // set_recommended_min_free_kbytes(), which recomputes the sqrt rule, now with the
            // high watermarks subtracted.
            std::uint64_t free = nr_free_buffer_pages();
            kb = sqrt_rule(free);
            step("min_free_kbytes (subsys_initcall hugepage_init, THP never)", kb,
                 fmt::format("clamp(int_sqrt({} KiB * 16), 128, 262144): managed - high watermark",
                             free * (in_.page_size >> 10)),
                 rules::find(rules::Topic::thp_min_free_kbytes, in_.version).source);
            setup_wmarks(kb, boot_watermark_scale_factor);
        }
        out_.min_free_kbytes = kb;
        sysctls();
        const auto& wm = rules::find(rules::Topic::watermarks, in_.version);
        if (const auto* z = largest()) {
            step(fmt::format("watermarks[{}].min", zone_name(z->type)),
                 static_cast<long long>(z->watermarks.min), wm.rule, wm.source);
        }
    }

    // do_sysctl_args() (init/main.c), after every initcall: each handler redoes only what it
    // owns. min_free_kbytes_sysctl_handler() and watermark_scale_factor_sysctl_handler()
    // (mm/page_alloc.c, 6.1 and 6.12) call setup_per_zone_wmarks() with the values in effect;
    // neither recomputes min_free_kbytes, so a scale factor never changes it. The order of the
    // writes does not matter: each setup reads both current values.
    void sysctls() {
        const auto& s = in_.sysctls;
        if (s.min_free_kbytes) {
            out_.min_free_kbytes = *s.min_free_kbytes;
            step("min_free_kbytes (sysctl)", out_.min_free_kbytes,
                 "vm.min_free_kbytes written after the initcalls: user_min_free_kbytes = value, "
                 "setup_per_zone_wmarks()",
                 "mm/page_alloc.c min_free_kbytes_sysctl_handler()");
        }
        if (s.watermark_scale_factor)
            step("watermark_scale_factor (sysctl)", *s.watermark_scale_factor,
                 "vm.watermark_scale_factor written after the initcalls: setup_per_zone_wmarks() "
                 "only; min_free_kbytes stays as the boot computed it",
                 "mm/page_alloc.c watermark_scale_factor_sysctl_handler()");
        if (s.min_free_kbytes || s.watermark_scale_factor)
            setup_wmarks(out_.min_free_kbytes, out_.watermark_scale_factor);
    }

    const ZoneResult* largest() const {
        const ZoneResult* best = nullptr;
        for (const auto& z : out_.zones)
            if (z.populated && (!best || z.managed_pages > best->managed_pages)) best = &z;
        return best;
    }

    void pcp_lists() {
        const auto& high_rule = rules::find(rules::Topic::pcp_high, in_.version);
        out_.high_autotuned = high_rule.variant == 1;
        long long fraction = in_.sysctls.percpu_pagelist_high_fraction.value_or(0);
        unsigned n = std::max(1u, in_.cpus_per_node);
        const auto& scale_rule = rules::find(rules::Topic::pcp_batch_scale_max, in_.version);
        for (auto& z : out_.zones) {
            z.batch = zone_batchsize(z.managed_pages, in_.page_size);
            std::uint64_t by_fraction =
                fraction > 0 ? z.managed_pages / static_cast<std::uint64_t>(fraction) : 0;
            std::uint64_t by_low = z.watermarks.low; // low_wmark_pages(): boost is 0 here
            if (high_rule.variant == 2) {
                // ≤ v5.13 (5.10.223 pageset_set_batch(), pageset_set_high()): no per-CPU
                // split; the fraction sysctl (then vm.percpu_pagelist_fraction) sets high and
                // derives batch from it.
                if (fraction > 0) {
                    std::uint64_t quarter = by_fraction / 4;
                    std::uint64_t cap = static_cast<std::uint64_t>(in_.page_shift) * 8;
                    z.batch = static_cast<int>(std::min(std::max<std::uint64_t>(1, quarter), cap));
                    z.high_min = z.high_max = by_fraction;
                } else {
                    z.high_min = z.high_max = 6 * static_cast<std::uint64_t>(z.batch);
                }
            } else if (fraction > 0) {
                z.high_min = z.high_max = zone_highsize(by_fraction, n, z.batch);
            } else if (out_.high_autotuned) {
                z.high_min = zone_highsize(by_low, n, z.batch);
                z.high_max =
                    zone_highsize(z.managed_pages / min_percpu_pagelist_high_fraction, n, z.batch);
            } else {
                z.high_min = z.high_max = zone_highsize(by_low, n, z.batch);
            }
            z.max_pages_per_lock = static_cast<std::uint64_t>(z.batch) << in_.scale_max;
            z.high_order_free_capped = scale_rule.variant == 1;
            z.max_pages_high_order_free =
                z.high_order_free_capped ? z.max_pages_per_lock : z.high_max;
        }
        if (const auto* z = largest()) {
            const auto& b = rules::find(rules::Topic::pcp_batch, in_.version);
            step(fmt::format("batch[{}]", zone_name(z->type)), z->batch, b.rule, b.source);
            step(fmt::format("high_min[{}]", zone_name(z->type)),
                 static_cast<long long>(z->high_min),
                 fmt::format("{}; split over {} CPU(s)", high_rule.rule, n), high_rule.source);
            if (out_.high_autotuned)
                step(fmt::format("high_max[{}]", zone_name(z->type)),
                     static_cast<long long>(z->high_max), high_rule.rule, high_rule.source);
            const auto& s = rules::find(rules::Topic::pcp_batch_scale_max, in_.version);
            step(fmt::format("max_pages_per_lock[{}]", zone_name(z->type)),
                 static_cast<long long>(z->max_pages_per_lock),
                 fmt::format("batch {} << PCP_BATCH_SCALE_MAX {}", z->batch, in_.scale_max),
                 s.source);
            if (z->high_order_free_capped)
                step(fmt::format("max_pages_high_order_free[{}]", zone_name(z->type)),
                     static_cast<long long>(z->max_pages_high_order_free),
                     "a batch free of high-order pages: min(count, batch << PCP_BATCH_SCALE_MAX)",
                     "mm/page_alloc.c nr_pcp_free() free_high (≥ v6.7; 6.12)");
            else
                step(fmt::format("max_pages_high_order_free[{}]", zone_name(z->type)),
                     static_cast<long long>(z->max_pages_high_order_free),
                     "a batch free of high-order pages frees the whole list (return pcp->count), "
                     "up to pcp->high: PCP_BATCH_SCALE_MAX does not bound it",
                     "mm/page_alloc.c nr_pcp_free() free_high (before v6.7; 6.1)");
        }
    }

    void lowmem_reserve() {
        const auto& r = rules::find(rules::Topic::lowmem_reserve, in_.version);
        // The ratio array is indexed by zone type position within a node (MAX_NR_ZONES).
        std::vector<ZoneType> types;
        for (const auto& z : out_.zones)
            if (z.node == out_.zones.front().node) types.push_back(z.type);
        out_.lowmem_reserve_ratio.clear();
        for (std::size_t i = 0; i < types.size(); ++i) {
            long long ratio = default_lowmem_reserve_ratio(types[i]);
            if (in_.sysctls.lowmem_reserve_ratio && i < in_.sysctls.lowmem_reserve_ratio->size())
                ratio = (*in_.sysctls.lowmem_reserve_ratio)[i];
            out_.lowmem_reserve_ratio.push_back(ratio);
        }
        std::size_t begin = 0;
        while (begin < out_.zones.size()) {
            std::size_t end = begin;
            while (end < out_.zones.size() && out_.zones[end].node == out_.zones[begin].node)
                ++end;
            for (std::size_t i = begin; i < end; ++i)
                out_.zones[i].lowmem_reserve.assign(end - begin, 0);
            for (std::size_t i = begin; i + 1 < end; ++i) {
                std::size_t pos = i - begin;
                long long ratio =
                    pos < out_.lowmem_reserve_ratio.size() ? out_.lowmem_reserve_ratio[pos] : 0;
                bool clear = ratio <= 0 || out_.zones[i].managed_pages == 0;
                std::uint64_t managed = 0;
                for (std::size_t j = i + 1; j < end; ++j) {
                    managed += out_.zones[j].managed_pages;
                    out_.zones[i].lowmem_reserve[j - begin] =
                        clear ? 0 : managed / static_cast<std::uint64_t>(ratio);
                }
            }
            begin = end;
        }
        for (std::size_t i = 0; i < types.size() && i < out_.lowmem_reserve_ratio.size(); ++i)
            step(fmt::format("lowmem_reserve_ratio[{}]", zone_name(types[i])),
                 out_.lowmem_reserve_ratio[i], r.rule, r.source);
    }

    void by_scale() {
        const auto* z = largest();
        if (!z) return;
        for (int s = 0; s <= 6; ++s) {
            std::uint64_t pages = static_cast<std::uint64_t>(z->batch) << s;
            out_.by_scale.push_back({s, pages, pages * in_.page_size});
        }
    }

    const PcpInput& in_;
    PcpResult out_;
};

} // namespace

const char* zone_name(ZoneType z) {
    return zone_names[static_cast<std::size_t>(z)];
}

std::optional<ZoneType> parse_zone_name(std::string_view name) {
    auto lower = [](std::string_view s) {
        std::string out(s);
        for (auto& c : out)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return out;
    };
    std::string wanted = lower(name);
    for (std::size_t i = 0; i < zone_names.size(); ++i)
        if (lower(zone_names[i]) == wanted) return static_cast<ZoneType>(i);
    return std::nullopt;
}

const char* to_string(ThpMode m) {
    switch (m) {
    case ThpMode::not_built:
        return "not built";
    case ThpMode::always:
        return "always";
    case ThpMode::madvise:
        return "madvise";
    case ThpMode::never:
        return "never";
    }
    return "?";
}

const ZoneResult* PcpResult::largest_zone() const {
    const ZoneResult* best = nullptr;
    for (const auto& z : zones)
        if (z.populated && (!best || z.managed_pages > best->managed_pages)) best = &z;
    return best;
}

int zone_batchsize(std::uint64_t managed_pages, std::uint64_t page_size) {
    // mm/page_alloc.c zone_batchsize() (MMU) and the max(1, …) of its caller.
    std::uint64_t b = std::min(managed_pages >> 10, (std::uint64_t{1} << 20) / page_size);
    b /= 4; // "We effectively *= 4 below"
    if (b < 1) b = 1;
    auto batch = static_cast<long long>(rounddown_pow_of_two(b + b / 2)) - 1;
    return static_cast<int>(std::max(1LL, batch));
}

std::uint64_t zone_highsize(std::uint64_t total_pages, unsigned split_cpus, int batch) {
    std::uint64_t high = total_pages / std::max(1u, split_cpus);
    return std::max(high, static_cast<std::uint64_t>(batch) << 2);
}

long long int_sqrt(unsigned long long x) {
    // lib/math/int_sqrt.c: floor(sqrt(x)); done here by bisection on integers.
    unsigned long long lo = 0, hi = 1ULL << 32;
    while (lo + 1 < hi) {
        unsigned long long mid = lo + (hi - lo) / 2;
        if (mid <= x / mid)
            lo = mid;
        else
            hi = mid;
    }
    return static_cast<long long>(lo);
}

std::uint64_t mult_frac(std::uint64_t x, std::uint64_t numer, std::uint64_t denom) {
    // include/linux/math.h mult_frac(): avoids the overflow of x * numer.
    std::uint64_t quot = x / denom;
    std::uint64_t rem = x % denom;
    return quot * numer + rem * numer / denom;
}

PcpResult compute_pcp(const PcpInput& input) {
    return Computation(input).run();
}

} // namespace cmalign::calc
