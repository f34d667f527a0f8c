// check_json_text(): the text `check --format json` prints, written piece by piece and its regions
// on several threads, must be exactly report::pretty_json(check_json()) of the same outcome.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cmalign/api.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/report/json_text.hpp"
#include "cmalign/run.hpp"
#include "support/material.hpp"

using namespace cmalign;
namespace fs = std::filesystem;

namespace {

const std::string linux_6_12 = std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12";

std::size_t region_count(const CheckOutcome& outcome) {
    std::size_t n = 0;
    for (const auto& r : outcome.results)
        n += r.reservations.regions.size();
    return n;
}

} // namespace

TEST_CASE("check_json_text: the same bytes as pretty_json(check_json()) on real boards" *
          CMALIGN_REAL_MATERIAL(std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12")) {
    if (!test::have_material(linux_6_12 + "/arch/arm64/boot/dts")) return;
    CheckRequest request;
    for (const auto& e : fs::directory_iterator(linux_6_12 + "/arch/arm64/boot/dts/amlogic"))
        if (e.path().extension() == ".dts") request.inputs.push_back(e.path().string());
    std::sort(request.inputs.begin(), request.inputs.end());
    request.config.kernel_tree = linux_6_12;
    request.config.arch = "arm64";
    request.config.sets = {"CONFIG_ARM64_16K_PAGES=y", "CONFIG_CMA=y", "CONFIG_DMA_CMA=y"};
    request.jobs = 2;
    auto outcome = run_check(request);
    REQUIRE(outcome.model);
    REQUIRE(region_count(outcome) > 20);
    auto same = [&](bool affected_by) {
        CAPTURE(affected_by);
        CHECK(check_json_text(outcome, affected_by) ==
              report::pretty_json(check_json(outcome, affected_by)));
    };
    same(false); // fewer regions than make threads worth it: one
    same(true);
    // Enough regions to be written on several threads (the boards repeated).
    const auto once = outcome.results;
    while (region_count(outcome) < 2000)
        outcome.results.insert(outcome.results.end(), once.begin(), once.end());
    same(false);
    const std::string text = check_json_text(outcome);
    CHECK(text.find("\"severity\": \"error\"") != std::string::npos); // findings written too
    // None at all.
    outcome.results.clear();
    same(false);
    CHECK(check_json_text(outcome).find("\"regions\": []") != std::string::npos);
}

TEST_CASE("check_json_text: a string that is not UTF-8 fails as pretty_json() does" *
          CMALIGN_REAL_MATERIAL(std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12")) {
    if (!test::have_material(linux_6_12 + "/arch/arm64/boot/dts")) return;
    CheckRequest request;
    request.inputs = {linux_6_12 + "/arch/arm64/boot/dts/amlogic/meson-a1-ad401.dts"};
    request.config.kernel_tree = linux_6_12;
    request.config.arch = "arm64";
    request.config.sets = {"CONFIG_ARM64_16K_PAGES=y", "CONFIG_CMA=y", "CONFIG_DMA_CMA=y"};
    auto outcome = run_check(request);
    REQUIRE(outcome.model);
    REQUIRE(region_count(outcome) > 0);
    const auto once = outcome.results;
    while (region_count(outcome) < 2000)
        outcome.results.insert(outcome.results.end(), once.begin(), once.end());
    // A bad byte in a region near the end (written by the last thread).
    outcome.results.back().reservations.regions.back().path = "/reserved-memory/\xff";
    std::string want, got;
    try {
        (void)report::pretty_json(check_json(outcome));
    } catch (const nlohmann::json::exception& e) {
        want = e.what();
    }
    try {
        (void)check_json_text(outcome);
    } catch (const nlohmann::json::exception& e) {
        got = e.what();
    }
    CHECK_FALSE(want.empty());
    CHECK(got == want);
}
