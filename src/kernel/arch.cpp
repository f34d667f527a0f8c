// The one table of arches: names as docs/cli.md spells them, the aliases users type and the make
// ARCH each stands for, the Kconfig symbols that reveal an arch, word size, zones and quirks
// (rules::ArchInfo in rules.hpp). Every other arch question is answered from it.
#include <algorithm>
#include <cctype>

#include "cmalign/internal/kernel/arch.hpp"
#include "cmalign/internal/kernel/rules.hpp"
#include "cmalign/kconfig/kconfig_tree.hpp"

namespace cmalign::kernel {

namespace rules {

std::span<const ArchInfo> arch_infos() {
    static const std::vector<ArchInfo> rows = {
        {.arch = Arch::arm64,
         .name = "arm64",
         .names = {{"arm64", "arm64"}, {"aarch64", "arm64"}},
         .symbols = {{"ARM64", {}, "arm64"}},
         .versions = all_versions(),
         .is_64bit = true,
         .bits_symbol = nullptr,
         .bits32_symbol = nullptr,
         .default_64bit = true,
         .always_sparsemem = true,
         .zone_dma_default = true,
         .zone_dma32_default = true},
        {.arch = Arch::arm,
         .name = "arm",
         .names = {{"arm", "arm"}, {"armhf", "arm"}, {"armel", "arm"}, {"armv7", "arm"}},
         .symbols = {{"ARM", {}, "arm"}},
         .versions = all_versions(),
         .is_64bit = false,
         .bits_symbol = nullptr,
         .bits32_symbol = nullptr,
         .default_64bit = false,
         .always_sparsemem = false,
         .zone_dma_default = false,
         .zone_dma32_default = false,
         .coherent_needs_no_map = true},
        {.arch = Arch::x86_64,
         .name = "x86_64",
         .names = {{"x86_64", "x86_64"}, {"amd64", "x86_64"}, {"x64", "x86_64"}},
         .symbols = {{"X86_64", {}, "x86_64"}, {"X86", Term{"64BIT"}, "x86_64"}},
         .versions = all_versions(),
         .is_64bit = true,
         .bits_symbol = nullptr,
         .bits32_symbol = nullptr,
         .default_64bit = true,
         .always_sparsemem = false,
         .zone_dma_default = true,
         .zone_dma32_default = true},
        // make ARCH=x86 is kept as given (Kconfig then offers 64BIT); the 32-bit names are i386.
        {.arch = Arch::x86,
         .name = "x86",
         .names = {{"x86", "x86"},
                   {"i386", "i386"},
                   {"i686", "i386"},
                   {"x86_32", "i386"},
                   {"ia32", "i386"}},
         .symbols = {{"X86_32", {}, "i386"}, {"X86", {}, "x86"}},
         .versions = all_versions(),
         .is_64bit = false,
         .bits_symbol = nullptr,
         .bits32_symbol = nullptr,
         .default_64bit = false,
         .always_sparsemem = false,
         .zone_dma_default = true,
         .zone_dma32_default = false},
        {.arch = Arch::riscv,
         .name = "riscv",
         .names = {{"riscv", "riscv"}, {"riscv64", "riscv"}, {"riscv32", "riscv"}},
         .symbols = {{"RISCV", {}, "riscv"}},
         .versions = all_versions(),
         .is_64bit = std::nullopt,
         .bits_symbol = "64BIT",
         .bits32_symbol = "32BIT",
         .default_64bit = true,
         .always_sparsemem = false,
         .zone_dma_default = false,
         .zone_dma32_default = true},
        {.arch = Arch::powerpc,
         .name = "powerpc",
         .names = {{"powerpc", "powerpc"},
                   {"ppc", "powerpc"},
                   {"ppc64", "powerpc"},
                   {"ppc64le", "powerpc"},
                   {"powerpc64", "powerpc"},
                   {"ppc64el", "powerpc"}},
         .symbols = {{"PPC", {}, "powerpc"}, {"PPC64", {}, "powerpc"}, {"PPC32", {}, "powerpc"}},
         .versions = all_versions(),
         .is_64bit = std::nullopt,
         .bits_symbol = "PPC64",
         .bits32_symbol = "PPC32",
         .default_64bit = true,
         .always_sparsemem = false,
         .zone_dma_default = false,
         .zone_dma32_default = false},
        // arch/loongarch was merged in v5.19.
        {.arch = Arch::loongarch,
         .name = "loongarch",
         .names = {{"loongarch", "loongarch"}, {"loongarch64", "loongarch"}},
         .symbols = {{"LOONGARCH", {}, "loongarch"}},
         .versions = since(5, 19),
         .is_64bit = true,
         .bits_symbol = nullptr,
         .bits32_symbol = nullptr,
         .default_64bit = true,
         .always_sparsemem = false,
         .zone_dma_default = false,
         .zone_dma32_default = true},
        {.arch = Arch::mips,
         .name = "mips",
         .names = {{"mips", "mips"}, {"mips64", "mips"}, {"mipsel", "mips"}, {"mips64el", "mips"}},
         .symbols = {{"MIPS", {}, "mips"}},
         .versions = all_versions(),
         .is_64bit = std::nullopt,
         .bits_symbol = "64BIT",
         .bits32_symbol = "32BIT",
         .default_64bit = false,
         .always_sparsemem = false,
         .zone_dma_default = false,
         .zone_dma32_default = false},
    };
    return rows;
}

const ArchInfo& info(Arch arch) {
    for (const auto& i : arch_infos())
        if (i.arch == arch) return i;
    return arch_infos().front();
}

const ArchInfo* info_of_name(std::string_view name, const ArchName** which) {
    std::string n(name);
    std::transform(n.begin(), n.end(), n.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const auto& i : arch_infos())
        for (const auto& alias : i.names)
            if (n == alias.name) {
                if (which) *which = &alias;
                return &i;
            }
    return nullptr;
}

} // namespace rules

const char* to_string(Arch a) {
    return rules::info(a).name;
}

std::optional<Arch> parse_arch(std::string_view name) {
    if (const auto* i = rules::info_of_name(name)) return i->arch;
    return std::nullopt;
}

const std::vector<Arch>& all_arches() {
    static const std::vector<Arch> arches = [] {
        std::vector<Arch> out;
        for (const auto& i : rules::arch_infos())
            out.push_back(i.arch);
        return out;
    }();
    return arches;
}

std::string make_arch(std::string_view name) {
    const rules::ArchName* which = nullptr;
    if (rules::info_of_name(name, &which)) return which->make_arch;
    std::string n(name);
    std::transform(n.begin(), n.end(), n.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return n;
}

std::string arch_dir(Arch arch) {
    return kconfig::srcarch_of(rules::info(arch).names.front().make_arch);
}

std::optional<Arch> arch_of_dir(std::string_view dir, std::string_view file_name) {
    std::optional<Arch> first;
    for (const auto& i : rules::arch_infos()) {
        if (arch_dir(i.arch) != dir) continue;
        if (!first) first = i.arch;
        for (const auto& alias : i.names)
            if (alias.make_arch != dir && file_name.find(alias.make_arch) != std::string::npos)
                return i.arch;
    }
    return first;
}

std::optional<ArchBySymbol>
arch_from_symbols(const std::function<std::optional<bool>(const char*)>& flag) {
    for (const auto& i : rules::arch_infos()) {
        for (const auto& s : i.symbols) {
            if (!flag(s.symbol).value_or(false)) continue;
            if (s.also && flag(s.also->symbol).value_or(false) != s.also->want) continue;
            return ArchBySymbol{i.arch, s.make_arch, s.symbol};
        }
    }
    return std::nullopt;
}

std::optional<ArchBySymbol> arch_from_symbols(const kconfig::Config& config) {
    return arch_from_symbols([&](const char* symbol) { return config.get_bool(symbol); });
}

std::string arch_names_list(std::string_view last_word) {
    std::string out;
    const auto infos = rules::arch_infos();
    for (std::size_t n = 0; n < infos.size(); ++n) {
        if (n > 0)
            out += n + 1 == infos.size() && !last_word.empty() ? " " + std::string(last_word) + " "
                                                               : ", ";
        out += infos[n].name;
    }
    return out;
}

} // namespace cmalign::kernel
