// table(): the two tables of the upstream CONFIG_PAGE_BLOCK_ORDER commit, and internal
// consistency on every arch; derive(): errors, warnings, assumptions and the JSON shape.
#include <doctest/doctest.h>

#include <algorithm>

#include "cmalign/internal/kernel/report.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"
#include "cmalign/kernel/versions.hpp"
#include "support/kernel.hpp"

using namespace cmalign;
using cmalign::test::calc;
using cmalign::test::make_config;

namespace {
constexpr std::uint64_t KiB = 1024, MiB = 1024 * 1024;

const kernel::TableRow* find_row(const std::vector<kernel::TableRow>& rows, std::uint64_t page,
                                 bool hugetlb, bool thp, bool largest,
                                 std::optional<int> option_equals_max = std::nullopt) {
    for (const auto& r : rows) {
        if (r.page_size != page || r.hugetlb != hugetlb || r.thp != thp ||
            r.max_order_is_largest != largest)
            continue;
        // The row with the option at its default (= the max order).
        if (r.page_block_max_order && *r.page_block_max_order != r.max_page_order &&
            !option_equals_max)
            continue;
        if (option_equals_max && r.page_block_max_order != option_equals_max) continue;
        return &r;
    }
    return nullptr;
}
} // namespace

TEST_CASE("table reproduces the tables of the CONFIG_PAGE_BLOCK_ORDER commit (arm64 6.16)") {
    auto rows = kernel::table(kernel::Arch::arm64, *KernelVersion::parse("6.16"));
    REQUIRE_FALSE(rows.empty());
    // Table 1: default max order, THP set. The commit message lists 4K as pageblock 10 / 4 MiB,
    // which is what kernels before v6.10 computed; v6.16 has the THP branch (min(9, 10) = 9),
    // so 2 MiB, as calc-cases.json says. 16K: 11 / 32 MiB; 64K: 13 / 512 MiB.
    struct Want {
        std::uint64_t page;
        int max_order, pageblock;
        std::uint64_t alignment;
    };
    for (Want w : {Want{4 * KiB, 10, 9, 2 * MiB}, Want{16 * KiB, 11, 11, 32 * MiB},
                   Want{64 * KiB, 13, 13, 512 * MiB}}) {
        CAPTURE(w.page);
        const auto* r = find_row(rows, w.page, false, true, false);
        REQUIRE(r);
        CHECK(r->max_page_order == w.max_order);
        CHECK(r->pageblock_order == w.pageblock);
        CHECK(r->cma_min_alignment_bytes == w.alignment);
    }
    // Table 2: largest max order, neither THP nor HugeTLB: 4K 15/15/128 MiB, 16K 13/13/128 MiB,
    // 64K 13/13/512 MiB (64K's largest equals its default, so it is the default row).
    for (Want w : {Want{4 * KiB, 15, 15, 128 * MiB}, Want{16 * KiB, 13, 13, 128 * MiB}}) {
        CAPTURE(w.page);
        const auto* r = find_row(rows, w.page, false, false, true);
        REQUIRE(r);
        CHECK(r->max_page_order == w.max_order);
        CHECK(r->pageblock_order == w.pageblock);
        CHECK(r->cma_min_alignment_bytes == w.alignment);
    }
    const auto* r64 = find_row(rows, 64 * KiB, false, false, false);
    REQUIRE(r64);
    CHECK(r64->max_page_order == 13);
    CHECK(r64->cma_min_alignment_bytes == 512 * MiB);
    // The option rows: 16K with THP and page block order 7 gives 2 MiB.
    const auto* r7 = find_row(rows, 16 * KiB, false, true, false, 7);
    REQUIRE(r7);
    CHECK(r7->cma_min_alignment_bytes == 2 * MiB);
    // HugeTLB on, 4K: 2 MiB.
    const auto* h4 = find_row(rows, 4 * KiB, true, true, false);
    REQUIRE(h4);
    CHECK(h4->cma_min_alignment_bytes == 2 * MiB);
}

TEST_CASE("table before v6.16 has no page block option column values") {
    auto rows = kernel::table(kernel::Arch::arm64, *KernelVersion::parse("6.12"));
    REQUIRE_FALSE(rows.empty());
    for (const auto& r : rows)
        CHECK_FALSE(r.page_block_max_order);
    // 3 page sizes × 3 variants × {default, largest} (64K largest = default): 3*3*2 - 3 = 15.
    CHECK(rows.size() == 15);
}

TEST_CASE("table rows are internally consistent on every arch and version boundary") {
    for (auto arch : kernel::all_arches()) {
        for (const char* v :
             {"4.19", "5.4", "5.10", "5.18", "5.19", "6.1", "6.4", "6.10", "6.16", "6.17", "7.0"}) {
            auto version = *KernelVersion::parse(v);
            if (arch == kernel::Arch::loongarch && version < *KernelVersion::parse("5.19"))
                continue;
            CAPTURE(kernel::to_string(arch));
            CAPTURE(v);
            auto rows = kernel::table(arch, version);
            CHECK_FALSE(rows.empty());
            for (const auto& r : rows) {
                if (!r.pageblock_order) {
                    REQUIRE(r.pageblock_order_range);
                    // ≤ v5.18: PAGE_SIZE << max(MPO, pageblock_order) is known when no boot value
                    // exceeds MPO.
                    if (version < *KernelVersion::parse("5.19") &&
                        r.pageblock_order_range->second <= r.max_page_order)
                        CHECK(r.cma_min_alignment_bytes == r.page_size << r.max_page_order);
                    else
                        CHECK_FALSE(r.cma_min_alignment_bytes);
                    continue;
                }
                CHECK(*r.pageblock_order >= 1);
                CHECK(*r.pageblock_order <= std::max(r.max_page_order, 13));
                REQUIRE(r.cma_min_alignment_bytes);
                int order = version < *KernelVersion::parse("5.19")
                                ? std::max(r.max_page_order, *r.pageblock_order)
                                : *r.pageblock_order;
                CHECK(*r.cma_min_alignment_bytes == r.page_size << order);
                if (r.page_block_max_order) CHECK(*r.pageblock_order <= *r.page_block_max_order);
            }
        }
    }
}

TEST_CASE("contradictory page sizes are an error") {
    Diagnostics d;
    auto m = calc("arm64", "6.12", {{"ARM64_4K_PAGES", "y"}, {"ARM64_16K_PAGES", "y"}}, &d);
    CHECK_FALSE(m);
    REQUIRE(d.has_errors());
    const auto& e = d.items().back();
    CHECK(e.message.find("CONFIG_ARM64_4K_PAGES") != std::string::npos);
    CHECK(e.message.find("CONFIG_ARM64_16K_PAGES") != std::string::npos);
    CHECK(e.where.file == "test.config");
    CHECK(e.where.line == 2);
    // One selected, the others "n": fine.
    CHECK(calc("arm64", "6.12",
               {{"ARM64_4K_PAGES", "n"}, {"ARM64_16K_PAGES", "y"}, {"ARM64_64K_PAGES", "n"}}));
}

TEST_CASE("a stale derived page size symbol is a warning, not an error") {
    // A 4K .config (PAGE_SHIFT=12, PAGE_SIZE_4KB=y) with the choice switched to 16K: Kconfig
    // recomputes the derived symbols.
    Diagnostics d;
    auto m = calc("arm64", "6.12",
                  {{"ARM64_4K_PAGES", "n"},
                   {"ARM64_16K_PAGES", "y"},
                   {"PAGE_SIZE_4KB", "y"},
                   {"PAGE_SHIFT", "12"}},
                  &d);
    REQUIRE(m);
    CHECK(m->page_size == 16 * KiB);
    CHECK(d.count(Severity::warning) == 2);
    // Without the arch choice, the generic symbol tells the page size.
    auto g = calc("arm64", "6.12", {{"PAGE_SIZE_64KB", "y"}});
    REQUIRE(g);
    CHECK(g->page_size == 64 * KiB);
}

TEST_CASE("out-of-range and non-settable values") {
    // loongarch 6.1 "range 12 64 if PAGE_SIZE_16KB" (exclusive): 11 → default 12 → MPO 11.
    Diagnostics d;
    auto la =
        calc("loongarch", "6.1", {{"PAGE_SIZE_16KB", "y"}, {"ARCH_FORCE_MAX_ORDER", "11"}}, &d);
    REQUIRE(la);
    CHECK(la->max_page_order == 11);
    REQUIRE(d.count(Severity::warning) == 1);
    CHECK(d.items().front().check == "kernel-config-range");
    // also kept in the model (besides the note naming the symbols a fragment left to assumptions)
    CHECK(la->diagnostics.size() - d.count(Severity::note) == 1);
    // arm64 ≥ 6.4 has no prompt: the default (as every generated .config carries it) is silent…
    Diagnostics quiet;
    auto def =
        calc("arm64", "6.12", {{"ARM64_16K_PAGES", "y"}, {"ARCH_FORCE_MAX_ORDER", "11"}}, &quiet);
    REQUIRE(def);
    CHECK(quiet.count(Severity::warning) == 0);
    CHECK(quiet.count(Severity::error) == 0);
    CHECK(def->assumptions.end() ==
          std::find_if(def->assumptions.begin(), def->assumptions.end(), [](const std::string& s) {
              return s.find("ARCH_FORCE_MAX_ORDER") != std::string::npos;
          }));
    // …another value is honoured (vendor kernels expose it) with a warning naming the default.
    Diagnostics loud;
    auto vendor =
        calc("arm64", "6.12",
             {{"ARM64_16K_PAGES", "y"}, {"ARCH_FORCE_MAX_ORDER", "13"}, {"HUGETLBFS", "n"}}, &loud);
    REQUIRE(vendor);
    CHECK(vendor->max_page_order == 13);
    CHECK(vendor->cma_min_alignment_bytes == 128 * MiB); // 16K << 13
    REQUIRE(loud.count(Severity::warning) == 1);
    CHECK(loud.items().front().message.find("11") != std::string::npos);
    CHECK(loud.items().front().check == "kernel-config-upstream");
    // Beyond SECTION_SIZE_BITS (arm64 4K: 27): 16 + 12 > 27 is a build failure: warned too.
    Diagnostics section;
    auto big =
        calc("arm64", "6.12", {{"ARM64_4K_PAGES", "y"}, {"ARCH_FORCE_MAX_ORDER", "16"}}, &section);
    REQUIRE(big);
    CHECK(section.count(Severity::warning) == 2);
    // Not a number.
    Diagnostics nan;
    auto bad = calc("arm", "6.12", {{"ARCH_FORCE_MAX_ORDER", "eleven"}}, &nan);
    REQUIRE(bad);
    CHECK(bad->max_page_order == 10);
    CHECK(nan.count(Severity::warning) == 1);
}

TEST_CASE("unknown arch, missing arch, too old versions") {
    kconfig::Config cfg = make_config({{"S390", "y"}});
    cfg.header_arch = "s390";
    Diagnostics d;
    CHECK_FALSE(kernel::derive(cfg, {}, d));
    CHECK(d.has_errors());

    Diagnostics d2;
    CHECK_FALSE(kernel::derive(make_config({{"HUGETLBFS", "y"}}), {}, d2));
    CHECK(d2.has_errors());

    Diagnostics d3;
    CHECK_FALSE(calc("arm64", "4.18", {}, &d3));
    CHECK(d3.has_errors());
    Diagnostics d4;
    CHECK_FALSE(calc("loongarch", "5.18", {}, &d4));
    CHECK(d4.has_errors());
    // Newer than modelled: the newest rules, a warning and an assumption.
    Diagnostics d5;
    auto future = calc("arm64", "9.3", {}, &d5);
    REQUIRE(future);
    CHECK(d5.count(Severity::warning) == 1);
    CHECK_FALSE(kernel::parse_arch("vax"));
    CHECK(kernel::parse_arch("aarch64") == kernel::Arch::arm64);
    CHECK(kernel::parse_arch("PPC64LE") == kernel::Arch::powerpc);
}

TEST_CASE("arch and version from the config, defaults as assumptions") {
    // Header first.
    kconfig::Config hdr = make_config({{"X86_64", "y"}, {"X86", "y"}, {"64BIT", "y"}});
    hdr.header_arch = "x86";
    hdr.header_version = "6.1.192";
    Diagnostics d;
    auto m = kernel::derive(hdr, {}, d);
    REQUIRE(m);
    CHECK(m->arch == kernel::Arch::x86_64);
    CHECK(m->version.str() == "6.1.192");
    // Symbols next; no version anywhere → newest, said so.
    Diagnostics d2;
    auto s = kernel::derive(make_config({{"ARM64", "y"}}), {}, d2);
    REQUIRE(s);
    CHECK(s->arch == kernel::Arch::arm64);
    CHECK(s->version == kernel::newest_modelled_version());
    auto mentions = [&](const std::string& word) {
        return std::any_of(s->assumptions.begin(), s->assumptions.end(),
                           [&](const std::string& a) { return a.find(word) != std::string::npos; });
    };
    CHECK(mentions("newest"));
    CHECK(mentions("CONFIG_ARM64=y"));
    CHECK(mentions("ARM64_4K_PAGES"));       // the page size default
    CHECK(mentions("ARCH_FORCE_MAX_ORDER")); // the max order default
    // A fragment leaves CMA to Kconfig: assumed on so CMA pools get checked.
    CHECK(mentions("CONFIG_CMA not in the inputs"));
    CHECK(mentions("PAGE_BLOCK_MAX_ORDER")); // ≥ 6.17 option default
    // --kernel-tree's version is used when the config has none.
    kernel::Options o;
    o.tree_version = KernelVersion::parse("6.6.30");
    Diagnostics d3;
    auto t = kernel::derive(make_config({{"ARM64", "y"}}), o, d3);
    REQUIRE(t);
    CHECK(t->version.str() == "6.6.30");
    // Options beat the header.
    kernel::Options o2;
    o2.version = KernelVersion::parse("6.16");
    Diagnostics d4;
    auto u = kernel::derive(hdr, o2, d4);
    REQUIRE(u);
    CHECK(u->version.str() == "6.16");
}

TEST_CASE("calc JSON has the keys of docs/json.md and nothing is lost") {
    auto m = calc("arm64", "6.12", {{"ARM64_16K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"CMA", "y"}});
    REQUIRE(m);
    auto j = kernel::to_json(*m);
    for (const char* key :
         {"kernel_version", "arch", "page_size", "max_page_order", "pageblock_order",
          "cma_min_alignment_bytes", "derivation", "assumptions", "diagnostics"})
        CHECK_MESSAGE(j.contains(key), key);
    CHECK_FALSE(j.contains("pageblock_order_range"));
    CHECK(j["kernel_version"] == "6.12");
    CHECK(j["arch"] == "arm64");
    CHECK(j["page_size"] == 16384);
    CHECK(j["cma_min_alignment_bytes"] == 32 * MiB);
    bool saw_pageblock = false;
    for (const auto& s : j["derivation"]) {
        for (const char* key : {"quantity", "value", "rule", "source", "inputs"})
            CHECK(s.contains(key));
        for (const auto& in : s["inputs"])
            for (const char* key : {"symbol", "value", "file", "line"})
                CHECK(in.contains(key));
        if (s["quantity"] == "pageblock_order") {
            saw_pageblock = true;
            CHECK(s["value"] == 11);
            // The row's range and the tree it was read in (6.12.117 lies in v6.10–v6.15).
            CHECK(s["source"].get<std::string>().find(
                      "pageblock-flags.h (v6.10–v6.15; read in 6.12.117)") != std::string::npos);
            REQUIRE_FALSE(s["inputs"].empty());
            CHECK(s["inputs"][0]["file"] == "test.config");
        }
    }
    CHECK(saw_pageblock);

    auto ppc =
        calc("powerpc", "6.12", {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}, {"HUGETLBFS", "y"}});
    REQUIRE(ppc);
    auto jp = kernel::to_json(*ppc);
    CHECK(jp["pageblock_order"].is_null());
    CHECK(jp["cma_min_alignment_bytes"].is_null());
    CHECK(jp["pageblock_order_range"] == nlohmann::json::array({5, 8}));

    auto text = kernel::render_text(*m);
    CHECK(text.find("32 MiB") != std::string::npos);
    CHECK(text.find("include/linux/pageblock-flags.h") != std::string::npos);
    CHECK(text.find("test.config:") != std::string::npos);

    auto rows = kernel::table(kernel::Arch::arm64, *KernelVersion::parse("6.16"));
    auto tj = kernel::to_json(rows);
    REQUIRE(tj["rows"].size() == rows.size());
    for (const char* key : {"page_size", "max_page_order", "pageblock_order",
                            "cma_min_alignment_bytes", "hugetlb", "thp", "page_block_max_order"})
        CHECK(tj["rows"][0].contains(key));
    auto md =
        kernel::render_table_markdown(rows, kernel::Arch::arm64, *KernelVersion::parse("6.16"));
    CHECK(md.find("| 16 KiB |") != std::string::npos);
    CHECK(std::count(md.begin(), md.end(), '\n') == static_cast<long>(rows.size()) + 4);
}

TEST_CASE("a stale max order from a .config written for another page size") {
    // `-c 4k.config -c 16k.frag`: the .config carries ARCH_FORCE_MAX_ORDER=10 (the 4K default,
    // no prompt upstream), the fragment switches to 16K. olddefconfig recomputes 11 (facts §10:
    // "a fragment that sets it is silently replaced by the default").
    kconfig::Config cfg;
    cfg.header_arch = "arm64";
    cfg.header_version = "6.12.117";
    cfg.set({"ARCH_FORCE_MAX_ORDER", "10", false, {"4k.config", 466, 1}});
    cfg.set({"ARM64_4K_PAGES", "n", false, {"16k.frag", 1, 1}});
    cfg.set({"ARM64_16K_PAGES", "y", false, {"16k.frag", 2, 1}});
    Diagnostics d;
    auto m = kernel::derive(cfg, {}, d);
    REQUIRE(m);
    CHECK(m->max_page_order == 11);
    CHECK(m->cma_min_alignment_bytes == 32 * MiB);
    REQUIRE(d.count(Severity::warning) == 1);
    CHECK(d.items().front().message.find("16k.frag") != std::string::npos);
    // The same value written next to the page size (one vendor file) is honoured.
    kconfig::Config vendor = cfg;
    vendor.set({"ARCH_FORCE_MAX_ORDER", "10", false, {"16k.frag", 3, 1}});
    Diagnostics d2;
    auto v = kernel::derive(vendor, {}, d2);
    REQUIRE(v);
    CHECK(v->max_page_order == 10);
    // Contradiction across files names the fix.
    kconfig::Config both;
    both.set({"ARM64_4K_PAGES", "y", false, {"4k.config", 425, 1}});
    both.set({"ARM64_16K_PAGES", "y", false, {"16k.frag", 2, 1}});
    Diagnostics d3;
    kernel::Options o;
    o.arch = kernel::Arch::arm64;
    CHECK_FALSE(kernel::derive(both, o, d3));
    REQUIRE(d3.has_errors());
    CHECK(d3.items().back().message.find("is not set") != std::string::npos);
}

TEST_CASE("--arch and --kernel-version that disagree with the header are warned about") {
    kconfig::Config cfg = make_config({{"X86_64", "y"}});
    cfg.header_arch = "x86";
    cfg.header_version = "6.1.192";
    kernel::Options o;
    o.arch = kernel::Arch::arm64;
    o.version = KernelVersion::parse("6.12");
    Diagnostics d;
    auto m = kernel::derive(cfg, o, d);
    REQUIRE(m);
    CHECK(m->arch == kernel::Arch::arm64);
    CHECK(d.count(Severity::warning) == 2);
    // Same arch family and same major.minor: nothing to say.
    kernel::Options same;
    same.arch = kernel::Arch::x86_64;
    same.version = KernelVersion::parse("6.1");
    Diagnostics quiet;
    REQUIRE(kernel::derive(cfg, same, quiet));
    CHECK(quiet.items().empty());
}

TEST_CASE("an absurd max order is honoured as kconfig does, and the overflow is reported") {
    // arm has no range for ARCH_FORCE_MAX_ORDER: 99 goes through kconfig. 32-bit unsigned long:
    // 1UL << 99 is folded to 0, so CMA_MIN_ALIGNMENT_BYTES = 4096 * 0 = 0.
    Diagnostics d;
    auto m = calc("arm", "6.12", {{"ARCH_FORCE_MAX_ORDER", "99"}}, &d);
    REQUIRE(m);
    CHECK(m->max_page_order == 99);
    CHECK(m->pageblock_order == 99);
    CHECK(m->cma_min_alignment_bytes == 0u);
    CHECK(d.count(Severity::warning) == 1);
    // 20 on arm: 4096 << 20 = 4 GiB does not fit 32 bits either → wraps to 0.
    auto m20 = calc("arm", "6.12", {{"ARCH_FORCE_MAX_ORDER", "20"}});
    REQUIRE(m20);
    CHECK(m20->cma_min_alignment_bytes == 0u);
    // 19: 2 GiB fits.
    auto m19 = calc("arm", "6.12", {{"ARCH_FORCE_MAX_ORDER", "19"}});
    REQUIRE(m19);
    CHECK(m19->cma_min_alignment_bytes == 2048 * MiB);
}

TEST_CASE("odd values never crash derive()") {
    // Every key symbol with odd values, on every arch and a spread of versions: derive()
    // returns a model or an error, never anything else.
    const std::vector<const char*> symbols = {
        "ARCH_FORCE_MAX_ORDER", "FORCE_MAX_ZONEORDER", "PAGE_BLOCK_ORDER", "PAGE_BLOCK_MAX_ORDER",
        "PAGE_SHIFT",           "CMA_AREAS",           "HUGETLBFS",        "TRANSPARENT_HUGEPAGE",
        "ARM64_64K_PAGES",      "PPC_256K_PAGES",      "PAGE_SIZE_8KB",    "64BIT"};
    const std::vector<const char*> values = {
        "", "0", "-1", "0x7fffffffffffffff", "999999999999", "y", "n", "m", "abc", "64"};
    int models = 0, errors = 0;
    unsigned seed = 12345;
    auto next = [&] { return seed = seed * 1103515245u + 12345u; };
    for (auto arch : kernel::all_arches()) {
        for (const char* v : {"5.10", "5.18", "6.1", "6.4", "6.16", "7.0"}) {
            for (int round = 0; round < 20; ++round) {
                kconfig::Config cfg;
                for (int k = 0; k < 5; ++k)
                    cfg.set({symbols[next() % symbols.size()],
                             values[next() % values.size()],
                             false,
                             {"fuzz.config", k + 1, 1}});
                kernel::Options o;
                o.arch = arch;
                o.version = KernelVersion::parse(v);
                Diagnostics d;
                auto m = kernel::derive(cfg, o, d);
                if (m) {
                    ++models;
                    CHECK(m->page_size >= 4096);
                    (void)kernel::to_json(*m).dump();
                    (void)kernel::render_text(*m);
                } else {
                    ++errors;
                    CHECK(d.has_errors());
                }
            }
        }
    }
    CHECK(models > 0);
    MESSAGE("odd configs: " << models << " models, " << errors << " errors");
}
