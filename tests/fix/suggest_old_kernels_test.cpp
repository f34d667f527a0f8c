// suggest on v4.19/v5.4: arm64's FORCE_MAX_ZONEORDER has no prompt and Kconfig derives it from
// THP (arch/arm64/Kconfig up to v5.11: "12 if (ARM64_16K_PAGES && TRANSPARENT_HUGEPAGE)", else
// "11"), so a suggestion that turns THP off must let Kconfig recompute it, as olddefconfig does.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cmalign/fix/suggest.hpp"
#include "support/fix.hpp"

using namespace fix_test;
using namespace cmalign;

namespace {
constexpr std::uint64_t MiB = 1u << 20;

// A .config as a v4.19 16K kernel with HugeTLB and THP writes it.
const char* config_419_16k = R"(# Linux/arm64 4.19.325 Kernel Configuration
CONFIG_ARM64=y
# CONFIG_ARM64_4K_PAGES is not set
CONFIG_ARM64_16K_PAGES=y
# CONFIG_ARM64_64K_PAGES is not set
CONFIG_FORCE_MAX_ZONEORDER=12
CONFIG_HUGETLBFS=y
CONFIG_HUGETLB_PAGE=y
CONFIG_TRANSPARENT_HUGEPAGE=y
CONFIG_CMA=y
CONFIG_DMA_CMA=y
CONFIG_CMA_AREAS=7
)";
} // namespace

TEST_CASE("suggest on v4.19 16K: no huge pages halves the alignment to 16 MiB") {
    TempDir dir("suggest-419");
    const std::string path = dir / "419.config";
    write_file(path, config_419_16k);
    kconfig::Config config;
    Diagnostics diags;
    REQUIRE(kconfig::load({path}, {}, config, diags));
    kernel::Options options;
    // A 16 MiB pool: 16K pages with THP give MAX_ORDER 12 (MPO 11) and HugeTLB order 11, so
    // 16K << 11 = 32 MiB; with neither, MAX_ORDER 11 (MPO 10) and pageblock_order 10: 16 MiB.
    auto r = fix::suggest(config, options, 16 * MiB, diags);
    REQUIRE(r);
    CHECK(r->current_alignment == 32 * MiB);
    const fix::Suggestion* off = nullptr;
    for (const auto& s : r->suggestions)
        for (const auto& [k, v] : s.changes)
            if (k == "CONFIG_TRANSPARENT_HUGEPAGE" && v == "n") off = &s;
    REQUIRE(off);
    CHECK(off->cma_min_alignment_bytes == 16 * MiB);
    CHECK(off->pageblock_order == 10);
    // What olddefconfig would give: the same kernel with those changes and FORCE_MAX_ZONEORDER
    // recomputed (left out of the config) is 16 MiB too.
    std::string recomputed = config_419_16k;
    recomputed.erase(recomputed.find("CONFIG_FORCE_MAX_ZONEORDER=12\n"), 30);
    const std::string path2 = dir / "419-off.config";
    write_file(path2, recomputed);
    std::string args = "calc --format json -c " + path2;
    for (const auto& [k, v] : off->changes)
        args += " --set " + k + "=" + v;
    auto run = run_cli(args);
    REQUIRE(run.exit_code == 0);
    CHECK(nlohmann::json::parse(run.out)["cma_min_alignment_bytes"].get<std::uint64_t>() ==
          16 * MiB);
}
