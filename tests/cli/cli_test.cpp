// The CLI as scripts use it: exit codes and the JSON of docs/json.md.
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/cli.hpp"

using namespace cli_test;

TEST_CASE("calc reproduces the upstream commit's cases through the CLI's JSON") {
    const std::string cases_path = std::string(CMALIGN_TEST_DATA) + "/calc-cases.json";
    std::ifstream in(cases_path);
    REQUIRE(in);
    auto cases = nlohmann::json::parse(in)["cases"];
    REQUIRE(cases.size() >= 6);
    for (const auto& c : cases) {
        std::string args = "calc --format json --arch " + c["arch"].get<std::string>() +
                           " --kernel-version " + c["kernel_version"].get<std::string>();
        for (const auto& [symbol, value] : c["set"].items())
            args += " --set " + symbol + "=" + value.get<std::string>();
        auto r = run_cli(args);
        CAPTURE(c["name"]);
        REQUIRE(r.exit_code == 0);
        auto j = nlohmann::json::parse(r.out);
        for (const auto& item : c["want"].items()) {
            const std::string& key = item.key(); // clang 14 cannot capture structured bindings
            const auto& want = item.value();
            CAPTURE(key);
            CHECK(j.at(key) == want);
        }
    }
}

TEST_CASE("calc JSON has every key of docs/json.md") {
    auto r =
        run_cli("calc --format json -c " CMALIGN_SOURCE_DIR "/examples/configs/arm64-16k.config");
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    for (const char* key :
         {"kernel_version", "arch", "page_size", "max_page_order", "pageblock_order",
          "cma_min_alignment_bytes", "derivation", "assumptions", "diagnostics"})
        CHECK_MESSAGE(j.contains(key), key);
    CHECK(j["kernel_version"] == "6.12.117"); // from the config header
    CHECK(j["arch"] == "arm64");
    CHECK(j["cma_min_alignment_bytes"] == 32u << 20);
    CHECK_FALSE(j.contains("pageblock_order_range")); // only when pageblock_order is null
    REQUIRE(j["derivation"].is_array());
    bool cited_config_line = false;
    for (const auto& step : j["derivation"]) {
        for (const char* key : {"quantity", "value", "rule", "source", "inputs"})
            CHECK_MESSAGE(step.contains(key), key);
        for (const auto& input : step["inputs"])
            if (input["symbol"] == "CONFIG_ARM64_16K_PAGES")
                cited_config_line = input["line"] == 5 &&
                                    input["file"].get<std::string>().ends_with("arm64-16k.config");
    }
    CHECK(cited_config_line);
}

TEST_CASE("calc text explains the derivation") {
    auto r = run_cli("calc -c " CMALIGN_SOURCE_DIR "/examples/configs/arm64-4k.config");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("pageblock-flags.h") != std::string::npos);
    CHECK(r.out.find("arm64-4k.config:4") != std::string::npos); // the page size line
    CHECK(r.out.find("2 MiB") != std::string::npos);
}

TEST_CASE("exit code 2 and a located error for bad input") {
    auto bad = temp_path("bad.config");
    {
        std::ofstream out(bad);
        // Lines kconfig cannot take are warnings (docs/kconfig.md); a file that is no text
        // at all is the input error.
        out << "CONFIG_ARM64=y\n" << std::string("\0\x01\x02binary\0", 10);
    }
    auto err = temp_path("bad.err");
    auto r = run_cli("calc -c " + bad, err);
    CHECK(r.exit_code == 2);
    CHECK(read_file(err).find(bad + ":2:") != std::string::npos);

    CHECK(run_cli("calc -c /nonexistent/x.config").exit_code == 2);
    CHECK(run_cli("calc --arch vax --set CONFIG_X=y").exit_code == 2);
    CHECK(run_cli("calc --kernel-version banana --arch arm64").exit_code == 2);
    CHECK(run_cli("calc --format yaml").exit_code == 2);
    CHECK(run_cli("frobnicate").exit_code == 2);
    CHECK(run_cli("").exit_code == 2);
    // Two page sizes selected: contradictory configuration.
    CHECK(run_cli("calc --arch arm64 --set CONFIG_ARM64_4K_PAGES=y --set CONFIG_ARM64_16K_PAGES=y")
              .exit_code == 2);
    std::filesystem::remove(bad);
    std::filesystem::remove(err);
}

TEST_CASE("config merges files like merge_config.sh and warns about redefinitions") {
    auto a = temp_path("a.config"), b = temp_path("b.config"), err = temp_path("merge.err");
    {
        std::ofstream(a) << "CONFIG_CMA=y\nCONFIG_CMA_AREAS=7\n";
        std::ofstream(b) << "# comment\nCONFIG_CMA_AREAS=19\n";
    }
    auto r = run_cli("config --format json -c " + a + " -c " + b + " --set CONFIG_DMA_CMA=y", err);
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["symbols"]["CONFIG_CMA_AREAS"] == "19");
    CHECK(j["symbols"]["CONFIG_DMA_CMA"] == "y");
    auto warnings = read_file(err);
    CHECK(warnings.find(a + ":2") != std::string::npos);
    CHECK(warnings.find(b + ":2") != std::string::npos);
    for (const auto& p : {a, b, err})
        std::filesystem::remove(p);
}

TEST_CASE("table JSON rows follow docs/json.md") {
    auto r = run_cli("table --arch arm64 --kernel-version 6.16 --format json");
    REQUIRE(r.exit_code == 0);
    auto rows = nlohmann::json::parse(r.out)["rows"];
    REQUIRE(rows.size() > 10);
    for (const auto& row : rows)
        for (const char* key :
             {"page_size", "max_page_order", "pageblock_order", "cma_min_alignment_bytes",
              "hugetlb", "thp", "page_block_max_order"})
            CHECK_MESSAGE(row.contains(key), key);
    // Before 6.16 there is no page block option: the column is null.
    auto old = nlohmann::json::parse(
        run_cli("table --arch arm64 --kernel-version 6.12 --format json").out);
    for (const auto& row : old["rows"])
        CHECK(row["page_block_max_order"].is_null());
}
