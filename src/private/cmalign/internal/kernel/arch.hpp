// Questions about arches that the layers above the kernel ask (the kconfig evaluation's make
// ARCH, the arch a path of a kernel tree names, the arch a config reveals). Answered from the one
// arch table, rules::arch_infos() (src/kernel/arch.cpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::kernel {

// make's ARCH for a name (any case) a user gave: the make ARCH of a modelled name or alias
// (ppc64el → powerpc, aarch64 → arm64, i686 → i386); any other name lower-cased as it is (an
// arch cmalign does not model may still have its Kconfig evaluated).
std::string make_arch(std::string_view name);

// arch/<dir> of an arch in a kernel tree (the top Makefile's SRCARCH of its make ARCH).
std::string arch_dir(Arch arch);

// The arch whose sources lie in arch/<dir> (nullopt: none modelled). arch/x86 holds two: the
// file name decides where it names one's make ARCH (i386_defconfig, x86_64_defconfig), else the
// first of the table (x86_64).
std::optional<Arch> arch_of_dir(std::string_view dir, std::string_view file_name);

// The arch a configuration without a header reveals by its arch symbols (the table's order,
// first match wins). `flag` answers a symbol (no CONFIG_ prefix): nullopt when the configuration
// does not have it.
struct ArchBySymbol {
    Arch arch;
    std::string make_arch; // the make ARCH such a configuration was written for
    const char* symbol;    // the symbol that told
};
std::optional<ArchBySymbol>
arch_from_symbols(const std::function<std::optional<bool>(const char*)>& flag);
std::optional<ArchBySymbol> arch_from_symbols(const kconfig::Config& config);

// "arm64, arm, x86_64, …" (`last_word` "and": "… loongarch and mips").
std::string arch_names_list(std::string_view last_word = {});

} // namespace cmalign::kernel
