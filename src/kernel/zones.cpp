// What an arch's kernel does with its memory zones: which zones a configuration has (mm/Kconfig
// defaults per arch) and how zone_sizes_init() splits RAM into them. For `cmalign pcp`.
#include "cmalign/internal/kernel/zone_layout.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/kernel/rules.hpp"

namespace cmalign::kernel {

namespace {

constexpr std::uint64_t four_gib = std::uint64_t{4} << 30;

} // namespace

// The zones this kernel has (enum zone_type), from the configuration or the arch's Kconfig
// defaults (mm/Kconfig; the arch table's zone_dma_default / zone_dma32_default).
std::vector<ZoneType> configured_zones(const kconfig::Config& cfg, const kernel::Model& m,
                                       std::vector<std::string>& assumptions) {
    auto symbol = [&](const char* name, bool arch_default) {
        if (auto v = cfg.get_bool(name)) return *v;
        assumptions.push_back(fmt::format("CONFIG_{} not in the configuration: assumed {} ({}'s "
                                          "default)",
                                          name, arch_default ? "y" : "n", to_string(m.arch)));
        return arch_default;
    };
    const auto& info = rules::info(m.arch);
    std::vector<ZoneType> out;
    if (symbol("ZONE_DMA", info.zone_dma_default)) out.push_back(ZoneType::dma);
    if (symbol("ZONE_DMA32", info.zone_dma32_default)) out.push_back(ZoneType::dma32);
    out.push_back(ZoneType::normal);
    if (cfg.get_bool("HIGHMEM").value_or(false)) out.push_back(ZoneType::highmem);
    out.push_back(ZoneType::movable);
    if (cfg.get_bool("ZONE_DEVICE").value_or(false)) out.push_back(ZoneType::device);
    return out;
}

bool has_zone(const std::vector<ZoneType>& zones, ZoneType z) {
    return std::find(zones.begin(), zones.end(), z) != zones.end();
}

// --memory: split total RAM into zones as the arch's zone_sizes_init() would for one
// contiguous bank at `base`, then take the memmap (struct page array) off the highest zone,
// where memblock allocates it top-down.
std::map<ZoneType, std::uint64_t> estimate_zones(std::uint64_t total, std::uint64_t base,
                                                 const std::vector<ZoneType>& zones,
                                                 const kernel::Model& m,
                                                 std::vector<std::string>& how) {
    std::map<ZoneType, std::uint64_t> bytes;
    std::uint64_t end = base + total;
    auto add_range = [&](ZoneType z, std::uint64_t lo, std::uint64_t hi) {
        // [lo, hi) ∩ [base, end)
        std::uint64_t a = std::max(lo, base), b = std::min(hi, end);
        if (b > a) bytes[z] += b - a;
    };
    const std::uint64_t top = ~std::uint64_t{0};
    switch (m.arch) {
    case Arch::x86_64:
    case Arch::x86: {
        // arch/x86/mm/init.c zone_sizes_init(): DMA below MAX_DMA_PFN (16 MiB), DMA32 below
        // 4 GiB, Normal above (x86-32: Normal up to max_low_pfn, about 896 MiB, HighMem above).
        std::uint64_t dma_end = has_zone(zones, ZoneType::dma) ? (16u << 20) : 0;
        add_range(ZoneType::dma, 0, dma_end);
        if (m.arch == Arch::x86_64) {
            add_range(has_zone(zones, ZoneType::dma32) ? ZoneType::dma32 : ZoneType::normal,
                      dma_end, four_gib);
            add_range(ZoneType::normal, four_gib, top);
        } else {
            std::uint64_t lowmem = 896u << 20;
            add_range(ZoneType::normal, dma_end, lowmem);
            add_range(has_zone(zones, ZoneType::highmem) ? ZoneType::highmem : ZoneType::normal,
                      lowmem, has_zone(zones, ZoneType::highmem) ? top : lowmem);
        }
        how.push_back("x86: ZONE_DMA = RAM below 16 MiB, ZONE_DMA32 = RAM below 4 GiB, Normal "
                      "above (arch/x86/mm/init.c); the RAM is taken as one bank without the PCI "
                      "hole below 4 GiB that real machines have (use --zone or --zoneinfo)");
        break;
    }
    case Arch::arm64: {
        // arch/arm64/mm/init.c zone_sizes_init(): ZONE_DMA ends at min(DT/ACPI DMA limit,
        // 4 GiB) when RAM starts below 4 GiB, else it covers all RAM; ZONE_DMA32 below 4 GiB.
        if (has_zone(zones, ZoneType::dma)) {
            std::uint64_t dma_end = base >= four_gib ? top : four_gib;
            add_range(ZoneType::dma, 0, dma_end);
            add_range(ZoneType::normal, dma_end, top);
            how.push_back("arm64: ZONE_DMA = RAM below 4 GiB (all RAM when it starts above "
                          "4 GiB), ZONE_DMA32 then empty, Normal above (arch/arm64/mm/init.c "
                          "zone_sizes_init(), ≥ v5.11); assumes no device-tree dma-ranges that "
                          "lower the DMA limit");
        } else if (has_zone(zones, ZoneType::dma32)) {
            add_range(ZoneType::dma32, 0, four_gib);
            add_range(ZoneType::normal, four_gib, top);
            how.push_back("arm64: ZONE_DMA32 = RAM below 4 GiB, Normal above");
        } else {
            add_range(ZoneType::normal, 0, top);
        }
        break;
    }
    case Arch::riscv:
    case Arch::loongarch:
        if (has_zone(zones, ZoneType::dma32)) {
            add_range(ZoneType::dma32, 0, four_gib);
            add_range(ZoneType::normal, four_gib, top);
            how.push_back(
                fmt::format("{}: ZONE_DMA32 = RAM below 4 GiB, Normal above", to_string(m.arch)));
        } else {
            add_range(ZoneType::normal, 0, top);
        }
        break;
    case Arch::arm:
        if (has_zone(zones, ZoneType::highmem)) {
            // VMSPLIT_3G with the default 240 MiB vmalloc area: about 760 MiB of lowmem.
            std::uint64_t lowmem = base + (760u << 20);
            add_range(ZoneType::normal, 0, lowmem);
            add_range(ZoneType::highmem, lowmem, top);
            how.push_back("arm: Normal = the first 760 MiB (VMSPLIT_3G, vmalloc=240M), HighMem "
                          "above");
        } else {
            add_range(ZoneType::normal, 0, top);
        }
        break;
    default:
        add_range(ZoneType::normal, 0, top);
        how.push_back(fmt::format("{}: all RAM taken as ZONE_NORMAL", to_string(m.arch)));
        break;
    }
    // sizeof(struct page): 64 bytes on 64-bit kernels, 32 on 32-bit ones (typical configs).
    std::uint64_t struct_page = m.phys_addr_64bit && m.arch != Arch::arm ? 64 : 32;
    std::uint64_t memmap = total / m.page_size * struct_page;
    for (auto it = zones.rbegin(); it != zones.rend(); ++it) {
        auto found = bytes.find(*it);
        if (found == bytes.end() || found->second == 0 || *it == ZoneType::highmem) continue;
        found->second -= std::min(found->second, memmap);
        break;
    }
    how.push_back(fmt::format(
        "managed pages = RAM of the zone minus the memmap ({} bytes of struct page per page: {}) "
        "from the highest lowmem zone; the kernel image, the initrd, page tables, no-map "
        "reservations and firmware carve-outs are not subtracted, so the real counts are lower "
        "(CMA pools stay managed)",
        struct_page, format_size(memmap)));
    return bytes;
}

} // namespace cmalign::kernel
