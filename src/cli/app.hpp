// The program's CLI11 App: the commands registered on it, the command line parsed and run. Only
// the files that build or walk the App include this (CLI11 costs seconds per translation unit).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "common.hpp"

namespace cmalign::cli {

// The subcommand `name` with every option of its definition (flags, help, value names, choices
// and defaults from there); `run` is called once the whole command line is read (not from
// CLI11's callbacks, so that the words after `--` reach the positional inputs first).
CLI::App* add_command(CLI::App& app, std::string_view name, Run run);

// Parses the command line and runs the chosen command; returns the exit status. Options never
// eat inputs: every option takes one value per occurrence (`-I a -I b`), except those whose
// definition says takes_list (`--affected-by FILE...`, a list that ends at the next option or
// `--`). Words after `--` are positional whatever they look like.
int run_command_line(CLI::App& app, int argc, char** argv);

// --help footer (exit codes, examples) and the hidden --help-man / --help-bash-completion
// generators (manual.cpp). Call after every command is registered.
void add_manual(CLI::App& app);
// Every command (common.hpp) and the manual generators: what the program offers (main and
// fuzz_argv).
// Every command; with `only`, that one command in full and the others by name and summary (a
// run parses one command: registering every option of all twelve was a fifth of a warm check).
void register_commands(CLI::App& app, std::string_view only = {});
// The command argv[1] names exactly, if any (what `only` can be).
std::string_view command_named(int argc, char** argv);
// An option's names as typed: "-c", "--config".
std::vector<std::string> names_of(const CLI::Option& o);
// The definition an option of a command was built from; nullptr for --help and the like.
const OptionDefinition* definition_of(const CLI::Option& option);

} // namespace cmalign::cli
