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
    std::vector<std::string> sets;         // --set CONFIG_X=VALUE, applied last
    std::optional<std::string> arch;
    std::optional<std::string> kernel_version;
    std::optional<std::string> kernel_tree;
};

// "6.12.117" from a kernel tree's top Makefile (VERSION/PATCHLEVEL/SUBLEVEL); nullopt if absent.
std::optional<KernelVersion> kernel_tree_version(const std::string& tree, Diagnostics& diags);

// Where resolve_config_options() looks: the working directory and ARCH of the environment.
struct ResolveEnvironment {
    std::string cwd;
    std::optional<std::string> arch; // $ARCH
    static ResolveEnvironment current();
};

// The root of the kernel source tree that `path` (file or directory) lies in: the nearest
// ancestor with a top Makefile setting VERSION and PATCHLEVEL and a Kconfig file.
std::optional<std::string> find_kernel_tree(const std::string& path);

// Fills in what the user did not give (issue 7, "found without asking"), and says so in one note:
//  - kernel_tree: the tree a -c file, an input file (`inputs`: DTS/DTB) or the working
//    directory lies in, in that order;
//  - arch: from a config path arch/<arch>/configs/…, else an input path arch/<arch>/boot/dts/…,
//    else ARCH in the environment; not when a config file has kconfig's header (it names the
//    arch itself).
// Idempotent: what is already set is kept, so every entry point may call it.
ConfigOptions resolve_config_options(const ConfigOptions& options,
                                     const std::vector<std::string>& inputs, Diagnostics& diags,
                                     const ResolveEnvironment& env = ResolveEnvironment::current());

// --arch/--kernel-version/--kernel-tree as kernel::Options; nullopt (and an error) when invalid.
std::optional<kernel::Options> kernel_options(const ConfigOptions& options, Diagnostics& diags);

// Reads and merges the configuration files and sets. Like load_model(), it first calls
// resolve_config_options() (without inputs).
std::optional<kconfig::Config> load_config(const ConfigOptions& options, Diagnostics& diags);

// load_config() + kernel::derive(): what `cmalign calc` prints.
std::optional<kernel::Model> load_model(const ConfigOptions& options, Diagnostics& diags);

} // namespace cmalign
