// Options never eat inputs, `--` ends options, and a gate never passes by checking nothing.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "support/material.hpp"

using namespace cli_test;
namespace fs = std::filesystem;

namespace {

const std::string repo = CMALIGN_SOURCE_DIR "/examples/board-repo";
const std::string evk = repo + "/boards/acme-evk.dts";
const std::string mini = repo + "/boards/acme-mini.dts";
const std::string beta = repo + "/boards/beta-board.dts";
const std::string soc = repo + "/boards/acme-soc.dtsi";
const std::string include = repo + "/include";
// The defconfig has no version header: the version is given, as in examples/README.md.
const std::string cfg = "-c " + repo + "/configs/acme_defconfig -c " + repo +
                        "/configs/16k.config --kernel-version 6.12";

// cmalign with stdout and stderr both captured.
Run cli(const std::string& args) {
    return run_shell(std::string(CMALIGN_CLI) + " " + args);
}

// The inputs a `check --format json` run read, from its regions and diagnostics.
std::set<std::string> inputs_of(const std::string& json_text) {
    auto j = nlohmann::json::parse(json_text);
    std::set<std::string> out;
    for (const auto& r : j["regions"])
        out.insert(r["input"].get<std::string>());
    for (const auto& d : j["diagnostics"])
        out.insert(d["input"].get<std::string>());
    return out;
}

std::size_t boards_of(const std::string& json_text) {
    return nlohmann::json::parse(json_text)["summary"]["boards"].get<std::size_t>();
}

} // namespace

TEST_CASE("a repeatable option takes one value: the inputs after it are still checked") {
    // -I between two boards, -c before both, -D and --set in between.
    for (const std::string& args :
         {"check " + evk + " -I " + include + " " + mini + " " + cfg,
          "check " + cfg + " -I " + include + " " + evk + " " + mini,
          "check -I " + include + " -D ACME_UNUSED=1 " + evk + " --set CONFIG_CMA=y " + mini + " " +
              cfg,
          "check -I " + include + " " + cfg + " --unset CONFIG_CMA_AREAS " + evk + " " + mini}) {
        CAPTURE(args);
        auto r = cli(args + " --format json");
        CHECK(r.exit_code == 1); // 16K pages reject the SoC's 4 MiB pools
        CHECK(inputs_of(r.out) == std::set<std::string>{evk, mini});
        CHECK(boards_of(r.out) == 2);
    }
    // Text: the summary counts the boards.
    auto r = cli("check " + evk + " -I " + include + " " + mini + " " + cfg);
    CHECK(r.err.find("2 boards checked against arm64") != std::string::npos);
    // A repeated option keeps every occurrence, in order.
    auto both = cli("check -I /nonexistent-include -I " + include + " " + evk + " " + cfg +
                    " --format json");
    CHECK(boards_of(both.out) == 1);
    CHECK(both.exit_code == 1); // the second -I found the header
}

TEST_CASE("-- ends the options: what follows is an input whatever it looks like") {
    auto dir = fs::path(temp_path("dashdash"));
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(evk, dir / "-odd.dts");
    fs::copy_file(soc, dir / "acme-soc.dtsi");
    auto r = run_shell("cd '" + dir.string() + "' && " + CMALIGN_CLI + " check -I " + include +
                       " " + cfg + " --format json -- -odd.dts " + mini);
    CHECK(r.exit_code == 1);
    CHECK(inputs_of(r.out) == std::set<std::string>{"-odd.dts", mini});
    // Without --, "-odd.dts" is an option and refused.
    auto refused = run_shell("cd '" + dir.string() + "' && " + CMALIGN_CLI + " check -I " +
                             include + " " + cfg + " -odd.dts");
    CHECK(refused.exit_code == 2);
    // A single positional after --, and one too many.
    CHECK(cli("tree -I " + include + " --path /reserved-memory -- " + evk).exit_code == 0);
    auto extra = cli("tree -- " + evk + " " + mini);
    CHECK(extra.exit_code == 2);
    CHECK(extra.err.find("unexpected argument '" + mini + "'") != std::string::npos);
    auto missing = cli("tree --path /");
    CHECK(missing.exit_code == 2);
    CHECK(missing.err.find("file is required") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("no board under the given paths is an input error naming them, in every format") {
    auto dir = fs::path(temp_path("emptydir"));
    fs::remove_all(dir);
    fs::create_directories(dir / "sub");
    std::ofstream(dir / "sub" / "only.dtsi") << "/ { };\n"; // a .dtsi is checked only when named
    for (const char* format : {"text", "json", "sarif", "github"}) {
        CAPTURE(format);
        auto r = cli("check " + dir.string() + " " + cfg + " --format " + format);
        CHECK(r.exit_code == 2);
        // On stderr for text; in the JSON, SARIF or annotations for the others.
        CHECK((r.out + r.err)
                  .find("no board (.dts, .dtso, .dtb, .dtbo) under '" + dir.string() + "'") !=
              std::string::npos);
    }
    auto fix = cli("fix " + dir.string() + " " + cfg);
    CHECK(fix.exit_code == 2);
    CHECK(fix.err.find("no board") != std::string::npos);
    auto suggest = cli("suggest " + dir.string() + " " + cfg);
    CHECK(suggest.exit_code == 2);
    CHECK(suggest.err.find("no board") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("--affected-by: a change reaching no board says so; a directory in its list is refused") {
    const std::string unrelated = repo + "/include/dt-bindings/acme/memory.h";
    // beta-board includes nothing of the ACME SoC.
    auto none = cli("check " + beta + " -I " + include + " " + cfg + " --affected-by " + soc);
    CHECK(none.exit_code == 0);
    CHECK(none.err.find("0 boards affected by " + soc + " (1 not affected, skipped)") !=
          std::string::npos);
    CHECK(none.err.find("0 boards checked") != std::string::npos);
    auto json =
        cli("check " + beta + " -I " + include + " " + cfg + " --format json --affected-by " + soc);
    auto j = nlohmann::json::parse(json.out);
    CHECK(j["summary"]["boards"] == 0);
    CHECK(j["summary"]["unaffected"] == 1);

    auto some = cli("check " + repo + "/boards -I " + include + " " + cfg + " --affected-by " +
                    soc + " " + unrelated);
    CHECK(some.exit_code == 1);
    CHECK(some.err.find("2 boards affected by " + soc + ", " + unrelated +
                        " (1 not affected, skipped)") != std::string::npos);

    // The list runs to the next option, so an input after it would be taken for a changed file.
    auto swallowed =
        cli("check " + beta + " " + cfg + " --affected-by " + soc + " " + repo + "/boards");
    CHECK(swallowed.exit_code == 2);
    CHECK(swallowed.err.find("'" + repo + "/boards' is a directory") != std::string::npos);
    // ... and -- ends it.
    auto ended = cli("check -I " + include + " " + cfg + " --format json --affected-by " + soc +
                     " -- " + repo + "/boards");
    CHECK(ended.exit_code == 1);
    CHECK(boards_of(ended.out) == 2);
}

TEST_CASE("a finding in a shared .dtsi is printed once naming its boards; JSON keeps each") {
    const std::string args = "check " + evk + " " + mini + " -I " + include + " " + cfg;
    // JSON: one entry per board; the findings in the shared .dtsi, grouped by place.
    auto json = nlohmann::json::parse(cli(args + " --format json").out);
    std::map<std::string, std::set<std::string>> boards_of_place;
    for (const auto& d : json["diagnostics"]) {
        auto file = d["file"].get<std::string>();
        if (file.find("acme-soc.dtsi") == std::string::npos) continue;
        boards_of_place[std::to_string(d["line"].get<int>()) + ":" +
                        std::to_string(d["column"].get<int>())]
            .insert(d["input"].get<std::string>());
    }
    std::size_t shared = 0;
    for (const auto& [place, boards] : boards_of_place)
        if (boards.size() == 2) ++shared;
    REQUIRE(shared >= 1); // the SoC's vdec pool, in both boards

    // Text: one line per place; a place both boards reach names them.
    auto text = cli(args);
    CHECK(text.exit_code == 1);
    std::size_t lines = 0, named = 0;
    std::istringstream in(text.out);
    for (std::string line; std::getline(in, line);) {
        if (line.find("acme-soc.dtsi:") == std::string::npos ||
            line.find(": error: ") == std::string::npos)
            continue;
        ++lines;
        if (line.find("(in 2 boards: " + evk + ", " + mini + ")") != std::string::npos) ++named;
    }
    CHECK(lines == boards_of_place.size());
    CHECK(named == shared);
    auto github = cli(args + " --format github");
    CHECK(github.out.find("in 2 boards: ") != std::string::npos);
}

TEST_CASE("config inside a kernel tree evaluates it as calc does" *
          CMALIGN_REAL_MATERIAL(std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12")) {
    const std::string tree = std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12";
    if (!cmalign::test::have_material(tree + "/arch/powerpc/configs/ppc64_defconfig")) return;
    auto config = run_cli_in(tree, "config -c arch/powerpc/configs/ppc64_defconfig --format json");
    auto calc = run_cli_in(tree, "calc -c arch/powerpc/configs/ppc64_defconfig --format json");
    REQUIRE(config.exit_code == 0);
    REQUIRE(calc.exit_code == 0);
    auto symbols = nlohmann::json::parse(config.out)["symbols"];
    // The defconfig names a few hundred symbols; Kconfig's evaluation gives thousands.
    CHECK(symbols.size() > 3000);
    // Every config line calc's derivation read has the value config prints.
    std::size_t compared = 0;
    const auto derivation = nlohmann::json::parse(calc.out)["derivation"];
    for (const auto& step : derivation)
        for (const auto& input : step["inputs"]) {
            if (input["file"].is_null()) continue; // assumed, not read
            auto symbol = input["symbol"].get<std::string>();
            CAPTURE(symbol);
            REQUIRE(symbols.contains(symbol));
            CHECK(symbols[symbol] == input["value"]);
            ++compared;
        }
    CHECK(compared >= 3);
}
