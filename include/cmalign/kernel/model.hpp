// What a given kernel computes for page size, max order, pageblock_order and CMA alignment.
//
// derive() walks versioned rule tables (rules.hpp) and records each step, so every number can
// say which rule of which kernel version range produced it and which config lines fed it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/version.hpp"
#include "cmalign/kconfig/config.hpp"

namespace cmalign::kernel {

enum class Arch { arm64, arm, x86_64, x86, riscv, powerpc, loongarch, mips };

const char* to_string(Arch a);
std::optional<Arch> parse_arch(std::string_view name); // also accepts aarch64, amd64, i386, ...
const std::vector<Arch>& all_arches();

struct Options {
    std::optional<Arch> arch;                  // else from the config header / symbols
    std::optional<KernelVersion> version;      // else from the config header, else newest
    std::optional<KernelVersion> tree_version; // from --kernel-tree's Makefile, if given
};

// A config symbol that a derivation step read (or assumed).
struct StepInput {
    std::string symbol; // with CONFIG_ prefix
    std::string value;
    Location where; // file:line, or file empty when assumed (a Kconfig default)
    // When Kconfig evaluation decided the value: how ("selected by DMA_CMA", "default");
    // `where` is then the Kconfig file:line.
    std::string decided_by = {};
};

struct Step {
    std::string quantity;           // "page_size", "max_page_order", "pageblock_order", ...
    std::optional<long long> value; // nullopt when decided at boot
    std::string rule;               // "min(HUGETLB_PAGE_ORDER, MAX_PAGE_ORDER)"
    std::string source;             // "include/linux/pageblock-flags.h (v6.10–v6.15)"
    std::vector<StepInput> inputs;
};

// The default CMA area as the configuration sizes it (kernel/dma/contiguous.c
// dma_contiguous_reserve(), kernel/dma/Kconfig), and the zone facts that bound where it goes.
struct DefaultCmaConfig {
    enum class Selection { mbytes, percentage, min, max }; // CONFIG_CMA_SIZE_SEL_*
    Selection selection = Selection::mbytes;
    std::uint64_t mbytes = 0; // CONFIG_CMA_SIZE_MBYTES (0 when SEL_PERCENTAGE hides it)
    int percentage = 0;       // CONFIG_CMA_SIZE_PERCENTAGE (0 when SEL_MBYTES hides it)
    bool zone_dma = false;    // CONFIG_ZONE_DMA
    bool zone_dma32 = false;  // CONFIG_ZONE_DMA32
    bool highmem = false;     // CONFIG_HIGHMEM
    // What arm64 allocates from memblock before the area (allocations_before_default_cma()).
    // CONFIG_RODATA_FULL_DEFAULT_ENABLED: nullopt when the configuration lacks the symbol
    // (Kconfig default y; 7.2 dropped it, rodata_full is then always true).
    std::optional<bool> rodata_full;
    bool debug_pagealloc = false;     // CONFIG_DEBUG_PAGEALLOC_ENABLE_DEFAULT
    bool kfence = false;              // CONFIG_KFENCE
    long long kfence_sample_ms = 100; // CONFIG_KFENCE_SAMPLE_INTERVAL (0: no pool at boot)
    long long kfence_objects = 255;   // CONFIG_KFENCE_NUM_OBJECTS
    int phys_addr_bits = 48;          // CONFIG_ARM64_PA_BITS (MAX_PHYSMEM_BITS)
    bool sparsemem_extreme = true;    // CONFIG_SPARSEMEM_EXTREME
    bool page_extension = false;      // CONFIG_PAGE_EXTENSION: a 32-byte struct mem_section
};

// Where the kernel's image lies in RAM and how much of it memblock reserves, as far as the
// configuration says (derive_image.cpp); each nullopt where it does not say.
struct KernelImageFacts {
    std::optional<bool> mmu;                    // CONFIG_MMU
    std::optional<bool> xip;                    // CONFIG_XIP_KERNEL: text runs from flash
    std::optional<std::uint64_t> xip_phys_addr; // CONFIG_XIP_PHYS_ADDR (in flash)
    // The start of RAM fixed at build time (32-bit arm without ARM_PATCH_PHYS_VIRT:
    // CONFIG_PHYS_OFFSET, which is DRAM_BASE without an MMU; riscv: CONFIG_PHYS_RAM_BASE).
    std::optional<std::uint64_t> phys_offset;
    std::string phys_offset_symbol; // "CONFIG_PHYS_OFFSET"
    // 32-bit arm: TEXT_OFFSET (arch/arm/Makefile's textofs-y); the symbol that chose it, or
    // empty for the default 0x8000.
    std::uint64_t text_offset = 0x8000;
    std::string text_offset_symbol;
    // riscv without an MMU: the image runs where it is linked, CONFIG_PAGE_OFFSET.
    std::optional<std::uint64_t> link_address;
    std::optional<bool> relocatable; // CONFIG_RELOCATABLE
    bool lpae = false;               // CONFIG_ARM_LPAE: a 20 KiB swapper_pg_dir, not 16 KiB
    // The configuration lines these facts come from, "CONFIG_XIP_KERNEL=y (file:line)".
    std::vector<std::string> said;
};

struct Model {
    KernelVersion version;
    Arch arch = Arch::arm64;

    std::uint64_t page_size = 0;
    int page_shift = 0;
    int max_page_order = 0;             // inclusive, whatever the version calls it
    std::optional<int> pageblock_order; // nullopt: decided at boot
    std::optional<std::pair<int, int>>
        pageblock_order_range;                            // only when pageblock_order is nullopt
    std::optional<std::uint64_t> cma_min_alignment_bytes; // nullopt when pageblock_order is

    // Facts the checks need besides the alignment.
    bool hugetlb = false;
    bool thp = false;
    bool cma = false;     // CONFIG_CMA
    bool dma_cma = false; // CONFIG_DMA_CMA
    // CMA / DMA_CMA absent from a defconfig or fragment (no kconfig header, no kernel tree): taken
    // as y so that pools are checked, never as n (which would hide every CMA finding).
    bool cma_assumed = false;
    bool dma_cma_assumed = false;
    // CONFIG_DMA_DECLARE_COHERENT (kernel/dma/coherent.c, rmem_dma_setup()); nullopt when a
    // defconfig or fragment does not say (Kconfig selects it per arch).
    std::optional<bool> dma_declare_coherent;
    // CONFIG_DMA_RESTRICTED_POOL (kernel/dma/swiotlb.c, rmem_swiotlb_setup()); nullopt when a
    // defconfig or fragment does not say (Kconfig default n, nothing selects it).
    std::optional<bool> dma_restricted_pool;
    int cma_areas = 0;                           // MAX_CMA_AREAS as the version defines it
    std::optional<DefaultCmaConfig> default_cma; // nullopt without CONFIG_CMA and CONFIG_DMA_CMA
    std::optional<int> page_block_order_option; // CONFIG_PAGE_BLOCK_(MAX_)ORDER in effect (≥6.16)
    bool phys_addr_64bit = true;
    // HUGETLB_PAGE_ORDER / HPAGE_PMD_ORDER when the feature is on and the order is fixed at
    // build time; SECTION_SIZE_BITS of the arch (sparsemem.h).
    std::optional<int> hugetlb_page_order;
    std::optional<int> hpage_pmd_order;
    std::optional<int> section_size_bits;

    KernelImageFacts image;

    std::vector<Step> derivation;
    std::vector<std::string> assumptions;
    std::vector<Diagnostic> diagnostics; // problems in the configuration itself
};

// nullopt (and an error in diags) on contradictory or unusable input.
std::optional<Model> derive(const kconfig::Config& config, const Options& options,
                            Diagnostics& diags);

// One row of `cmalign table`.
struct TableRow {
    std::uint64_t page_size = 0;
    int max_page_order = 0;
    bool max_order_is_largest = false;
    bool hugetlb = false;
    bool thp = false;
    std::optional<int> page_block_max_order; // nullopt when the version has no such option
    std::optional<int> pageblock_order;
    std::optional<std::pair<int, int>> pageblock_order_range; // when pageblock_order is nullopt
    std::optional<std::uint64_t> cma_min_alignment_bytes;
};

std::vector<TableRow> table(Arch arch, const KernelVersion& version);

} // namespace cmalign::kernel
