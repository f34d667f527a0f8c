// Reports: gcc-style text with the source line and caret, the JSON keys of docs/json.md, and SARIF
// 2.1.0 validated against the schema in tests/data/sarif with Debian's python3-jsonschema.
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <unistd.h>

#include "cmalign/internal/json.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/report/report.hpp"
#include "support/dt_builder.hpp"
#include "support/models.hpp"

using namespace cmalign;
using namespace cmalign::test;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
    auto dir = fs::temp_directory_path() / ("cmalign-report-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir;
}

void write_file(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

std::set<std::string> keys(const nlohmann::json& j) {
    std::set<std::string> out;
    for (const auto& [k, v] : j.items())
        out.insert(k);
    return out;
}

Diagnostic diag(Severity s, Location where, std::string check, std::string message,
                std::string node = "/reserved-memory/p") {
    Diagnostic d;
    d.severity = s;
    d.where = std::move(where);
    d.check = std::move(check);
    d.message = std::move(message);
    d.node = std::move(node);
    d.input = "board.dts";
    return d;
}

} // namespace

TEST_CASE("text: gcc header, source line and caret under the column") {
    auto dir = temp_dir();
    auto file = dir / "board.dts";
    write_file(file, "/ {\n\treserved-memory {\n\t\tsize = <0x0 0x400000>;\n");
    auto d =
        diag(Severity::error, Location{file.string(), 3, 11}, "cma-size-alignment", "too small");
    auto out = report::text(d);
    auto expected_head = file.string() + ":3:11: error: too small [cma-size-alignment]\n";
    CHECK(out.rfind(expected_head, 0) == 0);
    // Two tabs expand to 16 columns; column 11 is byte 10 = "0x0" after "size = <" (8 bytes).
    CHECK(out.substr(expected_head.size()) == "    3 |                 size = <0x0 0x400000>;\n"
                                              "      |                         ^\n");

    auto dtb = diag(Severity::warning, Location{"board.dtb", 0, 0}, "overlap", "overlaps");
    CHECK(report::text(dtb) == "board.dtb: warning: overlaps [overlap]\n");
    report::TextOptions plain;
    plain.show_source = false;
    CHECK(report::text(d, plain) == expected_head);
    report::TextOptions color;
    color.color = true;
    CHECK(report::text(d, color).find("\033[01;31merror:\033[m") != std::string::npos);
    std::vector<Diagnostic> list{d, dtb};
    CHECK(report::summary_line(list) == "1 error, 1 warning, 0 notes");
    fs::remove_all(dir);
}

TEST_CASE("JSON: the keys of docs/json.md for regions, diagnostics and summary") {
    auto t = board({cma_pool("cma_test_reserve", 4u << 20, 24),
                    cma_static("cma@42000000", 0x42000000, 32u << 20)});
    auto result = checks::run(t, arm64_612(16384), {});
    nlohmann::json alignment = {{"cma_min_alignment_bytes", 33554432}};
    std::vector<checks::Result> results{result};
    Diagnostic unreadable =
        diag(Severity::error, Location{"missing.dtb", 0, 0}, "", "cannot open", "");
    std::vector<Diagnostic> input_errors{unreadable};
    auto j = report::check_json(alignment, results, input_errors);
    CHECK(keys(j) == std::set<std::string>{"alignment", "default_cma_areas", "regions",
                                           "diagnostics", "summary"});
    CHECK(j["alignment"] == alignment);
    CHECK(j["default_cma_areas"] == nlohmann::json::array()); // no CONFIG_DMA_CMA in the model

    REQUIRE(j["regions"].size() == 2);
    const auto& dyn = j["regions"][0];
    for (const char* k : {"input", "file", "line", "node", "compatible", "kind", "reusable",
                          "no_map", "cma_default", "base", "size", "alignment", "alloc_ranges"})
        CHECK_MESSAGE(dyn.contains(k), k);
    CHECK(dyn["kind"] == "cma");
    CHECK(dyn["base"].is_null());
    CHECK(dyn["size"] == 4u << 20);
    CHECK(dyn["compatible"] == nlohmann::json::array({"shared-dma-pool"}));
    CHECK(dyn["alloc_ranges"] == nlohmann::json::array());
    CHECK(j["regions"][1]["base"] == 0x42000000);

    const auto& diags = j["diagnostics"];
    REQUIRE(diags.size() == 2);
    CHECK(diags[0]["check"].is_null()); // the input error comes first
    CHECK(diags[0]["line"].is_null());
    const auto& d = diags[1];
    CHECK(keys(d) == std::set<std::string>{"input", "file", "line", "column", "severity", "check",
                                           "message", "node", "fix"});
    CHECK(d["check"] == "cma-size-alignment");
    CHECK(d["severity"] == "error");
    CHECK(d["line"] == 24);
    CHECK(d["column"] == 21);
    CHECK(d["fix"] ==
          nlohmann::json({{"property", "size"}, {"old", 4u << 20}, {"new", 32u << 20}}));
    CHECK(j["summary"] == nlohmann::json({{"errors", 2}, {"warnings", 0}, {"notes", 0}}));
}

TEST_CASE("SARIF 2.1.0: valid against the schema, relative URIs, rules from the registry") {
    auto dir = temp_dir();
    write_file(dir / "src/board dir/board.dts", "/ {\n};\n");
    std::vector<Diagnostic> diagnostics{
        diag(Severity::error, Location{(dir / "src/board dir/board.dts").string(), 2, 3},
             "cma-size-alignment", "lost"),
        diag(Severity::warning, Location{(dir / "out/board.dtb").string(), 0, 0}, "overlap",
             "overlap"),
        diag(Severity::note, Location{"/elsewhere/x.dtsi", 4, 1}, "cmdline-cma", "rounded"),
        diag(Severity::error, Location{"gone.dtb", 0, 0}, "", "cannot open", ""),
    };
    diagnostics[0].fix.push_back({"size", 4u << 20, 32u << 20});
    report::SarifOptions options;
    options.base_dir = dir.string();
    auto log = report::sarif(diagnostics, options);

    CHECK(log["version"] == "2.1.0");
    const auto& run = log["runs"].at(0);
    CHECK(run["tool"]["driver"]["name"] == "cmalign");
    const auto& rules = run["tool"]["driver"]["rules"];
    CHECK(rules.size() == checks::registry().size() + 1);
    const auto& results = run["results"];
    REQUIRE(results.size() == 4);
    for (const auto& r : results) {
        auto index = r["ruleIndex"].get<std::size_t>();
        CHECK(rules.at(index)["id"] == r["ruleId"]);
    }
    const auto& first = results[0]["locations"][0]["physicalLocation"];
    CHECK(first["artifactLocation"]["uri"] == "src/board%20dir/board.dts");
    CHECK(first["artifactLocation"]["uriBaseId"] == "SRCROOT");
    CHECK(first["region"] == nlohmann::json({{"startLine", 2}, {"startColumn", 3}}));
    CHECK(results[0]["properties"]["fix"]["new"] == 32u << 20);
    CHECK_FALSE(results[1]["locations"][0]["physicalLocation"].contains("region")); // DTB: no line
    CHECK(results[2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] ==
          "file:///elsewhere/x.dtsi");
    CHECK(results[3]["ruleId"] == report::input_rule_id);
    auto base_uri = run["originalUriBaseIds"]["SRCROOT"]["uri"].get<std::string>();
    CHECK(base_uri.rfind("file:///", 0) == 0);
    CHECK(base_uri.back() == '/');

    // Validate with python3-jsonschema (Debian's interpreter sees it).
    auto schema = fs::path(CMALIGN_TEST_DATA) / "sarif/sarif-2.1.0-subset.schema.json";
    REQUIRE(fs::exists(schema));
    if (std::system("/usr/bin/python3 -c 'import jsonschema' 2>/dev/null") != 0) {
        // python3-jsonschema comes from scripts/install-deps: required where material is.
        if (cmalign::test::material_required())
            FAIL_CHECK("/usr/bin/python3 has no jsonschema (python3-jsonschema)");
        else
            MESSAGE("SKIPPED schema validation: /usr/bin/python3 has no jsonschema");
        fs::remove_all(dir);
        return;
    }
    auto validate = [&](const nlohmann::json& doc) {
        auto path = dir / "out.sarif";
        std::ofstream(path) << doc.dump(2);
        std::string cmd = "/usr/bin/python3 -c 'import json,sys,jsonschema; "
                          "v=jsonschema.Draft7Validator(json.load(open(sys.argv[1])), "
                          "format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER); "
                          "errs=list(v.iter_errors(json.load(open(sys.argv[2])))); "
                          "[print(e.message, list(e.path), file=sys.stderr) for e in errs]; "
                          "sys.exit(1 if errs else 0)' '" +
                          schema.string() + "' '" + path.string() + "'";
        return std::system(cmd.c_str()) == 0;
    };
    CHECK(validate(log));
    CHECK(validate(report::sarif({}, {}))); // an empty run
    auto broken = log;
    broken["runs"][0]["results"][0]["level"] = "fatal";
    CHECK_FALSE(validate(broken)); // the validator does reject what the schema forbids
    auto broken2 = log;
    broken2["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0;
    CHECK_FALSE(validate(broken2));
    fs::remove_all(dir);
}

TEST_CASE("uri_encode_path keeps path characters and escapes the rest") {
    CHECK(report::uri_encode_path("a b/c%d.dts") == "a%20b/c%25d.dts");
    CHECK(report::uri_encode_path("arm64/qcom/sdm845.dtsi") == "arm64/qcom/sdm845.dtsi");
}

TEST_CASE("JSON: check's default_cma_areas, one per board, where the checks put the area") {
    // 16K pages on 6.12.117: CONFIG_CMA_SIZE_MBYTES=16 rounds up to the 32 MiB CMA alignment and
    // goes to the top of the 1 GiB of RAM; a board whose RAM above the kernel is all no-map
    // leaves it no room.
    auto m = arm64_612(16384);
    kernel::DefaultCmaConfig d;
    d.mbytes = 16;
    d.zone_dma = d.zone_dma32 = true;
    m.default_cma = d;
    auto fits = checks::run(board({}), m, {});
    auto crowded = board(
        {node("fw@44000000", {cells("reg", {0, 0x44000000, 0, 0x3c000000}), flag("no-map")})});
    crowded.input = "crowded.dts";
    auto full = checks::run(crowded, m, {});
    std::vector<checks::Result> results{fits, full};
    auto j = report::check_json(nlohmann::json::object(), results);
    REQUIRE(j["default_cma_areas"].size() == 2);
    const auto& a = j["default_cma_areas"][0];
    CHECK(keys(a) == std::set<std::string>{"input", "outcome", "source", "asked", "size_bytes",
                                           "aligned_size_bytes", "alignment", "base", "fixed",
                                           "arch_limit", "limit", "limit_words", "dt_pool",
                                           "reason", "lines"});
    CHECK(a["input"] == "board.dts");
    CHECK(a["outcome"] == "created");
    CHECK(a["source"] == "config");
    CHECK(a["asked"] == "CONFIG_CMA_SIZE_MBYTES=16");
    CHECK(a["size_bytes"] == 16u << 20);
    CHECK(a["aligned_size_bytes"] == 32u << 20);
    CHECK(a["alignment"] == 32u << 20);
    CHECK(a["base"] == 0x7e000000);
    CHECK(a["fixed"] == false);
    CHECK(a["limit"] == 0x80000000);
    CHECK(a["dt_pool"].is_null());
    CHECK(a["lines"] == nlohmann::json::array({"cma: Reserved 32 MiB at 0x000000007e000000 on "
                                               "node -1"}));
    const auto& b = j["default_cma_areas"][1];
    CHECK(b["input"] == "crowded.dts");
    CHECK(b["outcome"] == "failed");
    CHECK(b["base"].is_null());
    CHECK(b["lines"] == nlohmann::json::array({"cma: Failed to reserve 32 MiB on node -1"}));
    // The error check reports for the same area.
    bool reported = false;
    for (const auto& diag : j["diagnostics"])
        reported = reported || diag["check"] == "cma-default-area";
    CHECK(reported);
}
