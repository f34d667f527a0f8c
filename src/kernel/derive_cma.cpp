// derive() step for CMA: CMA_MIN_ALIGNMENT_BYTES, CONFIG_CMA / DMA_CMA and MAX_CMA_AREAS.
#include <algorithm>

#include <fmt/format.h>

#include "cmalign/internal/kernel/deriver.hpp"

namespace cmalign::kernel::detail {

void Deriver::resolve_cma() {
    // A full .config (kconfig's header) or a Kconfig evaluation lists every visible symbol, so an
    // absent CMA there is n. A defconfig or fragment leaves CMA and DMA_CMA to Kconfig, where
    // `select` often turns them on (drivers/gpu/drm/etnaviv/Kconfig: select DMA_CMA): assuming n
    // would hide every finding on a CMA pool, so they are assumed y.
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

    if (m_.cma && m_.dma_cma) resolve_default_cma();

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

namespace cmalign::kernel::detail {

// The default CMA area's size selection (kernel/dma/Kconfig, the same in 5.10.223, 6.1.192 and
// 6.12.117: choice CMA_SIZE_SEL_MBYTES by default; CMA_SIZE_MBYTES "default 0 if X86, default 16"
// depends on !CMA_SIZE_SEL_PERCENTAGE; CMA_SIZE_PERCENTAGE "default 0 if X86, default 10" depends
// on !CMA_SIZE_SEL_MBYTES) and the zone facts dma_contiguous_reserve()'s limit depends on.
void Deriver::resolve_default_cma() {
    using Selection = DefaultCmaConfig::Selection;
    DefaultCmaConfig d;
    std::vector<StepInput> inputs;
    const bool x86 = m_.arch == Arch::x86 || m_.arch == Arch::x86_64;
    static constexpr std::pair<const char*, Selection> choices[] = {
        {"CMA_SIZE_SEL_MBYTES", Selection::mbytes},
        {"CMA_SIZE_SEL_PERCENTAGE", Selection::percentage},
        {"CMA_SIZE_SEL_MIN", Selection::min},
        {"CMA_SIZE_SEL_MAX", Selection::max},
    };
    bool chosen = false;
    for (const auto& [symbol, selection] : choices) {
        if (flag(symbol).value_or(false)) {
            d.selection = selection;
            inputs.push_back(input(*entry(symbol)));
            chosen = true;
            break;
        }
    }
    if (!chosen) inputs.push_back(assumed("CMA_SIZE_SEL_MBYTES", "y"));
    auto int_symbol = [&](const char* symbol, long long fallback, bool hidden) -> long long {
        if (hidden) return 0; // `depends on` unmet: the symbol is absent and the macro 0
        const auto* e = entry(symbol);
        if (e) {
            if (auto v = parse_int(e->value); v && *v >= 0) {
                inputs.push_back(input(*e));
                return *v;
            }
            warn(e->where, fmt::format("{}: {}", kconfig_invalid(*e), fallback));
        }
        inputs.push_back(assumed(symbol, std::to_string(fallback)));
        return fallback;
    };
    d.mbytes = static_cast<std::uint64_t>(
        int_symbol("CMA_SIZE_MBYTES", x86 ? 0 : 16, d.selection == Selection::percentage));
    d.percentage = static_cast<int>(
        int_symbol("CMA_SIZE_PERCENTAGE", x86 ? 0 : 10, d.selection == Selection::mbytes));
    const auto& arch = rules::info(m_.arch);
    d.zone_dma = flag("ZONE_DMA").value_or(arch.zone_dma_default);
    d.zone_dma32 = flag("ZONE_DMA32").value_or(arch.zone_dma32_default);
    d.highmem = flag("HIGHMEM").value_or(false);
    if (m_.arch == Arch::arm64) {
        d.rodata_full = flag("RODATA_FULL_DEFAULT_ENABLED");
        d.debug_pagealloc = flag("DEBUG_PAGEALLOC_ENABLE_DEFAULT").value_or(false);
        d.kfence = flag("KFENCE").value_or(false);
        const auto int_or = [&](const char* symbol, long long fallback) {
            const auto* e = entry(symbol);
            const auto v = e ? parse_int(e->value) : std::nullopt;
            return v && *v >= 0 ? *v : fallback;
        };
        // mm/kfence/Kconfig and arch/arm64/Kconfig defaults (6.1.192, 6.12.117, 7.2.13).
        d.kfence_sample_ms = int_or("KFENCE_SAMPLE_INTERVAL", 100);
        d.kfence_objects = int_or("KFENCE_NUM_OBJECTS", 255);
        d.phys_addr_bits = static_cast<int>(int_or("ARM64_PA_BITS", 48));
        d.sparsemem_extreme = flag("SPARSEMEM_EXTREME").value_or(true);
        d.page_extension = flag("PAGE_EXTENSION").value_or(false);
    }
    m_.default_cma = d;
    std::optional<long long> bytes;
    std::string rule;
    switch (d.selection) {
    case Selection::mbytes:
        bytes = static_cast<long long>(d.mbytes << 20);
        rule = "size_bytes = CONFIG_CMA_SIZE_MBYTES * SZ_1M (CMA_SIZE_SEL_MBYTES); cma= replaces "
               "it, a linux,cma-default pool the kernel creates makes it unneeded";
        break;
    case Selection::percentage:
        rule = "cma_early_percent_memory() = RAM pages * CONFIG_CMA_SIZE_PERCENTAGE / 100 "
               "(CMA_SIZE_SEL_PERCENTAGE): decided at boot from the memory";
        break;
    case Selection::min:
        rule = "min(size_bytes, cma_early_percent_memory()) (CMA_SIZE_SEL_MIN)";
        break;
    case Selection::max:
        rule = "max(size_bytes, cma_early_percent_memory()) (CMA_SIZE_SEL_MAX)";
        break;
    }
    step("default_cma_size", bytes, rule,
         "kernel/dma/contiguous.c dma_contiguous_reserve(), kernel/dma/Kconfig (read in "
         "5.10.223, 6.1.192, 6.12.117)",
         std::move(inputs));
}

} // namespace cmalign::kernel::detail
