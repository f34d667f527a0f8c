// Shared pieces of the command-line front end: option groups and output of diagnostics.
// The CLI only parses arguments and calls the library; nothing here knows kernel rules.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cmalign/api.hpp"
#include "cmalign/commands.hpp"
#include "cmalign/core/diagnostic.hpp"
#include "cmalign/run.hpp"
#include "cmalign/run_inputs.hpp" // load_tree() for `tree`
#include "cmalign/sweep.hpp"

namespace cmalign::cli {

// -c/--config, --set, --arch, --kernel-version, --kernel-tree
void add_config_options(CLI::App& cmd, ConfigOptions& options);

// What a command does once the whole command line is read. Commands run after parsing (not from
// CLI11's callbacks) so that the words after `--` reach their positional inputs first.
void on_run(CLI::App* cmd, std::function<void()> run);

// Positional inputs. Words after `--` are positional whatever they look like; they fill the
// command's positionals in the order these were added. A required one that stays empty is a
// usage error (exit 2) naming it.
CLI::Option* add_inputs(CLI::App* cmd, const std::string& name, std::vector<std::string>& target,
                        const std::string& help, bool required);
CLI::Option* add_input(CLI::App* cmd, const std::string& name, std::string& target,
                       const std::string& help);

// Parses the command line and runs the chosen command; returns the exit status. Options never
// eat inputs: every option takes one value per occurrence (`-I a -I b`), except those marked
// with takes_list() (`--affected-by FILE...`, which the list ends at the next option or `--`).
int run_command_line(CLI::App& app, int argc, char** argv, const ExitCode& exit_code);
CLI::Option* takes_list(CLI::Option* option);

// --format; its choices and default come from the command's definition.
CLI::Option* add_format(CLI::App* cmd, std::string& format);

// Ties every command's CLI11 options to the library's definitions (cmalign/commands.hpp): the
// help text, value name and choices come from there, and an option either side lacks is a
// programming error (std::logic_error at start-up, so every CLI test fails on a drift).
void apply_definitions(CLI::App& app);

// Prints diagnostics gcc-style on stderr (used for input errors of every command).
void print_diagnostics(const Diagnostics& diags);

// Each command registers itself and returns the exit code through `exit_code` when run.
void register_calc(CLI::App& app, ExitCode& exit_code);
void register_table(CLI::App& app, ExitCode& exit_code);
void register_config(CLI::App& app, ExitCode& exit_code);
void register_check(CLI::App& app, ExitCode& exit_code);
void register_tree(CLI::App& app, ExitCode& exit_code);
void register_fix(CLI::App& app, ExitCode& exit_code);
void register_suggest(CLI::App& app, ExitCode& exit_code);
void register_pcp(CLI::App& app, ExitCode& exit_code);
void register_heap(CLI::App& app, ExitCode& exit_code);
void register_map(CLI::App& app, ExitCode& exit_code);
void register_explain(CLI::App& app, ExitCode& exit_code);
void register_boot_check(CLI::App& app, ExitCode& exit_code);

// --help footer (exit codes, examples) and the hidden --help-man / --help-bash-completion
// generators (manual.cpp). Call after every command is registered.
void add_manual(CLI::App& app);
// Every command above and the manual generators: what the program offers (main and fuzz_argv).
void register_commands(CLI::App& app, ExitCode& exit_code);
// An option's names as typed: "-c", "--config".
std::vector<std::string> names_of(const CLI::Option& o);

// -I, -D
void add_tree_options(CLI::App& cmd, TreeOptions& options);

// --limit NAME=VALUE (repeatable) into `limits`; called again for the same command, the one option
// also fills the new target.
void add_limit_option(CLI::App& cmd, InputLimits& limits);

// --sweep-versions, --sweep-page-sizes; `each` says what is done per cell ("check under").
struct SweepOptions {
    std::string versions;
    std::string page_sizes;
};
void add_sweep_options(CLI::App& cmd, SweepOptions& options, const std::string& each);
// The sweep asked for, or nullopt. Page sizes without versions are a usage error: said on
// stderr, and `exit_code` set to input_error.
std::optional<SweepSpec> sweep_spec(const SweepOptions& options, ExitCode& exit_code);

} // namespace cmalign::cli
