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
#include "cmalign/core/limits.hpp"

namespace cmalign {

// The options every command that reads device trees takes: -I, -D, --kernel-tree.
struct TreeOptions {
    std::vector<std::string> include_dirs;
    std::vector<std::string> defines; // NAME or NAME=VALUE
    std::optional<std::string> kernel_tree;
    // --overlay: .dtso/.dtbo files applied, in order, to every base as fdtoverlay does.
    std::vector<std::string> overlays;
    // --limit: bounds on the work one input may cause (file and line size, nesting, counts).
    InputLimits limits;
};

// Files named on the command line, directories searched recursively for boards (.dts, .dtso,
// .dtb, .dtbo; a .dtsi only when named), sorted for stable output. Missing paths are errors,
// and so are paths that hold no board at all (so a gate never passes by checking nothing).
std::vector<std::string> expand_inputs(const std::vector<std::string>& paths, Diagnostics& diags);

struct CheckRequest {
    std::vector<std::string> inputs; // files and directories
    ConfigOptions config;
    TreeOptions tree;
    checks::Options checks;
    // --affected-by: when not empty, only the inputs whose tree includes one of these files
    // (or that are one of them) are checked; see inputs_affected_by().
    std::vector<std::string> affected_by;
    unsigned jobs = 0; // 0: all cores
    // Called after each input, from worker threads (serialised): done, total.
    std::function<void(std::size_t, std::size_t)> progress;
};

struct CheckOutcome {
    std::optional<kernel::Model> model;
    std::vector<checks::Result> results;        // one per input that could be read, input order
    std::vector<Diagnostic> input_errors;       // inputs that could not be read or parsed
    std::vector<Diagnostic> config_diagnostics; // problems in the configuration itself
    std::size_t inputs = 0;                     // inputs checked
    std::size_t unaffected_inputs = 0;          // inputs left out by affected_by
    // Every file the outcome was computed from, as a depfile lists them: the -c inputs, the
    // Kconfig files and Makefile of an evaluated tree, each board and overlay with everything its
    // preprocessing read. nullopt when one is not known (dt::Tree::sources) or not all inputs
    // could be read.
    std::optional<std::vector<std::string>> sources;

    bool unusable_input() const { return !model || !input_errors.empty(); }
    // input_error: no model or an unreadable input; findings: an error-level finding (or a
    // warning, with werror) in any input; else clean.
    ExitCode exit_code(bool werror) const;
};

CheckOutcome run_check(const CheckRequest& request);

// The inputs (already expanded: files) whose tree includes one of `changed`, through the
// preprocessor's record of every file it read (#include at any depth, found through -I, the
// kernel's include prefixes or the including file's directory) and the DTS parser's record of
// the files dtc's /include/ and /incbin/ read, or that are one of them. A DTB has no include
// record: it is affected only when named. A changed file that is one of `config_files` (the -c
// inputs) affects every input. Paths are compared after resolving symlinks and "..". Inputs that
// cannot be preprocessed (or, with /include/, parsed) are kept (so their error is reported).
// With `cache_dir` the include graph of each board is kept there and read back while every file
// in it is unchanged (ConfigOptions::cache_dir).
std::vector<std::string> inputs_affected_by(const std::vector<std::string>& inputs,
                                            const std::vector<std::string>& changed,
                                            const TreeOptions& tree, unsigned jobs = 0,
                                            const std::vector<std::string>& config_files = {},
                                            const std::string& cache_dir = {});

// `tree`: the resolved device tree of one file (with the overlays applied), or the subtree at
// `path`, as JSON nodes or DTS text. A path with no node is an error located in the file.
enum class TreeFormat { json, dts };
struct TreeRequest {
    std::string file;
    TreeOptions tree;
    std::string path = "/";
    TreeFormat format = TreeFormat::json;
};
struct TreeOutcome {
    std::optional<std::string> json; // TreeFormat::json: the JSON text (docs/json.md)
    std::optional<std::string> dts;  // TreeFormat::dts
    Diagnostics diags;
    ExitCode exit_code() const; // input_error without a result or with an error
};
TreeOutcome run_tree(const TreeRequest& request);

} // namespace cmalign
