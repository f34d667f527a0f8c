// Kernel command-line parameters that size CMA areas or tune the page allocator, parsed as the
// kernel parses them. `check` and `pcp` share this reading of --bootargs or /chosen/bootargs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/reserved/regions.hpp"

namespace cmalign::reserved {

struct NumaCmaEntry {
    std::uint64_t node = 0;
    std::uint64_t size = 0;
};

struct BootParams {
    std::optional<CmaCmdline> cma; // cma= (kernel/dma/contiguous.c early_cma())

    // cma_pernuma=SIZE: early_cma_pernuma() memparse()s it; trailing characters are ignored.
    std::optional<std::string> cma_pernuma_text;
    std::uint64_t cma_pernuma = 0;
    std::string cma_pernuma_trailing;

    // numa_cma=NODE:SIZE[,NODE:SIZE...]: early_numa_cma() stops silently at the first entry it
    // cannot read; `numa_cma_ignored` is what it left unread.
    std::optional<std::string> numa_cma_text;
    std::vector<NumaCmaEntry> numa_cma;
    std::string numa_cma_ignored;

    // pcp_batch_scale_max=N: not an upstream parameter (RFC of 26 Nov 2024, not merged).
    // The value under the proposed semantics: decimal 0..; larger than CONFIG_PCP_BATCH_SCALE_MAX's
    // upper bound (kernel::calc_rules::pcp_batch_scale_max(), 6) clamps to it. nullopt
    // when the text is not a number.
    std::optional<std::string> pcp_batch_scale_max_text;
    std::optional<int> pcp_batch_scale_max;
    bool pcp_batch_scale_max_clamped = false;

    // transparent_hugepage=always|madvise|never (mm/huge_memory.c setup_transparent_hugepage()).
    std::optional<std::string> transparent_hugepage;
    bool transparent_hugepage_valid = false;
};

// The last occurrence of each parameter wins, as the kernel calls the handlers in order.
BootParams parse_boot_params(std::string_view bootargs);

} // namespace cmalign::reserved
