// The PCP model in boot order. A second, deliberately plain model written from the
// kernel sources runs the steps as the kernel runs them, and compute_pcp() must agree with it for
// watermark_scale_factor 1, 10, 1000, 3000 and THP always/madvise/never:
//   postcore_initcall init_per_zone_wmark_min()  calculate_min_free_kbytes(),
//   setup_per_zone_wmarks() subsys_initcall hugepage_init()              start_stop_khugepaged() →
//   set_recommended_min_free_kbytes() do_sysctl_args() (init/main.c)
//   watermark_scale_factor_sysctl_handler() →
//                                                setup_per_zone_wmarks() only
// with the boot-time `static int watermark_scale_factor = 10` (mm/page_alloc.c, 6.1 and 6.12)
// until the sysctl is written. The arithmetic below is the kernel's, line by line; nothing in it
// calls cmalign.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cmalign/calc/pcp.hpp"
#include "cmalign/tune.hpp"

using namespace cmalign;
using namespace cmalign::calc;

namespace {

// One node of an arm64 16K kernel, 6.12: PAGE_SHIFT 14, pageblock_order 11 (HPAGE_PMD_ORDER).
struct KernelByHand {
    static constexpr int page_shift = 14;
    static constexpr unsigned long pageblock_nr_pages = 1ul << 11;
    std::vector<unsigned long> managed; // ZONE_DMA, ZONE_NORMAL (both <= gfp_zone(GFP_USER))
    std::vector<unsigned long> wmark_min, wmark_low, wmark_high;
    int min_free_kbytes = 1024; // mm/page_alloc.c initial value
    int watermark_scale_factor = 10;

    explicit KernelByHand(std::vector<unsigned long> m)
        : managed(std::move(m)), wmark_min(managed.size()), wmark_low(managed.size()),
          wmark_high(managed.size()) {}

    // lib/math/int_sqrt.c: floor(sqrt(x)), here through double and a fix-up.
    static unsigned long int_sqrt(unsigned long x) {
        auto r = static_cast<unsigned long>(std::sqrt(static_cast<double>(x)));
        while (r * r > x)
            --r;
        while ((r + 1) * (r + 1) <= x)
            ++r;
        return r;
    }
    // include/linux/math.h mult_frac(x, n, d)
    static unsigned long mult_frac(unsigned long x, unsigned long n, unsigned long d) {
        unsigned long q = x / d, r = x % d;
        return q * n + r * n / d;
    }
    // mm/page_alloc.c nr_free_zone_pages(gfp_zone(GFP_USER)): managed - high watermark.
    unsigned long nr_free_buffer_pages() const {
        unsigned long sum = 0;
        for (std::size_t i = 0; i < managed.size(); ++i)
            if (managed[i] > wmark_high[i]) sum += managed[i] - wmark_high[i];
        return sum;
    }
    // mm/page_alloc.c calculate_min_free_kbytes() (user_min_free_kbytes is -1 at boot)
    void calculate_min_free_kbytes() {
        unsigned long lowmem_kbytes = nr_free_buffer_pages() * ((1ul << page_shift) >> 10);
        long new_min = static_cast<long>(int_sqrt(lowmem_kbytes * 16));
        min_free_kbytes = static_cast<int>(std::clamp(new_min, 128l, 262144l));
    }
    // mm/page_alloc.c __setup_per_zone_wmarks() (no highmem, no movable zone)
    void setup_per_zone_wmarks() {
        unsigned long pages_min = static_cast<unsigned long>(min_free_kbytes) >> (page_shift - 10);
        unsigned long lowmem_pages = 0;
        for (auto m : managed)
            lowmem_pages += m;
        for (std::size_t i = 0; i < managed.size(); ++i) {
            unsigned long tmp = pages_min * managed[i] / lowmem_pages;
            wmark_min[i] = tmp;
            tmp = std::max(
                tmp >> 2,
                mult_frac(managed[i], static_cast<unsigned long>(watermark_scale_factor), 10000));
            wmark_low[i] = wmark_min[i] + tmp;
            wmark_high[i] = wmark_min[i] + tmp * 2;
        }
    }
    // mm/khugepaged.c set_recommended_min_free_kbytes(); `enabled`: hugepage_pmd_enabled()
    void set_recommended_min_free_kbytes(bool enabled) {
        if (!enabled) {
            calculate_min_free_kbytes();
        } else {
            unsigned long nr_zones = 0;
            for (auto m : managed)
                nr_zones += m > 0; // for_each_populated_zone, zone_idx <= gfp_zone(GFP_USER)
            unsigned long recommended_min = pageblock_nr_pages * nr_zones * 2;
            recommended_min += pageblock_nr_pages * nr_zones * 3 * 3; // MIGRATE_PCPTYPES^2
            recommended_min = std::min(recommended_min, nr_free_buffer_pages() / 20);
            recommended_min <<= (page_shift - 10);
            if (recommended_min > static_cast<unsigned long>(min_free_kbytes))
                min_free_kbytes = static_cast<int>(recommended_min);
        }
        setup_per_zone_wmarks();
    }
    // The boot, then the sysctl as do_sysctl_args() writes it.
    void boot(ThpMode thp, int scale_factor_sysctl) {
        calculate_min_free_kbytes(); // init_per_zone_wmark_min()
        setup_per_zone_wmarks();
        if (thp != ThpMode::not_built) // hugepage_init() (>= 512 MiB of RAM here)
            set_recommended_min_free_kbytes(thp == ThpMode::always || thp == ThpMode::madvise);
        watermark_scale_factor = scale_factor_sysctl; // watermark_scale_factor_sysctl_handler()
        setup_per_zone_wmarks();
    }
};

PcpInput arm64_16k_612(ThpMode thp, unsigned long dma, unsigned long normal) {
    PcpInput in;
    in.version = KernelVersion{6, 12, 0, false};
    in.page_shift = 14;
    in.page_size = 16384;
    in.pageblock_order = 11;
    in.thp = thp;
    in.zones.push_back({0, ZoneType::dma, dma, std::nullopt});
    in.zones.push_back({0, ZoneType::dma32, 0, std::nullopt});
    in.zones.push_back({0, ZoneType::normal, normal, std::nullopt});
    return in;
}

} // namespace

TEST_CASE("scale factors 1, 10, 1000, 3000 with THP always/madvise/never, in boot order") {
    // 1 GiB and 3 GiB of 16K pages less some reserved memory: DMA 64880, Normal 195000 pages.
    const unsigned long dma = 64880, normal = 195000;
    for (ThpMode thp : {ThpMode::always, ThpMode::madvise, ThpMode::never}) {
        for (int factor : {1, 10, 1000, 3000}) {
            CAPTURE(to_string(thp));
            CAPTURE(factor);
            KernelByHand k({dma, normal});
            k.boot(thp, factor);
            auto in = arm64_16k_612(thp, dma, normal);
            if (factor != 10) in.sysctls.watermark_scale_factor = factor;
            auto r = compute_pcp(in);
            CHECK(r.min_free_kbytes == k.min_free_kbytes);
            CHECK(r.watermark_scale_factor == factor);
            const ZoneResult& rd = r.zones[0];
            const ZoneResult& rn = r.zones[2];
            CHECK(rd.watermarks.min == k.wmark_min[0]);
            CHECK(rd.watermarks.low == k.wmark_low[0]);
            CHECK(rd.watermarks.high == k.wmark_high[0]);
            CHECK(rn.watermarks.min == k.wmark_min[1]);
            CHECK(rn.watermarks.low == k.wmark_low[1]);
            CHECK(rn.watermarks.high == k.wmark_high[1]);
            // zone_highsize(): low watermark / CPUs (1), at least batch * 4.
            CHECK(rn.high_min == std::max<std::uint64_t>(k.wmark_low[1], 4u * rn.batch));
        }
    }
}

TEST_CASE("worked example: the scale factor does not move min_free_kbytes") {
    // One 16K zone of 64880 managed pages, THP always. The sqrt rule: int_sqrt(64880 * 16 * 16 =
    // 16609280) = 4075 KiB → pages_min 254: min 254, delta max(254 >> 2 = 63,
    // mult_frac(64880, 10, 10000) = 64) = 64, high 382. So nr_free_buffer_pages() = 64880 - 382
    // = 64498 and the THP recommendation min(2048 * 11, 64498 / 20 = 3224) = 3224 pages =
    // 51584 KiB. The factor 1000 written afterwards redoes the watermarks only.
    KernelByHand k({64880});
    k.boot(ThpMode::always, 1000);
    CHECK(k.min_free_kbytes == 51584);
    PcpInput in;
    in.version = KernelVersion{6, 12, 0, false};
    in.page_shift = 14;
    in.page_size = 16384;
    in.pageblock_order = 11;
    in.thp = ThpMode::always;
    in.zones.push_back({0, ZoneType::dma, 64880, std::nullopt});
    in.sysctls.watermark_scale_factor = 1000;
    auto r = compute_pcp(in);
    CHECK(r.min_free_kbytes == 51584);
    // With the factor applied during the boot (the old model) the high watermark would be
    // 254 + 2 * 6488 = 13230 and the recommendation (64880 - 13230) / 20 = 2582 pages = 41312.
    CHECK(r.min_free_kbytes != 41312);
    // After the sysctl: pages_min 3224, delta max(806, mult_frac(64880, 1000, 10000) = 6488).
    CHECK(r.zones[0].watermarks.min == 3224);
    CHECK(r.zones[0].watermarks.low == 3224 + 6488);
    CHECK(r.zones[0].watermarks.high == 3224 + 2 * 6488);
}

TEST_CASE("6.1 reports the high-order free path as it is: the whole list, not batch << scale") {
    auto in = arm64_16k_612(ThpMode::always, 64880, 195000);
    auto r612 = compute_pcp(in);
    CHECK(r612.zones[2].high_order_free_capped);
    CHECK(r612.zones[2].max_pages_high_order_free == r612.zones[2].max_pages_per_lock);
    in.version = KernelVersion{6, 1, 0, false};
    auto r61 = compute_pcp(in);
    // mm/page_alloc.c nr_pcp_free() (6.1): `if (unlikely(free_high)) return pcp->count;`
    CHECK_FALSE(r61.zones[2].high_order_free_capped);
    CHECK(r61.zones[2].max_pages_high_order_free == r61.zones[2].high_max);
    CHECK(r61.zones[2].max_pages_high_order_free > r61.zones[2].max_pages_per_lock);
}

TEST_CASE("worked example: arm64 16K, 6.12, 1 GiB, THP always, watermark_scale_factor 1000") {
    // 51904 is what an independent model written from the 6.1/6.12 sources computes;
    // the hand model above must give it too from the managed pages cmalign assumed.
    PcpRequest r;
    r.config.config_files = {std::string(CMALIGN_SOURCE_DIR) +
                             "/examples/configs/arm64-16k.config"};
    r.config.kernel_version = "6.12";
    r.memory = "1G";
    r.sysctls = {"vm.watermark_scale_factor=1000"};
    auto o = run_pcp(r);
    REQUIRE(!o.diags.has_errors());
    REQUIRE(o.input.thp == ThpMode::always);
    REQUIRE(o.input.page_shift == 14);
    CHECK(o.result.min_free_kbytes == 51904);
    std::vector<unsigned long> managed;
    for (const auto& z : o.result.zones)
        if (z.managed_pages > 0) managed.push_back(z.managed_pages);
    REQUIRE(managed.size() == 1);
    KernelByHand k(managed);
    k.boot(ThpMode::always, 1000);
    CHECK(k.min_free_kbytes == 51904);
    const auto* z = o.result.largest_zone();
    REQUIRE(z != nullptr);
    CHECK(z->watermarks.min == k.wmark_min[0]);
    CHECK(z->watermarks.low == k.wmark_low[0]);
    CHECK(z->watermarks.high == k.wmark_high[0]);
}

TEST_CASE("sysctl ranges as the kernel's handlers accept them") {
    auto run = [](const std::string& sysctl) {
        PcpRequest r;
        r.config.config_files = {std::string(CMALIGN_SOURCE_DIR) +
                                 "/examples/configs/arm64-16k.config"};
        r.config.kernel_version = "6.12";
        r.memory = "1G";
        r.sysctls = {sysctl};
        return run_pcp(r);
    };
    std::string messages;
    auto text = [&](const PcpOutcome& o) {
        messages.clear();
        for (const auto& d : o.diags.items())
            messages += format_gcc(d) + "\n";
        return messages;
    };
    // watermark_scale_factor: extra1 SYSCTL_ONE, extra2 SYSCTL_THREE_THOUSAND (-EINVAL outside).
    for (const char* bad : {"vm.watermark_scale_factor=3001", "vm.watermark_scale_factor=0",
                            "vm.watermark_scale_factor=-5"}) {
        CAPTURE(bad);
        auto o = run(bad);
        CHECK(o.exit_code() == ExitCode::input_error);
        CHECK(text(o).find("expected an integer from 1 to 3000") != std::string::npos);
    }
    for (const char* good : {"vm.watermark_scale_factor=1", "vm.watermark_scale_factor=3000"}) {
        CAPTURE(good);
        CHECK(!run(good).diags.has_errors());
    }
    // min_free_kbytes: extra1 SYSCTL_ZERO, no upper bound but the int.
    CHECK(run("vm.min_free_kbytes=-1").exit_code() == ExitCode::input_error);
    CHECK(run("vm.min_free_kbytes=99999999999999999999").exit_code() == ExitCode::input_error);
    CHECK(!run("vm.min_free_kbytes=0").diags.has_errors());
}
