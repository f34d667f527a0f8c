#include <filesystem>

#include <fmt/format.h>

#include "cmalign/api.hpp"
#include "cmalign/internal/kconfig/version.hpp"
#include "cmalign/internal/kernel/arch.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/kernel/versions.hpp"

namespace cmalign {

std::optional<KernelVersion> kernel_tree_version(const std::string& tree, Diagnostics& diags) {
    auto read = kconfig::read_tree_version(tree, diags);
    if (!read) return std::nullopt;
    return read->version;
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
    } else if (auto found = detail::find_kernel_tree(
                   std::filesystem::absolute(cwd).lexically_normal().string())) {
        auto from_tree = kernel_tree_version(*found, diags);
        if (!from_tree) return std::nullopt;
        version = *from_tree;
        diags.note({}, fmt::format("using kernel {} of the tree {} (the working directory lies "
                                   "in it; not given on the command line)",
                                   version.str(), *found));
    }
    // The policy every command shares (kernel::outside_modelled_range()).
    if (auto outside = kernel::outside_modelled_range(version)) {
        if (outside->error) {
            diags.error({}, outside->message);
            return std::nullopt;
        }
        diags.warning({}, outside->message);
    }
    return version;
}

std::optional<std::string> detail::kconfig_arch(const ConfigOptions& options,
                                                const kconfig::Config& inputs) {
    // Our --arch names (docs/cli.md) and a header's to make's ARCH; the arch table answers.
    if (options.arch) return kernel::make_arch(*options.arch);
    if (inputs.header_arch) return kernel::make_arch(*inputs.header_arch);
    // Symbols only an arch's own Kconfig defines.
    if (auto found = kernel::arch_from_symbols(inputs)) return found->make_arch;
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
    auto arch = detail::kconfig_arch(options, inputs);
    if (!arch)
        return unevaluated(fmt::format("the architecture is unknown (give --arch: {})",
                                       kernel::arch_names_list()));
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
        diags.error({}, fmt::format("unknown architecture '{}' (known: {})", name,
                                    kernel::arch_names_list()));
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

detail::CommandModel detail::command_model(const ConfigOptions& given,
                                           const std::vector<std::string>& inputs) {
    auto out = command_config(given, inputs);
    evaluate_command_model(out);
    return out;
}

detail::CommandModel detail::command_config(const ConfigOptions& given,
                                            const std::vector<std::string>& inputs) {
    detail::CommandModel out;
    Diagnostics diags;
    out.config = resolve_config_options(given, inputs, diags);
    out.diagnostics = diags.items();
    return out;
}

void detail::evaluate_command_model(CommandModel& out) {
    Diagnostics diags;
    // load_model(), keeping the evaluation's record of the files it read.
    const ConfigOptions options = resolve_config_options(out.config, {}, diags);
    if (auto derive_options = kernel_options(options, diags)) {
        if (auto evaluation = evaluate_config(options, diags)) {
            out.sources = options.config_files;
            out.sources.insert(out.sources.end(), evaluation->sources.begin(),
                               evaluation->sources.end());
            if (options.kernel_tree)
                out.sources.push_back(
                    (std::filesystem::path(*options.kernel_tree) / "Makefile").string());
            out.model = kernel::derive(evaluation->config, *derive_options, diags);
        }
    }
    out.diagnostics.insert(out.diagnostics.end(), diags.items().begin(), diags.items().end());
}

void clear_caches() {
    kconfig::clear_cache();
}

} // namespace cmalign
