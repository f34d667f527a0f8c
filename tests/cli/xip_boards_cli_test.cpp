// Real material: the XIP, no-MMU stm32 boards of Debian's 6.12 tree that declare a pool, checked
// with their own arch/arm/configs/stm32_defconfig (CONFIG_XIP_KERNEL=y, MMU off) and the tree's
// Kconfig. The kernel's text runs from flash and only its data and bss take RAM, so a generic
// kernel's 29 MiB is not assumed in their 8 MiB (stm32f7 discovery) or 32 MiB (art-pi) of SDRAM:
// no dynamic-no-room error. The boards boot upstream.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "support/material.hpp"

using namespace cli_test;

namespace {

const std::string tree = std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12";

const char* const boards[] = {
    "arch/arm/boot/dts/st/stm32f746-disco.dts",
    "arch/arm/boot/dts/st/stm32f769-disco.dts",
    "arch/arm/boot/dts/st/stm32f769-disco-mb1166-reva09.dts",
    "arch/arm/boot/dts/st/stm32h750i-art-pi.dts",
};

} // namespace

TEST_CASE("XIP no-MMU stm32 boards with stm32_defconfig: no dynamic-no-room error" *
          CMALIGN_REAL_MATERIAL(tree)) {
    if (!cmalign::test::have_material(tree + "/arch/arm/configs/stm32_defconfig")) return;
    std::string files;
    for (const char* b : boards)
        files += std::string(" ") + b;
    auto r =
        run_cli_in(tree, "check" + files + " -c arch/arm/configs/stm32_defconfig --format json");
    CAPTURE(r.out);
    REQUIRE(r.exit_code != 2);
    auto j = nlohmann::json::parse(r.out);
    std::size_t pools_seen = 0;
    for (const auto& d : j["diagnostics"]) {
        CAPTURE(d.dump());
        if (d["check"] == "dynamic-no-room") CHECK(d["severity"] != "error");
    }
    // The pools are there and read: each board's one (linux,cma; linux,dma on the f769 boards)
    // is in the answer's reservations.
    for (const auto& region : j["regions"])
        if (region["node"].get<std::string>().rfind("/reserved-memory/linux,", 0) == 0)
            ++pools_seen;
    CHECK(pools_seen == std::size(boards));

    // The same boards with XIP turned off: the generic 29 MiB image is assumed in their RAM and
    // the pools find no room beside it — a warning that says so, never an error (the pools fit
    // once the assumption is left out).
    auto generic = run_cli_in(tree, "check" + files +
                                        " -c arch/arm/configs/stm32_defconfig "
                                        "--set CONFIG_XIP_KERNEL=n --format json");
    REQUIRE(generic.exit_code != 2);
    std::size_t warned = 0;
    const auto generic_json = nlohmann::json::parse(generic.out);
    for (const auto& d : generic_json["diagnostics"]) {
        if (d["check"] != "dynamic-no-room") continue;
        CAPTURE(d.dump());
        CHECK(d["severity"] == "warning");
        CHECK(d["message"].get<std::string>().find("a generic kernel's size") != std::string::npos);
        ++warned;
    }
    CHECK(warned == 3); // the three 8 MiB discovery boards; art-pi's 32 MiB hold both
}
