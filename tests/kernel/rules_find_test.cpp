// rules::find takes the first row whose range holds the version: that is only unambiguous when
// the rows of one key never overlap. These tests check it for every table looked up that way, so
// a new row that overlaps an old one fails here instead of being shadowed silently.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "cmalign/internal/kernel/calc_rules.hpp"
#include "cmalign/internal/kernel/default_cma.hpp"
#include "cmalign/internal/kernel/reserved_mem.hpp"
#include "cmalign/internal/kernel/rules.hpp"

using namespace cmalign;
using namespace cmalign::kernel;

namespace {

bool overlap(const VersionRange& a, const VersionRange& b) {
    auto key = [](int major, int minor) { return major * 1000 + minor; };
    return key(a.first_major, a.first_minor) <= key(b.last_major, b.last_minor) &&
           key(b.first_major, b.first_minor) <= key(a.last_major, a.last_minor);
}

// Every pair of rows with the same key has disjoint version ranges.
template <class Row, class SameKey>
void check_disjoint(std::span<const Row> rows, const char* table, SameKey same_key) {
    std::size_t pairs = 0;
    for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t j = i + 1; j < rows.size(); ++j) {
            if (!same_key(rows[i], rows[j])) continue;
            ++pairs;
            INFO(fmt::format("{}: rows {} ({}) and {} ({})", table, i, rows[i].versions.str(), j,
                             rows[j].versions.str()));
            CHECK_FALSE(overlap(rows[i].versions, rows[j].versions));
        }
    INFO(table);
    CHECK(pairs > 0); // the table has rows of one key in several versions: the test says something
}

auto any_key = [](const auto&, const auto&) { return true; };
auto same_arch = [](const auto& a, const auto& b) { return a.arch == b.arch; };

} // namespace

TEST_CASE("rows of one key never overlap, so rules::find's first match is the only one") {
    check_disjoint(rules::max_order_kconfig(), "max_order_kconfig", same_arch);
    check_disjoint(rules::max_order_definitions(), "max_order_definitions", any_key);
    check_disjoint(rules::pageblock_rules(), "pageblock_rules",
                   [](const auto& a, const auto& b) { return a.which == b.which; });
    check_disjoint(rules::cma_alignment_rules(), "cma_alignment_rules", any_key);
    check_disjoint(rules::page_block_options(), "page_block_options", any_key);
    check_disjoint(rules::cma_areas_rules(), "cma_areas_rules", any_key);
    check_disjoint(rules::kconfig_range_rules(), "kconfig_range_rules", any_key);
    check_disjoint(calc_rules::all(), "calc rules",
                   [](const auto& a, const auto& b) { return a.topic == b.topic; });
    check_disjoint(default_cma_rows(), "default_cma_rows", any_key);
    check_disjoint(default_cma_limit_rows(), "default_cma_limit_rows", same_arch);
    check_disjoint(no_map_overlap_rows(), "no_map_overlap_rows", any_key);
}

TEST_CASE("default CMA area rules: the versions the trees were read in") {
    using BottomUp = DefaultCmaRules::BottomUp;
    CHECK(default_cma_rules({5, 10, 223, true}).bottom_up == BottomUp::never);
    CHECK(default_cma_rules({6, 1, 192, true}).bottom_up == BottomUp::when_memblock_end_allows);
    CHECK_FALSE(default_cma_rules({6, 1, 192, true}).prints_node);
    CHECK(default_cma_rules({6, 12, 117, true}).prints_node);
    CHECK(default_cma_rules({7, 2, 13, true}).bottom_up == BottomUp::when_limit_allows);
    CHECK(default_cma_rules({7, 2, 13, true}).cmdline_limit_replaces);
    CHECK(default_cma_limit_row(Arch::arm64, {6, 1, 192, true}).rule ==
          DefaultCmaLimitRule::arm64_max_zone_phys);
    CHECK(default_cma_limit_row(Arch::arm64, {6, 12, 117, true}).rule ==
          DefaultCmaLimitRule::arm64_zone_dma_limit);
    CHECK(default_cma_limit_row(Arch::powerpc, {6, 12, 117, true}).rule ==
          DefaultCmaLimitRule::no_call);
    CHECK_FALSE(no_map_overlap_rules({5, 10, 223, true}).only_over_ram);
    CHECK(no_map_overlap_rules({6, 1, 192, true}).only_over_ram);
}

TEST_CASE("rules::find: the row that holds the version, nullptr where none does") {
    const auto* v61 = rules::find(rules::max_order_kconfig(), Arch::arm64, {6, 1, 0, false});
    REQUIRE(v61);
    CHECK(std::string(v61->symbol) == "ARCH_FORCE_MAX_ORDER");
    const auto* v60 = rules::find(rules::max_order_kconfig(), Arch::arm64, {6, 0, 0, false});
    REQUIRE(v60);
    CHECK(std::string(v60->symbol) == "FORCE_MAX_ZONEORDER");
    // CONFIG_PAGE_BLOCK_ORDER appeared in v6.16: nothing before.
    CHECK(rules::find(rules::page_block_options(), {6, 15, 0, false}) == nullptr);
    CHECK(rules::find(rules::page_block_options(), {6, 16, 0, false}) != nullptr);
}

TEST_CASE("reserved-memory rules: the 6.12.y backport of the v6.13 restructure") {
    // 6.1.192 prints parsing errors from drivers/of/fdt.c, 6.12.117 from of_reserved_mem.c.
    CHECK(std::string(reserved_mem_rules({6, 1, 192, true}).log_prefix) == "OF: fdt: ");
    CHECK(std::string(reserved_mem_rules({6, 12, 117, true}).log_prefix) == "OF: reserved mem: ");
    CHECK_FALSE(reserved_mem_rules({6, 11, 0, false}).restructured);
    CHECK(reserved_mem_rules({6, 12, 0, false}).restructured);
    CHECK_FALSE(reserved_mem_rules({6, 18, 0, false}).addr_size_helpers);
    CHECK(reserved_mem_rules({6, 19, 0, false}).addr_size_helpers);
    // Every version the tool takes has a row.
    for (int major = 2; major <= 99; major += 7)
        CHECK(reserved_mem_rules({major, 0, 0, false}).log_prefix != nullptr);
}
