#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "cmalign/api.hpp"
#include "cmalign/kernel/versions.hpp"
#include "cmalign/run_inputs.hpp"

namespace cmalign {

std::optional<KernelVersion> kernel_tree_version(const std::string& tree, Diagnostics& diags) {
    std::string path = tree + "/Makefile";
    std::ifstream in(path);
    if (!in) {
        diags.error({path, 0, 0}, "cannot read the kernel tree's Makefile");
        return std::nullopt;
    }
    // The first lines are "VERSION = 6", "PATCHLEVEL = 12", "SUBLEVEL = 117".
    int found = 0;
    KernelVersion v;
    v.has_patch = true;
    std::string line;
    for (int n = 0; n < 20 && std::getline(in, line); ++n) {
        auto value_of = [&](std::string_view key, int& out) {
            if (!line.starts_with(key)) return;
            auto eq = line.find('=');
            if (eq == std::string::npos) return;
            std::istringstream number(line.substr(eq + 1));
            if (number >> out) ++found;
        };
        value_of("VERSION", v.major);
        value_of("PATCHLEVEL", v.minor);
        value_of("SUBLEVEL", v.patch);
    }
    if (found != 3) {
        diags.error({path, 0, 0}, "no VERSION/PATCHLEVEL/SUBLEVEL in the kernel tree's Makefile");
        return std::nullopt;
    }
    return v;
}

std::optional<KernelVersion> table_version(const std::optional<std::string>& kernel_version,
                                           const std::optional<std::string>& kernel_tree,
                                           Diagnostics& diags, const std::string& cwd) {
    KernelVersion version = kernel::newest_modelled_version();
    if (kernel_version) {
        auto parsed = KernelVersion::parse(*kernel_version);
        if (!parsed) {
            diags.error({}, fmt::format("invalid kernel version '{}'", *kernel_version));
            return std::nullopt;
        }
        version = *parsed;
    } else if (kernel_tree) {
        auto from_tree = kernel_tree_version(*kernel_tree, diags);
        if (!from_tree) return std::nullopt;
        version = *from_tree;
    } else if (auto found =
                   find_kernel_tree(std::filesystem::absolute(cwd).lexically_normal().string())) {
        auto from_tree = kernel_tree_version(*found, diags);
        if (!from_tree) return std::nullopt;
        version = *from_tree;
        diags.note({}, fmt::format("using kernel {} of the tree {} (the working directory lies "
                                   "in it; not given on the command line)",
                                   version.str(), *found));
    }
    // The tables key on major.minor: 7.2.13 is inside a range that ends at 7.2.
    const KernelVersion release{version.major, version.minor, 0, false};
    if (release < kernel::oldest_modelled_version() || release > kernel::newest_modelled_version())
        diags.warning({}, fmt::format("kernel {} is outside the modelled range {}–{}; using the "
                                      "nearest rules",
                                      version.str(), kernel::oldest_modelled_version().str(),
                                      kernel::newest_modelled_version().str()));
    return version;
}

std::optional<std::string> kconfig_arch(const ConfigOptions& options,
                                        const kconfig::Config& inputs) {
    // Our --arch names (docs/cli.md) to make's ARCH; a name that already is one stays.
    static const std::map<std::string, std::string, std::less<>> to_make = {
        {"aarch64", "arm64"},
        {"armhf", "arm"},
        {"armel", "arm"},
        {"armv7", "arm"},
        {"amd64", "x86_64"},
        {"x64", "x86_64"},
        {"i686", "i386"},
        {"x86_32", "i386"},
        {"ia32", "i386"},
        {"riscv64", "riscv"},
        {"riscv32", "riscv"},
        {"ppc", "powerpc"},
        {"ppc64", "powerpc"},
        {"ppc64le", "powerpc"},
        {"mips64", "mips"},
        {"mipsel", "mips"},
        {"loongarch64", "loongarch"},
    };
    auto normalize = [&](std::string a) {
        std::transform(a.begin(), a.end(), a.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (auto it = to_make.find(a); it != to_make.end()) return it->second;
        return a;
    };
    if (options.arch) return normalize(*options.arch);
    if (inputs.header_arch) return normalize(*inputs.header_arch);
    // Symbols only an arch's own Kconfig defines, most specific first.
    static const std::pair<const char*, const char*> by_symbol[] = {
        {"X86_64", "x86_64"}, {"X86_32", "i386"},         {"ARM64", "arm64"},
        {"ARM", "arm"},       {"RISCV", "riscv"},         {"PPC", "powerpc"},
        {"MIPS", "mips"},     {"LOONGARCH", "loongarch"}, {"X86", "x86"},
    };
    for (auto [symbol, arch] : by_symbol) {
        if (inputs.get_bool(symbol).value_or(false)) return std::string(arch);
    }
    return std::nullopt;
}

std::optional<kconfig::Evaluation> evaluate_config(const ConfigOptions& given, Diagnostics& diags) {
    // As load_model(): the kernel tree a config lies in is evaluated (`config` and `calc` agree).
    const ConfigOptions options = resolve_config_options(given, {}, diags);
    kconfig::Config inputs;
    if (!kconfig::load(options.config_files, options.sets, inputs, diags, options.limits))
        return std::nullopt;
    for (const auto& name : options.unsets) // --unset: as if no input had set it
        inputs.erase(name);
    if (!options.kernel_tree) {
        kconfig::Evaluation plain;
        plain.config = std::move(inputs);
        return plain;
    }
    auto unevaluated = [&](const std::string& why) {
        diags.note({},
                   fmt::format("Kconfig of {} not evaluated: {}; the inputs are used as given",
                               *options.kernel_tree, why),
                   "kconfig-not-evaluated");
        kconfig::Evaluation plain;
        plain.config = std::move(inputs);
        return plain;
    };
    // A directory with only part of a tree (device trees and headers) still serves as include
    // path and version; without a top Kconfig there is nothing to evaluate.
    if (!std::filesystem::exists(std::filesystem::path(*options.kernel_tree) / "Kconfig"))
        return unevaluated("it has no top-level Kconfig");
    auto arch = kconfig_arch(options, inputs);
    if (!arch)
        return unevaluated("the architecture is unknown (give --arch: arm64, arm, x86_64, x86, "
                           "riscv, powerpc, mips, loongarch)");
    kconfig::EvalOptions eval_options;
    eval_options.run_shell = options.kconfig_shell;
    eval_options.limits = options.limits;
    // kbuild takes CROSS_COMPILE and LLVM from the environment; its own CC/LD definitions
    // override environment variables of those names.
    for (const auto& [name, value] : options.kconfig_environment)
        eval_options.env[name] = value;
    eval_options.input_order = options.config_files;
    eval_options.cache_dir = options.cache_dir.value_or("");
    auto result = kconfig::evaluate(*options.kernel_tree, *arch, inputs, eval_options, diags);
    if (!result) return std::nullopt;
    if (!result->assumptions.empty()) {
        const auto& first = result->assumptions.front();
        diags.note({},
                   fmt::format("Kconfig: {} toolchain probes were not run but answered as a build "
                               "with gcc 12 would see them (first: '{}' → '{}'); "
                               "--kconfig-shell runs them",
                               result->assumptions.size(), first.command, first.result),
                   "kconfig-assumption");
    }
    return result;
}

std::optional<kconfig::Config> load_config(const ConfigOptions& given, Diagnostics& diags) {
    const ConfigOptions options = resolve_config_options(given, {}, diags);
    auto result = evaluate_config(options, diags);
    if (!result) return std::nullopt;
    return std::move(result->config);
}

std::optional<kernel::Arch> arch_option(std::string_view name, Diagnostics& diags) {
    auto arch = kernel::parse_arch(name);
    if (!arch) {
        std::string known;
        for (auto a : kernel::all_arches())
            known += (known.empty() ? "" : ", ") + std::string(kernel::to_string(a));
        diags.error({}, fmt::format("unknown architecture '{}' (known: {})", name, known));
    }
    return arch;
}

std::optional<kernel::Options> kernel_options(const ConfigOptions& options, Diagnostics& diags) {
    kernel::Options out;
    if (options.arch) {
        out.arch = arch_option(*options.arch, diags);
        if (!out.arch) return std::nullopt;
    }
    if (options.kernel_version) {
        out.version = KernelVersion::parse(*options.kernel_version);
        if (!out.version) {
            diags.error({}, fmt::format("invalid kernel version '{}' (expected X.Y or X.Y.Z)",
                                        *options.kernel_version));
            return std::nullopt;
        }
    }
    if (options.kernel_tree) {
        out.tree_version = kernel_tree_version(*options.kernel_tree, diags);
        if (!out.tree_version) return std::nullopt;
    }
    return out;
}

std::optional<kernel::Model> load_model(const ConfigOptions& given, Diagnostics& diags) {
    const ConfigOptions options = resolve_config_options(given, {}, diags);
    auto derive_options = kernel_options(options, diags);
    if (!derive_options) return std::nullopt;
    auto config = load_config(options, diags);
    if (!config) return std::nullopt;
    return kernel::derive(*config, *derive_options, diags);
}

CommandModel command_model(const ConfigOptions& given, const std::vector<std::string>& inputs) {
    CommandModel out;
    Diagnostics diags;
    out.config = resolve_config_options(given, inputs, diags);
    out.model = load_model(out.config, diags);
    out.diagnostics = diags.items();
    return out;
}

void clear_caches() {
    kconfig::clear_cache();
}

} // namespace cmalign
