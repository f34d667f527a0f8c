// Architectures: their names as docs/cli.md spells them, the aliases users type, and the list.
#include "cmalign/kernel/model.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "cmalign/kernel/rules.hpp"

namespace cmalign::kernel {

const char* to_string(Arch a) {
    return rules::info(a).name;
}

std::optional<Arch> parse_arch(std::string_view name) {
    std::string n(name);
    std::transform(n.begin(), n.end(), n.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    static const std::map<std::string, Arch, std::less<>> aliases = {
        {"arm64", Arch::arm64},
        {"aarch64", Arch::arm64},
        {"arm", Arch::arm},
        {"armhf", Arch::arm},
        {"armel", Arch::arm},
        {"armv7", Arch::arm},
        {"x86_64", Arch::x86_64},
        {"amd64", Arch::x86_64},
        {"x64", Arch::x86_64},
        {"x86", Arch::x86},
        {"i386", Arch::x86},
        {"i686", Arch::x86},
        {"x86_32", Arch::x86},
        {"ia32", Arch::x86},
        {"riscv", Arch::riscv},
        {"riscv64", Arch::riscv},
        {"riscv32", Arch::riscv},
        {"powerpc", Arch::powerpc},
        {"ppc", Arch::powerpc},
        {"ppc64", Arch::powerpc},
        {"ppc64le", Arch::powerpc},
        {"powerpc64", Arch::powerpc},
        {"ppc64el", Arch::powerpc},
        {"loongarch", Arch::loongarch},
        {"loongarch64", Arch::loongarch},
        {"mips", Arch::mips},
        {"mips64", Arch::mips},
        {"mipsel", Arch::mips},
        {"mips64el", Arch::mips},
    };
    if (auto it = aliases.find(n); it != aliases.end()) return it->second;
    return std::nullopt;
}

const std::vector<Arch>& all_arches() {
    static const std::vector<Arch> arches = {Arch::arm64,     Arch::arm,   Arch::x86_64,
                                             Arch::x86,       Arch::riscv, Arch::powerpc,
                                             Arch::loongarch, Arch::mips};
    return arches;
}

} // namespace cmalign::kernel
