// `check --sweep-versions … [--sweep-page-sizes …]`: the same check over many kernel versions
// and page sizes, the rest of the configuration unchanged.
//
// Each cell is a plain run_check() (or run_suggest()) whose ConfigOptions differ from the given
// ones only by the cell's --kernel-version and the --set/--unset lines kernel::retarget()
// chose, so a cell is exactly what a single command with those options prints.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cmalign/kernel/versions.hpp"
#include "cmalign/report/sweep.hpp"
#include "cmalign/run.hpp"
#include "cmalign/run_fix.hpp"

namespace cmalign {

struct SweepSpec {
    std::string versions;                  // "6.1,6.6,6.12", "6.1..6.18", "boundaries", "all"
    std::optional<std::string> page_sizes; // "4K,16K,64K", "all"; nullopt: the configuration's
};

// One (version, page size) combination and the options that reproduce it as a single command.
struct SweepCell {
    KernelVersion version;
    std::optional<int> page_shift; // nullopt: the configuration's own page size
    kernel::Retarget change;
    ConfigOptions config; // the given options + --kernel-version + change.sets/dropped
};

struct SweepPlan {
    kernel::Arch arch = kernel::Arch::arm64;
    std::optional<KernelVersion> own_version; // --kernel-version, else the config header
    std::vector<SweepCell> cells;             // page size outer (ascending), version inner
};

// Reads the configuration once (for its arch, own version and symbols) and lists the cells.
// nullopt and errors on a bad list or an unusable configuration.
std::optional<SweepPlan> plan_sweep(const ConfigOptions& config, const SweepSpec& spec,
                                    Diagnostics& diags);

struct SweepCheckCell {
    SweepCell cell;
    CheckOutcome outcome; // empty (no model) when cell.change.unavailable is set
};
struct SweepCheckOutcome {
    std::optional<SweepPlan> plan;
    std::vector<SweepCheckCell> cells;
    std::vector<Diagnostic> errors; // usage and configuration errors of the sweep itself
    // The worst of the cells' check exit codes; input_error for an error of the sweep itself.
    ExitCode exit_code(bool werror) const;
};
SweepCheckOutcome run_check_sweep(const CheckRequest& request, const SweepSpec& spec);

// The pool × combination matrix of a check sweep (see report/sweep.hpp for the text).
report::SweepMatrix sweep_matrix(const SweepCheckOutcome& outcome);

struct SweepSuggestCell {
    SweepCell cell;
    SuggestOutcome outcome;
};
struct SweepSuggestOutcome {
    std::optional<SweepPlan> plan;
    std::vector<SweepSuggestCell> cells;
    std::vector<Diagnostic> errors;
    ExitCode exit_code() const; // the worst of the cells' suggest exit codes
};
SweepSuggestOutcome run_suggest_sweep(const SuggestRequest& request, const SweepSpec& spec);

} // namespace cmalign
