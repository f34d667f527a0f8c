// The default CMA area per kernel version and arch (kernel/default_cma.hpp).
#include "cmalign/internal/kernel/default_cma.hpp"

#include <algorithm>
#include <array>
#include <bit>

#include <fmt/format.h>

#include "cmalign/internal/kernel/reserved_mem.hpp"
#include "cmalign/internal/kernel/rules.hpp"

namespace cmalign::kernel {
namespace {

using rules::all_versions;
using rules::between;
using rules::since;
using rules::until;
using BottomUp = DefaultCmaRules::BottomUp;

constexpr std::array<DefaultCmaRules, 4> default_cma_table{{
    {until(5, 10), false, BottomUp::never, false, false,
     "mm/cma.c cma_declare_contiguous_nid(), kernel/dma/contiguous.c dma_contiguous_reserve() "
     "(read in 5.10.223: no bottom-up try)"},
    // "mm: cma: allocate cma areas bottom-up" (Roman Gushchin, v5.11).
    {between(5, 11, 6, 1), false, BottomUp::when_memblock_end_allows, false, false,
     "mm/cma.c cma_declare_contiguous_nid(), kernel/dma/contiguous.c dma_contiguous_reserve() "
     "(read in 6.1.192)"},
    // The nid in both lines: between 6.1.192 and 6.12.117 [likely v6.2].
    {between(6, 2, 6, 14), true, BottomUp::when_memblock_end_allows, false, false,
     "mm/cma.c cma_declare_contiguous_nid(), kernel/dma/contiguous.c dma_contiguous_reserve() "
     "(read in 6.12.117; \" on node %d\" [likely v6.2])"},
    // The multi-range rework split out __cma_declare_contiguous_nid() and cma_alloc_mem(), and
    // dma_contiguous_reserve() took cma='s limit as given: both between 6.12.117 and 7.2.13
    // [likely v6.15].
    {since(6, 15), false, BottomUp::when_limit_allows, true, true,
     "mm/cma.c cma_declare_contiguous_nid(), __cma_declare_contiguous_nid(), cma_alloc_mem(); "
     "kernel/dma/contiguous.c dma_contiguous_reserve() (read in 7.2.13; [likely v6.15])"},
}};

const std::vector<DefaultCmaLimitRow>& limit_rows() {
    static const std::vector<DefaultCmaLimitRow> out = {
        // arch/arm64/mm/init.c bootmem_init() after zone_sizes_init(). Before the dma-ranges
        // sizing of ZONE_DMA (5.10.y) the limit was the 4 GiB window of RAM [likely].
        {Arch::arm64, until(5, 9), DefaultCmaLimitRule::arm64_max_zone_phys,
         "arch/arm64/mm/init.c max_zone_phys() [likely: as read in 5.10.223]"},
        {Arch::arm64, between(5, 10, 6, 11), DefaultCmaLimitRule::arm64_max_zone_phys,
         "arch/arm64/mm/init.c zone_sizes_init(), max_zone_phys(), bootmem_init() (read in "
         "5.10.223 and 6.1.192)"},
        {Arch::arm64, since(6, 12), DefaultCmaLimitRule::arm64_zone_dma_limit,
         "arch/arm64/mm/init.c zone_sizes_init(), max_zone_phys(), bootmem_init() (read in "
         "6.12.117 and 7.2.13)"},
        {Arch::arm, all_versions(), DefaultCmaLimitRule::arm_dma_limit,
         "arch/arm/mm/init.c arm_memblock_init(), setup_dma_zone(); arch/arm/mm/mm.h (read in "
         "5.10.223, 6.1.192, 6.12.117)"},
        {Arch::riscv, all_versions(), DefaultCmaLimitRule::riscv_dma32,
         "arch/riscv/mm/init.c setup_bootmem(), misc_mem_init() (read in 5.10.223, 6.1.192, "
         "6.12.117)"},
        {Arch::x86_64, all_versions(), DefaultCmaLimitRule::x86_max_pfn_mapped,
         "arch/x86/kernel/setup.c setup_arch()"},
        {Arch::x86, all_versions(), DefaultCmaLimitRule::x86_max_pfn_mapped,
         "arch/x86/kernel/setup.c setup_arch()"},
        {Arch::mips, all_versions(), DefaultCmaLimitRule::max_low_pfn,
         "arch/mips/kernel/setup.c arch_mem_init()"},
        {Arch::loongarch, all_versions(), DefaultCmaLimitRule::max_low_pfn,
         "arch/loongarch/kernel/setup.c arch_mem_init()"},
        // No dma_contiguous_reserve() under arch/powerpc (5.10.223, 6.1.192, 6.12.117).
        {Arch::powerpc, all_versions(), DefaultCmaLimitRule::no_call,
         "no dma_contiguous_reserve() call under arch/powerpc"},
    };
    return out;
}

constexpr std::uint64_t dma32_end = std::uint64_t{1} << 32;
constexpr std::uint64_t u32_max = dma32_end - 1;

std::string hex(std::uint64_t v) {
    return fmt::format("{:#x}", v);
}

// arch/arm64/mm/init.c max_zone_phys(zone_bits), 5.10.223 and 6.1.192: a zone below 2^bits,
// widened to the 4 GiB line when RAM starts above it, everything when RAM starts above 4 GiB.
std::uint64_t max_zone_phys_bits(unsigned bits, const DefaultCmaBoard& b) {
    std::uint64_t zone_mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    if (b.ram_start > u32_max)
        zone_mask = ~std::uint64_t{0};
    else if (b.ram_start > zone_mask)
        zone_mask = u32_max;
    return std::min(zone_mask, b.ram_end - 1) + 1;
}

} // namespace

const DefaultCmaRules& default_cma_rules(const KernelVersion& version) {
    if (const auto* row = rules::find(std::span<const DefaultCmaRules>(default_cma_table), version))
        return *row;
    return default_cma_table.back();
}

std::span<const DefaultCmaRules> default_cma_rows() {
    return default_cma_table;
}

std::span<const DefaultCmaLimitRow> default_cma_limit_rows() {
    return limit_rows();
}

const DefaultCmaLimitRow& default_cma_limit_row(Arch arch, const KernelVersion& version) {
    if (const auto* row = rules::find(default_cma_limit_rows(), arch, version)) return *row;
    static const DefaultCmaLimitRow none{Arch::arm64, all_versions(), DefaultCmaLimitRule::none,
                                         "kernel/dma/contiguous.c dma_contiguous_reserve(0)"};
    return none;
}

DefaultCmaLimit default_cma_limit(const Model& m, const DefaultCmaBoard& b) {
    const auto& row = default_cma_limit_row(m.arch, m.version);
    DefaultCmaLimit out;
    out.source = fmt::format("{} ({})", row.source, row.versions.str());
    const bool zone_dma = m.default_cma && m.default_cma->zone_dma;
    const bool zone_dma32 = m.default_cma && m.default_cma->zone_dma32;
    const std::uint64_t dt = b.dma_max_cpu_address.value_or(~std::uint64_t{0});
    const std::string dt_words = b.dma_max_cpu_address
                                     ? fmt::format("the tree's dma-ranges reach {}", hex(dt))
                                     : std::string("no dma-ranges in the tree");
    switch (row.rule) {
    case DefaultCmaLimitRule::no_call:
        out.no_area = true;
        out.words = fmt::format("{} reserves no default CMA area", to_string(m.arch));
        return out;
    case DefaultCmaLimitRule::none:
        out.words = "no limit: the end of RAM";
        return out;
    case DefaultCmaLimitRule::arm64_max_zone_phys:
        if (zone_dma) {
            // zone_dma_bits = min3(32, fls64(DT limit), fls64(ACPI limit)); no IORT here.
            const unsigned dt_bits = b.dma_max_cpu_address ? std::bit_width(dt) : 64;
            const unsigned bits = std::min(32u, dt_bits);
            out.limit = max_zone_phys_bits(bits, b);
            out.words = fmt::format("arm64_dma_phys_limit = max_zone_phys(zone_dma_bits {}) = {} "
                                    "(ZONE_DMA; {})",
                                    bits, hex(out.limit), dt_words);
        } else if (zone_dma32) {
            out.limit = max_zone_phys_bits(32, b);
            out.words = fmt::format("arm64_dma_phys_limit = max_zone_phys(32) = {} (ZONE_DMA32)",
                                    hex(out.limit));
        } else {
            out.words = "arm64_dma_phys_limit = PHYS_MASK + 1 (no ZONE_DMA/DMA32): the end of RAM";
        }
        return out;
    case DefaultCmaLimitRule::arm64_zone_dma_limit:
        if (zone_dma) {
            std::uint64_t limit = dt;
            if (b.ram_start < u32_max) limit = std::min(limit, u32_max);
            out.limit = std::min(limit, b.ram_end - 1) + 1;
            out.words = fmt::format("arm64_dma_phys_limit = max_zone_phys(zone_dma_limit {}) = {} "
                                    "(ZONE_DMA; {}{})",
                                    hex(limit), hex(out.limit), dt_words,
                                    b.ram_start < u32_max ? ", RAM starts below 4 GiB" : "");
        } else if (zone_dma32) {
            out.limit = std::min(u32_max, b.ram_end - 1) + 1;
            out.words = fmt::format("arm64_dma_phys_limit = max_zone_phys(DMA_BIT_MASK(32)) = {} "
                                    "(ZONE_DMA32)",
                                    hex(out.limit));
        } else {
            out.words = "arm64_dma_phys_limit = PHYS_MASK + 1 (no ZONE_DMA/DMA32): the end of RAM";
        }
        return out;
    case DefaultCmaLimitRule::arm_dma_limit:
        // With ZONE_DMA and no machine dma_zone_size (every DT machine): 0xffffffff; without
        // it mm.h's ~0 of phys_addr_t. Either way 4 GiB for a 32-bit phys_addr_t.
        out.limit = zone_dma || !m.phys_addr_64bit ? dma32_end : 0;
        out.words = out.limit ? "arm_dma_limit = 0xffffffff: below 4 GiB"
                              : "arm_dma_limit = ~0 (LPAE without ZONE_DMA): the end of RAM";
        return out;
    case DefaultCmaLimitRule::riscv_dma32:
        out.limit = m.phys_addr_64bit ? std::min(dma32_end, b.ram_end) : b.ram_end;
        out.words =
            fmt::format("dma32_phys_limit = min(4 GiB, end of lowmem) = {}", hex(out.limit));
        return out;
    case DefaultCmaLimitRule::x86_max_pfn_mapped:
        out.limit = b.ram_end;
        out.words = "max_pfn_mapped << PAGE_SHIFT: the end of the direct map (the end of RAM)";
        return out;
    case DefaultCmaLimitRule::max_low_pfn:
        out.limit = b.ram_end;
        out.words = "PFN_PHYS(max_low_pfn): the end of lowmem (taken as the end of RAM)";
        return out;
    }
    return out;
}

std::string default_cma_limit_rule(const Model& m) {
    const auto& row = default_cma_limit_row(m.arch, m.version);
    const bool zone_dma = m.default_cma && m.default_cma->zone_dma;
    const bool zone_dma32 = m.default_cma && m.default_cma->zone_dma32;
    switch (row.rule) {
    case DefaultCmaLimitRule::no_call:
        return fmt::format("{} reserves no default CMA area", to_string(m.arch));
    case DefaultCmaLimitRule::none:
        return "the end of RAM";
    case DefaultCmaLimitRule::arm64_max_zone_phys:
        if (zone_dma)
            return "arm64_dma_phys_limit: the end of ZONE_DMA, 2^min(32, bits of the tree's "
                   "dma-ranges) (the 4 GiB line when RAM starts above that, all RAM when above "
                   "4 GiB), at most the end of RAM";
        if (zone_dma32) return "arm64_dma_phys_limit: the end of ZONE_DMA32 (4 GiB or end of RAM)";
        return "the end of RAM (no ZONE_DMA/DMA32)";
    case DefaultCmaLimitRule::arm64_zone_dma_limit:
        if (zone_dma)
            return "arm64_dma_phys_limit: the end of ZONE_DMA, min(the tree's dma-ranges end, "
                   "4 GiB when RAM starts below it, end of RAM)";
        if (zone_dma32) return "arm64_dma_phys_limit: the end of ZONE_DMA32 (4 GiB or end of RAM)";
        return "the end of RAM (no ZONE_DMA/DMA32)";
    case DefaultCmaLimitRule::arm_dma_limit:
        return zone_dma || !m.phys_addr_64bit ? "arm_dma_limit: below 4 GiB"
                                              : "arm_dma_limit ~0: the end of RAM";
    case DefaultCmaLimitRule::riscv_dma32:
        return "dma32_phys_limit: min(4 GiB, end of lowmem)";
    case DefaultCmaLimitRule::x86_max_pfn_mapped:
        return "max_pfn_mapped: the end of the direct map";
    case DefaultCmaLimitRule::max_low_pfn:
        return "max_low_pfn: the end of lowmem";
    }
    return "the end of RAM";
}

std::vector<EarlyAllocation> allocations_before_default_cma(const Model& m, std::uint64_t ram,
                                                            std::uint64_t sections) {
    std::vector<EarlyAllocation> out;
    if (m.arch != Arch::arm64 || !m.page_size || !m.section_size_bits) return out;
    const std::uint64_t page = m.page_size;
    const std::uint64_t entries = page / 8; // a table page's descriptors
    const DefaultCmaConfig d = m.default_cma.value_or(DefaultCmaConfig{});
    const auto pages = [&](std::uint64_t bytes) { return (bytes + page - 1) / page * page; };
    // KFENCE's pool: arch/arm64/mm/mmu.c map_mem() takes it from memblock before the linear map
    // (arm64_kfence_alloc_pool(), 7.2.13 arm64_kfence_map_pool()) when kfence_early_init, that is
    // CONFIG_KFENCE_SAMPLE_INTERVAL != 0 (read in 6.1.192, 6.12.117, 7.2.13; older kernels
    // allocate it in mm_init(), after setup_arch()). KFENCE_POOL_SIZE is
    // (CONFIG_KFENCE_NUM_OBJECTS + 1) * 2 * PAGE_SIZE (include/linux/kfence.h).
    const bool kfence_early_pool =
        m.version >= KernelVersion{6, 1, 0} && d.kfence && d.kfence_sample_ms != 0;
    if (kfence_early_pool) {
        const std::uint64_t pool = static_cast<std::uint64_t>(d.kfence_objects + 1) * 2 * page;
        out.push_back({pool, page, pool, "KFENCE's pool (arch/arm64/mm/mmu.c map_mem())"});
    }
    // The linear map is page-granular when arch/arm64/mm/mmu.c map_mem() passes
    // NO_BLOCK_MAPPINGS: rodata_full || debug_pagealloc_enabled() in 5.10.223;
    // can_set_direct_map() adds KFENCE without its early pool (arch/arm64/mm/pageattr.c,
    // asm/kfence.h arm64_kfence_can_set_direct_map(): 6.1.192, 6.12.117; 5.12 to 6.0 any
    // CONFIG_KFENCE [likely]); 7.2.13's force_pte_mapping() the same, with rodata_full always true
    // (CONFIG_RODATA_FULL_DEFAULT_ENABLED is gone, pageattr.c) unless the CPU is on
    // cpu_supports_bbml2_noabort()'s list (Cortex-X4, Neoverse V3, AmpereOne...; not QEMU's
    // `max`): taken as not. Kconfig's default for the symbol is y.
    const bool kfence_forces = d.kfence && !kfence_early_pool;
    const bool page_granular = d.rodata_full.value_or(true) || d.debug_pagealloc || kfence_forces;
    // Page-table pages come from memblock one at a time (early_pgtable_alloc()): one PTE table
    // per PMD's span of RAM when page-granular, one PMD table per PUD's span.
    const std::uint64_t pmd_span = page * entries;
    std::uint64_t tables = page_granular ? pages(ram / pmd_span * page) : 0;
    tables += pages((ram + pmd_span * entries - 1) / (pmd_span * entries) * page);
    // What else comes first: the kernel image's own tables, unflatten_device_tree()'s copy of
    // the tree, NODE_DATA and NUMA's distance table (drivers/base/arch_numa.c). Measured, not
    // derived: the booted Debian 5.10, 6.1 and 7.2 arm64 4K kernels with 1 GiB of RAM print
    // NODE_DATA 37 to 67 KiB below their linear map's tables (docs/boot-check.md).
    tables += std::uint64_t{64} << 10;
    out.push_back({tables, page, tables,
                   page_granular ? "the linear map's page tables (page-granular), NODE_DATA and "
                                   "the unflattened tree"
                                 : "the linear map's page tables (block-mapped), NODE_DATA and "
                                   "the unflattened tree"});
    // bootmem_init() calls sparse_init() before dma_contiguous_reserve() in 5.10.223, 6.1.192 and
    // 6.12.117 (arch/arm64/mm/init.c); 7.2.13 calls it from free_area_init() (mm/mm_init.c), in
    // mm_core_init_early() after setup_arch(): the memmap comes after the area (the cut between
    // 6.12.117 and 7.2.13 taken at v6.16 [likely]). Booted on 7.2 arm64 4K: the area lies 16 MiB
    // per GiB of RAM higher than with the memmap first.
    if (m.version >= KernelVersion{6, 16, 0}) return out;
    // mm/sparse.c memblocks_present() first: with SPARSEMEM_EXTREME the array of section roots,
    // NR_SECTION_ROOTS pointers (2^(MAX_PHYSMEM_BITS - SECTION_SIZE_BITS) sections,
    // PAGE_SIZE / sizeof(struct mem_section) per root; the struct is 32 bytes with
    // CONFIG_PAGE_EXTENSION, else 16; include/linux/mmzone.h), aligned to the cache line, and one
    // page of sections (sparse_index_init()): 2 MiB on 6.12's 52-bit 4K kernel, 128 KiB on 6.1's
    // 48-bit one (5.10.223, 6.1.192, 6.12.117; MAX_PHYSMEM_BITS is CONFIG_ARM64_PA_BITS).
    if (d.sparsemem_extreme && d.phys_addr_bits > *m.section_size_bits) {
        const std::uint64_t per_root = page / (d.page_extension ? 32 : 16);
        const std::uint64_t count = std::uint64_t{1} << (d.phys_addr_bits - *m.section_size_bits);
        const std::uint64_t roots = (count + per_root - 1) / per_root * 8 + page;
        out.push_back({roots, 64, roots, "the memory sections' roots (mm/sparse.c)"});
    }
    // struct page is 64 bytes; PMD_SIZE is PAGE_SIZE * PAGE_SIZE / 8.
    const std::uint64_t pages_per_section = std::uint64_t{1}
                                            << (*m.section_size_bits - m.page_shift);
    const std::uint64_t memmap = pages_per_section * 64;
    const std::uint64_t pmd = page * entries;
    const std::uint64_t map_size = (memmap + pmd - 1) / pmd * pmd;
    const bool pmd_mapped = page == 4096;
    out.push_back({map_size * sections, map_size,
                   pmd_mapped ? map_size * sections : (memmap * sections + page - 1) / page * page,
                   "the memmap (mm/sparse.c sparse_buffer_init())"});
    return out;
}

std::optional<std::uint64_t> highmem_start(const Model& m, const DefaultCmaBoard& b) {
    if (m.arch != Arch::arm || !m.default_cma || !m.default_cma->highmem) return std::nullopt;
    constexpr std::uint64_t lowmem = std::uint64_t{768} << 20;
    if (b.ram_end - b.ram_start <= lowmem) return std::nullopt;
    return b.ram_start + lowmem;
}

bool default_cma_before_static_setup(const Model& m) {
    return (m.arch == Arch::arm || m.arch == Arch::riscv) &&
           reserved_mem_rules(m.version).restructured;
}

std::string default_cma_reserved_line(const Model& m, std::uint64_t size, std::uint64_t base) {
    const auto& r = default_cma_rules(m.version);
    const int width = m.phys_addr_64bit ? 16 : 8;
    std::string line = fmt::format("cma: Reserved {} MiB at 0x{:0{}x}", size >> 20, base, width);
    // dma_contiguous_reserve_area() goes through cma_declare_contiguous(): NUMA_NO_NODE.
    if (r.prints_node) line += " on node -1";
    return line;
}

std::string default_cma_failed_line(const Model& m, std::uint64_t size) {
    const auto& r = default_cma_rules(m.version);
    std::string line = fmt::format("cma: Failed to reserve {} MiB", size >> 20);
    // dma_contiguous_reserve_area() goes through cma_declare_contiguous(): NUMA_NO_NODE.
    if (r.prints_node) line += " on node -1";
    return line;
}

std::optional<std::uint64_t> default_cma_config_size(const Model& m,
                                                     std::optional<std::uint64_t> total_ram) {
    if (!m.default_cma) return std::nullopt;
    const auto& d = *m.default_cma;
    const std::uint64_t bytes = d.mbytes << 20;
    std::optional<std::uint64_t> percent;
    if (total_ram) {
        // cma_early_percent_memory(): (total_pages * percentage / 100) << PAGE_SHIFT.
        const std::uint64_t page = m.page_size ? m.page_size : 4096;
        const std::uint64_t pages = *total_ram / page;
        percent = pages * static_cast<std::uint64_t>(d.percentage) / 100 * page;
    }
    using Selection = DefaultCmaConfig::Selection;
    switch (d.selection) {
    case Selection::mbytes:
        return bytes;
    case Selection::percentage:
        return percent;
    case Selection::min:
        if (!percent) return std::nullopt;
        return std::min(bytes, *percent);
    case Selection::max:
        if (!percent) return std::nullopt;
        return std::max(bytes, *percent);
    }
    return std::nullopt;
}

std::string default_cma_config_words(const Model& m) {
    if (!m.default_cma) return "no CONFIG_DMA_CMA";
    const auto& d = *m.default_cma;
    const auto mb = fmt::format("CONFIG_CMA_SIZE_MBYTES={}", d.mbytes);
    const auto pc = fmt::format("{} % of RAM (CONFIG_CMA_SIZE_PERCENTAGE)", d.percentage);
    using Selection = DefaultCmaConfig::Selection;
    switch (d.selection) {
    case Selection::mbytes:
        return mb;
    case Selection::percentage:
        return pc;
    case Selection::min:
        return fmt::format("min({}, {}) (CONFIG_CMA_SIZE_SEL_MIN)", mb, pc);
    case Selection::max:
        return fmt::format("max({}, {}) (CONFIG_CMA_SIZE_SEL_MAX)", mb, pc);
    }
    return mb;
}

} // namespace cmalign::kernel
