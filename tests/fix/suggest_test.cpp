// suggest: the alignment pools need, and configuration changes re-derived by the kernel model.
// Every suggestion is checked again through `cmalign calc` with its changes applied.
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <nlohmann/json.hpp>

#include "cmalign/fix/suggest.hpp"
#include "support/fix.hpp"

using namespace fix_test;
using namespace cmalign;

namespace {

constexpr std::uint64_t MiB = 1u << 20;

reserved::Region pool(std::uint64_t size, std::optional<std::uint64_t> base,
                      reserved::Kind kind = reserved::Kind::cma) {
    reserved::Region r;
    r.kind = kind;
    r.size = size;
    r.base = base;
    r.dynamic = !base;
    return r;
}

fix::SuggestResult run_suggest(const std::string& version, std::uint64_t needed) {
    kconfig::Config config;
    Diagnostics diags;
    REQUIRE(kconfig::load({config_16k()}, {}, config, diags));
    kernel::Options options;
    options.version = KernelVersion::parse(version);
    auto r = fix::suggest(config, options, needed, diags);
    REQUIRE(r);
    return *r;
}

// The alignment `cmalign calc` reports for the 16K config with `changes` applied.
std::uint64_t calc_alignment(const std::string& version,
                             const std::vector<std::pair<std::string, std::string>>& changes) {
    std::string args = "calc --format json -c " + config_16k() + " --kernel-version " + version;
    for (const auto& [k, v] : changes)
        args += " --set " + k + "=" + v;
    auto r = run_cli(args);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["cma_min_alignment_bytes"].get<std::uint64_t>();
}

void check_every_suggestion(const std::string& version, const fix::SuggestResult& r) {
    for (const auto& s : r.suggestions) {
        std::string words;
        for (const auto& [k, v] : s.changes)
            words += k + "=" + v + " ";
        CAPTURE(words);
        CHECK(r.needed_alignment % s.cma_min_alignment_bytes == 0); // it helps
        CHECK(calc_alignment(version, s.changes) == s.cma_min_alignment_bytes);
        CHECK_FALSE(s.note.empty());
        for (const auto& [k, v] : s.changes)
            CHECK(k.starts_with("CONFIG_"));
    }
}

} // namespace

TEST_CASE("needed alignment: the largest power of two dividing sizes and static bases") {
    reserved::Reservations rs;
    rs.regions.push_back(pool(12 * MiB, std::nullopt));                   // 4 MiB divides it
    rs.regions.push_back(pool(8 * MiB, 0x41000000));                      // 8 MiB, base 16 MiB
    rs.regions.push_back(pool(1 * MiB, 0x1000, reserved::Kind::static_)); // not CMA: ignored
    auto a = fix::needed_alignment(std::span(&rs, 1));
    REQUIRE(a);
    CHECK(*a == 4 * MiB);
    reserved::Reservations rs2;
    rs2.regions.push_back(pool(64 * MiB, 0x40100000)); // the base limits it to 1 MiB
    CHECK(fix::needed_alignment(std::span(&rs2, 1)) == 1 * MiB);
    reserved::Reservations none;
    CHECK_FALSE(fix::needed_alignment(std::span(&none, 1)));
    CHECK(fix::largest_power_of_two_dividing(0x2C00000) == 0x400000);
}

TEST_CASE("4 MiB on 16K pages: page block order 8 first, spelled as the version spells it") {
    for (auto row : {std::pair{"6.16", "CONFIG_PAGE_BLOCK_ORDER"},
                     std::pair{"6.17", "CONFIG_PAGE_BLOCK_MAX_ORDER"},
                     std::pair{"6.19", "CONFIG_PAGE_BLOCK_MAX_ORDER"}}) {
        const char* version = row.first; // clang 14 cannot capture structured bindings
        const char* symbol = row.second;
        CAPTURE(version);
        auto r = run_suggest(version, 4 * MiB);
        CHECK(r.current_alignment == 32 * MiB);
        REQUIRE_FALSE(r.suggestions.empty());
        const auto& first = r.suggestions.front();
        REQUIRE(first.changes.size() == 1);
        CHECK(first.changes[0].first == symbol);
        CHECK(first.changes[0].second == "8"); // 16 KiB << 8 = 4 MiB
        CHECK(first.cma_min_alignment_bytes == 4 * MiB);
        CHECK(first.page_size == 16384);
        check_every_suggestion(version, r);
        // HugeTLB/THP off never lowers the alignment here, so it is not offered.
        for (const auto& s : r.suggestions)
            for (const auto& [k, v] : s.changes) {
                CHECK(k != "CONFIG_HUGETLBFS");
                CHECK(k != "CONFIG_TRANSPARENT_HUGEPAGE");
            }
    }
}

TEST_CASE("before 6.16 only the page size helps a 16K kernel, and suggest says so") {
    auto r = run_suggest("6.12", 4 * MiB);
    REQUIRE_FALSE(r.suggestions.empty());
    const auto& first = r.suggestions.front();
    CHECK(first.upstream);
    CHECK(first.page_size == 4096);
    bool four_k = false;
    for (const auto& [k, v] : first.changes)
        four_k = four_k || (k == "CONFIG_ARM64_4K_PAGES" && v == "y");
    CHECK(four_k);
    for (const auto& s : r.suggestions) {
        for (const auto& [k, v] : s.changes)
            CHECK(k.find("PAGE_BLOCK") == std::string::npos);
        // A smaller max order is only a vendor knob on arm64.
        if (s.changes.size() == 1 && s.changes[0].first == "CONFIG_ARCH_FORCE_MAX_ORDER") {
            CHECK_FALSE(s.upstream);
            CHECK(s.note.find("vendor") != std::string::npos);
        }
    }
    REQUIRE_FALSE(r.notes.empty());
    CHECK(r.notes[0].find("only a smaller page size helps") != std::string::npos);
    check_every_suggestion("6.12", r);
}

TEST_CASE("suggest CLI: files, --target-alignment, already valid, nothing helps") {
    std::string seed =
        std::string(CMALIGN_SOURCE_DIR) + "/examples/boards/upstream-commit-example.dts";
    if (cmalign::test::have_material(seed)) {
        auto r = run_cli("suggest " + seed + " -c " + config_16k() +
                         " --kernel-version 6.16 --format json");
        REQUIRE(r.exit_code == 0);
        auto j = nlohmann::json::parse(r.out);
        CHECK(j["needed_alignment_bytes"] == 4 * MiB);
        REQUIRE(j["suggestions"].size() >= 1);
        auto first = j["suggestions"][0];
        for (const char* key : {"changes", "cma_min_alignment_bytes", "note"})
            CHECK_MESSAGE(first.contains(key), key);
        CHECK(first["changes"] == nlohmann::json{{"CONFIG_PAGE_BLOCK_ORDER", "8"}});
        CHECK(first["cma_min_alignment_bytes"] == 4 * MiB);

        auto valid = run_cli("suggest " + seed + " -c " + std::string(CMALIGN_SOURCE_DIR) +
                             "/examples/configs/arm64-4k.config --format json");
        CHECK(valid.exit_code == 0);
        auto v = nlohmann::json::parse(valid.out);
        CHECK(v["already_valid"] == true);
        CHECK(v["suggestions"].empty());
    }
    auto t = run_cli("suggest --target-alignment 2M -c " + config_16k() +
                     " --kernel-version 6.17 --format json");
    REQUIRE(t.exit_code == 0);
    auto tj = nlohmann::json::parse(t.out);
    CHECK(tj["suggestions"][0]["changes"] == nlohmann::json{{"CONFIG_PAGE_BLOCK_MAX_ORDER", "7"}});
    CHECK(tj["suggestions"][0]["cma_min_alignment_bytes"] == 2 * MiB);

    // 4 KiB is below every page size of the arch: no configuration helps.
    auto none = run_cli("suggest --target-alignment 4K -c " + config_16k() +
                        " --kernel-version 6.17 --format json");
    CHECK(none.exit_code == 1);
    auto nj = nlohmann::json::parse(none.out);
    CHECK(nj["suggestions"].empty());
    REQUIRE_FALSE(nj["notes"].empty());
    CHECK(nj["notes"][0].get<std::string>().find("grow the pools") != std::string::npos);

    CHECK(run_cli("suggest -c " + config_16k()).exit_code == 2); // nothing to suggest for
    CHECK(run_cli("suggest --target-alignment 4X -c " + config_16k()).exit_code == 2);
}
