// run_json(): the request → options mapping the C API and Python share, checked against the
// library's own entry points (same numbers as load_model/run_check, same errors).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cmalign/api.hpp"
#include "cmalign/core/error.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/kernel/report.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/json_api.hpp"

using namespace cmalign;
using nlohmann::json;

namespace {
const std::string seed = CMALIGN_SOURCE_DIR "/examples/boards/upstream-commit-example.dts";

std::string error_of(std::string_view command, const std::string& request) {
    try {
        run_json_text(command, request);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}
} // namespace

TEST_CASE("calc through JSON equals load_model for the same options") {
    auto got = run_json("calc", json{{"arch", "arm64"},
                                     {"kernel_version", "6.16"},
                                     {"sets", {{"CONFIG_ARM64_16K_PAGES", "y"}}}});
    ConfigOptions options;
    options.arch = "arm64";
    options.kernel_version = "6.16";
    options.sets = {"CONFIG_ARM64_16K_PAGES=y"};
    Diagnostics diags;
    auto model = load_model(options, diags);
    REQUIRE(model);
    CHECK(got == kernel::to_json(*model));
    // 16K pages: PAGE_SHIFT 14, pageblock_order 11 (PAGE_BLOCK_MAX_ORDER default, mm/Kconfig 6.16)
    CHECK(got["cma_min_alignment_bytes"] == 16384ull << 11);
}

TEST_CASE("sets and defines take objects (strings, integers, booleans) or NAME=VALUE lists") {
    auto a = run_json("config", json{{"sets", {{"CONFIG_CMA", true}, {"CONFIG_CMA_AREAS", 7}}}});
    auto b =
        run_json("config", json{{"sets", json::array({"CONFIG_CMA=y", "CONFIG_CMA_AREAS=7"})}});
    CHECK(a == b);
    CHECK(a["symbols"]["CONFIG_CMA"] == "y");
    CHECK(a["symbols"]["CONFIG_CMA_AREAS"] == "7");
}

TEST_CASE("check through JSON reports the seed example's pool on 16K pages") {
    auto got = run_json("check", json{{"files", json::array({seed})},
                                      {"arch", "arm64"},
                                      {"kernel_version", "6.16"},
                                      {"sets", {{"CONFIG_ARM64_16K_PAGES", "y"}}}});
    REQUIRE(got["diagnostics"].size() >= 1);
    bool found = false;
    for (const auto& d : got["diagnostics"])
        found = found || (d["check"] == "cma-size-alignment" && d["severity"] == "error" &&
                          d["file"] == seed && d["line"] == 24);
    CHECK(found);
    CHECK(got["summary"]["errors"].get<int>() >= 1);
    // The same board on 4K pages is clean.
    auto clean = run_json("check", json{{"files", json::array({seed})},
                                        {"arch", "arm64"},
                                        {"kernel_version", "6.16"},
                                        {"sets", {{"CONFIG_ARM64_4K_PAGES", "y"}}}});
    CHECK(clean["summary"]["errors"] == 0);
}

TEST_CASE("switches turn checks off as -Wno- does") {
    json request = {{"files", json::array({seed})},
                    {"arch", "arm64"},
                    {"kernel_version", "6.16"},
                    {"sets", {{"CONFIG_ARM64_16K_PAGES", "y"}}},
                    {"switches", json::array({"-Wno-cma-size-alignment"})}};
    auto got = run_json("check", request);
    for (const auto& d : got["diagnostics"])
        CHECK(d["check"] != "cma-size-alignment");
    request["switches"] = json::array({"-Wno-no-such-check"});
    CHECK_THROWS_AS(run_json("check", request), Error);
}

TEST_CASE("bad requests are located errors, never silently ignored") {
    CHECK(error_of("calc", "{\"arch\": \"arm64\",\n  \"sets\": {]")
              .rfind("<request>:2:12: error: invalid JSON", 0) == 0);
    // Unknown keys are named with the likely one and every valid key.
    CHECK(error_of("calc", R"({"arch": "arm64", "kernel_versoin": "6.16"})") ==
          "<request>: error: calc: unknown key 'kernel_versoin' (did you mean "
          "'kernel_version'?); valid keys: configs, sets, unsets, arch, kernel_version, "
          "kernel_tree, kconfig_shell, limits, cache_dir");
    CHECK(error_of("calc", R"({"configs": "a", "arch": ["arm64"]})") ==
          "<request>: error: calc: 'arch' must be a string");
    CHECK(error_of("check", R"({})") == "<request>: error: check: 'files' is required");
    CHECK(error_of("fix", R"({"file": "x.dts", "in_place": true, "diff": true})")
              .find("at most one of") != std::string::npos);
    CHECK(error_of("nope", "{}").find("unknown command 'nope'") != std::string::npos);
    // The request reader is the CLI's too; to a JSON caller it names keys.
    CHECK(error_of("check", R"({"files": ["x.dts"], "jobs": "many"})") ==
          "<request>: error: check: 'jobs' must be an integer from 0 to 4096");
    CHECK(error_of("suggest", R"({"sweep_page_sizes": "4K"})") ==
          "<request>: error: suggest: 'sweep_page_sizes' needs 'sweep_versions'");
    CHECK(error_of("calc", R"({"kernel_tree": "/no/such/tree"})") ==
          "<request>: error: calc: 'kernel_tree': no such directory: /no/such/tree");
    CHECK(error_of("check", json{{"files", "x.dts"}, {"affected_by", CMALIGN_SOURCE_DIR}}.dump()) ==
          "<request>: error: check: 'affected_by' takes the changed files, and '" +
              std::string(CMALIGN_SOURCE_DIR) + "' is a directory");
    CHECK(error_of("boot_check", R"({"board": "b.dts"})") ==
          "<request>: error: boot_check: 'kernel' is required");
}

TEST_CASE("an unreadable file raises the library's located error") {
    auto missing = std::string(CMALIGN_SOURCE_DIR) + "/no/such/board.dts";
    CHECK(error_of("check", json{{"files", json::array({missing})}, {"arch", "arm64"}}.dump()) ==
          missing + ": error: no such file or directory");
    auto bad = std::string(CMALIGN_SOURCE_DIR) + "/tests/capi/bad-syntax.dts";
    auto e = error_of("tree", json{{"file", bad}}.dump());
    CHECK(e.rfind(bad + ":", 0) == 0);
    CHECK(e.find(": error: ") != std::string::npos);
}

TEST_CASE("every command of the table answers") {
    for (const auto& name : json_commands()) {
        json request = {{"arch", "arm64"}};
        if (name == "tree" || name == "table") request = json::object();
        if (name == "check") request["files"] = json::array({seed});
        if (name == "fix" || name == "tree") request["file"] = seed;
        if (name == "map") request["board"] = seed;
        if (name == "suggest") request["target_alignment"] = "4M";
        if (name == "pcp") request["memory"] = "1G";
        if (name == "heap") request["size"] = "10M";
        if (name == "explain") {
            request["log"] =
                std::string(CMALIGN_SOURCE_DIR) + "/examples/logs/seed-board-16k.dmesg";
            request["board"] = std::string(CMALIGN_SOURCE_DIR) + "/examples/boards/seed-board.dts";
        }
        if (name == "boot_check") {
            // Not a kernel image: the boot did not happen, and the answer says why.
            request["board"] = std::string(CMALIGN_SOURCE_DIR) + "/examples/boards/seed-board.dts";
            request["kernel"] = request["board"];
        }
        CAPTURE(name);
        CHECK_NOTHROW(run_json(name, request));
    }
    auto seed_board = std::string(CMALIGN_SOURCE_DIR) + "/examples/boards/seed-board.dts";
    auto not_booted = run_json("boot_check", json{{"board", seed_board}, {"kernel", seed_board}});
    REQUIRE(not_booted["errors"].size() == 1);
    CHECK(not_booted["errors"][0]["message"].get<std::string>().rfind("not a kernel image", 0) ==
          0);
    CHECK(not_booted["reservations"].empty());
    auto tree = run_json("tree", json{{"file", seed}, {"path", "/reserved-memory"}});
    CHECK(tree["nodes"][0]["path"] == "/reserved-memory");
    auto dts = run_json("tree", json{{"file", seed}, {"format", "dts"}});
    CHECK(dts["dts"].get<std::string>().find("shared-dma-pool") != std::string::npos);
}
