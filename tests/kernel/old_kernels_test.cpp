// v4.19 and v5.4, the LTS kernels of many BSPs. Debian's archive carries no 4.19/5.4 source
// package (`apt-cache search linux-source`: 6.1 and 6.12 only), so every expectation is derived by
// hand from the source lines named in its comment, with the arithmetic written out:
//
//  [K54]  ChromiumOS 5.4 arch/arm64/Kconfig, FORCE_MAX_ZONEORDER:
//           int / default "14" if (ARM64_64K_PAGES && TRANSPARENT_HUGEPAGE)
//               / default "12" if (ARM64_16K_PAGES && TRANSPARENT_HUGEPAGE) / default "11"
//         (the same text is the "before" side of the v5.12 patch that dropped the THP terms).
//  [C419] Android 4.19 (k4.19) kernel/dma/contiguous.c rmem_cma_setup():
//           align = PAGE_SIZE << max(MAX_ORDER - 1, pageblock_order); mask = align - 1;
//           (base & mask) || (size & mask) → "Reserved memory: incorrect alignment of CMA region"
//  [C54]  ChromiumOS 5.4 kernel/dma/contiguous.c rmem_cma_setup(): the same lines.
//  [PB4]  include/linux/pageblock-flags.h of 4.x (until 5.17): HUGETLB_PAGE → pageblock_order =
//         HUGETLB_PAGE_ORDER (HUGETLB_PAGE_SIZE_VARIABLE: set at boot); else MAX_ORDER - 1.
//  [MZ]   include/linux/mmzone.h: MAX_ORDER = CONFIG_FORCE_MAX_ZONEORDER, else 11 (exclusive).
#include <doctest/doctest.h>

#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"
#include "support/kernel.hpp"

using namespace cmalign;
using cmalign::test::calc;

namespace {
constexpr std::uint64_t MiB = 1024 * 1024;

bool has_step_source(const kernel::Model& m, const char* quantity, const char* text) {
    for (const auto& s : m.derivation)
        if (s.quantity == quantity && s.source.find(text) != std::string::npos) return true;
    return false;
}
} // namespace

TEST_CASE("v4.19 and v5.4 are modelled; v4.18 is not") {
    for (const char* v : {"4.19", "4.19.325", "5.4", "5.4.290"}) {
        CAPTURE(v);
        CHECK(calc("arm64", v, {{"ARM64_4K_PAGES", "y"}}));
    }
    Diagnostics d;
    CHECK_FALSE(calc("arm64", "4.18", {{"ARM64_4K_PAGES", "y"}}, &d));
    REQUIRE(d.has_errors());
    CHECK(d.items().front().message.find("4.19") != std::string::npos);
}

TEST_CASE("arm64 4K on v4.19: 4 MiB, HugeTLB or not") {
    // [K54]/[MZ]: 4K → FORCE_MAX_ZONEORDER 11 → MAX_ORDER - 1 = 10. [PB4]: HugeTLB order
    // PMD_SHIFT - PAGE_SHIFT = 21 - 12 = 9. [C419]: 4K << max(10, 9) = 4 MiB.
    auto m = calc("arm64", "4.19",
                  {{"ARM64_4K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}});
    REQUIRE(m);
    CHECK(m->max_page_order == 10);
    CHECK(m->pageblock_order == 9);
    CHECK(m->cma_min_alignment_bytes == 4 * MiB);
    CHECK(has_step_source(*m, "max_page_order", "v4.19"));
    CHECK(has_step_source(*m, "cma_min_alignment_bytes", "rmem_cma_setup"));
    // Neither HugeTLB nor THP: [PB4] pageblock_order = MAX_ORDER - 1 = 10; same 4 MiB.
    auto plain = calc("arm64", "4.19", {{"ARM64_4K_PAGES", "y"}});
    REQUIRE(plain);
    CHECK(plain->pageblock_order == 10);
    CHECK(plain->cma_min_alignment_bytes == 4 * MiB);
}

TEST_CASE("arm64 16K on v5.4: the max order follows THP") {
    // [K54]: 16K && THP → 12 → MAX_ORDER - 1 = 11; HugeTLB order 14 - 3 = 11.
    // [C54]: 16K << max(11, 11) = 32 MiB.
    auto thp = calc("arm64", "5.4",
                    {{"ARM64_16K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}});
    REQUIRE(thp);
    CHECK(thp->max_page_order == 11);
    CHECK(thp->pageblock_order == 11);
    CHECK(thp->cma_min_alignment_bytes == 32 * MiB);
    // THP off, HugeTLB on: [K54] 11 → MAX_ORDER - 1 = 10; [PB4] pageblock_order = 11 with no
    // clamp before v5.18 (pageblock_order > MAX_ORDER - 1, the case "mm: enforce
    // pageblock_order < MAX_ORDER" fixed); [C54] 16K << max(10, 11) = 32 MiB.
    auto hugetlb =
        calc("arm64", "5.4",
             {{"ARM64_16K_PAGES", "y"}, {"HUGETLBFS", "y"}, {"TRANSPARENT_HUGEPAGE", "n"}});
    REQUIRE(hugetlb);
    CHECK(hugetlb->max_page_order == 10);
    CHECK(hugetlb->pageblock_order == 11);
    CHECK(hugetlb->cma_min_alignment_bytes == 32 * MiB);
    // Neither: MAX_ORDER - 1 = 10 for both; 16K << 10 = 16 MiB — half of what v5.12+ needs.
    auto neither =
        calc("arm64", "5.4",
             {{"ARM64_16K_PAGES", "y"}, {"HUGETLBFS", "n"}, {"TRANSPARENT_HUGEPAGE", "n"}});
    REQUIRE(neither);
    CHECK(neither->max_page_order == 10);
    CHECK(neither->pageblock_order == 10);
    CHECK(neither->cma_min_alignment_bytes == 16 * MiB);
}

TEST_CASE("arm64 64K on v4.19: 64 MiB without huge pages, 512 MiB with") {
    // [K54]: 64K && THP → 14 → 13: 64K << 13 = 512 MiB. Without THP: 11 → 10; HugeTLB order
    // 16 - 3 = 13 → 64K << max(10, 13) = 512 MiB; neither → 64K << 10 = 64 MiB.
    auto thp = calc("arm64", "4.19", {{"ARM64_64K_PAGES", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}});
    auto hugetlb = calc("arm64", "4.19", {{"ARM64_64K_PAGES", "y"}, {"HUGETLBFS", "y"}});
    auto neither = calc("arm64", "4.19", {{"ARM64_64K_PAGES", "y"}});
    REQUIRE(thp);
    REQUIRE(hugetlb);
    REQUIRE(neither);
    CHECK(thp->max_page_order == 13);
    CHECK(thp->cma_min_alignment_bytes == 512 * MiB);
    CHECK(hugetlb->max_page_order == 10);
    CHECK(hugetlb->pageblock_order == 13);
    CHECK(hugetlb->cma_min_alignment_bytes == 512 * MiB);
    CHECK(neither->cma_min_alignment_bytes == 64 * MiB);
    // arch/arm64/include/asm/sparsemem.h before v5.12: SECTION_SIZE_BITS 30; 13 + 16 <= 30.
    CHECK(thp->section_size_bits == 30);
}

TEST_CASE("v4.19: the max order is FORCE_MAX_ZONEORDER; the v6.1 name is ignored") {
    // arm (prompt, no range) [MZ]: FORCE_MAX_ZONEORDER=12 → MAX_ORDER - 1 = 11, no huge pages
    // without LPAE → pageblock_order 11 → 4K << 11 = 8 MiB.
    auto named = calc("arm", "4.19", {{"FORCE_MAX_ZONEORDER", "12"}});
    REQUIRE(named);
    CHECK(named->max_page_order == 11);
    CHECK(named->cma_min_alignment_bytes == 8 * MiB);
    Diagnostics d;
    auto renamed = calc("arm", "4.19", {{"ARCH_FORCE_MAX_ORDER", "12"}}, &d);
    REQUIRE(renamed);
    CHECK(renamed->max_page_order == 10); // default 11 → 10
    CHECK(renamed->cma_min_alignment_bytes == 4 * MiB);
    CHECK(d.count(Severity::warning) == 1);
}

TEST_CASE("x86_64 on v5.4: 4 MiB with HugeTLB (2 MiB pages, MAX_ORDER - 1 = 10)") {
    // [MZ] x86 has no FORCE_MAX_ZONEORDER: MAX_ORDER 11 → 10; HugeTLB order 21 - 12 = 9;
    // [C54] 4K << max(10, 9) = 4 MiB (v5.19 and later: 2 MiB).
    auto m = calc("x86_64", "5.4", {{"HUGETLBFS", "y"}, {"TRANSPARENT_HUGEPAGE", "y"}});
    REQUIRE(m);
    CHECK(m->max_page_order == 10);
    CHECK(m->pageblock_order == 9);
    CHECK(m->cma_min_alignment_bytes == 4 * MiB);
}

TEST_CASE("riscv: no HugeTLB before v5.4, and 4 MiB either way") {
    // riscv gained ARCH_SUPPORTS_HUGETLBFS with the huge page series of mid-2019 [likely v5.4]:
    // on 4.19 Kconfig drops HUGETLBFS (a warning says so). Both give 4K << max(10, ·) = 4 MiB.
    Diagnostics d;
    auto v419 = calc("riscv", "4.19", {{"64BIT", "y"}, {"HUGETLBFS", "y"}}, &d);
    REQUIRE(v419);
    CHECK_FALSE(v419->hugetlb);
    CHECK(d.count(Severity::warning) == 1);
    CHECK(v419->cma_min_alignment_bytes == 4 * MiB);
    auto v54 = calc("riscv", "5.4", {{"64BIT", "y"}, {"HUGETLBFS", "y"}});
    REQUIRE(v54);
    CHECK(v54->hugetlb);
    CHECK(v54->pageblock_order == 9);
    CHECK(v54->cma_min_alignment_bytes == 4 * MiB);
}

TEST_CASE("MAX_CMA_AREAS before the NUMA default") {
    // include/linux/cma.h: 1 + CONFIG_CMA_AREAS; mm/Kconfig: "default 7" until "default 19 if
    // NUMA" [likely v5.10]. A NUMA 5.4 kernel without CMA_AREAS in its config: 1 + 7 = 8.
    auto v54 = calc("arm64", "5.4", {{"ARM64_4K_PAGES", "y"}, {"CMA", "y"}, {"NUMA", "y"}});
    auto v510 = calc("arm64", "5.10", {{"ARM64_4K_PAGES", "y"}, {"CMA", "y"}, {"NUMA", "y"}});
    REQUIRE(v54);
    REQUIRE(v510);
    CHECK(v54->cma_areas == 8);
    CHECK(v510->cma_areas == 20);
}

TEST_CASE("table works on v4.19 and v5.4") {
    for (const char* v : {"4.19", "5.4"}) {
        CAPTURE(v);
        auto rows = kernel::table(kernel::Arch::arm64, *KernelVersion::parse(v));
        REQUIRE_FALSE(rows.empty());
        bool seen_16k_16mib = false, seen_16k_32mib = false;
        for (const auto& r : rows) {
            CHECK_FALSE(r.page_block_max_order);
            if (r.page_size == 16384 && r.cma_min_alignment_bytes == 16 * MiB)
                seen_16k_16mib = true;
            if (r.page_size == 16384 && r.cma_min_alignment_bytes == 32 * MiB)
                seen_16k_32mib = true;
        }
        // 16K without huge pages: 16 MiB (MAX_ORDER 11); with HugeTLB or THP: 32 MiB.
        CHECK(seen_16k_16mib);
        CHECK(seen_16k_32mib);
    }
}

TEST_CASE("powerpc HUGETLB_PAGE_SIZE_VARIABLE before v5.19: alignment known at build time") {
    // HUGETLB_PAGE_SIZE_VARIABLE "depends on HUGETLB_PAGE && PPC_BOOK3S_64" (arch/powerpc/Kconfig,
    // as the v5.12 "mm: Generalize HUGETLB_PAGE_SIZE_VARIABLE" patch shows it): pageblock_order
    // is HPAGE_SHIFT - PAGE_SHIFT, chosen at boot (hash 24, radix 21). [MZ] 64K PPC64:
    // FORCE_MAX_ZONEORDER 9 → MAX_ORDER - 1 = 8; boot gives 5 (radix) or 8 (hash), never above 8,
    // so [C419] 64K << max(8, 5..8) = 64K << 8 = 16 MiB whatever the MMU.
    auto p64 =
        calc("powerpc", "4.19", {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}, {"HUGETLBFS", "y"}});
    REQUIRE(p64);
    CHECK_FALSE(p64->pageblock_order);
    REQUIRE(p64->pageblock_order_range);
    CHECK(p64->pageblock_order_range->first == 5);
    CHECK(p64->pageblock_order_range->second == 8);
    CHECK(p64->cma_min_alignment_bytes == 16 * MiB);
    // 4K PPC64 on v5.4: FORCE_MAX_ZONEORDER 13 → 12; boot 9 (radix) or 12 (hash): 4K << 12.
    auto p4 = calc("powerpc", "5.4", {{"PPC64", "y"}, {"PPC_4K_PAGES", "y"}, {"HUGETLBFS", "y"}});
    REQUIRE(p4);
    CHECK(p4->max_page_order == 12);
    CHECK(p4->cma_min_alignment_bytes == 16 * MiB);
    // From v5.19 the alignment is PAGE_SIZE << pageblock_order: decided at boot again.
    auto p519 =
        calc("powerpc", "5.19", {{"PPC64", "y"}, {"PPC_64K_PAGES", "y"}, {"HUGETLBFS", "y"}});
    REQUIRE(p519);
    CHECK_FALSE(p519->cma_min_alignment_bytes);
}

TEST_CASE("arm v4.19: FORCE_MAX_ZONEORDER 9 on SA1111 and EFM32") {
    // v4.19 arch/arm/Kconfig: default "12" if SOC_AM33XX, "9" if SA1111 || ARCH_EFM32, "11".
    // EFM32 (Cortex-M, no huge pages): MAX_ORDER 9 → 8; 4K << 8 = 1 MiB.
    auto efm = calc("arm", "4.19", {{"ARCH_EFM32", "y"}});
    REQUIRE(efm);
    CHECK(efm->max_page_order == 8);
    CHECK(efm->cma_min_alignment_bytes == 1 * MiB);
    auto am33 = calc("arm", "5.4", {{"SOC_AM33XX", "y"}});
    REQUIRE(am33);
    CHECK(am33->cma_min_alignment_bytes == 8 * MiB); // 12 → 11: 4K << 11
    // After the EFM32 removal the symbol no longer matters: default 11 → 10 → 4 MiB.
    auto later = calc("arm", "5.15", {{"ARCH_EFM32", "y"}});
    REQUIRE(later);
    CHECK(later->cma_min_alignment_bytes == 4 * MiB);
}

TEST_CASE("powerpc: the page size choice defaults to 4K before v5.16, 64K on Book3S-64 after") {
    // arch/powerpc/Kconfig: "default PPC_64K_PAGES if PPC_BOOK3S_64" was added by "powerpc/64s:
    // Default to 64K pages for 64 bit book3s" (Oct 2021) [likely v5.16]; before, "default
    // PPC_4K_PAGES" alone. A PPC64 config that names no page size:
    auto v54 = calc("powerpc", "5.4", {{"PPC64", "y"}, {"PPC_BOOK3S_64", "y"}});
    auto v516 = calc("powerpc", "5.16", {{"PPC64", "y"}, {"PPC_BOOK3S_64", "y"}});
    REQUIRE(v54);
    REQUIRE(v516);
    CHECK(v54->page_size == 4096);
    CHECK(v516->page_size == 65536);
    // 4K PPC64 on 5.4: FORCE_MAX_ZONEORDER 13 → 12, no huge pages → 4K << 12 = 16 MiB.
    CHECK(v54->cma_min_alignment_bytes == 16 * MiB);
}
