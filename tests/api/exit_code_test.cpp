// One ExitCode for every outcome: check, fix and suggest say themselves what the CLI exits with
// (0 clean, 1 findings, 2 usage or input error), so no caller patches it.
#include <doctest/doctest.h>

#include <filesystem>

#include "cmalign/run.hpp"
#include "cmalign/run_fix.hpp"
#include "support/fix.hpp"

using namespace cmalign;

namespace {

std::string source(const std::string& rel) {
    return std::string(CMALIGN_SOURCE_DIR) + "/" + rel;
}

const std::string board = source("examples/boards/upstream-commit-example.dts");

} // namespace

TEST_CASE("check: findings under 16K pages, clean under 4K, input error for a missing file") {
    CheckRequest request;
    request.inputs = {board};
    request.config.config_files = {source("examples/configs/arm64-16k.config")};
    CHECK(run_check(request).exit_code(false) == ExitCode::findings);
    request.config.config_files = {source("examples/configs/arm64-4k.config")};
    CHECK(run_check(request).exit_code(false) == ExitCode::clean);
    request.inputs = {source("examples/boards/no-such-board.dts")};
    CHECK(run_check(request).exit_code(false) == ExitCode::input_error);
}

TEST_CASE("fix: edits only shown (plan, diff) are findings; applied ones leave the run clean") {
    fix_test::TempDir dir("exit-code");
    std::filesystem::copy_file(board, dir / "board.dts");
    FixRequest request;
    request.inputs = {dir / "board.dts"};
    request.config.config_files = {fix_test::config_16k()};
    for (auto mode : {FixMode::plan, FixMode::diff}) {
        request.mode = mode;
        auto shown = run_fix(request);
        REQUIRE(shown.edits.size() == 1);
        CHECK(shown.exit_code() == ExitCode::findings);
    }
    request.mode = FixMode::in_place;
    auto applied = run_fix(request);
    CHECK(applied.written.size() == 1);
    CHECK(applied.exit_code() == ExitCode::clean);
    request.mode = FixMode::diff; // nothing left to show
    auto again = run_fix(request);
    CHECK(again.edits.empty());
    CHECK(again.exit_code() == ExitCode::clean);
}

TEST_CASE("suggest: input error without pools or a target") {
    SuggestRequest request;
    request.config.arch = "arm64";
    CHECK(run_suggest(request).exit_code() == ExitCode::input_error);
}
