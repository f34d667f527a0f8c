// `check/suggest --sweep-versions … --sweep-page-sizes …` end to end: every cell is the single
// check a user would run for that version and page size.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/cli.hpp"

using namespace cli_test;

namespace {
const std::string board = CMALIGN_SOURCE_DIR "/examples/boards/seed-board.dts";
const std::string config_4k = CMALIGN_SOURCE_DIR "/examples/configs/arm64-4k.config";
const std::string config_16k = CMALIGN_SOURCE_DIR "/examples/configs/arm64-16k.config";

// What a user types to get one page size on arm64: the choice member on, the others off.
std::string page_size_sets(std::uint64_t page_size) {
    std::string out;
    for (auto [size, symbol] : {std::pair<std::uint64_t, const char*>{4096, "ARM64_4K_PAGES"},
                                {16384, "ARM64_16K_PAGES"},
                                {65536, "ARM64_64K_PAGES"}})
        out += std::string(" --set CONFIG_") + symbol + (size == page_size ? "=y" : "=n");
    return out;
}

// Display columns of UTF-8 text (every code point is one column here: –, ·, …).
std::size_t columns(const std::string& line) {
    std::size_t n = 0;
    for (unsigned char c : line)
        if ((c & 0xc0) != 0x80) ++n;
    return n;
}
} // namespace

TEST_CASE("every cell of a 6.1..6.18 x 4K/16K/64K sweep equals the single check") {
    for (const auto& given :
         {std::pair{config_4k, std::uint64_t{4096}}, std::pair{config_16k, std::uint64_t{16384}}}) {
        const auto& config = given.first; // clang 14 cannot capture structured bindings
        const auto own_page_size = given.second;
        CAPTURE(config);
        auto r = run_cli("check " + board + " -c " + config +
                         " --sweep-versions 6.1..6.18 --sweep-page-sizes 4K,16K,64K --format json");
        CHECK(r.exit_code == 1); // 16K and 64K pages reject the 4 MiB pool
        auto sweep = nlohmann::json::parse(r.out)["sweep"];
        REQUIRE(sweep.size() == 18 * 3);
        std::size_t rejected_cells = 0;
        for (const auto& cell : sweep) {
            std::string version = cell["kernel_version"];
            std::uint64_t page_size = cell["page_size"];
            CAPTURE(version);
            CAPTURE(page_size);
            // The configuration's own page size needs no --set: that cell is the plain check.
            auto sets = page_size == own_page_size ? std::string() : page_size_sets(page_size);
            auto single_run = run_cli("check " + board + " -c " + config + " --kernel-version " +
                                      version + sets + " --format json");
            auto single = nlohmann::json::parse(single_run.out);
            CHECK(single_run.exit_code == (single["summary"]["errors"] > 0 ? 1 : 0));
            CHECK(cell["diagnostics"] == single["diagnostics"]);
            CHECK(cell["summary"] == single["summary"]);
            CHECK(cell["regions"] == single["regions"]);
            CHECK(cell["cma_min_alignment_bytes"] ==
                  single["alignment"]["cma_min_alignment_bytes"]);
            CHECK(cell["page_size"] == single["alignment"]["page_size"]);
            for (const char* key : {"kernel_version", "page_size", "max_page_order",
                                    "pageblock_order", "cma_min_alignment_bytes", "assumptions"})
                CHECK_MESSAGE(cell["alignment"][key] == single["alignment"][key], key);
            if (single["summary"]["errors"] > 0) ++rejected_cells;
        }
        CHECK(rejected_cells == 18 * 2); // every 16K and 64K cell, no 4K cell
        auto pools = nlohmann::json::parse(r.out)["pools"];
        REQUIRE(pools.size() == 2);
        CHECK(pools[0]["node"] == "/reserved-memory/vdec-pool");
        CHECK(pools[0]["first_rejected"]["4096"].is_null());
        CHECK(pools[0]["first_rejected"]["16384"] == "6.1");
        CHECK(pools[0]["first_rejected"]["65536"] == "6.1");
    }
}

TEST_CASE("the sweep matrix fits 80 columns for a board with three pools") {
    auto dir = std::filesystem::temp_directory_path() / "cmalign-cli-test-sweep-board";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "three-pools.dts") << R"(/dts-v1/;
/ {
	#address-cells = <2>;
	#size-cells = <2>;
	memory@40000000 { device_type = "memory"; reg = <0x0 0x40000000 0x0 0x80000000>; };
	reserved-memory {
		#address-cells = <2>;
		#size-cells = <2>;
		ranges;
		video_decoder_contiguous_pool: video-decoder-contiguous-pool {
			compatible = "shared-dma-pool"; reusable; size = <0x0 0x400000>;
		};
		camera-pool@50000000 {
			compatible = "shared-dma-pool"; reusable; reg = <0x0 0x50000000 0x0 0x2000000>;
		};
		gpu-pool@60000000 {
			compatible = "shared-dma-pool"; reusable; reg = <0x0 0x60000000 0x0 0x20000000>;
		};
	};
};
)";
    auto r = run_cli("check " + (dir / "three-pools.dts").string() + " -c " + config_4k +
                     " --sweep-versions 6.1..6.18 --sweep-page-sizes all");
    CHECK(r.exit_code == 1);
    std::istringstream lines(r.out);
    std::size_t n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
        CAPTURE(line);
        CHECK(columns(line) <= 80);
    }
    CHECK(n > 6);
    // One legend entry per pool with the first version that rejects it per page size: the
    // 4 MiB pool is lost on 16K (32 MiB) and 64K (512 MiB) pages from v6.1; the 32 MiB pool on
    // 64K pages only; the 512 MiB pool nowhere.
    CHECK(r.out.find("video-decoder-contiguous-pool") != std::string::npos);
    CHECK(r.out.find("checked: 18 versions from v6.1 to v6.18, 4K, 16K, 64K pages") !=
          std::string::npos);
    CHECK(r.out.find("first rejected: 4K never · 16K v6.1 · 64K v6.1") != std::string::npos);
    // 64K pages: 32 MiB alignment until v6.3 (ARCH_FORCE_MAX_ORDER=10 is exclusive there),
    // 512 MiB from v6.4, where the 32 MiB pool's base 0x50000000 is no longer aligned.
    CHECK(r.out.find("first rejected: 4K never · 16K never · 64K v6.4") != std::string::npos);
    CHECK(r.out.find("first rejected: 4K never · 16K never · 64K never") != std::string::npos);
    // Versions with the same cells collapse into one row.
    CHECK(r.out.find("\nv6.4–v6.18    64K  512 MiB   rejected  rejected  ok\n") !=
          std::string::npos);
}

TEST_CASE("symbols a version lacks are dropped and the matrix says so") {
    auto path = temp_path("pbo-6.16.config");
    std::ofstream(path) << "# Linux/arm64 6.16.0 Kernel Configuration\n"
                           "CONFIG_ARM64=y\nCONFIG_ARM64_16K_PAGES=y\nCONFIG_HUGETLB_PAGE=y\n"
                           "CONFIG_TRANSPARENT_HUGEPAGE=y\nCONFIG_CMA=y\nCONFIG_DMA_CMA=y\n"
                           "CONFIG_PAGE_BLOCK_ORDER=5\n";
    auto r = run_cli("check " + board + " -c " + path + " --sweep-versions 6.15..6.17");
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("CONFIG_PAGE_BLOCK_ORDER=5 dropped: no such option before v6.16") !=
          std::string::npos);
    CHECK(r.out.find("CONFIG_PAGE_BLOCK_ORDER=5 ignored: renamed") != std::string::npos);
    // v6.16 reads the option: pageblock order 5 on 16K pages is a 512 KiB alignment.
    CHECK(r.out.find("512 KiB") != std::string::npos);

    auto j = nlohmann::json::parse(
        run_cli("check " + board + " -c " + path + " --sweep-versions 6.15..6.17 --format json")
            .out)["sweep"];
    REQUIRE(j.size() == 3);
    CHECK(j[0]["config_changes"]["unset"] == nlohmann::json{"CONFIG_PAGE_BLOCK_ORDER"});
    CHECK(j[1]["cma_min_alignment_bytes"] == 16384u << 5);
    CHECK(j[2]["cma_min_alignment_bytes"] == 32u << 20);
    CHECK(j[2]["notes"] == nlohmann::json{"CONFIG_PAGE_BLOCK_ORDER=5 ignored: renamed "
                                          "CONFIG_PAGE_BLOCK_MAX_ORDER in v6.17, so its default "
                                          "applies"});
    // The dropped cell is what check prints with --unset.
    auto single = nlohmann::json::parse(run_cli("check " + board + " -c " + path +
                                                " --kernel-version 6.15 --unset "
                                                "CONFIG_PAGE_BLOCK_ORDER --format json")
                                            .out);
    CHECK(j[0]["diagnostics"] == single["diagnostics"]);
    CHECK(j[0]["alignment"] == single["alignment"]);
}

TEST_CASE("sweep exit codes") {
    // 4K pages only: the example board is fine everywhere.
    CHECK(run_cli("check " + board + " -c " + config_4k +
                  " --sweep-versions 6.1..6.18 --sweep-page-sizes 4K")
              .exit_code == 0);
    for (const char* bad : {" --sweep-versions 6.1..9.9", " --sweep-versions 4.4",
                            " --sweep-versions 6.1 --sweep-page-sizes 8K", " --sweep-page-sizes 4K",
                            " --sweep-versions 6.1 --format sarif"}) {
        CAPTURE(bad);
        CHECK(run_cli("check " + board + " -c " + config_4k + bad).exit_code == 2);
    }
    CHECK(run_cli("check /nonexistent.dts -c " + config_4k + " --sweep-versions 6.1").exit_code ==
          2);
}

TEST_CASE("suggest sweeps too") {
    auto r = run_cli("suggest " + board + " -c " + config_16k +
                     " --sweep-versions 6.12,6.16 --sweep-page-sizes 4K,16K --format json");
    CHECK(r.exit_code == 0);
    auto sweep = nlohmann::json::parse(r.out)["sweep"];
    REQUIRE(sweep.size() == 4);
    for (const auto& cell : sweep) {
        CAPTURE(cell.dump());
        auto single = nlohmann::json::parse(
            run_cli("suggest " + board + " -c " + config_16k + " --kernel-version " +
                    std::string(cell["kernel_version"]) +
                    page_size_sets(cell["page_size"].get<std::uint64_t>()) + " --format json")
                .out);
        CHECK(cell["suggestions"] == single["suggestions"]);
        CHECK(cell["current_alignment_bytes"] == single["current_alignment_bytes"]);
    }
}

TEST_CASE("explain exit codes and JSON") {
    const std::string log = CMALIGN_SOURCE_DIR "/examples/logs/seed-board-16k.dmesg";
    auto r = run_cli("explain " + log + " " + board + " -c " + config_16k + " --format json");
    CHECK(r.exit_code == 1);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["kernel_version"] == "6.12.117");
    CHECK(j["nodes"][0]["outcome"] == "rejected");
    CHECK(j["nodes"][0]["check"] == "cma-size-alignment");
    CHECK(j["unmatched_log_lines"].empty());

    auto text = run_cli("explain " + log + " " + board + " -c " + config_16k);
    CHECK(text.exit_code == 1);
    CHECK(text.out.find("incorrect alignment of CMA region") != std::string::npos);
    CHECK(text.out.find("fix: ") != std::string::npos);

    auto clean = temp_path("clean.log");
    std::ofstream(clean) << "Linux version 6.12.117 (x) #1\n"
                            "Reserved memory: created CMA memory pool at 0x0000000050000000, size "
                            "16 MiB\n"
                            "OF: reserved mem: initialized node camera-pool@50000000, compatible "
                            "id shared-dma-pool\n";
    CHECK(run_cli("explain " + clean + " " + board + " -c " + config_4k).exit_code == 0);
    CHECK(run_cli("explain /nonexistent.log " + board).exit_code == 2);
    CHECK(run_cli("explain " + log + " /nonexistent.dts").exit_code == 2);
    CHECK(run_cli("explain " + log).exit_code == 2);
}

TEST_CASE("a row spans versions only where no rule changes between the versions checked") {
    auto sparse = run_cli("check " + board + " -c " + config_4k +
                          " --sweep-versions 6.4,6.18 --sweep-page-sizes 4K");
    CHECK(sparse.exit_code == 0);
    CHECK(sparse.out.find("v6.4–v6.18") == std::string::npos);
    CHECK(sparse.out.find("\nv6.4 ") != std::string::npos);
    CHECK(sparse.out.find("\nv6.18 ") != std::string::npos);
    auto range = run_cli("check " + board + " -c " + config_4k +
                         " --sweep-versions 6.4..6.18 --sweep-page-sizes 4K");
    CHECK(range.out.find("\nv6.4–v6.18 ") != std::string::npos);
    // Only rule boundaries: every version between two of them has the earlier one's rules.
    auto boundaries = run_cli("check " + board + " -c " + config_4k +
                              " --sweep-versions boundaries --sweep-page-sizes 4K");
    CHECK(boundaries.exit_code == 0);
    // ... up to the newest modelled release, 7.2.
    CHECK(boundaries.out.find("–v7.2 ") != std::string::npos);
}

TEST_CASE("explain reads a DTB board as check does") {
    const std::string log = CMALIGN_SOURCE_DIR "/examples/logs/seed-board-16k.dmesg";
    auto dts = temp_path("explain-board.dts");
    auto dtb = temp_path("explain-board.dtb");
    auto tree = run_cli("tree " + board + " --format dts");
    REQUIRE(tree.exit_code == 0);
    std::ofstream(dts) << tree.out;
    REQUIRE(std::system(("dtc -q -I dts -O dtb -o " + dtb + " " + dts).c_str()) == 0);
    auto from_dts = nlohmann::json::parse(
        run_cli("explain " + log + " " + board + " -c " + config_16k + " --format json").out);
    auto r = run_cli("explain " + log + " " + dtb + " -c " + config_16k + " --format json");
    CHECK(r.exit_code == 1);
    auto from_dtb = nlohmann::json::parse(r.out);
    REQUIRE(from_dtb["nodes"].size() == from_dts["nodes"].size());
    for (std::size_t i = 0; i < from_dts["nodes"].size(); ++i) {
        for (const char* key : {"node", "outcome", "log", "check"})
            CHECK_MESSAGE(from_dtb["nodes"][i][key] == from_dts["nodes"][i][key], key);
        if (!from_dts["nodes"][i]["fix"].is_null())
            CHECK(from_dtb["nodes"][i]["fix"]["new"] == from_dts["nodes"][i]["fix"]["new"]);
    }
}
