// The library's front door: what the CLI and the bindings call. Each function takes plain
// option structs and reports through Diagnostics, so callers decide how to show problems.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/exit_code.hpp"
#include "cmalign/core/limits.hpp"
#include "cmalign/kconfig/config.hpp"
#include "cmalign/kconfig/kconfig_tree.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign {

// The options every command that needs a kernel configuration takes (docs/cli.md, common options).
struct ConfigOptions {
    std::vector<std::string> config_files; // -c, in order
    std::vector<std::string> sets;         // --set CONFIG_X=VALUE, applied after the files
    // --unset CONFIG_X, applied last: the symbol is forgotten, as olddefconfig drops one the
    // version's Kconfig does not define (a sweep cell moved to such a version says which).
    std::vector<std::string> unsets;
    std::optional<std::string> arch;
    std::optional<std::string> kernel_version;
    std::optional<std::string> kernel_tree;
    // --kconfig-shell: run Kconfig's toolchain probes ($(shell,...)) with CROSS_COMPILE/LLVM from
    // the environment, as kbuild does; off: assume Debian's gcc 12 and list the assumptions.
    bool kconfig_shell = false;
    // The caller's $ARCH, the last place the arch is taken from (a BSP build exports ARCH for
    // its own reasons, so the library never reads the environment itself: the CLI passes it).
    std::optional<std::string> environment_arch;
    // With kconfig_shell: CROSS_COMPILE and LLVM as kbuild takes them from the environment
    // (passed in by the caller, like environment_arch).
    std::map<std::string, std::string> kconfig_environment;
    // --limit: file and line size for .config/Kconfig files, Kconfig source depth, macro depth
    // and symbol count.
    InputLimits limits;
    // --cache-dir: where evaluated Kconfig configurations are kept between runs (off when unset;
    // the CLI's default is $XDG_CACHE_HOME/cmalign, --no-cache turns it off). An entry is used
    // only while every Kconfig file it was computed from is unchanged.
    std::optional<std::string> cache_dir;
};

// "6.12.117" from a kernel tree's top Makefile (VERSION/PATCHLEVEL/SUBLEVEL); nullopt if absent.
std::optional<KernelVersion> kernel_tree_version(const std::string& tree, Diagnostics& diags);

// The kernel version `table` is drawn for: --kernel-version, else the version of --kernel-tree,
// else of the kernel tree the working directory lies in (one note says so), else the newest
// modelled. Outside the modelled range the policy of every command applies
// (kernel::outside_modelled_range(): older is an error and nullopt, newer a warning).
std::optional<KernelVersion> table_version(const std::optional<std::string>& kernel_version,
                                           const std::optional<std::string>& kernel_tree,
                                           Diagnostics& diags, const std::string& cwd = ".");

// Where resolve_config_options() looks: the working directory, and an ARCH (else
// ConfigOptions::environment_arch).
struct ResolveEnvironment {
    std::string cwd;
    std::optional<std::string> arch;
    static ResolveEnvironment current(); // the working directory only
};

// Fills in what the user did not give ("found without asking"), and says so in one note:
//  - kernel_tree: the tree a -c file, an input file (`inputs`: DTS/DTB) or the working
//    directory lies in, in that order;
//  - arch: from a config path arch/<arch>/configs/…, else an input path arch/<arch>/boot/dts/…,
//    else ARCH of the environment the caller passed in; not when a config file has kconfig's header
//    (it names the arch itself).
// Idempotent: what is already set is kept, so every entry point may call it.
ConfigOptions resolve_config_options(const ConfigOptions& options,
                                     const std::vector<std::string>& inputs, Diagnostics& diags,
                                     const ResolveEnvironment& env = ResolveEnvironment::current());

// --arch/--kernel-version/--kernel-tree as kernel::Options; nullopt (and an error) when invalid.
std::optional<kernel::Options> kernel_options(const ConfigOptions& options, Diagnostics& diags);
// --arch as every command reads it (aliases included): nullopt and "unknown architecture '…'".
std::optional<kernel::Arch> arch_option(std::string_view name, Diagnostics& diags);

// Reads and merges the inputs, then (with --kernel-tree) evaluates the tree's Kconfig on them as
// `make olddefconfig` does. The toolchain assumptions are in the result and, as one note, in diags.
std::optional<kconfig::Evaluation> evaluate_config(const ConfigOptions& options,
                                                   Diagnostics& diags);

// Reads and merges the configuration files and sets; with --kernel-tree, the full configuration
// Kconfig gives for them (evaluate_config().config). Like load_model(), it first calls
// resolve_config_options() (without inputs).
std::optional<kconfig::Config> load_config(const ConfigOptions& options, Diagnostics& diags);

// Drops what the library keeps between calls (the parsed kernel trees), for a long-running
// process that is done with them.
void clear_caches();

// load_config() + kernel::derive(): what `cmalign calc` prints.
std::optional<kernel::Model> load_model(const ConfigOptions& options, Diagnostics& diags);

// ---- the commands that need no device tree (run_check() and the others: run*.hpp) ----------

// `calc`: load_model() with its diagnostics.
struct CalcOutcome {
    std::optional<kernel::Model> model;
    Diagnostics diags;
    // The diagnostics that are not the model's own (a text report shows those with the
    // derivation): the warnings of reading the inputs.
    std::vector<Diagnostic> reading_diagnostics() const;
    ExitCode exit_code() const; // input_error without a model or with an error
};
CalcOutcome run_calc(const ConfigOptions& options);

// `table`: the what-if grid of one arch and version (table_version()).
struct TableRequest {
    std::string arch = "arm64";
    std::optional<std::string> kernel_version;
    std::optional<std::string> kernel_tree;
};
struct TableOutcome {
    std::optional<kernel::Arch> arch;
    std::optional<KernelVersion> version;
    std::vector<kernel::TableRow> rows;
    Diagnostics diags;
    ExitCode exit_code() const; // input_error without an arch or a version
};
TableOutcome run_table(const TableRequest& request);

// `config`: evaluate_config(), the configuration after merging (and with a kernel tree,
// Kconfig's evaluation) with the text conf_write() gives it.
struct ConfigOutcome {
    std::optional<kconfig::Evaluation> evaluation;
    Diagnostics diags;
    ExitCode exit_code() const; // input_error without an evaluation or with an error
};
ConfigOutcome run_config(const ConfigOptions& options);

} // namespace cmalign
