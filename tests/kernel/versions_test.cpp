// One test per version boundary of the rules. Every expectation is derived by hand from
// kernel-facts.md (section named in the comment) and written here with its arithmetic, so a
// wrong table row fails here rather than agreeing with itself.
#include <doctest/doctest.h>

#include <algorithm>

#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"
#include "support/kernel.hpp"

using namespace cmalign;
using cmalign::test::calc;

constexpr std::uint64_t KiB = 1024, MiB = 1024 * 1024;

TEST_CASE("v5.11/v5.12: arm64 FORCE_MAX_ZONEORDER stops depending on THP") {
    // facts §1.5 + 79cc2ed5a716: 5.11 defaults "14 if 64K && THP, 12 if 16K && THP, else 11";
    // 5.12 "14 if 64K, 12 if 16K, else 11" (exclusive). 64K, HugeTLB on, THP off:
    // 5.11: MAX_ORDER 11 → MPO 10; ≤ 5.17 pageblock_order = HUGETLB_PAGE_ORDER = 16-3 = 13 (no
    // clamp yet); alignment = 64K << max(10, 13) = 512 MiB.
    auto old = calc("arm64", "5.11",
                    {{"ARM64_64K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"TRANSPARENT_HUGEPAGE", "n"}});
    REQUIRE(old);
    CHECK(old->max_page_order == 10);
    CHECK(old->pageblock_order == 13);
    CHECK(old->cma_min_alignment_bytes == 512 * MiB);
    // 5.12: MAX_ORDER 14 → MPO 13.
    auto fixed =
        calc("arm64", "5.12",
             {{"ARM64_64K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"TRANSPARENT_HUGEPAGE", "n"}});
    REQUIRE(fixed);
    CHECK(fixed->max_page_order == 13);
    CHECK(fixed->pageblock_order == 13);
}

TEST_CASE("v5.17/v5.18: pageblock_order is clamped to the max order") {
    // facts §1.2: ≤ 5.17 HUGETLB_PAGE_ORDER; 5.18 min(HUGETLB_PAGE_ORDER, MAX_ORDER-1).
    // arm64 64K (HUGETLB_PAGE_ORDER 13) with a vendor FORCE_MAX_ZONEORDER=12 (MPO 11):
    // 5.17: pageblock 13, alignment 64K << max(11, 13) = 512 MiB;
    // 5.18: pageblock min(13, 11) = 11, alignment 64K << max(11, 11) = 128 MiB.
    Diagnostics d17, d18;
    auto v517 =
        calc("arm64", "5.17",
             {{"ARM64_64K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"FORCE_MAX_ZONEORDER", "12"}}, &d17);
    auto v518 =
        calc("arm64", "5.18",
             {{"ARM64_64K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"FORCE_MAX_ZONEORDER", "12"}}, &d18);
    REQUIRE(v517);
    REQUIRE(v518);
    CHECK(v517->max_page_order == 11);
    CHECK(v517->pageblock_order == 13);
    CHECK(v517->cma_min_alignment_bytes == 512 * MiB);
    CHECK(v518->pageblock_order == 11);
    CHECK(v518->cma_min_alignment_bytes == 128 * MiB);
    // Upstream arm64 has no prompt for it: honoured, with a warning naming the default 14.
    REQUIRE(d18.count(Severity::warning) == 1);
    CHECK(d18.items().front().message.find("14") != std::string::npos);
}

TEST_CASE("v5.18/v5.19: CMA alignment becomes PAGE_SIZE << pageblock_order") {
    // facts §2: 5.18 PAGE_SIZE << max(MPO, pageblock_order); ≥ 5.19 PAGE_SIZE << pageblock_order.
    // arm64 4K with HugeTLB: pageblock 9 both; 5.18: 4K << max(10, 9) = 4 MiB; 5.19: 4K << 9.
    auto a = calc("arm64", "5.18", {{"ARM64_4K_PAGES", "y"}, {"HUGETLBFS", "y"}});
    auto b = calc("arm64", "5.19", {{"ARM64_4K_PAGES", "y"}, {"HUGETLBFS", "y"}});
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->pageblock_order == 9);
    CHECK(b->pageblock_order == 9);
    CHECK(a->cma_min_alignment_bytes == 4 * MiB);
    CHECK(b->cma_min_alignment_bytes == 2 * MiB);
    // 5.10 (open-coded in of_reserved_mem.c etc.) gives the same as 5.18.
    auto c = calc("arm64", "5.10", {{"ARM64_4K_PAGES", "y"}, {"HUGETLBFS", "y"}});
    REQUIRE(c);
    CHECK(c->cma_min_alignment_bytes == 4 * MiB);
}

TEST_CASE("v6.0/v6.1: FORCE_MAX_ZONEORDER renamed ARCH_FORCE_MAX_ORDER") {
    // facts §1.1: same exclusive values, new name in 6.1. arm (prompt, no range), neither
    // HugeTLB nor THP without LPAE, so pageblock_order = MPO.
    // 6.0, FORCE_MAX_ZONEORDER=12: MPO 11, alignment 4K << 11 = 8 MiB.
    auto v60 = calc("arm", "6.0", {{"FORCE_MAX_ZONEORDER", "12"}});
    REQUIRE(v60);
    CHECK(v60->max_page_order == 11);
    CHECK(v60->pageblock_order == 11);
    CHECK(v60->cma_min_alignment_bytes == 8 * MiB);
    // 6.1 ignores the old name (warning): default 11 → MPO 10, 4 MiB.
    Diagnostics d;
    auto stale = calc("arm", "6.1", {{"FORCE_MAX_ZONEORDER", "12"}}, &d);
    REQUIRE(stale);
    CHECK(stale->max_page_order == 10);
    CHECK(stale->cma_min_alignment_bytes == 4 * MiB);
    CHECK(d.count(Severity::warning) == 1);
    // 6.1 with the new name: MPO 11 again.
    auto v61 = calc("arm", "6.1", {{"ARCH_FORCE_MAX_ORDER", "12"}});
    REQUIRE(v61);
    CHECK(v61->max_page_order == 11);
}

TEST_CASE("v6.3/v6.4: max order becomes inclusive and ranges change") {
    // facts §1.1: ≤ 6.3 MPO = value - 1; ≥ 6.4 MPO = value.
    // arm ARCH_FORCE_MAX_ORDER=12: 6.3 → MPO 11 (8 MiB); 6.4 → MPO 12 (16 MiB).
    auto a = calc("arm", "6.3", {{"ARCH_FORCE_MAX_ORDER", "12"}});
    auto b = calc("arm", "6.4", {{"ARCH_FORCE_MAX_ORDER", "12"}});
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->max_page_order == 11);
    CHECK(b->max_page_order == 12);
    CHECK(a->cma_min_alignment_bytes == 8 * MiB);
    CHECK(b->cma_min_alignment_bytes == 16 * MiB);
    // Defaults: 6.3 arm 11 (exclusive) and 6.4 arm 10 (inclusive) are the same MPO 10.
    auto da = calc("arm", "6.3", {});
    auto db = calc("arm", "6.4", {});
    REQUIRE(da);
    REQUIRE(db);
    CHECK(da->max_page_order == 10);
    CHECK(db->max_page_order == 10);
    // powerpc 64K Book3S-64 ranges: 6.3 "range 8 9", 6.4 "range 7 8" (facts §1.5).
    // Value 9: in range on 6.3 (MPO 8); out of range on 6.4 → default 8 with a warning.
    Diagnostics d63, d64;
    auto p63 = calc("powerpc", "6.3",
                    {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}, {"ARCH_FORCE_MAX_ORDER", "9"}}, &d63);
    auto p64 = calc("powerpc", "6.4",
                    {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}, {"ARCH_FORCE_MAX_ORDER", "9"}}, &d64);
    REQUIRE(p63);
    REQUIRE(p64);
    CHECK(p63->max_page_order == 8);
    CHECK(p64->max_page_order == 8);
    CHECK(d63.count(Severity::warning) == 0);
    CHECK(d64.count(Severity::warning) == 1);
    // Value 7: out of range on 6.3 (default 9 → MPO 8); in range on 6.4 (MPO 7).
    auto q63 = calc("powerpc", "6.3",
                    {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}, {"ARCH_FORCE_MAX_ORDER", "7"}});
    auto q64 = calc("powerpc", "6.4",
                    {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}, {"ARCH_FORCE_MAX_ORDER", "7"}});
    REQUIRE(q63);
    REQUIRE(q64);
    CHECK(q63->max_page_order == 8);
    CHECK(q64->max_page_order == 7);
}

TEST_CASE("v6.7/v6.8: MAX_ORDER renamed MAX_PAGE_ORDER, same value") {
    // facts §1.1: 5e0a760b4441, no numeric change.
    auto a = calc("arm64", "6.7", {{"ARM64_16K_PAGES", "y"}});
    auto b = calc("arm64", "6.8", {{"ARM64_16K_PAGES", "y"}});
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->max_page_order == 11);
    CHECK(b->max_page_order == 11);
    auto rule_of = [](const kernel::Model& m) {
        for (const auto& s : m.derivation)
            if (s.quantity == "max_page_order") return s.rule;
        return std::string();
    };
    CHECK(rule_of(*a).find("MAX_ORDER =") != std::string::npos);
    CHECK(rule_of(*b).find("MAX_PAGE_ORDER =") != std::string::npos);
}

TEST_CASE("v6.8/v6.9: MAX_CMA_AREAS loses its + 1") {
    // facts §2: 6.8: 1 + CONFIG_CMA_AREAS (default 19 NUMA / 7); 6.9: CONFIG_CMA_AREAS (20 / 8).
    auto numa68 = calc("arm64", "6.8", {{"CMA", "y"}, {"NUMA", "y"}});
    auto numa69 = calc("arm64", "6.9", {{"CMA", "y"}, {"NUMA", "y"}});
    auto uma68 = calc("arm64", "6.8", {{"CMA", "y"}});
    auto set68 = calc("arm64", "6.8", {{"CMA", "y"}, {"CMA_AREAS", "7"}});
    auto set69 = calc("arm64", "6.9", {{"CMA", "y"}, {"CMA_AREAS", "7"}});
    REQUIRE((numa68 && numa69 && uma68 && set68 && set69));
    CHECK(numa68->cma_areas == 20); // 1 + 19
    CHECK(numa69->cma_areas == 20); // 20
    CHECK(uma68->cma_areas == 8);   // 1 + 7
    CHECK(set68->cma_areas == 8);   // 1 + 7
    CHECK(set69->cma_areas == 7);
    auto nocma = calc("arm64", "6.9", {{"CMA", "n"}});
    REQUIRE(nocma);
    CHECK_FALSE(nocma->cma);
    CHECK(nocma->cma_areas == 0);
    // Left out of a fragment, CMA is assumed on, with the UMA default.
    auto unsaid = calc("arm64", "6.9", {});
    REQUIRE(unsaid);
    CHECK(unsaid->cma_assumed);
    CHECK(unsaid->cma_areas == 8);
}

TEST_CASE("v6.9/v6.10: THP without HugeTLB caps pageblock_order at the PMD order") {
    // facts §1.2 and §10: x86_64 HugeTLB off, THP on: 6.9 MPO 10 → 4 MiB; 6.10 min(9, 10) = 9
    // → 2 MiB.
    auto a = calc("x86_64", "6.9", {{"HUGETLBFS", "n"}, {"TRANSPARENT_HUGEPAGE", "y"}});
    auto b = calc("x86_64", "6.10", {{"HUGETLBFS", "n"}, {"TRANSPARENT_HUGEPAGE", "y"}});
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->pageblock_order == 10);
    CHECK(a->cma_min_alignment_bytes == 4 * MiB);
    CHECK(b->pageblock_order == 9);
    CHECK(b->cma_min_alignment_bytes == 2 * MiB);
}

TEST_CASE("v6.15/v6.16: CONFIG_PAGE_BLOCK_ORDER appears") {
    // 6.15 has no option: no page_block_order step; 6.16 has it with default = max order.
    auto a = calc("arm64", "6.15", {{"ARM64_16K_PAGES", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}});
    auto b = calc("arm64", "6.16", {{"ARM64_16K_PAGES", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}});
    REQUIRE(a);
    REQUIRE(b);
    CHECK_FALSE(a->page_block_order_option);
    REQUIRE(b->page_block_order_option);
    CHECK(*b->page_block_order_option == 11);
    CHECK(a->cma_min_alignment_bytes == 32 * MiB);
    CHECK(b->cma_min_alignment_bytes == 32 * MiB);
    // A 6.15 config that carries it comes from a vendor backport: applied, and said so.
    // 16K, THP, 7: min(11, 7) = 7 → 16K << 7 = 2 MiB.
    auto back =
        calc("arm64", "6.15",
             {{"ARM64_16K_PAGES", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}, {"PAGE_BLOCK_ORDER", "7"}});
    REQUIRE(back);
    CHECK(back->pageblock_order == 7);
    CHECK(back->cma_min_alignment_bytes == 2 * MiB);
    CHECK(std::any_of(back->assumptions.begin(), back->assumptions.end(), [](const std::string& s) {
        return s.find("backport") != std::string::npos;
    }));
    // 6.12 + backport, neither HugeTLB nor THP: pageblock_order = PAGE_BLOCK_ORDER.
    auto back_neither =
        calc("arm64", "6.12", {{"ARM64_16K_PAGES", "y"}, {"PAGE_BLOCK_ORDER", "8"}});
    REQUIRE(back_neither);
    CHECK(back_neither->pageblock_order == 8);
    // x86 has no ARCH_FORCE_MAX_ORDER: range 1..10 (C kconfig treats the valueless int as 0,
    // facts §1.3); 11 falls back to 10 with a warning.
    Diagnostics d;
    auto x = calc("x86_64", "6.16", {{"PAGE_BLOCK_ORDER", "11"}}, &d);
    REQUIRE(x);
    CHECK(x->page_block_order_option == 10);
    CHECK(d.count(Severity::warning) == 1);
}

TEST_CASE("v6.16: kconfig keeps a written PAGE_BLOCK_ORDER while it is in range") {
    // facts §10: a .config made on 4K holds 10; switched to 16K, pageblock_order 10 → 16K << 10
    // = 16 MiB; 12 on 16K is out of range 1..11 → default 11 → 32 MiB; 1 on 4K with HugeTLB:
    // min(9, 1) = 1 → 8 KiB.
    auto kept = calc("arm64", "6.16",
                     {{"ARM64_16K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"PAGE_BLOCK_ORDER", "10"}});
    REQUIRE(kept);
    CHECK(kept->pageblock_order == 10);
    CHECK(kept->cma_min_alignment_bytes == 16 * MiB);
    Diagnostics d;
    auto out = calc("arm64", "6.16",
                    {{"ARM64_16K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"PAGE_BLOCK_ORDER", "12"}}, &d);
    REQUIRE(out);
    CHECK(out->pageblock_order == 11);
    CHECK(out->cma_min_alignment_bytes == 32 * MiB);
    CHECK(d.count(Severity::warning) == 1);
    auto one = calc("arm64", "6.16",
                    {{"ARM64_4K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"PAGE_BLOCK_ORDER", "1"}});
    REQUIRE(one);
    CHECK(one->cma_min_alignment_bytes == 8 * KiB);
}

TEST_CASE("v6.16/v6.17: PAGE_BLOCK_ORDER renamed PAGE_BLOCK_MAX_ORDER") {
    // 16K, THP: 6.16 with PAGE_BLOCK_ORDER=7 → 2 MiB. 6.17 ignores the old name (warning) →
    // default 11 → 32 MiB. 6.17 with the new name 7 → 2 MiB.
    auto a =
        calc("arm64", "6.16",
             {{"ARM64_16K_PAGES", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}, {"PAGE_BLOCK_ORDER", "7"}});
    Diagnostics d;
    auto b = calc(
        "arm64", "6.17",
        {{"ARM64_16K_PAGES", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}, {"PAGE_BLOCK_ORDER", "7"}}, &d);
    auto c = calc(
        "arm64", "6.17",
        {{"ARM64_16K_PAGES", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}, {"PAGE_BLOCK_MAX_ORDER", "7"}});
    REQUIRE((a && b && c));
    CHECK(a->cma_min_alignment_bytes == 2 * MiB);
    CHECK(b->cma_min_alignment_bytes == 32 * MiB);
    CHECK(d.count(Severity::warning) == 1);
    CHECK(c->cma_min_alignment_bytes == 2 * MiB);
    // The newest modelled version behaves as 6.17.
    auto n = calc(
        "arm64", "7.0",
        {{"ARM64_16K_PAGES", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}, {"PAGE_BLOCK_MAX_ORDER", "7"}});
    REQUIRE(n);
    CHECK(n->cma_min_alignment_bytes == 2 * MiB);
}

TEST_CASE("HUGETLB_PAGE_SIZE_VARIABLE: powerpc Book3S-64 decides pageblock_order at boot") {
    // facts §1.4/§1.6: 64K: hash HPAGE_SHIFT 24 → order 8, radix 21 → 5; min with MPO 8 → 5..8.
    auto p64 =
        calc("powerpc", "6.12", {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}, {"HUGETLBFS", "y"}});
    REQUIRE(p64);
    CHECK_FALSE(p64->pageblock_order);
    REQUIRE(p64->pageblock_order_range);
    CHECK(p64->pageblock_order_range->first == 5);
    CHECK(p64->pageblock_order_range->second == 8);
    CHECK_FALSE(p64->cma_min_alignment_bytes);
    // 4K: hash 24-12 = 12, radix 21-12 = 9; MPO 12 → 9..12.
    auto p4 = calc("powerpc", "6.12", {{"PPC64", "y"}, {"PPC_4K_PAGES", "y"}, {"HUGETLBFS", "y"}});
    REQUIRE(p4);
    REQUIRE(p4->pageblock_order_range);
    CHECK(p4->pageblock_order_range->first == 9);
    CHECK(p4->pageblock_order_range->second == 12);
    // facts §10: 6.1 ppc64le 64K, HugeTLB off, THP on: THP does not count → MPO 8 → 16 MiB;
    // 6.12: min(HPAGE_PMD_ORDER at boot 5..8, 8) → decided at boot.
    auto t61 = calc("powerpc", "6.1",
                    {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}});
    auto t612 = calc("powerpc", "6.12",
                     {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}});
    REQUIRE((t61 && t612));
    CHECK(t61->pageblock_order == 8);
    CHECK(t61->cma_min_alignment_bytes == 16 * MiB);
    CHECK_FALSE(t612->pageblock_order);
    // Neither: MPO 8 (64K) → 16 MiB, known at build time.
    auto n = calc("powerpc", "6.12", {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}});
    REQUIRE(n);
    CHECK(n->pageblock_order == 8);
    CHECK(n->cma_min_alignment_bytes == 16 * MiB);
}

TEST_CASE("arch tables: arm without LPAE, x86-32, riscv, loongarch, mips") {
    // facts §1.6/§1.7/§10.
    // arm multi_v7 has SOC_AM33XX: default 11 (6.12) → MPO 11 → 8 MiB; HugeTLB impossible.
    Diagnostics d;
    auto arm = calc("arm", "6.12", {{"SOC_AM33XX", "y"}, {"HUGETLBFS", "y"}}, &d);
    REQUIRE(arm);
    CHECK_FALSE(arm->hugetlb);
    CHECK(arm->max_page_order == 11);
    CHECK(arm->cma_min_alignment_bytes == 8 * MiB);
    CHECK(d.count(Severity::warning) == 1);
    // arm LPAE with HugeTLB: 9 → 2 MiB.
    auto lpae = calc("arm", "6.12", {{"ARM_LPAE", "y"}, {"HUGETLBFS", "y"}});
    REQUIRE(lpae);
    CHECK(lpae->pageblock_order == 9);
    CHECK(lpae->phys_addr_64bit);
    // x86-32 non-PAE: PMD folded, HPAGE_SHIFT 22 → order 10 = MPO → 4 MiB; PAE: 9 → 2 MiB.
    auto x32 = calc("x86", "6.12", {{"HUGETLBFS", "y"}});
    auto pae = calc("x86", "6.12", {{"HUGETLBFS", "y"}, {"X86_PAE", "y"}});
    REQUIRE((x32 && pae));
    CHECK(x32->pageblock_order == 10);
    CHECK_FALSE(x32->phys_addr_64bit);
    CHECK(pae->pageblock_order == 9);
    CHECK(pae->phys_addr_64bit);
    // riscv32: no THP (needs 64BIT).
    auto rv32 = calc("riscv", "6.12", {{"64BIT", "n"}, {"TRANSPARENT_HUGEPAGE", "y"}});
    REQUIRE(rv32);
    CHECK_FALSE(rv32->thp);
    // loongarch default page size 16K: MPO 11, HugeTLB 11 → 32 MiB.
    auto la = calc("loongarch", "6.12", {{"HUGETLBFS", "y"}});
    REQUIRE(la);
    CHECK(la->page_size == 16 * KiB);
    CHECK(la->cma_min_alignment_bytes == 32 * MiB);
    // mips 64-bit 16K with huge pages: MIPS_HUGE_TLB_SUPPORT → default 11; order 14-3 = 11.
    auto mips = calc("mips", "6.12",
                     {{"64BIT", "y"},
                      {"CPU_SUPPORTS_HUGEPAGES", "y"},
                      {"PAGE_SIZE_16KB", "y"},
                      {"HUGETLBFS", "y"}});
    REQUIRE(mips);
    CHECK(mips->max_page_order == 11);
    CHECK(mips->pageblock_order == 11);
    // Without huge pages the default drops to 10.
    auto mips_plain = calc("mips", "6.12", {{"64BIT", "y"}, {"PAGE_SIZE_16KB", "y"}});
    REQUIRE(mips_plain);
    CHECK(mips_plain->max_page_order == 10);
}

TEST_CASE("powerpc: a config without one of the MMUs leaves one boot-time value") {
    // 64K, HugeTLB: radix only (PPC_64S_HASH_MMU=n) → HPAGE_SHIFT 21 → order 5; hash only
    // (PPC_RADIX_MMU=n) → 24 → order 8. Still decided at boot (pageblock_order is a variable).
    auto radix = calc(
        "powerpc", "6.12",
        {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"PPC_64S_HASH_MMU", "n"}});
    auto hash =
        calc("powerpc", "6.12",
             {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"PPC_RADIX_MMU", "n"}});
    REQUIRE((radix && hash));
    CHECK_FALSE(radix->pageblock_order);
    REQUIRE(radix->pageblock_order_range);
    CHECK(*radix->pageblock_order_range == std::pair{5, 5});
    REQUIRE(hash->pageblock_order_range);
    CHECK(*hash->pageblock_order_range == std::pair{8, 8});
}

TEST_CASE("arm64 v6.3 only: ARCH_FORCE_MAX_ORDER has a prompt and ranges") {
    // "arm64: make ARCH_FORCE_MAX_ORDER selectable" (Jan 2023, v6.3): 4K "range 11 16"
    // (exclusive); removed again in v6.4. 4K, 13 → MPO 12 silently on 6.3; on 6.2 (no prompt)
    // it is honoured with a warning; 17 is out of range on 6.3 → default 11 → MPO 10.
    Diagnostics d63, d62, d_out;
    auto a = calc("arm64", "6.3", {{"ARM64_4K_PAGES", "y"}, {"ARCH_FORCE_MAX_ORDER", "13"}}, &d63);
    auto b = calc("arm64", "6.2", {{"ARM64_4K_PAGES", "y"}, {"ARCH_FORCE_MAX_ORDER", "13"}}, &d62);
    auto c =
        calc("arm64", "6.3", {{"ARM64_4K_PAGES", "y"}, {"ARCH_FORCE_MAX_ORDER", "17"}}, &d_out);
    REQUIRE((a && b && c));
    CHECK(a->max_page_order == 12);
    CHECK(d63.count(Severity::warning) == 0); // (a note lists the symbols left to assumptions)
    CHECK(d63.count(Severity::error) == 0);
    CHECK(b->max_page_order == 12);
    CHECK(d62.count(Severity::warning) == 1);
    CHECK(c->max_page_order == 10);
    CHECK(d_out.count(Severity::warning) == 1);
}

TEST_CASE("v7.2 is the newest modelled release: no 'newer than modelled' warning") {
    // 7.2.13 include/linux/pageblock-flags.h: THP on, HugeTLB on, 4K pages: pageblock_order =
    // min(HUGETLB_PAGE_ORDER 9, PAGE_BLOCK_MAX_ORDER 10) = 9 → 4K << 9 = 2 MiB.
    Diagnostics d;
    auto m = calc("arm64", "7.2.13",
                  {{"ARM64_4K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}}, &d);
    REQUIRE(m);
    CHECK(m->cma_min_alignment_bytes == 2 * MiB);
    for (const auto& item : d.items())
        CHECK_MESSAGE(item.message.find("newer than") == std::string::npos, item.message);
    // 7.3 is past the tables: said so, with the 7.2 rules.
    Diagnostics later;
    REQUIRE(calc("arm64", "7.3", {{"ARM64_4K_PAGES", "y"}}, &later));
    bool warned = false;
    for (const auto& item : later.items())
        warned = warned || item.message.find("newer than the newest modelled version (7.2)") !=
                               std::string::npos;
    CHECK(warned);
}

TEST_CASE("v5.10: rows read in the 5.10.223 tree name it") {
    // 5.10.223 arch/arm64/Kconfig: FORCE_MAX_ZONEORDER "12" if 16K && THP; 16K, THP on:
    // MAX_ORDER 12 → MPO 11; HugeTLB order 25 - 14 = 11; alignment 16K << max(11, 11) = 32 MiB.
    auto m = calc("arm64", "5.10.223",
                  {{"ARM64_16K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}});
    REQUIRE(m);
    CHECK(m->max_page_order == 11);
    CHECK(m->cma_min_alignment_bytes == 32 * MiB);
    bool named = false;
    for (const auto& s : m->derivation)
        named = named || s.source.find("read in 5.10.223") != std::string::npos;
    CHECK(named);
}
