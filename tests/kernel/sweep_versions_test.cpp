// Which versions and page sizes a sweep covers, and how a configuration is moved between them.
#include <doctest/doctest.h>

#include <algorithm>

#include "cmalign/kernel/versions.hpp"
#include "support/kernel.hpp"

using namespace cmalign;
using cmalign::test::make_config;

namespace {
std::vector<std::string> strs(const std::vector<KernelVersion>& vs) {
    std::vector<std::string> out;
    for (const auto& v : vs)
        out.push_back(v.str());
    return out;
}
} // namespace

TEST_CASE("modelled versions are every release from the oldest to the newest modelled") {
    auto all = kernel::modelled_versions();
    REQUIRE(!all.empty());
    CHECK(all.front() == kernel::oldest_modelled_version());
    CHECK(all.back() == kernel::newest_modelled_version());
    CHECK(std::is_sorted(all.begin(), all.end()));
    auto names = strs(all);
    // v5.19 is followed by v6.0, v6.19 by v7.0.
    auto at = [&](const char* v) {
        return std::find(names.begin(), names.end(), v) - names.begin();
    };
    CHECK(at("6.0") == at("5.19") + 1);
    CHECK(at("7.0") == at("6.19") + 1);
    CHECK(at("6.18") == at("6.1") + 17);
}

TEST_CASE("version lists and ranges") {
    Diagnostics diags;
    auto range = kernel::parse_version_list("6.1..6.18", kernel::Arch::arm64, diags);
    REQUIRE(range);
    CHECK(range->size() == 18);
    CHECK(range->front().str() == "6.1");
    CHECK(range->back().str() == "6.18");
    auto list = kernel::parse_version_list("6.12, 6.1,6.6,6.12.117", kernel::Arch::arm64, diags);
    REQUIRE(list);
    CHECK(strs(*list) == std::vector<std::string>{"6.1", "6.6", "6.12"});
    CHECK_FALSE(diags.has_errors());
    for (const char* bad : {"6.1..5.10", "4.18", "6.1..9.0", "six", "", "6.1,,6.2"}) {
        Diagnostics e;
        CAPTURE(bad);
        CHECK_FALSE(kernel::parse_version_list(bad, kernel::Arch::arm64, e));
        CHECK(e.has_errors());
    }
}

TEST_CASE("every modelled version where the alignment changes is a rule boundary") {
    // Property: for a spread of arm64 configurations, consecutive releases that derive a
    // different CMA alignment are separated by a version rule_boundaries() lists.
    auto boundaries = kernel::rule_boundaries(kernel::Arch::arm64);
    auto all = kernel::modelled_versions();
    for (const char* page : {"ARM64_4K_PAGES", "ARM64_16K_PAGES", "ARM64_64K_PAGES"}) {
        for (bool hugetlb : {true, false}) {
            std::optional<std::uint64_t> before;
            for (std::size_t i = 0; i < all.size(); ++i) {
                auto cfg = make_config({{page, "y"},
                                        {"HUGETLB_PAGE", hugetlb ? "y" : "n"},
                                        {"TRANSPARENT_HUGEPAGE", "y"},
                                        {"CMA", "y"}});
                kernel::Options options;
                options.arch = kernel::Arch::arm64;
                options.version = all[i];
                Diagnostics diags;
                auto m = kernel::derive(cfg, options, diags);
                REQUIRE(m);
                if (i > 0 && m->cma_min_alignment_bytes != before) {
                    CAPTURE(page);
                    CAPTURE(all[i].str());
                    CHECK(std::find(boundaries.begin(), boundaries.end(), all[i]) !=
                          boundaries.end());
                }
                before = m->cma_min_alignment_bytes;
            }
        }
    }
    // The version boundaries: max order semantics (v6.4), THP-only 4K (v6.10),
    // PAGE_BLOCK_ORDER (v6.16) and its rename (v6.17).
    auto names = strs(boundaries);
    for (const char* v : {"6.4", "6.10", "6.16", "6.17"})
        CHECK(std::find(names.begin(), names.end(), v) != names.end());
}

TEST_CASE("page size lists") {
    Diagnostics diags;
    auto all = kernel::parse_page_size_list("all", kernel::Arch::arm64, diags);
    REQUIRE(all);
    CHECK(*all == std::vector<int>{12, 14, 16});
    auto some = kernel::parse_page_size_list("64K, 4K,16KiB", kernel::Arch::arm64, diags);
    REQUIRE(some);
    CHECK(*some == std::vector<int>{12, 14, 16});
    Diagnostics e1, e2;
    CHECK_FALSE(kernel::parse_page_size_list("8K", kernel::Arch::arm64, e1)); // arm64 has none
    CHECK(e1.has_errors());
    CHECK_FALSE(kernel::parse_page_size_list("12K", kernel::Arch::arm64, e2));
    CHECK(e2.has_errors());
    Diagnostics d;
    auto x86 = kernel::parse_page_size_list("all", kernel::Arch::x86_64, d);
    REQUIRE(x86);
    CHECK(*x86 == std::vector<int>{12});
}

TEST_CASE("switching the page size turns the other choice members off") {
    auto cfg = make_config({{"ARM64_4K_PAGES", "y"},
                            {"ARM64_16K_PAGES", "n"},
                            {"PAGE_SIZE_4KB", "y"},
                            {"PAGE_SHIFT", "12"},
                            {"CMA", "y"}});
    auto v612 = *KernelVersion::parse("6.12");
    auto change = kernel::retarget(cfg, kernel::Arch::arm64, v612, 14, v612);
    CHECK(change.sets ==
          std::vector<std::string>{"CONFIG_ARM64_4K_PAGES=n", "CONFIG_ARM64_16K_PAGES=y",
                                   "CONFIG_PAGE_SIZE_4KB=n", "CONFIG_PAGE_SIZE_16KB=y",
                                   "CONFIG_PAGE_SHIFT=14"});
    Diagnostics diags;
    REQUIRE(kernel::apply_retarget(change, cfg, diags));
    kernel::Options options;
    options.arch = kernel::Arch::arm64;
    options.version = v612;
    auto m = kernel::derive(cfg, options, diags);
    REQUIRE(m);
    CHECK(m->page_size == 16384);
    // No stale derived symbol left for derive() to warn about.
    CHECK(std::none_of(m->diagnostics.begin(), m->diagnostics.end(),
                       [](const auto& d) { return d.severity != Severity::note; }));
    // The configuration's own page size: nothing to change.
    auto same = kernel::retarget(make_config({{"ARM64_4K_PAGES", "y"}}), kernel::Arch::arm64, v612,
                                 12, v612);
    CHECK(same.sets.empty());
    CHECK(same.notes.empty());
}

TEST_CASE("PAGE_BLOCK_ORDER is dropped before v6.16, used in v6.16, ignored from v6.17") {
    auto cfg = make_config({{"ARM64_16K_PAGES", "y"}, {"PAGE_BLOCK_ORDER", "5"}, {"CMA", "y"}});
    auto own = *KernelVersion::parse("6.16");
    auto at = [&](const char* v) {
        return kernel::retarget(cfg, kernel::Arch::arm64, *KernelVersion::parse(v), std::nullopt,
                                own);
    };
    auto v615 = at("6.15");
    CHECK(v615.dropped == std::vector<std::string>{"CONFIG_PAGE_BLOCK_ORDER"});
    REQUIRE(v615.notes.size() == 1);
    CHECK(v615.notes[0].find("dropped") != std::string::npos);
    auto v616 = at("6.16");
    CHECK(v616.dropped.empty());
    CHECK(v616.notes.empty());
    auto v617 = at("6.17");
    CHECK(v617.dropped.empty());
    REQUIRE(v617.notes.size() == 1);
    CHECK(v617.notes[0].find("ignored") != std::string::npos);
    CHECK(v617.notes[0].find("PAGE_BLOCK_MAX_ORDER") != std::string::npos);

    // What derive() then computes: the option only counts in v6.16.
    auto align = [&](const char* v) {
        auto copy = cfg;
        Diagnostics diags;
        REQUIRE(kernel::apply_retarget(at(v), copy, diags));
        kernel::Options options;
        options.arch = kernel::Arch::arm64;
        options.version = KernelVersion::parse(v);
        auto m = kernel::derive(copy, options, diags);
        REQUIRE(m);
        return m->cma_min_alignment_bytes.value_or(0);
    };
    CHECK(align("6.15") == 32u << 20);
    CHECK(align("6.16") == 16384u << 5);
    CHECK(align("6.17") == 32u << 20);

    // A v6.16 configuration that spells the v6.17 name: v6.16's Kconfig does not know it.
    auto renamed = make_config({{"ARM64_16K_PAGES", "y"}, {"PAGE_BLOCK_MAX_ORDER", "5"}});
    auto r = kernel::retarget(renamed, kernel::Arch::arm64, own, std::nullopt,
                              *KernelVersion::parse("6.17"));
    CHECK(r.dropped == std::vector<std::string>{"CONFIG_PAGE_BLOCK_MAX_ORDER"});
    // In its own version a configuration is read as written (a vendor backport).
    auto kept = kernel::retarget(renamed, kernel::Arch::arm64, own, std::nullopt, own);
    CHECK(kept.dropped.empty());
}

TEST_CASE("the max order option's spelling and meaning follow the version") {
    auto cfg = make_config({{"ARM64_4K_PAGES", "y"}, {"ARCH_FORCE_MAX_ORDER", "10"}});
    auto own = *KernelVersion::parse("6.12");
    auto v515 = kernel::retarget(cfg, kernel::Arch::arm64, *KernelVersion::parse("5.15"),
                                 std::nullopt, own);
    REQUIRE(v515.notes.size() == 1);
    CHECK(v515.notes[0].find("FORCE_MAX_ZONEORDER") != std::string::npos);
    auto v61 =
        kernel::retarget(cfg, kernel::Arch::arm64, *KernelVersion::parse("6.1"), std::nullopt, own);
    REQUIRE(v61.notes.size() == 1);
    CHECK(v61.notes[0].find("one past the largest order") != std::string::npos);
}
