// What the check files share: the wording of kernel messages and the check entries the registry
// lists in order. Private to src/checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/checks/checks.hpp"
#include "cmalign/core/interval.hpp"

namespace cmalign::checks {

// messages.cpp ---------------------------------------------------------------------------------

// "arm64 6.12.117"
std::string kernel_name(const kernel::Model& m);
// The kernel's %pa: phys_addr_t in full width, zero-padded ("0x0000000080000000").
std::string pa(std::uint64_t value, const kernel::Model& m);
// pr_fmt of the file that prints reserved-memory parsing errors in this kernel ("OF: fdt: ").
const char* parse_prefix(const kernel::Model& m);
// "the CMA alignment 0x2000000 (32 MiB = PAGE_SIZE 16 KiB << pageblock_order 11) of arm64 6.12"
std::string alignment_words(const kernel::Model& m, std::uint64_t alignment);
// What rmem_cma_setup() rejecting a pool looks like in the log, and what happens to the memory.
std::string rejected_pool_words(const reserved::Region& r);
// Not inactive: a disabled node, or CMA not configured, reserves nothing the checks judge.
bool active(const reserved::Region& r);
// 32-bit arm's linear map (arch/arm/mm/mmu.c, read in 5.10.223, 6.1.192, 6.12.117, 7.2.13): PMDs
// of 2 MiB (PMD_SIZE, classic and LPAE), two 1 MiB sections each without LPAE; lowmem ends
// 768 MiB above the start of RAM with VMSPLIT_3G and the default 240 MiB vmalloc area.
inline constexpr std::uint64_t arm_section_size = std::uint64_t{1} << 20;
inline constexpr std::uint64_t arm_pmd_size = std::uint64_t{2} << 20;
inline constexpr std::uint64_t arm_lowmem_3g = std::uint64_t{768} << 20;

// An alloc-ranges window as the kernel holds it: start and end (start + size) in phys_addr_t,
// so a 32-bit one (arm without LPAE) keeps their low 32 bits (an end below the start is empty).
Interval alloc_window(const kernel::Model& m, const reserved::Range& range);
// The /memory banks as RAM spans (adjacent banks are one span, as memblock merges them).
IntervalSet ram_of(const std::vector<reserved::MemoryBank>& banks);

// dynamic.cpp ----------------------------------------------------------------------------------

// The permutation lib/sort.c's sort() leaves `keys` in (cma.cpp).
std::vector<std::size_t>
kernel_sort_order(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& keys);
// Every node the kernel saves in reserved_mem[], in the order it allocates and sets them up.
std::vector<const reserved::Region*> saved_order(const Context& ctx);
// Where memblock put one dynamic node, in that order.
struct DynamicPlacement {
    const reserved::Region* region = nullptr;
    std::uint64_t align = 0;           // after the CMA raise and SMP_CACHE_BYTES for none
    std::optional<std::uint64_t> base; // nullopt: "failed to allocate memory for node"
    bool freed = false;                // its init function rejected it and it was freed
};
// Whether rmem_cma_setup() turns a pool at `base` down before cma_init_reserved_mem() is asked for
// a slot: no-map, a linux,cma-default pool cma= overrides, base or size off the CMA alignment.
bool cma_rejects_before_slot(const Context& ctx, const reserved::Region& r, std::uint64_t base);
// A linux,cma-default node that cma= overrides and the kernel never reserves nor allocates: from
// 6.19 __reserved_mem_reserve_reg() and __reserved_mem_alloc_size() skip it before memblock is
// asked (cma_skip_dt_default_reserved_mem()), from 7.1 rmem_cma_validate() refuses it (-EBUSY)
// there, for a reusable shared-dma-pool without no-map only. It takes no memory and cannot fail
// for want of room; the default area of cma= is reserved instead.
bool skipped_for_cmdline_cma(const Context& ctx, const reserved::Region& r);
// Some alloc-ranges window holds the node's size at `align` (RAM aside).
bool alloc_ranges_hold(const Context& ctx, const reserved::Region& r, std::uint64_t align);
// Some alloc-ranges window overlaps the /memory banks by the node's size or more.
bool alloc_ranges_overlap_ram(const Context& ctx, const reserved::Region& r);
// `with_assumed` false: the assumed early reservations left out (what they cost).
std::vector<DynamicPlacement> place_dynamic(const Context& ctx, bool with_assumed = true);
// memblock's free ranges: RAM minus everything reserved, lowest first.
std::vector<Interval> free_spans(const IntervalSet& ram, const IntervalSet& taken);
// memblock_find_in_range_node() (mm/memblock.c): the highest (bottom-up: lowest) block of `size`
// at `align` in the free spans within [start, end); 0 when none.
std::uint64_t memblock_find(const std::vector<Interval>& spans, std::uint64_t size,
                            std::uint64_t align, std::uint64_t start, std::uint64_t end,
                            std::uint64_t page_size, bool bottom_up);

// Prerequisites (registry.cpp) ------------------------------------------------------------------

// The kernel parses the nodes under /reserved-memory at all (__reserved_mem_check_root()): when
// it does not, reserved-memory-format says so and the checks of single nodes have nothing to say.
extern const Prerequisite reserved_memory_well_formed;

// The checks, declared next to their functions; registry.cpp lists them in the order they run.
namespace entries {
// format.cpp
extern const CheckInfo reserved_memory_format, property_length, zero_size, cell_overflow,
    alignment_cells, alignment_not_power_of_2, reserved_regions_limit;
// cma.cpp
extern const CheckInfo cma_disabled, cma_base_alignment, cma_size_alignment, cma_alloc_ranges,
    cma_default, cma_areas, arm_dma_remap;
// dynamic.cpp
extern const CheckInfo dynamic_no_room;
// placement.cpp
extern const CheckInfo reusable_no_map, coherent_no_map, restricted_pool, overlap, outside_memory,
    outside_memory_device, arm_section_split;
// cmdline.cpp
extern const CheckInfo cmdline_cma, cmdline_params;
// default_area.cpp
extern const CheckInfo cma_default_area;
// cma.cpp: the CMA pools in the order rmem_cma_setup() sees them, and whether one is turned down
// before it asks for a MAX_CMA_AREAS slot.
std::vector<const reserved::Region*> cma_setup_order(const Context& ctx);
bool rejected_before_slot(const Context& ctx, const reserved::Region& r);
} // namespace entries

} // namespace cmalign::checks
