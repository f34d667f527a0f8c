#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cmalign/api.hpp"

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

std::optional<kconfig::Config> load_config(const ConfigOptions& given, Diagnostics& diags) {
    const ConfigOptions options = resolve_config_options(given, {}, diags);
    kconfig::Config config;
    if (!kconfig::load(options.config_files, options.sets, config, diags)) return std::nullopt;
    return config;
}

std::optional<kernel::Options> kernel_options(const ConfigOptions& options, Diagnostics& diags) {
    kernel::Options out;
    if (options.arch) {
        out.arch = kernel::parse_arch(*options.arch);
        if (!out.arch) {
            diags.error({}, fmt::format("unknown architecture '{}'", *options.arch));
            return std::nullopt;
        }
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

} // namespace cmalign
