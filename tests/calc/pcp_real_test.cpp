// `cmalign pcp` end to end on real material: the development machine's /proc/zoneinfo, its
// /proc/config.gz and its vm sysctls (tests/data/pcp, Linux 6.18.44 x86_64), and the Debian
// 6.12 tree's arm64 defconfig for the RZ/G3S figures (1 GiB, 1 CPU, 4K pages).
#include <doctest/doctest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>

#include "cmalign/tune.hpp"

using namespace cmalign;

namespace {

const std::string data = std::string(CMALIGN_TEST_DATA) + "/pcp/";
const std::string zoneinfo = data + "x86_64-6.18-vm.zoneinfo";
const std::string config = data + "x86_64-6.18-vm.config";
const std::string sysctls = data + "x86_64-6.18-vm.sysctl";
const std::string arm64_defconfig =
    std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12/arch/arm64/configs/defconfig";

std::string messages(const Diagnostics& d) {
    std::string s;
    for (const auto& item : d.items())
        s += format_gcc(item) + "\n";
    return s;
}

const calc::ZoneResult& zone(const PcpOutcome& o, calc::ZoneType t) {
    for (const auto& z : o.result.zones)
        if (z.type == t && z.populated) return z;
    FAIL("zone missing");
    return o.result.zones.front();
}

} // namespace

TEST_CASE("the running kernel's zoneinfo is reproduced exactly") {
    PcpRequest r;
    r.config.config_files = {config};
    r.zoneinfo = zoneinfo;
    r.sysctl_file = sysctls;
    auto o = run_pcp(r);
    REQUIRE_MESSAGE(o.exit_code() != ExitCode::input_error, messages(o.diags));
    REQUIRE(o.zoneinfo);
    CHECK(o.model->version == KernelVersion{6, 18, 44, true});
    CHECK(o.input.thp == calc::ThpMode::madvise);
    CHECK(o.input.cpus_per_node == 2);
    // Every value the file reports (batch, high_min, high_max, min/low/high/promo, protection)
    // matches.
    for (const auto& d : o.differences)
        MESSAGE(d.zone << " " << d.field << ": file " << d.reported << ", computed " << d.computed);
    CHECK(o.differences.empty());
    CHECK(o.exit_code() == ExitCode::clean);
    // vm.min_free_kbytes of the board = the THP recommendation: 512 pages * 3 zones * 11 =
    // 16896 pages = 67584 KiB.
    CHECK(o.result.min_free_kbytes == 67584);
    CHECK(o.result.thp_raised);
    REQUIRE(o.sysctls.size() == 4);
    for (const auto& s : o.sysctls)
        CHECK_MESSAGE(!s.differs, s.name);
    // The comparison did look at values: every populated zone has pagesets and watermarks.
    std::size_t compared = 0;
    for (const auto& z : o.zoneinfo->zones)
        compared += z.cpus.size() + (z.min ? 1 : 0) + z.protection.size();
    CHECK(compared > 20);
}

TEST_CASE("the later snapshot of the same machine (memory hot-added) matches too") {
    PcpRequest r;
    r.config.config_files = {config};
    r.zoneinfo = data + "x86_64-6.18-vm-later.zoneinfo";
    r.sysctl_file = data + "x86_64-6.18-vm-later.sysctl";
    auto o = run_pcp(r);
    REQUIRE_MESSAGE(o.exit_code() != ExitCode::input_error, messages(o.diags));
    for (const auto& d : o.differences)
        MESSAGE(d.zone << " " << d.field << ": file " << d.reported << ", computed " << d.computed);
    CHECK(o.differences.empty());
    CHECK(zone(o, calc::ZoneType::normal).managed_pages == 3014656);
    // high_max = 3014656 / 8 / 2 CPUs.
    CHECK(zone(o, calc::ZoneType::normal).high_max == 188416);
}

TEST_CASE("the same figures from --zone values alone") {
    Diagnostics d;
    auto parsed = calc::parse_zoneinfo(zoneinfo, d);
    REQUIRE(parsed);
    PcpRequest r;
    r.config.config_files = {config};
    for (const auto& z : parsed->zones)
        if (*z.managed > 0) r.zones.push_back(z.name + "=" + std::to_string(*z.managed * 4096));
    REQUIRE(r.zones.size() == 3); // DMA, DMA32, Normal
    r.cpus = parsed->online_cpus();
    auto o = run_pcp(r);
    REQUIRE_MESSAGE(o.exit_code() == ExitCode::clean, messages(o.diags));
    CHECK(o.result.min_free_kbytes == 67584);
    auto diffs = calc::compare(*parsed, o.result);
    for (const auto& diff : diffs)
        MESSAGE(diff.zone << " " << diff.field << ": " << diff.reported << " vs " << diff.computed);
    CHECK(diffs.empty());
    CHECK(zone(o, calc::ZoneType::normal).high_min == 7496); // low 14992 / 2 CPUs
    CHECK(zone(o, calc::ZoneType::dma32).high_max == 48307);
}

TEST_CASE("a sysctl changed on the board is reported") {
    PcpRequest r;
    r.config.config_files = {config};
    r.zoneinfo = zoneinfo;
    r.sysctls = {"vm.watermark_scale_factor=50"};
    auto o = run_pcp(r);
    REQUIRE(o.exit_code() == ExitCode::findings); // the file's watermarks were made with 10, not 50
    REQUIRE(o.sysctls.size() == 1);
    CHECK(o.sysctls[0].differs);
    CHECK(o.sysctls[0].kernel_default == "10");
    bool low_differs = false;
    for (const auto& d : o.differences)
        low_differs |= d.field == "watermarks.low" && d.zone == "Normal";
    CHECK(low_differs);
    // Without sysctls the tool says where to look.
    PcpRequest plain;
    plain.config.config_files = {config};
    plain.zoneinfo = zoneinfo;
    plain.sysctls = {"vm.min_free_kbytes=90000"};
    auto p = run_pcp(plain);
    CHECK(p.exit_code() == ExitCode::findings);
    CHECK(p.sysctls.at(0).differs);
    CHECK(p.sysctls.at(0).kernel_default == "67584");
}

TEST_CASE("a zoneinfo edited to a changed min_free_kbytes no longer matches") {
    std::ifstream in(zoneinfo);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto pos = text.find("min      11994");
    REQUIRE(pos != std::string::npos);
    text.replace(pos, 14, "min      23988");
    Diagnostics d;
    auto parsed = calc::parse_zoneinfo_text(text, "edited.zoneinfo", d);
    REQUIRE(parsed);
    PcpRequest r;
    r.config.config_files = {config};
    r.zoneinfo = zoneinfo;
    auto o = run_pcp(r);
    auto diffs = calc::compare(*parsed, o.result);
    REQUIRE(diffs.size() == 1);
    CHECK(diffs[0].field == "watermarks.min");
    CHECK(diffs[0].reported == 23988);
    CHECK(diffs[0].computed == 11994);
    CHECK(diffs[0].where.line > 0);
    // Through run_pcp the note names the min_free_kbytes the file implies: 23988 * lowmem
    // 2677299 / managed 1900544 = 33791.6 → 33792 pages = 135168 KiB (the board's 67584 doubled).
    auto edited = (std::filesystem::temp_directory_path() / "cmalign-edited.zoneinfo").string();
    std::ofstream(edited) << text;
    r.zoneinfo = edited;
    auto e = run_pcp(r);
    CHECK(e.exit_code() == ExitCode::findings);
    bool implied = false;
    for (const auto& n : e.notes)
        implied |=
            n.find("implies vm.min_free_kbytes ≈ 135168 (computed 67584)") != std::string::npos;
    CHECK(implied);
    std::filesystem::remove(edited);
}

TEST_CASE("RZ/G3S from the Debian 6.12 arm64 defconfig: 1 GiB, 1 CPU, 4K") {
    REQUIRE_MESSAGE(std::filesystem::exists(arm64_defconfig), arm64_defconfig);
    PcpRequest r;
    r.config.config_files = {arm64_defconfig};
    r.config.arch = "arm64";
    r.config.kernel_version = "6.12";
    r.memory = "1G";
    r.memory_base = "0x48000000";
    r.cpus = 1;
    auto o = run_pcp(r);
    REQUIRE_MESSAGE(o.exit_code() == ExitCode::clean, messages(o.diags));
    const auto& dma = zone(o, calc::ZoneType::dma);
    // 1 GiB at 0x48000000 is below 4 GiB: all ZONE_DMA; minus 16 MiB of memmap = 258048 pages.
    CHECK(dma.managed_pages == 258048);
    CHECK(dma.batch == 63);
    CHECK(o.result.scale_max == 5);
    CHECK(dma.max_pages_per_lock == 2016);
    CHECK(o.result.by_scale.at(0).max_pages_per_lock == 63);
    CHECK(o.result.by_scale.at(5).max_pages_per_lock == 2016);

    SUBCASE("CONFIG_PCP_BATCH_SCALE_MAX=0") {
        r.config.sets = {"CONFIG_PCP_BATCH_SCALE_MAX=0"};
        CHECK(zone(run_pcp(r), calc::ZoneType::dma).max_pages_per_lock == 63);
    }
    SUBCASE("pcp_batch_scale_max=0 is not upstream unless --vendor-param") {
        r.bootargs = "console=ttySC0,115200 pcp_batch_scale_max=0";
        auto plain = run_pcp(r);
        CHECK(zone(plain, calc::ZoneType::dma).max_pages_per_lock == 2016);
        REQUIRE_FALSE(plain.notes.empty());
        CHECK(plain.notes.front().find("not an upstream") != std::string::npos);
        CHECK(plain.notes.front().find("CONFIG_PCP_BATCH_SCALE_MAX") != std::string::npos);
        r.vendor_params = {"pcp_batch_scale_max"};
        CHECK(zone(run_pcp(r), calc::ZoneType::dma).max_pages_per_lock == 63);
        r.bootargs = "pcp_batch_scale_max=17";
        CHECK(zone(run_pcp(r), calc::ZoneType::dma).max_pages_per_lock == 63 << 6);
    }
    SUBCASE("16K pages with 8 GiB: batch 15") {
        r.config.sets = {"CONFIG_ARM64_4K_PAGES=n", "CONFIG_ARM64_16K_PAGES=y"};
        r.memory = "8G";
        auto o16 = run_pcp(r);
        REQUIRE_MESSAGE(o16.exit_code() == ExitCode::clean, messages(o16.diags));
        CHECK(o16.input.page_size == 16384);
        REQUIRE(o16.result.largest_zone());
        CHECK(o16.result.largest_zone()->batch == 15);
        for (const auto& z : o16.result.zones)
            if (z.populated) CHECK(z.batch == 15);
    }
}

TEST_CASE("bad input is a located error, never a crash") {
    auto dir = std::filesystem::temp_directory_path() / "cmalign-pcp-test";
    std::filesystem::create_directories(dir);
    auto bad = (dir / "bad.zoneinfo").string();
    {
        std::ofstream out(bad);
        out << "Node 0, zone   Normal\n  pages free 10\n        min      x12\n";
    }
    PcpRequest r;
    r.config.arch = "arm64";
    r.zoneinfo = bad;
    auto o = run_pcp(r);
    CHECK(o.exit_code() == ExitCode::input_error);
    REQUIRE(o.diags.has_errors());
    // The first error (notes about assumed configuration values may come before it).
    const auto& items = o.diags.items();
    auto error = std::find_if(items.begin(), items.end(),
                              [](const Diagnostic& d) { return d.severity == Severity::error; });
    REQUIRE(error != items.end());
    CHECK(error->where.line == 3);
    CHECK(error->where.column > 1);

    PcpRequest none;
    none.config.arch = "arm64";
    CHECK(run_pcp(none).exit_code() == ExitCode::input_error);

    PcpRequest highmem;
    highmem.config.arch = "arm64";
    highmem.zones = {"HighMem=1G"};
    CHECK(run_pcp(highmem).exit_code() == ExitCode::input_error);

    PcpRequest garbage;
    garbage.config.arch = "arm64";
    garbage.zones = {"Normal=lots"};
    CHECK(run_pcp(garbage).exit_code() == ExitCode::input_error);

    PcpRequest sysctl;
    sysctl.config.arch = "arm64";
    sysctl.memory = "1G";
    sysctl.sysctls = {"vm.min_free_kbytes=99999999999"}; // not a C int
    CHECK(run_pcp(sysctl).exit_code() == ExitCode::input_error);
    sysctl.sysctls = {"vm.percpu_pagelist_high_fraction=4"}; // the kernel says -EINVAL below 8
    CHECK(run_pcp(sysctl).exit_code() == ExitCode::input_error);

    PcpRequest huge;
    huge.config.arch = "arm64";
    huge.zones = {"Normal=16P"}; // 2^42 pages of 4K
    CHECK(run_pcp(huge).exit_code() == ExitCode::input_error);

    HeapRequest zero;
    zero.config.arch = "arm64";
    zero.size = "0";
    auto h = run_heap(zero);
    CHECK(h.exit_code() == ExitCode::input_error);
    std::filesystem::remove_all(dir);
}

TEST_CASE("--memory: the zone split of each arch, said in the assumptions") {
    SUBCASE("x86_64 8 GiB: DMA 16 MiB, DMA32 up to 4 GiB, Normal the rest minus the memmap") {
        PcpRequest r;
        r.config.arch = "x86_64";
        r.config.kernel_version = "6.12";
        r.memory = "8G";
        auto o = run_pcp(r);
        REQUIRE_MESSAGE(o.exit_code() == ExitCode::clean, messages(o.diags));
        CHECK(zone(o, calc::ZoneType::dma).managed_pages == 4096);      // 16 MiB
        CHECK(zone(o, calc::ZoneType::dma32).managed_pages == 1044480); // 4 GiB - 16 MiB
        // 4 GiB = 1048576 pages minus 8 GiB / 4 KiB * 64 bytes = 128 MiB = 32768 pages.
        CHECK(zone(o, calc::ZoneType::normal).managed_pages == 1015808);
        bool said = false;
        for (const auto& a : o.result.assumptions)
            said |= a.find("PCI hole") != std::string::npos;
        CHECK(said);
    }
    SUBCASE("arm64 RAM above 4 GiB is all ZONE_DMA") {
        PcpRequest r;
        r.config.arch = "arm64";
        r.config.kernel_version = "6.12";
        r.memory = "2G";
        r.memory_base = "0x880000000";
        auto o = run_pcp(r);
        REQUIRE_MESSAGE(o.exit_code() == ExitCode::clean, messages(o.diags));
        // 524288 pages - 2 GiB / 4 KiB * 64 bytes (32 MiB = 8192 pages).
        CHECK(zone(o, calc::ZoneType::dma).managed_pages == 516096);
        CHECK(o.result.largest_zone()->type == calc::ZoneType::dma);
    }
    SUBCASE("arm64 6 GiB from 0x40000000: DMA below 4 GiB, Normal above") {
        PcpRequest r;
        r.config.arch = "arm64";
        r.config.kernel_version = "6.12";
        r.memory = "6G";
        r.memory_base = "0x40000000";
        auto o = run_pcp(r);
        REQUIRE_MESSAGE(o.exit_code() == ExitCode::clean, messages(o.diags));
        CHECK(zone(o, calc::ZoneType::dma).managed_pages == 786432); // 3 GiB
        // 3 GiB - 6 GiB / 4 KiB * 64 bytes (96 MiB = 24576 pages).
        CHECK(zone(o, calc::ZoneType::normal).managed_pages == 786432 - 24576);
    }
}

TEST_CASE("a 6.1-style zoneinfo: one fixed pcp->high, no promo line") {
    // 1 GiB Normal, THP off, 1 CPU on 6.1: min_free_kbytes 4096 → min 1024, delta 262, high =
    // max(low 1286 / 1, 63 << 2) = 1286 (pcp_test.cpp derives these). 6.1 counts an empty
    // Movable zone as lowmem: its min is 0 * pages_min / lowmem = 0, not the highmem cap of 32.
    std::string text = "Node 0, zone   Normal\n"
                       "  pages free     250000\n"
                       "        min      1024\n"
                       "        low      1286\n"
                       "        high     1548\n"
                       "        spanned  262144\n"
                       "        present  262144\n"
                       "        managed  262144\n"
                       "        protection: (0, 0)\n"
                       "  pagesets\n"
                       "    cpu: 0\n"
                       "              count: 12\n"
                       "              high:  1300\n"
                       "              batch: 63\n"
                       "Node 0, zone  Movable\n"
                       "  pages free     0\n"
                       "        min      0\n"
                       "        low      0\n"
                       "        high     0\n"
                       "        spanned  0\n"
                       "        present  0\n"
                       "        managed  0\n"
                       "        protection: (0, 0)\n";
    auto dir = std::filesystem::temp_directory_path() / "cmalign-pcp-61";
    std::filesystem::create_directories(dir);
    auto path = (dir / "zoneinfo").string();
    std::ofstream(path) << text;
    PcpRequest r;
    r.config.arch = "arm64";
    r.config.kernel_version = "6.1";
    r.config.sets = {"CONFIG_ZONE_DMA=n", "CONFIG_ZONE_DMA32=n"};
    r.zoneinfo = path;
    auto o = run_pcp(r);
    REQUIRE_MESSAGE(o.exit_code() != ExitCode::input_error, messages(o.diags));
    CHECK_FALSE(o.result.high_autotuned);
    CHECK(o.input.cpus_per_node == 1);
    // Only the high of cpu 0 differs (1300 in the file, 1286 computed): a changed
    // percpu_pagelist_high_fraction or a different CPU count would do that.
    REQUIRE(o.differences.size() == 1);
    CHECK(o.differences[0].field == "high");
    CHECK(o.differences[0].reported == 1300);
    CHECK(o.differences[0].computed == 1286);
    CHECK(o.differences[0].where.line == 11);
    std::filesystem::remove_all(dir);
}
