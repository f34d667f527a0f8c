// The rule tables of page sizes, huge pages, pageblock_order, CMA alignment and areas, section
// sizes (the max order's are in rules_orders.cpp, the arches' in arch.cpp). Each row names the
// kernel file it comes from; see rules.hpp for the types.
//
// Sources: the Debian trees 6.1.192 and 6.12.117, and the upstream commits named in the notes.
// Version boundaries not confirmed in a tagged tree say [likely] or [unverified] in the row's
// `note`, which derive() copies into the derivation's source.
#include "cmalign/internal/kernel/rules.hpp"

#include <array>

#include "cmalign/internal/kconfig/version.hpp"

#include "cmalign/internal/kernel/rules_shifts.hpp"

namespace cmalign::kernel::rules {

using namespace rows;

std::span<const PageSizeRow> page_sizes() {
    static const std::vector<PageSizeRow> rows = {
        {Arch::arm64, all_versions(), "ARM64_4K_PAGES", k4, When{}, "arch/arm64/Kconfig"},
        {Arch::arm64, all_versions(), "ARM64_16K_PAGES", k16, {}, "arch/arm64/Kconfig"},
        {Arch::arm64, all_versions(), "ARM64_64K_PAGES", k64, {}, "arch/arm64/Kconfig"},
        {Arch::x86_64, all_versions(), nullptr, k4, When{}, "arch/x86/include/asm/page_types.h"},
        {Arch::x86, all_versions(), nullptr, k4, When{}, "arch/x86/include/asm/page_types.h"},
        {Arch::arm, all_versions(), nullptr, k4, When{}, "arch/arm/include/asm/page.h"},
        {Arch::riscv, all_versions(), nullptr, k4, When{}, "arch/riscv/include/asm/page.h"},
        // "default PPC_64K_PAGES if PPC_BOOK3S_64; default PPC_4K_PAGES": the 64K row comes first
        // so that its condition is tried first. That first default came with "powerpc/64s:
        // Default to 64K pages for 64 bit book3s" (Joel Stanley, v2 Oct 2021) [likely v5.16];
        // before it the choice defaulted to PPC_4K_PAGES everywhere.
        {Arch::powerpc, until(5, 15), "PPC_4K_PAGES", k4, When{}, "arch/powerpc/Kconfig"},
        {Arch::powerpc, until(5, 15), "PPC_64K_PAGES", k64, {}, "arch/powerpc/Kconfig"},
        {Arch::powerpc, until(5, 15), "PPC_16K_PAGES", k16, {}, "arch/powerpc/Kconfig"},
        {Arch::powerpc, until(5, 15), "PPC_256K_PAGES", k256, {}, "arch/powerpc/Kconfig"},
        {Arch::powerpc, since(5, 16), "PPC_64K_PAGES", k64, When{0, {{"PPC_BOOK3S_64"}}},
         "arch/powerpc/Kconfig"},
        {Arch::powerpc, since(5, 16), "PPC_4K_PAGES", k4, When{}, "arch/powerpc/Kconfig"},
        {Arch::powerpc, since(5, 16), "PPC_16K_PAGES", k16, {}, "arch/powerpc/Kconfig"},
        {Arch::powerpc, since(5, 16), "PPC_256K_PAGES", k256, {}, "arch/powerpc/Kconfig"},
        // loongarch and mips have always used the PAGE_SIZE_* names (arch-owned before v6.10,
        // the generic arch/Kconfig choice since).
        {Arch::loongarch, since(5, 19), "PAGE_SIZE_16KB", k16, When{}, "arch/loongarch/Kconfig"},
        {Arch::loongarch, since(5, 19), "PAGE_SIZE_4KB", k4, {}, "arch/loongarch/Kconfig"},
        {Arch::loongarch, since(5, 19), "PAGE_SIZE_64KB", k64, {}, "arch/loongarch/Kconfig"},
        {Arch::loongarch, since(5, 19), "4KB_3LEVEL", k4, {}, "arch/loongarch/Kconfig"},
        {Arch::loongarch, since(5, 19), "4KB_4LEVEL", k4, {}, "arch/loongarch/Kconfig"},
        {Arch::loongarch, since(5, 19), "16KB_2LEVEL", k16, {}, "arch/loongarch/Kconfig"},
        {Arch::loongarch, since(5, 19), "16KB_3LEVEL", k16, {}, "arch/loongarch/Kconfig"},
        {Arch::loongarch, since(5, 19), "64KB_2LEVEL", k64, {}, "arch/loongarch/Kconfig"},
        {Arch::loongarch, since(5, 19), "64KB_3LEVEL", k64, {}, "arch/loongarch/Kconfig"},
        {Arch::mips, all_versions(), "PAGE_SIZE_4KB", k4, When{}, "arch/mips/Kconfig"},
        {Arch::mips, all_versions(), "PAGE_SIZE_8KB", k8, {}, "arch/mips/Kconfig"},
        {Arch::mips, all_versions(), "PAGE_SIZE_16KB", k16, {}, "arch/mips/Kconfig"},
        {Arch::mips, all_versions(), "PAGE_SIZE_32KB", k32, {}, "arch/mips/Kconfig"},
        {Arch::mips, all_versions(), "PAGE_SIZE_64KB", k64, {}, "arch/mips/Kconfig"},
    };
    return rows;
}

std::span<const PageSizeRow> generic_page_sizes() {
    // arch/Kconfig (≥ v6.10, "arch: define CONFIG_PAGE_SIZE_*KB on all architectures"). The arch
    // field is unused: these hold for every arch.
    static const std::vector<PageSizeRow> rows = {
        {Arch::arm64, since(6, 10), "PAGE_SIZE_4KB", k4, {}, "arch/Kconfig"},
        {Arch::arm64, since(6, 10), "PAGE_SIZE_8KB", k8, {}, "arch/Kconfig"},
        {Arch::arm64, since(6, 10), "PAGE_SIZE_16KB", k16, {}, "arch/Kconfig"},
        {Arch::arm64, since(6, 10), "PAGE_SIZE_32KB", k32, {}, "arch/Kconfig"},
        {Arch::arm64, since(6, 10), "PAGE_SIZE_64KB", k64, {}, "arch/Kconfig"},
        {Arch::arm64, since(6, 10), "PAGE_SIZE_256KB", k256, {}, "arch/Kconfig"},
    };
    return rows;
}

std::span<const HugeGeometryRow> huge_geometry() {
    const OrderSpec pmd_psh3{K::page_shift_minus_3, 0, 0,
                             "PMD_SHIFT - PAGE_SHIFT = PAGE_SHIFT - 3"};
    const OrderSpec hpage_psh3{K::page_shift_minus_3, 0, 0,
                               "HPAGE_SHIFT - PAGE_SHIFT = PAGE_SHIFT - 3"};
    const OrderSpec none{};
    static const std::vector<HugeGeometryRow> rows = {
        {Arch::arm64, all_versions(), When{}, hpage_psh3, pmd_psh3,
         "arch/arm64/include/asm/pgtable-hwdef.h, include/linux/huge_mm.h"},
        {Arch::x86_64, all_versions(), When{},
         OrderSpec{K::fixed_shift, 21, 0, "HPAGE_SHIFT - PAGE_SHIFT = 21 - 12"},
         OrderSpec{K::fixed_shift, 21, 0, "PMD_SHIFT - PAGE_SHIFT = 21 - 12"},
         "arch/x86/include/asm/page_types.h, pgtable_64_types.h"},
        {Arch::x86, all_versions(), When{0, {{"X86_PAE"}}},
         OrderSpec{K::fixed_shift, 21, 0, "HPAGE_SHIFT - PAGE_SHIFT = 21 - 12 (PAE)"},
         OrderSpec{K::fixed_shift, 21, 0, "PMD_SHIFT - PAGE_SHIFT = 21 - 12 (PAE)"},
         "arch/x86/include/asm/pgtable-3level_types.h"},
        {Arch::x86, all_versions(), When{},
         OrderSpec{K::fixed_shift, 22, 0, "HPAGE_SHIFT - PAGE_SHIFT = 22 - 12 (folded PMD)"},
         OrderSpec{K::fixed_shift, 22, 0, "PMD_SHIFT - PAGE_SHIFT = 22 - 12 (folded PMD)"},
         "arch/x86/include/asm/pgtable-2level_types.h"},
        {Arch::arm, all_versions(), When{0, {{"ARM_LPAE"}}},
         OrderSpec{K::fixed_shift, 21, 0, "HPAGE_SHIFT - PAGE_SHIFT = 21 - 12 (LPAE)"},
         OrderSpec{K::fixed_shift, 21, 0, "PMD_SHIFT - PAGE_SHIFT = 21 - 12 (LPAE)"},
         "arch/arm/Kconfig (HugeTLB and THP only if ARM_LPAE), asm/pgtable-3level.h"},
        {Arch::arm, all_versions(), When{}, none, none,
         "arch/arm/Kconfig (no HugeTLB or THP without ARM_LPAE)"},
        // arch/riscv gained ARCH_SUPPORTS_HUGETLBFS with "riscv: Introduce huge page support for
        // 32/64bit kernel" (Alexandre Ghiti, v3 July 2019) [likely v5.4]. Before v5.18 neither
        // HugeTLB nor THP changes riscv's numbers: the alignment is PAGE_SIZE << max(MPO, 9).
        {Arch::riscv, until(5, 3), When{}, none, none,
         "arch/riscv/Kconfig (no ARCH_SUPPORTS_HUGETLBFS or THP before v5.4 [likely])"},
        {Arch::riscv, since(5, 4), When{0, {{"64BIT"}}},
         OrderSpec{K::fixed_shift, 21, 0, "HPAGE_SHIFT - PAGE_SHIFT = PMD_SHIFT - 12 = 9"},
         OrderSpec{K::fixed_shift, 21, 0, "PMD_SHIFT - PAGE_SHIFT = 21 - 12"},
         "arch/riscv/include/asm/page.h, pgtable-64.h"},
        {Arch::riscv, since(5, 4), When{},
         OrderSpec{K::fixed_shift, 22, 0, "HPAGE_SHIFT - PAGE_SHIFT = PGDIR_SHIFT - 12 = 10"}, none,
         "arch/riscv/include/asm/pgtable-32.h (THP needs 64BIT)"},
        {Arch::powerpc, all_versions(), When{k64, {{"PPC_BOOK3S_64"}}},
         OrderSpec{K::runtime_shifts, 21, 24,
                   "HPAGE_SHIFT = hpage_shift, set at boot: 24 (16 MiB) with the hash MMU, 21 "
                   "(2 MiB) with radix"},
         OrderSpec{K::runtime_orders, 5, 8,
                   "PMD_SHIFT - PAGE_SHIFT, set at boot: 8 with the hash MMU, 5 with radix"},
         "arch/powerpc/include/asm/page.h, arch/powerpc/mm/book3s64/hugetlbpage.c, "
         "book3s/64/{hash,radix}-64k.h"},
        {Arch::powerpc, all_versions(), When{0, {{"PPC_BOOK3S_64"}}},
         OrderSpec{K::runtime_shifts, 21, 24,
                   "HPAGE_SHIFT = hpage_shift, set at boot: 24 (16 MiB) with the hash MMU, 21 "
                   "(2 MiB) with radix"},
         OrderSpec{K::runtime_orders, 9, 9,
                   "PMD_SHIFT - PAGE_SHIFT, set at boot: 9 (hash or radix)"},
         "arch/powerpc/include/asm/page.h, arch/powerpc/mm/book3s64/hugetlbpage.c, "
         "book3s/64/{hash,radix}-4k.h"},
        {Arch::powerpc, all_versions(), When{0, {{"PPC_8xx"}}},
         OrderSpec{K::fixed_shift, 19, 0, "HPAGE_SHIFT - PAGE_SHIFT = 19 - PAGE_SHIFT (8xx)"}, none,
         "arch/powerpc/include/asm/page.h"},
        {Arch::powerpc, all_versions(), When{0, {{"PPC_E500"}, {"PHYS_64BIT"}}},
         OrderSpec{K::fixed_shift, 22, 0, "HPAGE_SHIFT - PAGE_SHIFT = 22 - PAGE_SHIFT (e500)"},
         none, "arch/powerpc/include/asm/page.h, platforms/Kconfig.cputype"},
        {Arch::powerpc, all_versions(), When{0, {{"PPC_E500"}, {"PPC64"}}},
         OrderSpec{K::fixed_shift, 22, 0, "HPAGE_SHIFT - PAGE_SHIFT = 22 - PAGE_SHIFT (e500)"},
         none, "arch/powerpc/include/asm/page.h, platforms/Kconfig.cputype"},
        {Arch::powerpc, all_versions(), When{}, none, none,
         "arch/powerpc/platforms/Kconfig.cputype (no HugeTLB/THP on this platform)"},
        {Arch::loongarch, since(5, 19), When{}, hpage_psh3, pmd_psh3,
         "arch/loongarch/include/asm/page.h"},
        {Arch::mips, all_versions(), When{0, {{"CPU_SUPPORTS_HUGEPAGES"}}}, hpage_psh3, pmd_psh3,
         "arch/mips/include/asm/page.h"},
        {Arch::mips, all_versions(), When{}, none, none,
         "arch/mips/Kconfig (HugeTLB/THP need CPU_SUPPORTS_HUGEPAGES)"},
    };
    return rows;
}

std::span<const PageblockRow> pageblock_rules() {
    using O = Operand;
    using C = PageblockCase;
    // {mpo} and {pbo} are replaced by the version's spelling of the max order and of the
    // page block option macro.
    static const std::vector<PageblockRow> rows = {
        {until(5, 17),
         C::hugetlb_variable,
         {O::hugetlb_order, {}},
         "HUGETLB_PAGE_ORDER, set at boot by set_pageblock_order()",
         "include/linux/pageblock-flags.h, mm/page_alloc.c",
         ""},
        {until(5, 17),
         C::hugetlb_fixed,
         {O::hugetlb_order, {}},
         "HUGETLB_PAGE_ORDER",
         "include/linux/pageblock-flags.h",
         ""},
        {until(5, 17),
         C::thp_only,
         {O::max_order, {}},
         "{mpo} (THP alone does not count)",
         "include/linux/pageblock-flags.h",
         ""},
        {until(5, 17),
         C::neither,
         {O::max_order, {}},
         "{mpo}",
         "include/linux/pageblock-flags.h",
         ""},

        {between(5, 18, 6, 9),
         C::hugetlb_variable,
         {O::hugetlb_order, O::max_order},
         "min(HUGETLB_PAGE_ORDER, {mpo}), set at boot by set_pageblock_order()",
         "include/linux/pageblock-flags.h, mm/page_alloc.c",
         "\"mm: enforce pageblock_order < MAX_ORDER\", v5.18"},
        {between(5, 18, 6, 9),
         C::hugetlb_fixed,
         {O::hugetlb_order, O::max_order},
         "min(HUGETLB_PAGE_ORDER, {mpo})",
         "include/linux/pageblock-flags.h",
         "\"mm: enforce pageblock_order < MAX_ORDER\", v5.18"},
        {between(5, 18, 6, 9),
         C::thp_only,
         {O::max_order, {}},
         "{mpo} (THP alone does not count)",
         "include/linux/pageblock-flags.h",
         ""},
        {between(5, 18, 6, 9),
         C::neither,
         {O::max_order, {}},
         "{mpo}",
         "include/linux/pageblock-flags.h",
         ""},

        {between(6, 10, 6, 15),
         C::hugetlb_variable,
         {O::hugetlb_order, O::max_order},
         "min(HUGETLB_PAGE_ORDER, {mpo}), set at boot by set_pageblock_order()",
         "include/linux/pageblock-flags.h, mm/mm_init.c",
         ""},
        {between(6, 10, 6, 15),
         C::hugetlb_fixed,
         {O::hugetlb_order, O::max_order},
         "min(HUGETLB_PAGE_ORDER, {mpo})",
         "include/linux/pageblock-flags.h",
         ""},
        {between(6, 10, 6, 15),
         C::thp_only,
         {O::pmd_order, O::max_order},
         "min(HPAGE_PMD_ORDER, {mpo})",
         "include/linux/pageblock-flags.h",
         "THP branch from \"mm: set pageblock_order to HPAGE_PMD_ORDER in case with "
         "!CONFIG_HUGETLB_PAGE but THP enabled\" [likely v6.10]"},
        {between(6, 10, 6, 15),
         C::neither,
         {O::max_order, {}},
         "{mpo}",
         "include/linux/pageblock-flags.h",
         ""},

        {between(6, 16, 6, 16),
         C::hugetlb_variable,
         {O::hugetlb_order, O::page_block_option},
         "min(HUGETLB_PAGE_ORDER, {pbo}), set at boot by set_pageblock_order()",
         "include/linux/pageblock-flags.h, mm/mm_init.c",
         "[likely v6.16]"},
        {between(6, 16, 6, 16),
         C::hugetlb_fixed,
         {O::hugetlb_order, O::page_block_option},
         "min(HUGETLB_PAGE_ORDER, {pbo})",
         "include/linux/pageblock-flags.h",
         "[likely v6.16]"},
        {between(6, 16, 6, 16),
         C::thp_only,
         {O::pmd_order, O::page_block_option},
         "min(HPAGE_PMD_ORDER, {pbo})",
         "include/linux/pageblock-flags.h",
         "[likely v6.16]"},
        {between(6, 16, 6, 16),
         C::neither,
         {O::page_block_option, {}},
         "{pbo}",
         "include/linux/pageblock-flags.h",
         "[likely v6.16]"},

        {since(6, 17),
         C::hugetlb_variable,
         {O::hugetlb_order, O::page_block_option},
         "min(HUGETLB_PAGE_ORDER, {pbo}), set at boot by set_pageblock_order()",
         "include/linux/pageblock-flags.h, mm/mm_init.c",
         "rename [likely v6.17]"},
        {since(6, 17),
         C::hugetlb_fixed,
         {O::hugetlb_order, O::page_block_option},
         "min(HUGETLB_PAGE_ORDER, {pbo})",
         "include/linux/pageblock-flags.h",
         "rename [likely v6.17]"},
        {since(6, 17),
         C::thp_only,
         {O::pmd_order, O::page_block_option},
         "min(HPAGE_PMD_ORDER, {pbo})",
         "include/linux/pageblock-flags.h",
         "rename [likely v6.17]"},
        {since(6, 17),
         C::neither,
         {O::page_block_option, {}},
         "{pbo}",
         "include/linux/pageblock-flags.h",
         "rename [likely v6.17]"},
    };
    return rows;
}

std::span<const CmaAlignmentRow> cma_alignment_rules() {
    static const std::array rows = {
        // rmem_cma_setup(): "align = PAGE_SIZE << max(MAX_ORDER - 1, pageblock_order)", then
        // "incorrect alignment of CMA region" when base or size has a bit of align - 1 set; read
        // in a 4.19-based (Android k4.19) and a 5.4-based (ChromiumOS 5.4) kernel/dma/contiguous.c.
        CmaAlignmentRow{until(5, 17), true, "PAGE_SIZE << max(MAX_ORDER - 1, pageblock_order)",
                        "drivers/of/of_reserved_mem.c, kernel/dma/contiguous.c rmem_cma_setup(), "
                        "mm/cma.c (open-coded)",
                        ""},
        CmaAlignmentRow{between(5, 18, 5, 18), true,
                        "CMA_MIN_ALIGNMENT_BYTES = PAGE_SIZE * max(MAX_ORDER_NR_PAGES, "
                        "pageblock_nr_pages)",
                        "include/linux/cma.h", "\"cma: factor out minimum alignment requirement\""},
        CmaAlignmentRow{since(5, 19), false,
                        "CMA_MIN_ALIGNMENT_BYTES = PAGE_SIZE << pageblock_order",
                        "include/linux/cma.h",
                        "\"mm: cma: use pageblock_order as the single alignment\" [likely v5.19]"},
    };
    return rows;
}

std::span<const char* const> page_block_option_symbols() {
    static const std::array<const char*, 2> names = {"PAGE_BLOCK_MAX_ORDER", "PAGE_BLOCK_ORDER"};
    return names;
}

std::span<const PageBlockOptionRow> page_block_options() {
    static const std::array rows = {
        PageBlockOptionRow{between(6, 16, 6, 16), "PAGE_BLOCK_ORDER", "PAGE_BLOCK_ORDER",
                           "mm/Kconfig, include/linux/mmzone.h", "[likely v6.16]"},
        PageBlockOptionRow{since(6, 17), "PAGE_BLOCK_MAX_ORDER", "PAGE_BLOCK_MAX_ORDER",
                           "mm/Kconfig, include/linux/mmzone.h", "rename [likely v6.17]"},
    };
    return rows;
}

std::span<const CmaAreasRow> cma_areas_rules() {
    static const std::array rows = {
        // "default 19 if NUMA" came with the per-NUMA CMA work (proposed in its 2020 thread,
        // after DMA_PERNUMA_CMA existed) [likely v5.10]; before it the default was 7 everywhere.
        CmaAreasRow{until(5, 9), 1, 7, 7, "MAX_CMA_AREAS = 1 + CONFIG_CMA_AREAS",
                    "include/linux/cma.h, mm/Kconfig",
                    "no NUMA default before \"default 19 if NUMA\" [likely v5.10]"},
        CmaAreasRow{between(5, 10, 6, 8), 1, 19, 7, "MAX_CMA_AREAS = 1 + CONFIG_CMA_AREAS",
                    "include/linux/cma.h, mm/Kconfig", "change [likely v6.9]"},
        CmaAreasRow{since(6, 9), 0, 20, 8, "MAX_CMA_AREAS = CONFIG_CMA_AREAS",
                    "include/linux/cma.h, mm/Kconfig",
                    "\"mm/cma: Make MAX_CMA_AREAS = CONFIG_CMA_AREAS\" [likely v6.9]"},
    };
    return rows;
}

// The kconfig layer's row of this change (kconfig::dialect_rows(), which the Kconfig evaluation
// uses too), as two rows of this layer's kind.
std::span<const KconfigRangeRow> kconfig_range_rules() {
    static const std::array rows = [] {
        const auto& change = kconfig::dialect_row(&kconfig::Dialect::drop_out_of_range);
        // The release before change.major.change.minor (the ranges key on major.minor).
        const VersionRange before =
            change.minor > 0 ? until(change.major, change.minor - 1) : until(change.major - 1, 99);
        return std::array{
            KconfigRangeRow{before, OutOfRange::use_default, change.before, ""},
            KconfigRangeRow{since(change.major, change.minor), OutOfRange::clamp_to_bound,
                            change.since, change.note},
        };
    }();
    return rows;
}

const KconfigRangeRow& kconfig_range_rule(const KernelVersion& version) {
    if (const auto* row = find(kconfig_range_rules(), version)) return *row;
    return kconfig_range_rules().back();
}

std::span<const SectionSizeRow> section_sizes() {
    static const std::vector<SectionSizeRow> rows = {
        {Arch::arm64, until(5, 11), When{}, 30, "arch/arm64/include/asm/sparsemem.h"},
        {Arch::arm64, since(5, 12), When{k64, {}}, 29, "arch/arm64/include/asm/sparsemem.h"},
        {Arch::arm64, since(5, 12), When{}, 27, "arch/arm64/include/asm/sparsemem.h"},
        {Arch::x86_64, all_versions(), When{}, 27, "arch/x86/include/asm/sparsemem.h"},
        {Arch::x86, all_versions(), When{0, {{"X86_PAE"}}}, 29, "arch/x86/include/asm/sparsemem.h"},
        {Arch::x86, all_versions(), When{}, 26, "arch/x86/include/asm/sparsemem.h"},
        // Platforms that define their own (mach/memory.h) before asm/sparsemem.h's fallback.
        {Arch::arm, all_versions(), When{0, {{"ARCH_SA1100"}}}, 27,
         "arch/arm/mach-sa1100/include/mach/memory.h"},
        {Arch::arm, all_versions(), When{0, {{"ARCH_RPC"}}}, 26,
         "arch/arm/mach-rpc/include/mach/memory.h"},
        {Arch::arm, all_versions(), When{}, 28, "arch/arm/include/asm/sparsemem.h"},
        {Arch::riscv, all_versions(), When{}, 27, "arch/riscv/include/asm/sparsemem.h"},
        {Arch::powerpc, all_versions(), When{}, 24, "arch/powerpc/include/asm/sparsemem.h"},
        {Arch::loongarch, since(5, 19), When{}, 29, "arch/loongarch/include/asm/sparsemem.h"},
        {Arch::mips, all_versions(), When{k64, {{"MIPS_HUGE_TLB_SUPPORT"}}}, 29,
         "arch/mips/include/asm/sparsemem.h"},
        {Arch::mips, all_versions(), When{}, 28, "arch/mips/include/asm/sparsemem.h"},
    };
    return rows;
}

} // namespace cmalign::kernel::rules
