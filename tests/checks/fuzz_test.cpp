// Random reservation trees (odd cell counts, odd property lengths, random flags and values)
// through reserved::read and every check under several kernels: never a crash, every finding
// named and located. Deterministic seed, so a failure reproduces.
#include <doctest/doctest.h>

#include <random>

#include "cmalign/checks/checks.hpp"
#include "support/dt_builder.hpp"
#include "support/models.hpp"

using namespace cmalign;
using namespace cmalign::test;

namespace {

dt::Property random_bytes(std::mt19937& rng, std::string name, std::size_t max_cells) {
    dt::Property p;
    p.name = std::move(name);
    std::size_t len = rng() % (max_cells * 4 + 3);
    for (std::size_t i = 0; i < len; ++i) {
        // Mostly small numbers and zeros, sometimes anything: closer to real trees.
        auto r = rng() % 8;
        p.value.push_back(r < 5 ? 0 : static_cast<std::uint8_t>(rng()));
    }
    return p;
}

std::uint32_t random_cells(std::mt19937& rng) {
    auto r = rng() % 10;
    if (r < 4) return 2;
    if (r < 7) return 1;
    if (r < 9) return rng() % 5;
    return static_cast<std::uint32_t>(rng());
}

} // namespace

TEST_CASE("random reservation trees never crash the reader or the checks") {
    std::mt19937 rng(20261130);
    std::vector<kernel::Model> models{arm64_612(4096), arm64_612(16384), arm64_612(65536)};
    models.push_back(arm64_612(4096));
    models.back().version = *KernelVersion::parse("6.1.192");
    models.back().phys_addr_64bit = false;
    models.push_back(arm64_612(16384));
    models.back().version = *KernelVersion::parse("7.0");
    models.back().pageblock_order.reset();
    models.back().cma_min_alignment_bytes.reset();
    models.back().pageblock_order_range = std::pair{5, 8};
    models.back().cma_areas = 1;
    std::size_t findings = 0;
    for (int round = 0; round < 400; ++round) {
        std::vector<dt::Node> regions;
        int n = static_cast<int>(rng() % 6);
        for (int i = 0; i < n; ++i) {
            std::vector<dt::Property> props;
            if (rng() % 3 != 0)
                props.push_back(
                    str("compatible", {rng() % 4 ? "shared-dma-pool" : "restricted-dma-pool"}));
            if (rng() % 2) props.push_back(flag("reusable"));
            if (rng() % 4 == 0) props.push_back(flag("no-map"));
            if (rng() % 5 == 0) props.push_back(flag("linux,cma-default"));
            if (rng() % 6 == 0) props.push_back(str("status", {rng() % 2 ? "okay" : "disabled"}));
            if (rng() % 2) props.push_back(random_bytes(rng, "reg", 8));
            if (rng() % 2) props.push_back(random_bytes(rng, "size", 3));
            if (rng() % 3 == 0) props.push_back(random_bytes(rng, "alignment", 3));
            if (rng() % 3 == 0) props.push_back(random_bytes(rng, "alloc-ranges", 8));
            regions.push_back(node("r" + std::to_string(i), std::move(props)));
        }
        auto t = board(std::move(regions), random_cells(rng), random_cells(rng));
        if (rng() % 3 == 0)
            t.root.children.push_back(node(
                "chosen", {str("bootargs", {rng() % 2 ? "cma=3M@0x40100000-0x1" : "cma cma=0x"})}));
        if (rng() % 4 == 0) t.memreserve.push_back({rng(), rng(), {}});
        for (const auto& m : models) {
            auto result = checks::run(t, m, {});
            for (const auto& d : result.diagnostics) {
                CHECK_FALSE(d.check.empty());
                CHECK_FALSE(d.message.empty());
                CHECK(d.where.known());
                ++findings;
            }
        }
    }
    CHECK(findings > 100); // the random trees do trip the checks
}
