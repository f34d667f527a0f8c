// run_check() over many inputs: the outcome must not depend on how many workers read the boards
// (each takes a run of them and then helps the others), and a configuration that cannot be used
// ends the run without any board's result, whatever the number of jobs.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cmalign/api.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/run.hpp"
#include "support/material.hpp"

using namespace cmalign;
namespace fs = std::filesystem;

namespace {

const std::string kernel_tree = std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12";

// 16 amlogic boards (meson-a1-ad401 and -ad402 with CMA pools a 16K-page kernel rejects) inside
// the tree: the model is the tree's Kconfig evaluated.
CheckRequest amlogic_request(unsigned jobs) {
    CheckRequest request;
    const fs::path dir = fs::path(kernel_tree) / "arch/arm64/boot/dts/amlogic";
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".dts") request.inputs.push_back(e.path().string());
    std::sort(request.inputs.begin(), request.inputs.end());
    request.inputs.resize(std::min<std::size_t>(request.inputs.size(), 16));
    request.config.kernel_tree = kernel_tree;
    request.config.arch = "arm64";
    request.config.sets = {"CONFIG_ARM64_16K_PAGES=y", "CONFIG_CMA=y", "CONFIG_DMA_CMA=y"};
    request.jobs = jobs;
    return request;
}

} // namespace

TEST_CASE("run_check: one job and several give the same outcome inside a kernel tree" *
          CMALIGN_REAL_MATERIAL(std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12")) {
    clear_caches(); // each run evaluates the Kconfig anew, as a command does
    const auto serial = run_check(amlogic_request(1));
    REQUIRE(serial.model);
    REQUIRE(serial.results.size() == 16);
    const std::string want = check_json(serial).dump();
    CHECK(want.find("\"severity\":\"error\"") != std::string::npos); // something to compare
    for (unsigned jobs : {2u, 8u}) {
        CAPTURE(jobs);
        clear_caches();
        const auto parallel = run_check(amlogic_request(jobs));
        REQUIRE(parallel.model);
        CHECK(check_json(parallel).dump() == want);
        CHECK(parallel.sources == serial.sources);
    }
}

TEST_CASE("run_check: a configuration that cannot be used ends the run without board results") {
    for (unsigned jobs : {1u, 2u}) {
        CAPTURE(jobs);
        CheckRequest request;
        request.inputs = {"/nonexistent/board.dts"};
        request.config.arch = "arm64";
        request.config.config_files = {"/nonexistent/.config"};
        request.jobs = jobs;
        const auto outcome = run_check(request);
        CHECK_FALSE(outcome.model);
        CHECK_FALSE(outcome.config_diagnostics.empty());
        CHECK(outcome.input_errors.empty()); // the missing board is not reported: no model
        CHECK(outcome.results.empty());
        CHECK(outcome.inputs == 0);
    }
}

TEST_CASE("run_check: readable boards with an unusable configuration give no board results" *
          CMALIGN_REAL_MATERIAL(std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12")) {
    // The configuration is evaluated beside the boards being read: boards read before it
    // failed must not show up, and their errors (none here) neither.
    for (unsigned jobs : {1u, 2u}) {
        CAPTURE(jobs);
        clear_caches();
        CheckRequest request = amlogic_request(jobs);
        request.config.config_files = {"/nonexistent/.config"};
        const auto outcome = run_check(request);
        CHECK_FALSE(outcome.model);
        CHECK_FALSE(outcome.config_diagnostics.empty());
        CHECK(outcome.input_errors.empty());
        CHECK(outcome.results.empty());
        CHECK(outcome.inputs == 0);
        CHECK_FALSE(outcome.sources);
    }
}
