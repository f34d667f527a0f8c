// derive() step for CMA: CMA_MIN_ALIGNMENT_BYTES, CONFIG_CMA / DMA_CMA and MAX_CMA_AREAS.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/kernel/deriver.hpp"

namespace cmalign::kernel::detail {

void Deriver::resolve_cma() {
    // A full .config (kconfig's header) or a Kconfig evaluation lists every visible symbol, so an
    // absent CMA there is n. A defconfig or fragment leaves CMA and DMA_CMA to Kconfig, where
    // `select` often turns them on (drivers/gpu/drm/etnaviv/Kconfig: select DMA_CMA): assuming n
    // would hide every finding on a CMA pool, so they are assumed y (issue 7, item 5).
    std::vector<StepInput> inputs;
    bool complete = complete_config();
    if (const auto* e = entry("CMA")) {
        m_.cma = flag("CMA").value_or(false);
        inputs.push_back(input(*e));
    } else if (complete) {
        m_.cma = false;
        inputs.push_back(assumed("CMA", "n"));
        assume("CONFIG_CMA not set: Kconfig default n (mm/Kconfig), so the kernel creates no CMA "
               "areas");
    } else {
        m_.cma = true;
        m_.cma_assumed = true;
        inputs.push_back(assumed("CMA", "y"));
        assume("CONFIG_CMA not in the inputs (a defconfig or fragment): assumed y, so that "
               "reusable shared-dma-pool regions are checked as CMA pools");
    }
    if (m_.cma) {
        if (const auto* e = entry("DMA_CMA")) {
            m_.dma_cma = flag("DMA_CMA").value_or(false);
            inputs.push_back(input(*e));
        } else if (complete) {
            m_.dma_cma = false;
            assume("CONFIG_DMA_CMA not set: Kconfig default n (kernel/dma/Kconfig), so "
                   "shared-dma-pool regions do not become CMA areas");
        } else {
            m_.dma_cma = true;
            m_.dma_cma_assumed = true;
            inputs.push_back(assumed("DMA_CMA", "y"));
            assume("CONFIG_DMA_CMA not in the inputs (a defconfig or fragment): assumed y, so "
                   "that reusable shared-dma-pool regions are checked as CMA pools");
        }
    }
    if (auto b = flag("DMA_DECLARE_COHERENT"))
        m_.dma_declare_coherent = *b;
    else if (complete)
        m_.dma_declare_coherent = false;
    if (auto b = flag("DMA_RESTRICTED_POOL"))
        m_.dma_restricted_pool = *b;
    else if (complete)
        m_.dma_restricted_pool = false;
    const auto* row = rules::find(rules::cma_areas_rules(), m_.version);
    if (m_.cma) {
        int areas = 0;
        const auto* e = entry("CMA_AREAS");
        if (e && parse_int(e->value)) {
            areas = static_cast<int>(*parse_int(e->value));
            inputs.push_back(input(*e));
        } else {
            bool numa = flag("NUMA").value_or(false);
            areas = numa ? row->default_numa : row->default_uma;
            if (e) warn(e->where, fmt::format("{}: {}", kconfig_invalid(*e), areas));
            inputs.push_back(assumed("CMA_AREAS", std::to_string(areas)));
            assume(
                fmt::format("CONFIG_CMA_AREAS not set: using its default {} ({}; mm/Kconfig, {})",
                            areas, numa ? "NUMA" : "no NUMA", row->versions.str()));
        }
        m_.cma_areas = row->plus + areas;
    } else {
        m_.cma_areas = 0;
    }
    step("cma_areas", m_.cma_areas, m_.cma ? row->rule : "MAX_CMA_AREAS = 0 (no CONFIG_CMA)",
         source_text(row->source, row->versions, row->note), std::move(inputs));

    // phys_addr_t: PHYS_ADDR_T_64BIT = 64BIT || ARCH_PHYS_ADDR_T_64BIT (mm/Kconfig).
    if (auto b = flag("PHYS_ADDR_T_64BIT")) {
        m_.phys_addr_64bit = *b;
    } else {
        m_.phys_addr_64bit = is_64bit_ || lookup("ARM_LPAE").value_or(false) ||
                             lookup("X86_PAE").value_or(false) ||
                             lookup("PHYS_64BIT").value_or(false) ||
                             lookup("ARCH_PHYS_ADDR_T_64BIT").value_or(false);
    }
}

} // namespace cmalign::kernel::detail
