// Shared pieces of the command-line front end: option groups and output of diagnostics.
// The CLI only parses arguments and calls the library; nothing here knows kernel rules.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cmalign/api.hpp"
#include "cmalign/core/diagnostic.hpp"
#include "cmalign/run.hpp"
#include "cmalign/run_inputs.hpp" // load_tree() for `tree`

namespace cmalign::cli {

// Exit codes of the contract.
inline constexpr int exit_clean = 0;
inline constexpr int exit_findings = 1;
inline constexpr int exit_input_error = 2;

// -c/--config, --set, --arch, --kernel-version, --kernel-tree
void add_config_options(CLI::App& cmd, ConfigOptions& options);

// Prints diagnostics gcc-style on stderr (used for input errors of every command).
void print_diagnostics(const Diagnostics& diags);

// Each command registers itself and returns the exit code through `exit_code` when run.
void register_calc(CLI::App& app, int& exit_code);
void register_table(CLI::App& app, int& exit_code);
void register_config(CLI::App& app, int& exit_code);
void register_check(CLI::App& app, int& exit_code);
void register_tree(CLI::App& app, int& exit_code);
void register_fix(CLI::App& app, int& exit_code);
void register_suggest(CLI::App& app, int& exit_code);
void register_pcp(CLI::App& app, int& exit_code);
void register_heap(CLI::App& app, int& exit_code);
void register_map(CLI::App& app, int& exit_code);
void register_explain(CLI::App& app, int& exit_code);

// --help footer (exit codes, examples) and the hidden --help-man / --help-bash-completion
// generators (manual.cpp). Call after every command is registered.
void add_manual(CLI::App& app);

// -I, -D
void add_tree_options(CLI::App& cmd, TreeOptions& options);

// --limit NAME=VALUE (repeatable) into `limits`; called again for the same command, the one option
// also fills the new target.
void add_limit_option(CLI::App& cmd, InputLimits& limits);

} // namespace cmalign::cli
