// What drivers/of/ does with /reserved-memory in each kernel version, as the checks need it.
// The rows live in src/kernel/reserved_mem.cpp and name the kernel files they were read from.
#pragma once

#include <span>

#include "cmalign/core/version.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::kernel {

struct ReservedMemRules {
    VersionRange versions;
    // pr_fmt of the file that prints the parsing errors ("OF: fdt: " in drivers/of/fdt.c,
    // "OF: reserved mem: " once the code moved to drivers/of/of_reserved_mem.c).
    const char* log_prefix;
    // The v6.13 restructure (backported to 6.12.y): fdt_scan_reserved_mem_reg_nodes() keeps only
    // the first reg tuple and says so, and MAX_RESERVED_REGIONS bounds only dynamic nodes.
    bool restructured;
    // of_flat_dt_get_addr_size_prop(): a reg/alloc-ranges of the wrong length is silently
    // absent, only single-tuple nodes are recorded, and a linux,cma-default pool is skipped
    // ("Skipping dt linux,cma-default for \"cma=\" kernel param.") when cma= is given.
    bool addr_size_helpers;
    // v7.1 ("of: reserved_mem: use -ENODEV instead of -ENOENT" and the ops-based handlers): a
    // handler that does not take a node returns -ENODEV, which fdt_init_reserved_mem_node()
    // treats like "no handler": no "compatible matching fail", the region stays reserved (a
    // no-map one stays outside the linear map) and is listed as "… nomap reusable <name>".
    // The cma= override of a linux,cma-default pool moves to rmem_cma_validate(): the node is
    // then never reserved.
    bool declined_is_enodev;
    // v7.2 ("of: reserved_mem: only support one <base size> entry in reg property"): a reg with
    // several tuples warns, reserves only the first tuple and keeps the node (the others stay
    // with the page allocator).
    bool first_reg_tuple_only;
    // The v6.13 restructure (6.12.y) calls dma_contiguous_early_fixup() when a reusable
    // shared-dma-pool is reserved (static and dynamic), before rmem_cma_setup() checks its
    // alignment; 6.1 calls it only for a pool rmem_cma_setup() accepted. On arm (32-bit) the
    // fixup makes dma_contiguous_remap() re-map the region in the linear map, clearing whole
    // 2 MiB PMDs first (arch/arm/mm/dma-mapping.c).
    bool cma_fixup_at_reservation;
    const char* source;
};

// The row for `version` (the rows cover every version), and all rows, oldest first.
const ReservedMemRules& reserved_mem_rules(const KernelVersion& version);
std::span<const ReservedMemRules> reserved_mem_rows();

// Whether the version has a "restricted-dma-pool" handler at all (kernel/dma/swiotlb.c
// rmem_swiotlb_setup(), built only with CONFIG_DMA_RESTRICTED_POOL).
struct RestrictedPoolRules {
    VersionRange versions;
    bool handler;
    const char* source;
};
const RestrictedPoolRules& restricted_pool_rules(const KernelVersion& version);
std::span<const RestrictedPoolRules> restricted_pool_rows();

// early_init_dt_reserve_memory() (drivers/of/fdt.c; of_reserved_mem.c from v6.12): a no-map
// region over memory already reserved is refused with -EBUSY ("Reserved memory: failed to
// reserve memory for node …") and neither marked no-map nor reserved. From "of: fdt: Don't
// worry about non-memory region overlap for no-map" only where it overlaps RAM.
struct NoMapOverlapRules {
    VersionRange versions;
    bool only_over_ram;
    const char* source;
};
const NoMapOverlapRules& no_map_overlap_rules(const KernelVersion& version);
std::span<const NoMapOverlapRules> no_map_overlap_rows();

// Whether the arch's coherent allocator refuses a non-reusable shared-dma-pool without no-map
// (kernel/dma/coherent.c rmem_dma_setup(), CONFIG_ARM only).
bool coherent_pool_needs_no_map(Arch arch);

} // namespace cmalign::kernel
