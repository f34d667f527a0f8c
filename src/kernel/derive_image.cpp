// derive() step for the kernel image: what the configuration says about where the image lies in
// RAM and how much of it memblock reserves (checks::assumed_early_reservations() places it).
#include <fmt/format.h>

#include "cmalign/internal/kernel/deriver.hpp"

namespace cmalign::kernel::detail {

namespace {

// A hex symbol's value as kconfig writes it ("0x90000000"; sym_string_valid() also takes it
// without the prefix, scripts/kconfig/symbol.c in 6.1 and 6.12).
std::optional<std::uint64_t> parse_hex(std::string_view text) {
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
        text.remove_prefix(2);
    if (text.empty() || text.size() > 16) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : text) {
        int digit = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
        if (digit < 0) return std::nullopt;
        v = (v << 4) | static_cast<std::uint64_t>(digit);
    }
    return v;
}

// arch/arm/Makefile's textofs-$(CONFIG_…) lines, in file order: make's `:=` lets the last one
// that applies win. Read in 5.10.223 and 6.1.192 (PM_H1940, IPQ40XX, MSM8X60, MSM8960) and in
// 6.12.117 and 7.2.13 (QCOM_RESERVE_SMEM took the Qualcomm ones' place); a symbol only exists in
// the versions whose Makefile has its line. SA1111 counts only with ARCH_SA1100.
struct TextOffsetRow {
    const char* symbol;
    std::uint64_t offset;
    const char* also_needs = nullptr;
};
constexpr TextOffsetRow text_offsets[] = {
    {"PM_H1940", 0x108000},
    {"ARCH_REALTEK", 0x108000},
    {"SA1111", 0x208000, "ARCH_SA1100"},
    {"ARCH_IPQ40XX", 0x208000},
    {"ARCH_MSM8X60", 0x208000},
    {"ARCH_MSM8960", 0x208000},
    {"ARCH_QCOM_RESERVE_SMEM", 0x208000},
    {"ARCH_MESON", 0x208000},
    {"ARCH_AXXIA", 0x308000},
};

} // namespace

void Deriver::resolve_image() {
    auto& image = m_.image;
    const bool complete = complete_config();
    auto said = [&](const kconfig::Entry& e) {
        image.said.push_back(fmt::format("CONFIG_{}={} ({})", e.name, e.value, place(e.where)));
    };
    // A bool the configuration sets; in a complete one an absent symbol is n (its dependencies
    // are not met), elsewhere it is not said.
    auto bool_said = [&](const char* symbol) -> std::optional<bool> {
        if (const auto* e = entry(symbol)) {
            auto value = flag(symbol);
            if (value) said(*e);
            return value;
        }
        if (complete) return false;
        return std::nullopt;
    };
    auto hex_said = [&](const char* symbol) -> std::optional<std::uint64_t> {
        const auto* e = entry(symbol);
        if (!e) return std::nullopt;
        auto value = parse_hex(e->value);
        if (value) said(*e);
        return value;
    };
    // CONFIG_MMU has a prompt on arm and riscv only; elsewhere it is def_bool y, and a complete
    // configuration lists it either way (arch/*/Kconfig).
    if (const auto* e = entry("MMU")) {
        image.mmu = flag("MMU");
        if (image.mmu && !*image.mmu) said(*e);
    } else if (complete) {
        image.mmu = false;
    }
    image.xip = bool_said("XIP_KERNEL");
    if (image.xip.value_or(false)) image.xip_phys_addr = hex_said("XIP_PHYS_ADDR");
    image.relocatable = flag("RELOCATABLE");
    switch (m_.arch) {
    case Arch::arm: {
        image.lpae = flag("ARM_LPAE").value_or(false);
        // arch/arm/include/asm/memory.h (5.10–7.2): PHYS_OFFSET is PLAT_PHYS_OFFSET =
        // CONFIG_PHYS_OFFSET unless ARM_PATCH_PHYS_VIRT finds it at boot; arch/arm/Kconfig:
        // PHYS_OFFSET defaults to DRAM_BASE without an MMU.
        std::optional<bool> patched = flag("ARM_PATCH_PHYS_VIRT");
        if (!patched && complete) patched = false;
        const bool no_mmu = image.mmu && !*image.mmu;
        if (patched == false || no_mmu) {
            for (const char* symbol : {"PHYS_OFFSET", "DRAM_BASE"}) {
                if (!no_mmu && std::string_view(symbol) == "DRAM_BASE") break;
                if (auto at = hex_said(symbol)) {
                    image.phys_offset = at;
                    image.phys_offset_symbol = fmt::format("CONFIG_{}", symbol);
                    break;
                }
            }
        }
        for (const auto& row : text_offsets) {
            if (!flag(row.symbol).value_or(false)) continue;
            if (row.also_needs && !flag(row.also_needs).value_or(false)) continue;
            image.text_offset = row.offset;
            image.text_offset_symbol = fmt::format("CONFIG_{}", row.symbol);
        }
        break;
    }
    case Arch::riscv:
        // arch/riscv/Kconfig (6.12.117): PHYS_RAM_BASE when PHYS_RAM_BASE_FIXED (XIP selects it).
        if (flag("PHYS_RAM_BASE_FIXED").value_or(false))
            if (auto at = hex_said("PHYS_RAM_BASE")) {
                image.phys_offset = at;
                image.phys_offset_symbol = "CONFIG_PHYS_RAM_BASE";
            }
        // arch/riscv/include/asm/page.h (6.12.117): without an MMU, PAGE_OFFSET is
        // CONFIG_PAGE_OFFSET (0x80000000 in M-mode, 0x80200000 above the SBI otherwise) and the
        // kernel runs at its link address.
        if (image.mmu == false) image.link_address = hex_said("PAGE_OFFSET");
        break;
    default:
        break;
    }
}

} // namespace cmalign::kernel::detail
