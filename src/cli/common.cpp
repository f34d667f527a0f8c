#include "common.hpp"

#include <iostream>
#include <map>
#include <memory>
#include <vector>

namespace cmalign::cli {

void add_limit_option(CLI::App& cmd, InputLimits& limits) {
    // One --limit per command, written to every InputLimits the command's request holds (the
    // configuration's and the device trees').
    static std::map<const CLI::App*, std::shared_ptr<std::vector<InputLimits*>>> targets;
    auto& list = targets[&cmd];
    if (!list) {
        list = std::make_shared<std::vector<InputLimits*>>();
        std::string names;
        for (const auto& row : limit_table())
            names += (names.empty() ? "" : ", ") + std::string(row.name);
        cmd.add_option_function<std::vector<std::string>>(
            "--limit",
            [list = list](const std::vector<std::string>& specs) {
                for (const auto& spec : specs)
                    for (auto* target : *list)
                        if (auto error = set_limit(*target, spec))
                            throw CLI::ValidationError(*error);
            },
            "NAME=VALUE raises a bound on the work one input may cause (" + names +
                "; docs/limits.md); repeatable");
    }
    list->push_back(&limits);
}

void add_config_options(CLI::App& cmd, ConfigOptions& options) {
    cmd.add_option("-c,--config", options.config_files,
                   "a .config, defconfig or fragment; repeatable, later files win");
    cmd.add_option("--set", options.sets, "CONFIG_X=VALUE applied after all files; repeatable");
    cmd.add_option("--unset", options.unsets,
                   "CONFIG_X forgotten after the sets (as olddefconfig drops a symbol the "
                   "version lacks); repeatable");
    cmd.add_option(
        "--arch", options.arch,
        "arm64, arm, x86_64, x86, riscv, powerpc, loongarch, mips (default: from the config)");
    cmd.add_option("--kernel-version", options.kernel_version,
                   "X.Y[.Z] whose rules apply (default: config header, --kernel-tree, newest)");
    cmd.add_option("--kernel-tree", options.kernel_tree, "a kernel source tree")
        ->check(CLI::ExistingDirectory);
    cmd.add_flag("--kconfig-shell", options.kconfig_shell,
                 "with --kernel-tree: run Kconfig's toolchain probes (CROSS_COMPILE, LLVM from the "
                 "environment) instead of assuming Debian's gcc 12");
    add_limit_option(cmd, options.limits);
}

void add_sweep_options(CLI::App& cmd, SweepOptions& options, const std::string& each) {
    cmd.add_option("--sweep-versions", options.versions,
                   each + " each kernel version: 6.1,6.6,6.12 or 6.1..6.18, boundaries, all");
    cmd.add_option("--sweep-page-sizes", options.page_sizes,
                   "... and each page size: 4K,16K,64K or all (needs --sweep-versions)");
}

std::optional<SweepSpec> sweep_spec(const SweepOptions& options, ExitCode& exit_code) {
    if (!options.page_sizes.empty() && options.versions.empty()) {
        std::cerr << "cmalign: error: --sweep-page-sizes needs --sweep-versions\n";
        exit_code = ExitCode::input_error;
        return std::nullopt;
    }
    if (options.versions.empty()) return std::nullopt;
    SweepSpec spec{options.versions, std::nullopt};
    if (!options.page_sizes.empty()) spec.page_sizes = options.page_sizes;
    return spec;
}

void print_diagnostics(const Diagnostics& diags) {
    for (const auto& d : diags.items())
        std::cerr << format_gcc(d) << '\n';
}

} // namespace cmalign::cli
