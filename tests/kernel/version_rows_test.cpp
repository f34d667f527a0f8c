// The version facts in one place each. The Kconfig dialect rows of the kconfig
// layer give both the evaluation's Dialect and the kernel layer's out-of-range rows; one policy
// for versions outside the modelled range; the page size and max-order questions fix/ asks.
#include <doctest/doctest.h>

#include <algorithm>

#include "cmalign/internal/kconfig/version.hpp"
#include "cmalign/internal/kernel/calc_rules.hpp"
#include "cmalign/internal/kernel/rules.hpp"
#include "cmalign/kernel/versions.hpp"

using namespace cmalign;
using namespace cmalign::kernel;

TEST_CASE("the Kconfig dialect of a version comes from the rows") {
    auto d57 = kconfig::dialect_of(5, 10);
    CHECK(d57.choice_symbols);
    CHECK(d57.drop_out_of_range);
    CHECK(d57.empty_number_default);
    CHECK_FALSE(d57.depends_if);
    CHECK_FALSE(d57.end_of_empty_menu);
    auto d68 = kconfig::dialect_of(6, 8);
    CHECK(d68.choice_symbols);
    CHECK_FALSE(d68.drop_out_of_range);
    CHECK(d68.empty_number_default);
    auto d612 = kconfig::dialect_of(6, 12);
    CHECK_FALSE(d612.choice_symbols);
    CHECK_FALSE(d612.empty_number_default);
    CHECK(d612.end_of_empty_menu);
    CHECK_FALSE(d612.depends_if);
    CHECK(kconfig::dialect_of(7, 0).depends_if);
    // Every row flips its field at its release.
    for (const auto& row : kconfig::dialect_rows()) {
        CAPTURE(row.major);
        CAPTURE(row.minor);
        bool at = kconfig::dialect_of(row.major, row.minor).*row.field;
        bool before = kconfig::dialect_of(row.major, row.minor - 1).*row.field;
        CHECK(at != before);
        CHECK(at == row.field_is_new_way);
    }
}

TEST_CASE("the kernel layer's out-of-range rows are the kconfig layer's 6.8 row") {
    const auto& change = kconfig::dialect_row(&kconfig::Dialect::drop_out_of_range);
    CHECK(change.major == 6);
    CHECK(change.minor == 8);
    auto rows = rules::kconfig_range_rules();
    REQUIRE(rows.size() == 2);
    CHECK(rules::kconfig_range_rule({6, 7, 0, false}).behaviour == rules::OutOfRange::use_default);
    CHECK(rules::kconfig_range_rule({6, 8, 0, false}).behaviour ==
          rules::OutOfRange::clamp_to_bound);
    CHECK(rows[0].versions.str() == "≤ v6.7");
    CHECK(rows[1].versions.str() == "≥ v6.8");
    // And the evaluation agrees at the same boundary.
    CHECK(kconfig::dialect_of(6, 7).drop_out_of_range);
    CHECK_FALSE(kconfig::dialect_of(6, 8).drop_out_of_range);
}

TEST_CASE("one policy for versions outside the modelled range") {
    CHECK_FALSE(outside_modelled_range(oldest_modelled_version()));
    CHECK_FALSE(outside_modelled_range(newest_modelled_version()));
    CHECK_FALSE(outside_modelled_range({7, 2, 13, true})); // major.minor decides
    auto old = outside_modelled_range({4, 4, 0, false});
    REQUIRE(old);
    CHECK(old->error);
    CHECK(old->message == "kernel 4.4 is older than the oldest modelled version (4.19)");
    auto later = outside_modelled_range({9, 1, 0, false});
    REQUIRE(later);
    CHECK_FALSE(later->error);
    CHECK(later->message.find("newer than the newest modelled version") != std::string::npos);
}

TEST_CASE("the page size and max-order answers fix/suggest asks") {
    // arm64 6.12: the generic PAGE_SIZE_*KB (≥ v6.10) are derived, not the choice's members.
    auto derived = derived_page_size_symbols(Arch::arm64, {6, 12, 0, false});
    CHECK(std::find(derived.begin(), derived.end(), "PAGE_SHIFT") != derived.end());
    CHECK(std::find(derived.begin(), derived.end(), "PAGE_SIZE_16KB") != derived.end());
    CHECK(std::find(derived.begin(), derived.end(), "ARM64_16K_PAGES") == derived.end());
    // mips' choice members are spelled like the generic symbols: they are not derived.
    auto mips = derived_page_size_symbols(Arch::mips, {6, 12, 0, false});
    CHECK(std::find(mips.begin(), mips.end(), "PAGE_SIZE_16KB") == mips.end());
    // MAX_ORDER counted one past the largest order up to v6.3.
    CHECK(max_order_kconfig_value({6, 1, 0, false}, 10) == 11);
    CHECK(max_order_kconfig_value({6, 4, 0, false}, 10) == 10);
    CHECK(calc_rules::pcp_batch_scale_max().default_value == 5);
    CHECK(calc_rules::pcp_batch_scale_max().hi == 6);
}
