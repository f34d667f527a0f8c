// Running `fix` and `suggest` over inputs: the whole pipeline the CLI and the bindings call
// (load the model, read each board, plan, merge, then show or write). No output format here
// besides the the JSON of docs/json.md objects.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/api.hpp"
#include "cmalign/fix/fix.hpp"
#include "cmalign/fix/suggest.hpp"
#include "cmalign/run.hpp"

namespace cmalign {

enum class FixMode {
    plan,     // compute the edits, write nothing
    diff,     // plan + unified diff of every changed file, write nothing
    in_place, // write every changed file atomically
    output,   // write the single input's edited bytes to `out_path` (edits must all be in it)
};

struct FixRequest {
    std::vector<std::string> inputs; // files and directories (as `check`)
    ConfigOptions config;
    TreeOptions tree;
    std::optional<std::string> bootargs;
    FixMode mode = FixMode::plan;
    std::optional<std::string> out_path; // FixMode::output
    std::string diff_base;               // diff paths relative to this directory ("" = as given)
    unsigned jobs = 0;                   // 0: all cores
};

struct FixOutcome {
    std::optional<kernel::Model> model;
    std::optional<std::uint64_t> alignment; // what sizes are rounded to
    std::size_t inputs = 0;
    std::size_t boards_with_edits = 0;
    std::vector<fix::Edit> edits;        // merged, sorted by file and offset
    std::vector<Diagnostic> diagnostics; // unfixable problems, conflicts, notes
    std::vector<Diagnostic> input_errors;
    std::vector<Diagnostic> config_diagnostics;
    std::vector<Diagnostic> io_errors; // render/write failures, -o misuse
    std::string diff;                  // FixMode::diff
    std::vector<std::string> written;  // files written
    bool unfixable = false;
    bool conflict = false;
    FixMode mode = FixMode::plan; // the request's: edits only shown (plan, diff) are not applied

    // input_error: configuration, input, usage or I/O error; findings: something needs a fix
    // that was not applied (unfixable, conflict, or edits shown by plan/diff mode, as
    // `ruff --diff` and `black --check` fail so CI notices); clean: nothing to fix or all fixed.
    ExitCode exit_code() const;
};

FixOutcome run_fix(const FixRequest& request);

struct SuggestRequest {
    std::vector<std::string> inputs; // boards; may be empty with target_alignment
    ConfigOptions config;
    TreeOptions tree;
    std::optional<std::uint64_t> target_alignment;
};

struct SuggestOutcome {
    std::optional<kernel::Model> model;
    std::optional<fix::SuggestResult> result;
    std::vector<Diagnostic> errors;       // config, input or usage problems (exit 2)
    std::vector<Diagnostic> config_notes; // notes and warnings about the configuration
    // input_error on errors; findings when pools are invalid and nothing helps; else clean.
    ExitCode exit_code() const;
};

SuggestOutcome run_suggest(const SuggestRequest& request);

} // namespace cmalign
