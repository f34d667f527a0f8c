// PCP batch/high, watermarks and min_free_kbytes against values derived by hand from the kernel
// formulas (mm/page_alloc.c zone_batchsize(), zone_highsize(), calculate_min_free_kbytes(),
// __setup_per_zone_wmarks(), setup_per_zone_lowmem_reserve(); mm/khugepaged.c
// set_recommended_min_free_kbytes()). Each expectation shows its arithmetic.
#include <doctest/doctest.h>

#include "cmalign/calc/pcp.hpp"
#include "cmalign/internal/kernel/calc_rules.hpp"

using namespace cmalign;
using namespace cmalign::calc;

namespace {

KernelVersion v(int major, int minor) {
    return KernelVersion{major, minor, 0, false};
}

PcpInput input(KernelVersion version, int page_shift, int pageblock_order, ThpMode thp,
               std::vector<std::pair<ZoneType, std::uint64_t>> zones, unsigned cpus = 1) {
    PcpInput in;
    in.version = version;
    in.page_shift = page_shift;
    in.page_size = std::uint64_t{1} << page_shift;
    in.pageblock_order = pageblock_order;
    in.thp = thp;
    in.cpus_per_node = cpus;
    for (auto [type, managed] : zones)
        in.zones.push_back({0, type, managed, std::nullopt});
    return in;
}

const ZoneResult& zone(const PcpResult& r, ZoneType t) {
    for (const auto& z : r.zones)
        if (z.type == t) return z;
    FAIL("zone not computed");
    return r.zones.front();
}

} // namespace

TEST_CASE("zone_batchsize at every rounding step, 4K pages") {
    // b = min(managed >> 10, 1M/4K = 256) / 4, at least 1; batch = rounddown_pow2(b + b/2) - 1,
    // at least 1 (the caller's max(1, …)).
    CHECK(zone_batchsize(0, 4096) == 1);       // b 0 → 1; rounddown(1) - 1 = 0 → max(1, 0)
    CHECK(zone_batchsize(4095, 4096) == 1);    // 3 / 4 = 0 → 1 → 0 → 1
    CHECK(zone_batchsize(8192, 4096) == 1);    // 8 / 4 = 2; 2 + 1 = 3 → 2 - 1 = 1
    CHECK(zone_batchsize(12287, 4096) == 1);   // 11 / 4 = 2 → 1
    CHECK(zone_batchsize(12288, 4096) == 3);   // 12 / 4 = 3; 3 + 1 = 4 → 4 - 1 = 3
    CHECK(zone_batchsize(24575, 4096) == 3);   // 23 / 4 = 5; 5 + 2 = 7 → 4 - 1 = 3
    CHECK(zone_batchsize(24576, 4096) == 7);   // 24 / 4 = 6; 6 + 3 = 9 → 8 - 1 = 7
    CHECK(zone_batchsize(45055, 4096) == 7);   // 43 / 4 = 10; 10 + 5 = 15 → 8 - 1 = 7
    CHECK(zone_batchsize(45056, 4096) == 15);  // 44 / 4 = 11; 11 + 5 = 16 → 16 - 1
    CHECK(zone_batchsize(90111, 4096) == 15);  // 87 / 4 = 21; 21 + 10 = 31 → 16 - 1
    CHECK(zone_batchsize(90112, 4096) == 31);  // 88 / 4 = 22; 22 + 11 = 33 → 32 - 1
    CHECK(zone_batchsize(176127, 4096) == 31); // 171 / 4 = 42; 42 + 21 = 63 → 32 - 1
    CHECK(zone_batchsize(176128, 4096) == 63); // 172 / 4 = 43; 43 + 21 = 64 → 64 - 1
    // The 1 MiB cap: 256 / 4 = 64; 64 + 32 = 96 → 64 - 1 = 63 for every larger zone.
    CHECK(zone_batchsize(262144, 4096) == 63);
    CHECK(zone_batchsize(std::uint64_t{1} << 40, 4096) == 63);
}

TEST_CASE("zone_batchsize on 16K and 64K pages: the 1 MiB cap") {
    // 16K: cap 1M/16K = 64 → 16; 16 + 8 = 24 → 16 - 1 = 15.
    CHECK(zone_batchsize(524288, 16384) == 15); // 8 GiB of 16K pages
    CHECK(zone_batchsize(65536, 16384) == 15);  // 64 / 4 = 16, the cap exactly
    CHECK(zone_batchsize(64511, 16384) == 15);  // 62 / 4 = 15; 15 + 7 = 22 → 16 - 1
    CHECK(zone_batchsize(45055, 16384) == 7);   // 43 / 4 = 10; 10 + 5 = 15 → 8 - 1
    CHECK(zone_batchsize(11264, 16384) == 1);   // 11 / 4 = 2; 2 + 1 = 3 → 2 - 1
    // 64K: cap 1M/64K = 16 → 4; 4 + 2 = 6 → 4 - 1 = 3.
    CHECK(zone_batchsize(65536, 65536) == 3);
    CHECK(zone_batchsize(16384, 65536) == 3); // 16 / 4 = 4, the cap exactly
    CHECK(zone_batchsize(12287, 65536) == 1); // 11 / 4 = 2 → 3 → 2 - 1
}

TEST_CASE("zone_highsize: total / cpus, at least batch * 4") {
    CHECK(zone_highsize(1286, 1, 63) == 1286);
    CHECK(zone_highsize(1286, 8, 63) == 252); // 1286 / 8 = 160 < 63 << 2 = 252
    CHECK(zone_highsize(2016, 8, 63) == 252); // 2016 / 8 = 252 = 252
    CHECK(zone_highsize(2024, 8, 63) == 253); // 253 > 252
    CHECK(zone_highsize(14137, 2, 63) == 7068);
}

TEST_CASE("int_sqrt and mult_frac as lib/math and linux/math.h") {
    CHECK(int_sqrt(0) == 0);
    CHECK(int_sqrt(16383) == 127);
    CHECK(int_sqrt(16384) == 128);
    CHECK(int_sqrt(16515072) == 4063); // 4063² = 16507969, 4064² = 16516096
    CHECK(int_sqrt(std::uint64_t{1} << 36) == 262144);
    CHECK(mult_frac(262144, 10, 10000) == 262);
    CHECK(mult_frac(772915, 10, 10000) == 772);
    CHECK(mult_frac(9999, 10, 10000) == 9);
}

TEST_CASE("RZ/G3S: 1 GiB, 1 CPU, 4K, arm64 6.12, THP always") {
    // --memory 1G on arm64: everything below 4 GiB is ZONE_DMA; managed = 262144 pages minus the
    // memmap (262144 * 64 bytes = 16 MiB = 4096 pages) = 258048.
    auto in = input(v(6, 12), 12, 9, ThpMode::always,
                    {{ZoneType::dma, 258048},
                     {ZoneType::dma32, 0},
                     {ZoneType::normal, 0},
                     {ZoneType::movable, 0}});
    auto r = compute_pcp(in);
    const auto& dma = zone(r, ZoneType::dma);
    // 258048 >> 10 = 252 < 256; 252 / 4 = 63; 63 + 31 = 94 → 64 - 1 = 63.
    CHECK(dma.batch == 63);
    CHECK(dma.max_pages_per_lock == 2016); // 63 << 5
    REQUIRE(r.by_scale.size() == 7);
    CHECK(r.by_scale[0].max_pages_per_lock == 63);
    CHECK(r.by_scale[5].max_pages_per_lock == 2016);
    CHECK(r.by_scale[5].max_bytes_per_lock == 2016 * 4096);
    CHECK(r.by_scale[6].max_pages_per_lock == 4032);
    // sqrt rule: 258048 pages * 4 = 1032192 KiB; int_sqrt(1032192 * 16) = 4063.
    CHECK(r.min_free_kbytes_sqrt == 4063);
    // Watermarks after the sqrt rule: pages_min = 4063 >> 2 = 1015; delta = max(1015 >> 2 = 253,
    // 258048 * 10 / 10000 = 258) = 258 → high = 1015 + 2 * 258 = 1531.
    // THP: 512 pages * 1 zone * 11 = 5632 pages; cap (258048 - 1531) / 20 = 12825 → 5632 pages
    // = 22528 KiB > 4063: raised.
    REQUIRE(r.thp_recommended_kbytes);
    CHECK(*r.thp_recommended_kbytes == 22528);
    CHECK(r.thp_raised);
    CHECK(r.min_free_kbytes == 22528);
    // pages_min = 22528 >> 2 = 5632; delta = max(1408, 258) = 1408.
    CHECK(dma.watermarks.min == 5632);
    CHECK(dma.watermarks.low == 7040);
    CHECK(dma.watermarks.high == 8448);
    CHECK(dma.watermarks.promo == 9856);
    // high_min = max(low 7040 / 1 CPU, 63 << 2); high_max = 258048 / 8 / 1 = 32256.
    CHECK(r.high_autotuned);
    CHECK(dma.high_min == 7040);
    CHECK(dma.high_max == 32256);
    // setup_per_zone_lowmem_reserve(): DMA's ratio 256 over empty upper zones: 0.
    CHECK(dma.lowmem_reserve == std::vector<std::uint64_t>{0, 0, 0, 0});
    CHECK(r.largest_zone() == &dma);
}

TEST_CASE("PCP_BATCH_SCALE_MAX 0 (the RFC's wish) gives 63 pages per lock") {
    auto in = input(v(6, 12), 12, 9, ThpMode::always, {{ZoneType::dma, 258048}});
    in.scale_max = 0;
    auto r = compute_pcp(in);
    CHECK(zone(r, ZoneType::dma).max_pages_per_lock == 63);
}

TEST_CASE("one 1 GiB Normal zone without THP: the kernel comment's 1024MB → 4096k") {
    auto in = input(v(6, 12), 12, 9, ThpMode::not_built,
                    {{ZoneType::normal, 262144}, {ZoneType::movable, 0}});
    auto r = compute_pcp(in);
    // 262144 * 4 KiB = 1048576; int_sqrt(1048576 * 16) = 4096.
    CHECK(r.min_free_kbytes == 4096);
    CHECK_FALSE(r.thp_recommended_kbytes);
    const auto& n = zone(r, ZoneType::normal);
    // pages_min 1024; delta = max(256, mult_frac(262144, 10, 10000) = 262) = 262.
    CHECK(n.watermarks.min == 1024);
    CHECK(n.watermarks.low == 1286);
    CHECK(n.watermarks.high == 1548);
    // Movable (capped in 6.12): clamp(0 / 1024, 32, 128) = 32; delta max(0, 0).
    const auto& m = zone(r, ZoneType::movable);
    CHECK(m.watermarks.min == 32);
    CHECK(m.watermarks.high == 32);
    CHECK(n.high_min == 1286);
    CHECK(n.high_max == 32768); // 262144 / 8
    // Four CPUs: 1286 / 4 = 321 > 252; 32768 / 4 = 8192.
    in.cpus_per_node = 4;
    auto r4 = compute_pcp(in);
    CHECK(zone(r4, ZoneType::normal).high_min == 321);
    CHECK(zone(r4, ZoneType::normal).high_max == 8192);
    // Eight CPUs: 1286 / 8 = 160 < 63 << 2 = 252.
    in.cpus_per_node = 8;
    CHECK(zone(compute_pcp(in), ZoneType::normal).high_min == 252);
}

TEST_CASE("6.1 has one pcp->high; 6.7 introduced high_min/high_max") {
    auto in = input(v(6, 1), 12, 9, ThpMode::not_built,
                    {{ZoneType::normal, 262144}, {ZoneType::movable, 0}});
    auto r = compute_pcp(in);
    CHECK_FALSE(r.high_autotuned);
    CHECK(zone(r, ZoneType::normal).high_min == 1286);
    CHECK(zone(r, ZoneType::normal).high_max == 1286);
    in.version = v(6, 6);
    CHECK_FALSE(compute_pcp(in).high_autotuned);
    in.version = v(6, 7);
    CHECK(compute_pcp(in).high_autotuned);
}

TEST_CASE("vm.percpu_pagelist_high_fraction fixes high_min = high_max") {
    auto in = input(v(6, 12), 12, 9, ThpMode::not_built, {{ZoneType::normal, 262144}}, 2);
    in.sysctls.percpu_pagelist_high_fraction = 8;
    auto r = compute_pcp(in);
    // 262144 / 8 = 32768 / 2 CPUs = 16384.
    CHECK(zone(r, ZoneType::normal).high_min == 16384);
    CHECK(zone(r, ZoneType::normal).high_max == 16384);
}

TEST_CASE("THP never: khugepaged recomputes the sqrt rule with the high watermarks taken off") {
    auto in = input(v(6, 12), 12, 9, ThpMode::never,
                    {{ZoneType::normal, 262144}, {ZoneType::movable, 0}});
    auto r = compute_pcp(in);
    // Boot: 4096 KiB, high watermark 1548. Late: (262144 - 1548) * 4 = 1042384 KiB;
    // int_sqrt(1042384 * 16 = 16678144) = 4083 (4083² = 16670889, 4084² = 16679056).
    CHECK(r.min_free_kbytes_sqrt == 4096);
    CHECK(r.min_free_kbytes == 4083);
    // pages_min = 4083 >> 2 = 1020; delta = max(255, 262) = 262.
    CHECK(zone(r, ZoneType::normal).watermarks.min == 1020);
    CHECK(zone(r, ZoneType::normal).watermarks.high == 1544);
}

TEST_CASE("THP never on 5.10: min_free_kbytes keeps its postcore value") {
    // 5.10.223 start_stop_khugepaged(): set_recommended_min_free_kbytes() only when khugepaged
    // runs, so "never" leaves the boot value: int_sqrt(262144 * 4 * 16) = 4096.
    auto in = input(v(5, 10), 12, 9, ThpMode::never,
                    {{ZoneType::normal, 262144}, {ZoneType::movable, 0}});
    auto r = compute_pcp(in);
    CHECK(r.min_free_kbytes_sqrt == 4096);
    CHECK(r.min_free_kbytes == 4096);
    // pages_min = 4096 >> 2 = 1024 (6.12 recomputes 4083 → 1020, the test above).
    CHECK(zone(r, ZoneType::normal).watermarks.min == 1024);
}

TEST_CASE("THP below 512 MiB of RAM: hugepage_init() switches THP off") {
    // 256 MiB = 65536 pages < 131072: no raise. sqrt: 65536 * 4 * 16 = 4194304 → 2048.
    auto in = input(v(6, 12), 12, 9, ThpMode::always, {{ZoneType::normal, 65536}});
    auto r = compute_pcp(in);
    CHECK(r.min_free_kbytes == 2048);
    CHECK_FALSE(r.thp_recommended_kbytes);
    // One page short of 512 MiB, and exactly 512 MiB.
    auto below = input(v(6, 12), 12, 9, ThpMode::always, {{ZoneType::normal, 131071}});
    CHECK_FALSE(compute_pcp(below).thp_recommended_kbytes);
    auto at = input(v(6, 12), 12, 9, ThpMode::always, {{ZoneType::normal, 131072}});
    CHECK(compute_pcp(at).thp_recommended_kbytes);
}

TEST_CASE("arm64 64K: the THP recommendation hits the 5% cap") {
    // 4 GiB of 64K pages = 65536 managed, pageblock order 13 (8192 pages).
    auto in = input(v(6, 12), 16, 13, ThpMode::always, {{ZoneType::dma, 65536}});
    auto r = compute_pcp(in);
    // sqrt: 65536 * 64 KiB = 4194304; * 16 = 67108864 → 8192 KiB.
    CHECK(r.min_free_kbytes_sqrt == 8192);
    // pages_min = 8192 >> 6 = 128; delta = max(32, 65) = 65 → high 258. Cap (65536 - 258) / 20 =
    // 3263 < 8192 * 11 = 90112 → 3263 pages << 6 = 208832 KiB.
    CHECK(*r.thp_recommended_kbytes == 208832);
    CHECK(r.min_free_kbytes == 208832);
    const auto& z = zone(r, ZoneType::dma);
    // pages_min = 3263; delta = max(815, 65) = 815.
    CHECK(z.watermarks.min == 3263);
    CHECK(z.watermarks.low == 4078);
    CHECK(z.watermarks.high == 4893);
    CHECK(z.batch == 3);
    CHECK(z.max_pages_per_lock == 96); // 3 << 5
}

TEST_CASE("min_free_kbytes clamp at 128 and 262144") {
    // 100 pages * 4 KiB * 16 = 6400 → int_sqrt 80 → 128.
    CHECK(compute_pcp(input(v(6, 12), 12, 9, ThpMode::not_built, {{ZoneType::normal, 100}}))
              .min_free_kbytes == 128);
    // 256 pages: 1024 KiB * 16 = 16384 → 128 exactly; 257 pages: 16448 → 128 still.
    CHECK(compute_pcp(input(v(6, 12), 12, 9, ThpMode::not_built, {{ZoneType::normal, 256}}))
              .min_free_kbytes == 128);
    // 2^30 pages (4 TiB): 2^32 KiB * 16 = 2^36 → 262144 exactly; 2^31 pages → 370727 → 262144.
    CHECK(compute_pcp(input(v(6, 12), 12, 9, ThpMode::not_built,
                            {{ZoneType::normal, std::uint64_t{1} << 30}}))
              .min_free_kbytes == 262144);
    CHECK(compute_pcp(input(v(6, 12), 12, 9, ThpMode::not_built,
                            {{ZoneType::normal, std::uint64_t{1} << 31}}))
              .min_free_kbytes == 262144);
    // 4100 pages (16400 KiB): int_sqrt(262400) = 512 (512² = 262144, 513² = 263169).
    CHECK(compute_pcp(input(v(6, 12), 12, 9, ThpMode::not_built, {{ZoneType::normal, 4100}}))
              .min_free_kbytes == 512);
}

TEST_CASE("ZONE_MOVABLE counts as lowmem in 6.1, not in 6.12") {
    auto zones = std::vector<std::pair<ZoneType, std::uint64_t>>{{ZoneType::normal, 262144},
                                                                 {ZoneType::movable, 262144}};
    // Both: min_free_kbytes 4096 (nr_free_buffer_pages stops at Normal) → pages_min 1024.
    auto r612 = compute_pcp(input(v(6, 12), 12, 9, ThpMode::not_built, zones));
    CHECK(r612.min_free_kbytes == 4096);
    // 6.12: lowmem 262144 → Normal min 1024; Movable capped clamp(256, 32, 128) = 128, its delta
    // max(1024 >> 2, 262) = 262 → low 390.
    CHECK(zone(r612, ZoneType::normal).watermarks.min == 1024);
    CHECK(zone(r612, ZoneType::movable).watermarks.min == 128);
    CHECK(zone(r612, ZoneType::movable).watermarks.low == 390);
    // 6.1: lowmem 524288 → both get 1024 * 262144 / 524288 = 512; delta max(128, 262) = 262.
    auto r61 = compute_pcp(input(v(6, 1), 12, 9, ThpMode::not_built, zones));
    CHECK(zone(r61, ZoneType::normal).watermarks.min == 512);
    CHECK(zone(r61, ZoneType::movable).watermarks.min == 512);
    CHECK(zone(r61, ZoneType::movable).watermarks.low == 774);
    // lowmem_reserve: Normal's ratio 32: 262144 / 32 = 8192 against Movable.
    CHECK(zone(r612, ZoneType::normal).lowmem_reserve == std::vector<std::uint64_t>{0, 8192});
}

TEST_CASE("lowmem_reserve: cumulative upper zones over the lower zone's ratio") {
    auto in = input(v(6, 12), 12, 9, ThpMode::not_built,
                    {{ZoneType::dma, 3840},
                     {ZoneType::dma32, 772915},
                     {ZoneType::normal, 1572864},
                     {ZoneType::movable, 0}});
    auto r = compute_pcp(in);
    // DMA (256): 772915 / 256 = 3019; (772915 + 1572864) / 256 = 9163.
    CHECK(zone(r, ZoneType::dma).lowmem_reserve == std::vector<std::uint64_t>{0, 3019, 9163, 9163});
    // DMA32 (256): 1572864 / 256 = 6144. Normal (32): Movable 0 / 32 = 0.
    CHECK(zone(r, ZoneType::dma32).lowmem_reserve == std::vector<std::uint64_t>{0, 0, 6144, 6144});
    CHECK(zone(r, ZoneType::normal).lowmem_reserve == std::vector<std::uint64_t>{0, 0, 0, 0});
    // A ratio of 0 or an empty lower zone clears the row.
    in.sysctls.lowmem_reserve_ratio = std::vector<long long>{0, 128, 32, 0};
    auto changed = compute_pcp(in);
    CHECK(zone(changed, ZoneType::dma).lowmem_reserve == std::vector<std::uint64_t>{0, 0, 0, 0});
    CHECK(zone(changed, ZoneType::dma32).lowmem_reserve ==
          std::vector<std::uint64_t>{0, 0, 12288, 12288}); // 1572864 / 128
}

TEST_CASE("watermark_scale_factor takes over from min/4 on large zones") {
    // 16 GiB Normal (4194304 pages), THP off: sqrt 4194304 * 4 * 16 = 268435456 → 16384 KiB
    // (the kernel comment's 16384MB: 16384k); pages_min 4096, tmp >> 2 = 1024 <
    // mult_frac(4194304, 10, 10000) = 4194 → low = 4096 + 4194.
    auto in = input(v(6, 12), 12, 9, ThpMode::not_built, {{ZoneType::normal, 4194304}});
    auto r = compute_pcp(in);
    CHECK(r.min_free_kbytes == 16384);
    CHECK(zone(r, ZoneType::normal).watermarks.low == 8290);
    in.sysctls.watermark_scale_factor = 100; // 41943 per step
    CHECK(zone(compute_pcp(in), ZoneType::normal).watermarks.low == 4096 + 41943);
}

TEST_CASE("rules: version boundaries of the versioned rows") {
    namespace rules = kernel::calc_rules;
    using rules::Topic;
    CHECK(rules::find(Topic::pcp_high, v(6, 6)).variant == 0);
    CHECK(rules::find(Topic::pcp_high, v(6, 7)).variant == 1);
    CHECK(rules::find(Topic::heap_order4_gfp, v(6, 3)).variant == 1);
    CHECK(rules::find(Topic::heap_order4_gfp, v(6, 4)).variant == 0);
    CHECK(rules::find(Topic::watermark_lowmem, v(6, 1)).variant == 0);
    CHECK(rules::find(Topic::watermark_lowmem, v(6, 12)).variant == 1);
    // Outside the modelled range the newest row applies.
    CHECK(rules::find(Topic::pcp_high, v(9, 0)).variant == 1);
    for (const auto& r : rules::all())
        CHECK(std::string(r.source).find(".c") != std::string::npos);
}

TEST_CASE("highmem/movable min watermark: clamp(managed / 1024, 32, 128) on both sides") {
    auto zones = [](std::uint64_t movable) {
        return std::vector<std::pair<ZoneType, std::uint64_t>>{{ZoneType::normal, 262144},
                                                               {ZoneType::movable, movable}};
    };
    auto min_of = [&](std::uint64_t movable) {
        auto r = compute_pcp(input(v(6, 12), 12, 9, ThpMode::not_built, zones(movable)));
        return zone(r, ZoneType::movable).watermarks.min;
    };
    CHECK(min_of(32767) == 32);          // 31 → 32
    CHECK(min_of(32768) == 32);          // 32
    CHECK(min_of(65536) == 64);          // inside the clamp
    CHECK(min_of(131072) == 128);        // 128
    CHECK(min_of(131073 + 1023) == 128); // 129 → 128
}

TEST_CASE("v5.10: pcp->high is 6 * batch, or managed / percpu_pagelist_fraction") {
    // 5.10.223 mm/page_alloc.c pageset_set_batch(): high = 6 * batch, whatever the CPU count.
    // 1 GiB Normal on 4K pages: 262144 managed → batch 63 (the 1 MiB cap), high 6 * 63 = 378.
    auto in = input(v(5, 10), 12, 9, ThpMode::not_built, {{ZoneType::normal, 262144}}, 4);
    auto r = compute_pcp(in);
    const auto& z = zone(r, ZoneType::normal);
    CHECK(z.batch == 63);
    CHECK(z.high_min == 378);
    CHECK(z.high_max == 378);
    CHECK_FALSE(r.high_autotuned);
    // pageset_set_high(): fraction 8 → high 262144 / 8 = 32768, batch = high / 4 = 8192 capped
    // at PAGE_SHIFT * 8 = 96.
    in.sysctls.percpu_pagelist_high_fraction = 8;
    auto f = compute_pcp(in);
    CHECK(zone(f, ZoneType::normal).high_min == 32768);
    CHECK(zone(f, ZoneType::normal).batch == 96);
    // A small zone: 4096 pages / 8 = 512 → batch 128 would pass the cap too; 1024 pages / 8 =
    // 128 → batch 32 (under the cap).
    auto small = input(v(5, 10), 12, 9, ThpMode::not_built, {{ZoneType::normal, 1024}}, 4);
    small.sysctls.percpu_pagelist_high_fraction = 8;
    auto s = compute_pcp(small);
    CHECK(zone(s, ZoneType::normal).high_min == 128);
    CHECK(zone(s, ZoneType::normal).batch == 32);
    // From v5.14 zone_highsize() splits the low watermark over the CPUs instead (6.1 rule).
    auto newer =
        compute_pcp(input(v(6, 1), 12, 9, ThpMode::not_built, {{ZoneType::normal, 262144}}, 4));
    CHECK(zone(newer, ZoneType::normal).high_min != 378);
}
