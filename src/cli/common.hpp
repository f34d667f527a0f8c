// The command-line front end. Every command's options are built from its definition
// (cmalign/internal/commands.hpp); a parsed command line becomes a JSON request under the
// definition's keys, read by the same request reader as the C API and Python
// (cmalign/internal/requests.hpp), run by the library's run_*(), and printed here. Nothing here
// knows kernel rules or checks values. CLI11 itself is seen only where the program's App is built
// (app.hpp): it is a heavy header.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmalign/api.hpp"
#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/error.hpp"
#include "cmalign/internal/commands.hpp"
#include "cmalign/internal/requests.hpp"

namespace cmalign::cli {

// A bad command line found after parsing: printed (with a pointer to --help when it is about
// the command line itself, not a value the library refused), exit 2.
class UsageError : public std::runtime_error {
public:
    UsageError(const std::string& message, bool point_to_help)
        : std::runtime_error(message), point_to_help_(point_to_help) {}
    bool point_to_help() const { return point_to_help_; }

private:
    bool point_to_help_;
};

// One command line of a command, as parsed from its definition.
class Invocation {
public:
    Invocation(nlohmann::json request, std::map<std::string, std::string> cli_values)
        : request_(std::move(request)), cli_values_(std::move(cli_values)) {}

    // The request under the definition's JSON keys: what the request readers take.
    const nlohmann::json& request() const { return request_; }

    // A command-line-only option (--format, --sarif-base, ...): its value as given, else its
    // definition's default ("" when none); a flag given is "true".
    std::string value(const std::string& key) const {
        auto it = cli_values_.find(key);
        return it == cli_values_.end() ? std::string() : it->second;
    }
    bool flag(const std::string& key) const { return value(key) == "true"; }

    // The command line as read: the request and the command-line-only values (a cache key).
    std::string text() const;

    // The arguments as typed, before parsing (the program name left out).
    const std::vector<std::string>& typed() const { return typed_; }
    void set_typed(std::vector<std::string> words) { typed_ = std::move(words); }

    // reader(request(), Caller::cli): the typed request; a bad value is a UsageError whose
    // message names the flag.
    template <class Reader> auto read(Reader reader) const {
        try {
            return reader(request_, Caller::cli);
        } catch (const Error& e) {
            // The reader's own errors are located on the command line ("cmalign check: ...");
            // a value the library refused (-Wnope) names itself.
            throw UsageError(e.what(), e.diagnostic().where.file.starts_with("cmalign "));
        }
    }

private:
    nlohmann::json request_;
    std::map<std::string, std::string> cli_values_;
    std::vector<std::string> typed_;
};

// What a command does with its command line: read, run, print; returns the exit status.
using Run = std::function<ExitCode(const Invocation&)>;

// The environment the library does not read itself: ARCH (the last source of the arch) and,
// for --kconfig-shell, CROSS_COMPILE and LLVM; and the on-disk cache directory (XDG_CACHE_HOME or
// HOME, unless --no-cache).
void pass_environment(ConfigOptions& options, const Invocation& invocation);

// The on-disk cache directory when the command line names none: XDG_CACHE_HOME's, else HOME's.
std::optional<std::string> default_cache_dir();

// Runs `run` (which prints) with its answer kept in the on-disk cache of `config` (none: just
// runs it): when this command line was answered before and every file `sources()` named then is
// unchanged, what it printed is printed again, in the same order, and its exit status returned.
// `sources` is asked after a run; nullopt keeps nothing (answers.hpp). A kept
// answer is also found by the typed command line (replay_typed()).
ExitCode cached_answer(const Invocation& invocation, std::string_view command,
                       const ConfigOptions& config, const std::function<ExitCode()>& run,
                       const std::function<std::optional<std::vector<std::string>>()>& sources);

// The kept answer of a typed `check` command line, printed, before any parser is built (the
// warm path of a pre-commit hook): its exit status, or nullopt when there is none to replay.
std::optional<int> replay_typed(int argc, char** argv);

// Prints diagnostics gcc-style on stderr, errors first.
void print_diagnostics(const std::vector<Diagnostic>& diags);
inline void print_diagnostics(const Diagnostics& diags) {
    print_diagnostics(diags.items());
}

// Each command: its request read (Invocation::read), run and printed.
ExitCode calc_command(const Invocation& invocation);
ExitCode table_command(const Invocation& invocation);
ExitCode config_command(const Invocation& invocation);
ExitCode check_command(const Invocation& invocation);
ExitCode tree_command(const Invocation& invocation);
ExitCode fix_command(const Invocation& invocation);
ExitCode suggest_command(const Invocation& invocation);
ExitCode pcp_command(const Invocation& invocation);
ExitCode heap_command(const Invocation& invocation);
ExitCode map_command(const Invocation& invocation);
ExitCode explain_command(const Invocation& invocation);
ExitCode boot_check_command(const Invocation& invocation);

} // namespace cmalign::cli
