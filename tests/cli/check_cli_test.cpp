// `cmalign check` end to end on the example board and on bad input.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "support/cli.hpp"

using namespace cli_test;

namespace {
const std::string board = CMALIGN_SOURCE_DIR "/examples/boards/seed-board.dts";
const std::string config_4k = CMALIGN_SOURCE_DIR "/examples/configs/arm64-4k.config";
const std::string config_16k = CMALIGN_SOURCE_DIR "/examples/configs/arm64-16k.config";
} // namespace

TEST_CASE("the example board is clean on 4K pages and loses its pools on 16K pages") {
    CHECK(run_cli("check " + board + " -c " + config_4k).exit_code == 0);
    auto r = run_cli("check " + board + " -c " + config_16k);
    CHECK(r.exit_code == 1);
    // gcc style, at the size cell in the included .dtsi where it is written, with the check name.
    CHECK(r.out.find("acme-soc.dtsi:23:16: error: ") != std::string::npos);
    CHECK(r.out.find("[cma-size-alignment]") != std::string::npos);
    CHECK(r.out.find("incorrect alignment of CMA region") != std::string::npos);
}

TEST_CASE("check JSON follows docs/json.md") {
    auto r = run_cli("check --format json " + board + " -c " + config_16k);
    REQUIRE(r.exit_code == 1);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["alignment"]["cma_min_alignment_bytes"] == 32u << 20);
    REQUIRE(j["regions"].size() == 3);
    for (const auto& region : j["regions"])
        for (const char* key :
             {"input", "file", "line", "node", "compatible", "kind", "reusable", "no_map",
              "cma_default", "base", "size", "alignment", "alloc_ranges"})
            CHECK_MESSAGE(region.contains(key), key);
    std::set<std::string> kinds;
    for (const auto& region : j["regions"])
        kinds.insert(region["kind"].get<std::string>());
    CHECK(kinds == std::set<std::string>{"cma", "static"});
    const auto& vdec = j["regions"][0];
    CHECK(vdec["node"] == "/reserved-memory/vdec-pool");
    CHECK(vdec["base"].is_null()); // dynamically placed
    CHECK(vdec["size"] == 4u << 20);
    REQUIRE(j["diagnostics"].size() == 2);
    for (const auto& d : j["diagnostics"]) {
        for (const char* key :
             {"input", "file", "line", "column", "severity", "check", "message", "node", "fix"})
            CHECK_MESSAGE(d.contains(key), key);
        CHECK(d["severity"] == "error");
        CHECK(d["fix"]["new"] == 32u << 20);
    }
    CHECK(j["summary"] ==
          nlohmann::json{{"errors", 2}, {"warnings", 0}, {"notes", 0}, {"boards", 1}});
}

TEST_CASE("-W/-E switch checks as dtc does") {
    CHECK(run_cli("check -Wno-cma-size-alignment " + board + " -c " + config_16k).exit_code == 0);
    CHECK(run_cli("check -Wno-cma-size-alignment -W cma-size-alignment " + board + " -c " +
                  config_16k)
              .exit_code == 1);
    CHECK(run_cli("check -Wno-no-such-check " + board + " -c " + config_16k).exit_code == 2);
}

TEST_CASE("SARIF output names the rules and locations") {
    auto r = run_cli("check --format sarif " + board + " -c " + config_16k);
    REQUIRE(r.exit_code == 1);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["version"] == "2.1.0");
    const auto& results = j["runs"][0]["results"];
    REQUIRE(results.size() == 2);
    CHECK(results[0]["ruleId"] == "cma-size-alignment");
    CHECK(results[0]["level"] == "error");
    CHECK(results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 23);
}

TEST_CASE("bad DTS input is a located error and exit 2, never a crash") {
    auto dir = std::filesystem::temp_directory_path() / "cmalign-check-bad";
    std::filesystem::create_directories(dir);
    struct Case {
        const char* name;
        const char* text;
    } cases[] = {
        {"unterminated-node.dts", "/dts-v1/;\n/ {\n\tnode {\n"},
        {"unterminated-string.dts", "/dts-v1/;\n/ { model = \"abc; };\n"},
        {"bad-cells.dts", "/dts-v1/;\n/ { reg = <1 2 zz>; };\n"},
        {"undefined-label.dts", "/dts-v1/;\n/ { };\n&nowhere { x; };\n"},
        {"self-include.dts", "/dts-v1/;\n#include \"self-include.dts\"\n"},
        {"missing-include.dts", "/dts-v1/;\n#include \"no-such.dtsi\"\n/ { };\n"},
        {"runaway-macro.dts", "#define A B B\n#define B A A\n/dts-v1/;\n/ { x = <A>; };\n"},
    };
    for (const auto& c : cases) {
        auto path = (dir / c.name).string();
        std::ofstream(path) << c.text;
        auto err = (dir / (std::string(c.name) + ".err")).string();
        auto r = run_cli("check " + path + " -c " + config_16k, err);
        CAPTURE(c.name);
        CHECK(r.exit_code == 2);
        auto message = read_file(err);
        CAPTURE(message);
        CHECK(message.find(c.name + std::string(":")) != std::string::npos);
        CHECK(message.find("error: ") != std::string::npos);
    }
    // Deep nesting and a huge line.
    {
        std::string deep = "/dts-v1/;\n/ {\n";
        for (int i = 0; i < 100000; ++i)
            deep += "n {";
        auto path = (dir / "deep.dts").string();
        std::ofstream(path) << deep;
        CHECK(run_cli("check " + path + " -c " + config_16k).exit_code == 2);
        std::string huge = "/dts-v1/;\n/ { p = \"" + std::string(8 << 20, 'x') + "\"; };\n";
        path = (dir / "huge.dts").string();
        std::ofstream(path) << huge;
        CHECK(run_cli("check " + path + " -c " + config_16k).exit_code == 0);
    }
    // A truncated DTB.
    {
        auto dtb = (dir / "trunc.dtb").string();
        std::ofstream(dtb, std::ios::binary) << std::string("\xd0\x0d\xfe\xed\x00\x00\x10\x00", 8);
        CHECK(run_cli("check " + dtb + " -c " + config_16k).exit_code == 2);
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("directories are searched for boards, and every board reports") {
    auto r = run_cli("check --format json " CMALIGN_SOURCE_DIR "/examples/boards -c " + config_16k);
    CHECK(r.exit_code == 1);
    auto j = nlohmann::json::parse(r.out);
    std::set<std::string> inputs;
    for (const auto& region : j["regions"])
        inputs.insert(region["input"].get<std::string>());
    CHECK(inputs.size() == 2); // seed-board.dts and upstream-commit-example.dts; not the .dtsi
}

TEST_CASE("fix rewrites the literal size and reports the macro-written one on the same board") {
    auto err = temp_path("fix-example.err");
    auto r = run_cli("fix --diff " + board + " -c " + config_16k, err);
    CHECK(r.exit_code == 1); // one size could not be rewritten
    CHECK(r.out.find("-\t\t\tsize = <0x0 0x400000>;") != std::string::npos);
    CHECK(r.out.find("+\t\t\tsize = <0x0 0x2000000>;") != std::string::npos);
    CHECK(r.out.find("ACME_CAMERA_POOL_SIZE") == std::string::npos); // never rewritten
    auto messages = read_file(err);
    CHECK(messages.find("acme-soc.dtsi:32:30: error: ") != std::string::npos);
    CHECK(messages.find("<0x0 0x2000000>") != std::string::npos); // the value to write by hand
    std::filesystem::remove(err);
}

TEST_CASE("--kernel-image: where the kernel lies decides which dynamic pools find room") {
    // 22 dynamic 32 MiB pools in 512 MiB on 16K pages (32 MiB CMA alignment).
    auto dir = std::filesystem::temp_directory_path() / "cmalign-kernel-image-test";
    std::filesystem::create_directories(dir);
    const auto path = (dir / "many.dts").string();
    {
        std::ofstream out(path);
        out << "/dts-v1/;\n/ {\n\t#address-cells = <2>;\n\t#size-cells = <2>;\n"
               "\tmemory@40000000 { device_type = \"memory\"; reg = <0x0 0x40000000 0x0 "
               "0x20000000>; };\n\treserved-memory {\n\t\t#address-cells = <2>;\n"
               "\t\t#size-cells = <2>;\n\t\tranges;\n";
        for (int i = 0; i < 22; ++i)
            out << "\t\tmany" << i
                << " { compatible = \"shared-dma-pool\"; reusable; size = <0x0 0x2000000>; };\n";
        out << "\t};\n};\n";
    }
    auto lost = [&](const std::string& extra) {
        auto r = run_cli("check --format json " + path + " -c " + config_16k + extra);
        auto j = nlohmann::json::parse(r.out);
        std::set<std::string> nodes;
        for (const auto& d : j["diagnostics"])
            if (d["check"] == "dynamic-no-room") nodes.insert(d["node"].get<std::string>());
        return nodes.size();
    };
    CHECK(lost("") == 8);                               // assumed: 48 MiB at 0x40000000
    CHECK(lost(" --kernel-image 0x40200000,30M") == 7); // ends at 0x42000000: one block more
    CHECK(lost(" --kernel-image 0x5f000000,16M") == 7); // the top block instead
    auto bad = run_cli("check " + path + " -c " + config_16k + " --kernel-image 0x40200000", "&1");
    CHECK(bad.exit_code == 2);
    CHECK(bad.out.find("--kernel-image takes BASE,SIZE") != std::string::npos);
    std::filesystem::remove_all(dir);
}
