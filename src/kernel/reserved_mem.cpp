// The /reserved-memory parsing rules per kernel version (kernel/reserved_mem.hpp).
#include "cmalign/internal/kernel/reserved_mem.hpp"

#include <array>

#include "cmalign/internal/kernel/rules.hpp"

namespace cmalign::kernel {
namespace {

constexpr std::array<ReservedMemRules, 5> rows{{
    {rules::until(6, 11), "OF: fdt: ", false, false, false, false, false,
     "drivers/of/fdt.c __reserved_mem_reserve_reg(), drivers/of/of_reserved_mem.c "
     "__reserved_mem_init_node(), fdt_init_reserved_mem() (read in 5.10.223 and 6.1.192)"},
    {rules::between(6, 12, 6, 18), "OF: reserved mem: ", true, false, false, false, true,
     "drivers/of/of_reserved_mem.c fdt_scan_reserved_mem_reg_nodes() (v6.13 restructure, "
     "backported to 6.12.y; 6.12.117)"},
    {rules::between(6, 19, 7, 0), "OF: reserved mem: ", true, true, false, false, true,
     "drivers/of/of_reserved_mem.c with of_flat_dt_get_addr_size_prop() (≥ v6.19 [likely])"},
    // Marek Szyprowski's "Refactor reserved memory regions handling code" (7 patches, applied
    // by Rob Herring on 2026-03-26 on top of v7.0-rc1, so first in v7.1); the 7.2.13 tree has
    // every line of it. No 7.1 tree was read.
    {rules::between(7, 1, 7, 1), "OF: reserved mem: ", true, true, true, false, true,
     "drivers/of/of_reserved_mem.c __reserved_mem_init_node(), fdt_init_reserved_mem_node(); "
     "kernel/dma/contiguous.c __rmem_cma_verify_node(), kernel/dma/coherent.c rmem_dma_setup() "
     "(\"of: reserved_mem: use -ENODEV instead of -ENOENT\" [likely v7.1]; as in 7.2.13)"},
    // "of: reserved_mem: only support one <base size> entry in reg property" (Wandun Chen, v3
    // posted 2026-05-25, after the v7.1 merge window; present in 7.2.13).
    {rules::since(7, 2), "OF: reserved mem: ", true, true, true, true, true,
     "drivers/of/of_reserved_mem.c __reserved_mem_reserve_reg(), fdt_scan_reserved_mem_late() "
     "(7.2.13; one reg tuple since \"only support one <base size> entry in reg property\" "
     "[likely v7.2])"},
}};

constexpr std::array<RestrictedPoolRules, 2> restricted_rows{{
    {rules::until(5, 14), false,
     "no restricted-dma-pool in kernel/dma/swiotlb.c or kernel/dma/Kconfig (read in 5.10.223)"},
    // "swiotlb: Add restricted DMA pool initialization" (Claire Chang, merged for v5.15).
    {rules::since(5, 15), true,
     "kernel/dma/swiotlb.c rmem_swiotlb_setup(), RESERVEDMEM_OF_DECLARE(dma, "
     "\"restricted-dma-pool\") under CONFIG_DMA_RESTRICTED_POOL (v5.15 [likely]; read in "
     "6.1.192, 6.12.117 and 7.2.13)"},
}};

constexpr std::array<NoMapOverlapRules, 2> no_map_rows{{
    {rules::until(5, 12), false,
     "drivers/of/fdt.c early_init_dt_reserve_memory_arch(), __reserved_mem_reserve_reg() (read "
     "in 5.10.223: pr_info)"},
    // Between 5.10.223 and 6.1.192 [likely v5.13].
    {rules::since(5, 13), true,
     "drivers/of/fdt.c (6.1.192), drivers/of/of_reserved_mem.c (6.12.117, 7.2.13) "
     "early_init_dt_reserve_memory(), __reserved_mem_reserve_reg() (pr_err; the RAM test "
     "[likely v5.13])"},
}};

} // namespace

std::span<const NoMapOverlapRules> no_map_overlap_rows() {
    return no_map_rows;
}

const NoMapOverlapRules& no_map_overlap_rules(const KernelVersion& version) {
    return *rules::find(no_map_overlap_rows(), version);
}

std::span<const RestrictedPoolRules> restricted_pool_rows() {
    return restricted_rows;
}

const RestrictedPoolRules& restricted_pool_rules(const KernelVersion& version) {
    return *rules::find(restricted_pool_rows(), version);
}

bool coherent_pool_needs_no_map(Arch arch) {
    return rules::info(arch).coherent_needs_no_map;
}

std::span<const ReservedMemRules> reserved_mem_rows() {
    return rows;
}

const ReservedMemRules& reserved_mem_rules(const KernelVersion& version) {
    return *rules::find(reserved_mem_rows(), version);
}

} // namespace cmalign::kernel
