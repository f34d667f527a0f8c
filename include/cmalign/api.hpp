// The library's front door: what the CLI and the bindings call. Each function takes plain
// option structs and reports through Diagnostics, so callers decide how to show problems.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign {

// The options every command that needs a kernel configuration takes (contract: common options).
struct ConfigOptions {
    std::vector<std::string> config_files; // -c, in order
    std::vector<std::string> sets;         // --set CONFIG_X=VALUE, applied after the files
    // --unset CONFIG_X, applied last: the symbol is forgotten, as olddefconfig drops one the
    // version's Kconfig does not define (a sweep cell moved to such a version says which).
    std::vector<std::string> unsets;
    std::optional<std::string> arch;
    std::optional<std::string> kernel_version;
    std::optional<std::string> kernel_tree;
};

// "6.12.117" from a kernel tree's top Makefile (VERSION/PATCHLEVEL/SUBLEVEL); nullopt if absent.
std::optional<KernelVersion> kernel_tree_version(const std::string& tree, Diagnostics& diags);

// --arch/--kernel-version/--kernel-tree as kernel::Options; nullopt (and an error) when invalid.
std::optional<kernel::Options> kernel_options(const ConfigOptions& options, Diagnostics& diags);

// Reads and merges the configuration files and sets.
std::optional<kconfig::Config> load_config(const ConfigOptions& options, Diagnostics& diags);

// load_config() + kernel::derive(): what `cmalign calc` prints.
std::optional<kernel::Model> load_model(const ConfigOptions& options, Diagnostics& diags);

} // namespace cmalign
