// What the kernel does at boot with the default CMA area (the one of `cma=` or
// CONFIG_CMA_SIZE_*): how cma_declare_contiguous_nid() (mm/cma.c) places it in each version, and
// the limit each arch passes to dma_contiguous_reserve() (kernel/dma/contiguous.c). The rows live
// in src/kernel/default_cma.cpp and name the kernel files they were read from.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cmalign/core/version.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::kernel {

// cma_declare_contiguous_nid() of one version range.
struct DefaultCmaRules {
    VersionRange versions;
    // "Reserved %ld MiB at %pa on node %d" / "Failed to reserve %ld MiB on node %d" (the nid is
    // -1 without NUMA); the other versions print the same without " on node %d".
    bool prints_node;
    // "mm: cma: allocate cma areas bottom-up" (v5.11): with a 64-bit phys_addr_t a bottom-up
    // allocation from 4 GiB is tried first when `memblock_end >= SZ_4G + size` (until the
    // cma_alloc_mem() split) or `limit >= SZ_4G + size` (after it).
    enum class BottomUp { never, when_memblock_end_allows, when_limit_allows };
    BottomUp bottom_up;
    // The __cma_declare_contiguous_nid() split: the wrapper prints the size it was asked for,
    // not the aligned one, and "Failed to reserve" also after "Not enough slots".
    bool wrapper_prints_asked_size;
    // kernel/dma/contiguous.c dma_contiguous_reserve(): `limit_cmdline ?: limit` ("Hornor the
    // user setup dma address limit") instead of min_not_zero(limit_cmdline, limit).
    bool cmdline_limit_replaces;
    const char* source;
};
const DefaultCmaRules& default_cma_rules(const KernelVersion& version);
std::span<const DefaultCmaRules> default_cma_rows();

// What the arch passes to dma_contiguous_reserve(limit).
enum class DefaultCmaLimitRule {
    none,                 // 0: the end of memblock (csky; arches without a call: no area)
    no_call,              // the arch never calls dma_contiguous_reserve(): no default area
    arm64_max_zone_phys,  // arm64_dma_phys_limit: max_zone_phys(zone_dma_bits), ZONE_DMA32 else
    arm64_zone_dma_limit, // arm64_dma_phys_limit: max_zone_phys(zone_dma_limit) (v6.12 form)
    arm_dma_limit,        // arm_dma_limit: 0xffffffff with ZONE_DMA (no machine zone size), else 0
    riscv_dma32,          // dma32_phys_limit = min(4 GiB, end of lowmem) (64-bit)
    x86_max_pfn_mapped,   // max_pfn_mapped << PAGE_SHIFT: the end of the direct map
    max_low_pfn,          // PFN_PHYS(max_low_pfn): the end of lowmem (mips, loongarch)
};
struct DefaultCmaLimitRow {
    Arch arch;
    VersionRange versions;
    DefaultCmaLimitRule rule;
    const char* source;
};
std::span<const DefaultCmaLimitRow> default_cma_limit_rows();
const DefaultCmaLimitRow& default_cma_limit_row(Arch arch, const KernelVersion& version);

// The board facts the limit needs: the span of RAM (memblock_start_of_DRAM() and
// memblock_end_of_DRAM()) and the lowest CPU address end of any dma-ranges in the tree
// (of_dma_get_max_cpu_address(NULL); nullopt: none, PHYS_ADDR_MAX to the kernel).
struct DefaultCmaBoard {
    std::uint64_t ram_start = 0;
    std::uint64_t ram_end = 0; // exclusive
    std::optional<std::uint64_t> dma_max_cpu_address;
};

struct DefaultCmaLimit {
    std::uint64_t limit = 0; // what dma_contiguous_reserve() gets (0: none)
    bool no_area = false;    // the arch never reserves a default area
    std::string words;       // how it came about, with the numbers
    std::string source;      // kernel file and versions
};
DefaultCmaLimit default_cma_limit(const Model& model, const DefaultCmaBoard& board);
// The same rule without a board, in words ("min(4 GiB, end of RAM)").
std::string default_cma_limit_rule(const Model& model);

// Where highmem starts on a 32-bit kernel with CONFIG_HIGHMEM (__pa(high_memory - 1) + 1):
// arm with VMSPLIT_3G and the default 240 MiB vmalloc area keeps 768 MiB of lowmem
// (arch/arm/mm/mmu.c adjust_lowmem_bounds()); nullopt when all RAM is lowmem.
std::optional<std::uint64_t> highmem_start(const Model& model, const DefaultCmaBoard& board);

// What arm64 allocates top-down from memblock between the reserved-memory scan and
// dma_contiguous_reserve() (arch/arm64/mm/init.c bootmem_init(): paging_init() before, then
// sparse_init()), in that order: the linear map's page tables and other early allocations, then
// mm/sparse.c's memmap buffer (sparse_buffer_init(): one block of section_map_size() per present
// section, aligned to it; with 4K pages vmemmap maps it all in PMD blocks, with 16K and 64K the
// struct pages are taken from its bottom and the rest is freed again). Empty for other arches.
struct EarlyAllocation {
    std::uint64_t size = 0;
    std::uint64_t align = 0;
    std::uint64_t kept = 0; // the part that stays reserved, at the bottom of the block
    std::string what;
};
// `mapped_bytes`: the RAM the linear map covers (all but no-map regions).
std::vector<EarlyAllocation> allocations_before_default_cma(const Model& model,
                                                            std::uint64_t mapped_bytes,
                                                            std::uint64_t present_sections);

// Whether dma_contiguous_reserve() runs before the static nodes are set up: from the v6.13
// restructure (6.12.y) drivers/of/fdt.c unflatten_device_tree() sets them up
// (fdt_scan_reserved_mem_reg_nodes(), 7.2: fdt_scan_reserved_mem_late()), which 32-bit arm
// (arch/arm/kernel/setup.c: arm_memblock_init() first) and riscv (paging_init() ->
// setup_bootmem() first) call after the default area; arm64 reserves it in bootmem_init(),
// after. Then the static pools are reserved but hold no CMA slot yet, a rejected one is not yet
// freed, and a created default area takes a slot before them. Before the restructure every node
// was set up in early_init_fdt_scan_reserved_mem(), before the area on every arch.
bool default_cma_before_static_setup(const Model& model);

// The lines cma_declare_contiguous_nid() prints ("cma: " included).
std::string default_cma_reserved_line(const Model& model, std::uint64_t size, std::uint64_t base);
std::string default_cma_failed_line(const Model& model, std::uint64_t size);

// The default area's size from the configuration (dma_contiguous_reserve() without cma=):
// nullopt when it depends on the RAM (a percentage) and `total_ram` is not known.
std::optional<std::uint64_t> default_cma_config_size(const Model& model,
                                                     std::optional<std::uint64_t> total_ram);
// "CONFIG_CMA_SIZE_MBYTES=64" / "10 % of RAM (CONFIG_CMA_SIZE_PERCENTAGE)" / "min(…, …)".
std::string default_cma_config_words(const Model& model);

} // namespace cmalign::kernel
