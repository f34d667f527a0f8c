// The one definition of every command's options: name, short form, value type, repeatable or
// not, default, help, JSON key and Python keyword. The CLI takes its help texts and value checks
// from it and refuses to start with an option it does not define; the JSON request reader (the C
// API and Python) accepts exactly its keys; the Python signatures, docstrings and type stubs,
// the reference tables of docs/cli.md and docs/json.md, the man page and the shell completions
// are generated from it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cmalign {

enum class ValueType {
    flag,        // no value: true when given
    text,        // one string
    path,        // one file
    directory,   // one directory
    size,        // 4194304, 0x400000, 4M, SZ_4M
    count,       // a non-negative integer
    assignment,  // NAME=VALUE (JSON: an object {"NAME": value} or a list of "NAME=VALUE")
    choice,      // one of `choices`
    check_switch // -W/-E CHECK (JSON: "switches", the words as written: "-Wno-overlap")
};
const char* to_string(ValueType type);

// Where an option exists: both front ends, only the command line (output formatting), or only
// the JSON request (what the CLI says through another option).
enum class Surface { both, cli, api };

struct OptionDefinition {
    std::string_view key;   // JSON key and Python keyword; for Surface::cli the option's name
    std::string_view flags; // "-c,--config" as CLI11 takes them; "" for a positional or api-only
    ValueType type = ValueType::text;
    bool repeatable = false; // -I a -I b; in JSON a list (a single string is a list of one)
    bool required = false;
    bool positional = false;        // on the command line a positional input (`files`, `board`)
    std::string_view metavar;       // FILE, DIR, SIZE, ...
    std::string_view default_value; // as shown in the help, "" when none
    std::string_view choices;       // "text,json" for ValueType::choice
    std::string_view help;
    Surface surface = Surface::both;
    // On the command line one occurrence takes every word up to the next option or `--`
    // (--affected-by FILE..., as `$(git diff --name-only)` gives them); other options take one
    // value per occurrence, so they never eat inputs.
    bool takes_list = false;
};

struct CommandDefinition {
    std::string_view name;
    std::string_view summary;
    std::string_view usage; // the command line's shape: "FILE... [options]"
    std::span<const OptionDefinition> options;
};

// Every command, in the order the CLI lists them.
std::span<const CommandDefinition> command_definitions();
// nullptr when there is no such command. '-' and '_' are one character in command names: the
// command line says boot-check, JSON requests and Python boot_check.
const CommandDefinition* find_command(std::string_view name);
bool same_command_name(std::string_view a, std::string_view b);
// The option with this JSON key (or CLI-only name); nullptr when the command has none.
const OptionDefinition* find_option(const CommandDefinition& command, std::string_view key);

// The candidate a mistyped `word` most likely meant ("chek" → "check"), by edit distance (at
// most 2, and less than half the word); nullopt when none is close.
std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string>& candidates);

} // namespace cmalign
