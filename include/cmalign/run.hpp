// Running `check` over many inputs: files and directories, DTS and DTB, on all cores.
// The CLI and the bindings call this; it owns no output format.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/api.hpp"
#include "cmalign/checks/checks.hpp"
#include "cmalign/core/diagnostic.hpp"
#include "cmalign/dt/dts.hpp"
#include "cmalign/dt/overlay.hpp"
#include "cmalign/dt/preprocess.hpp"
#include "cmalign/dt/tree.hpp"

namespace cmalign {

// The options every command that reads device trees takes: -I, -D, --kernel-tree.
struct TreeOptions {
    std::vector<std::string> include_dirs;
    std::vector<std::string> defines; // NAME or NAME=VALUE
    std::optional<std::string> kernel_tree;
    // --overlay: .dtso/.dtbo files applied, in order, to every base as fdtoverlay does.
    std::vector<std::string> overlays;
};

dt::PreprocessOptions preprocess_options(const TreeOptions& options);

// Files named on the command line, directories searched recursively for boards (.dts, .dtso,
// .dtb, .dtbo; a .dtsi only when named), sorted for stable output. Missing paths are errors.
std::vector<std::string> expand_inputs(const std::vector<std::string>& paths, Diagnostics& diags);

// A DTS (through the built-in preprocessor) or a DTB/DTBO (libfdt), chosen by content: a file
// starting with the FDT magic is a blob whatever its name.
std::optional<dt::Tree> load_tree(const std::string& path, const dt::PreprocessOptions& options,
                                  dt::FileCache& cache, Diagnostics& diags,
                                  const dt::ResolveOptions& resolve = {});

// The --overlay files, read once (a DTS overlay resolved as dtc builds a .dtbo, every cell
// located). nullopt (errors in diags) when one cannot be read or is not an overlay.
std::optional<std::vector<dt::Tree>> load_overlays(const std::vector<std::string>& paths,
                                                   const dt::PreprocessOptions& options,
                                                   dt::FileCache& cache, Diagnostics& diags);

// One board as the commands see it. With overlays: the base read whole with its labels as
// /__symbols__ (dtc -@), then each overlay applied (dt::apply_overlay). Without: load_tree(),
// and a lone overlay becomes the part of it that needs no base (dt::overlay_without_base) with
// a note saying the base is unknown.
std::optional<dt::Tree> load_board(const std::string& path, const dt::PreprocessOptions& options,
                                   dt::FileCache& cache, Diagnostics& diags,
                                   const dt::ResolveOptions& resolve,
                                   const std::vector<dt::Tree>& overlays,
                                   const dt::OverlayOptions& overlay_options = {});

// What check and fix need from a DTS: source locations of the cells under /reserved-memory,
// /memory and /chosen only (locating every cell of a board costs about 40% of resolving it).
dt::ResolveOptions reservation_resolve_options();

// Calls visit(i) for every i in [0, count) on `jobs` threads (0: all cores), each index once.
void for_each_input(std::size_t count, unsigned jobs,
                    const std::function<void(std::size_t)>& visit);

struct CheckRequest {
    std::vector<std::string> inputs; // files and directories
    ConfigOptions config;
    TreeOptions tree;
    checks::Options checks;
    unsigned jobs = 0; // 0: all cores
    // Called after each input, from worker threads (serialised): done, total.
    std::function<void(std::size_t, std::size_t)> progress;
};

struct CheckOutcome {
    std::optional<kernel::Model> model;
    std::vector<checks::Result> results;        // one per input that could be read, input order
    std::vector<Diagnostic> input_errors;       // inputs that could not be read or parsed
    std::vector<Diagnostic> config_diagnostics; // problems in the configuration itself
    std::size_t inputs = 0;

    bool unusable_input() const { return !model || !input_errors.empty(); }
};

CheckOutcome run_check(const CheckRequest& request);

// What run_check() does with one input once it is read and checked: a failed read goes to
// input_errors, else the reading warnings are prepended to the result. Shared by the sweep so
// that each of its cells is assembled exactly as a single check.
void add_input_result(CheckOutcome& outcome, std::optional<checks::Result> result,
                      std::vector<Diagnostic> read_diagnostics);

} // namespace cmalign
