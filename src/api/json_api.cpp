// Requests as JSON objects (the Python keyword arguments) → the request reader of the command
// (requests.cpp, which the CLI uses too) → its run_*() → the CLI's JSON, or the error of the
// call. One function per command, one table entry each; the C API and the Python module call
// run_json() and so accept exactly the same keys.
#include "cmalign/json_api.hpp"
#include "cmalign/kernel/versions.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h> // fmt::join (fmt 11 moved it here)

#include "cmalign/api.hpp"
#include "cmalign/boot_check.hpp"
#include "cmalign/core/error.hpp"
#include "cmalign/explain.hpp"
#include "cmalign/internal/commands.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/kconfig/config_json.hpp"
#include "cmalign/internal/kconfig/write.hpp"
#include "cmalign/internal/kernel/report.hpp"
#include "cmalign/internal/map/map_json.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/internal/requests.hpp"
#include "cmalign/run.hpp"
#include "cmalign/run_fix.hpp"
#include "cmalign/run_map.hpp"
#include "cmalign/sweep.hpp"
#include "cmalign/tune.hpp"

namespace cmalign {

namespace {

using nlohmann::json;

constexpr const char* request_file = "<request>";

[[noreturn]] void fail(std::string message) {
    Diagnostic d;
    d.where.file = request_file;
    d.message = std::move(message);
    throw Error(std::move(d));
}

// The first error among `lists` as the exception of the call (the CLI prints them all and
// exits 2; a library call can only raise one).
[[noreturn]] void fail_with(std::initializer_list<const std::vector<Diagnostic>*> lists) {
    for (const auto* list : lists)
        for (const auto& d : *list)
            if (d.severity == Severity::error) throw Error(d);
    fail("invalid input");
}

// A message of the library in the words of a request: "--limit node-depth=N" becomes
// `limits={"node-depth": N}` and a long flag of the command ("--target-alignment") its key
// ('target_alignment'). Longer flags first, so "--sweep-page-sizes" is not cut at a prefix.
std::string in_request_words(std::string message, const CommandDefinition& command) {
    static const std::regex limit(R"(--limit ([a-z-]+)=N)");
    message = std::regex_replace(message, limit, R"(limits={"$1": N})");
    std::vector<std::pair<std::string, std::string>> flags; // --flag, 'key'
    for (const auto& row : command.options) {
        if (row.surface == Surface::cli) continue;
        std::string_view all = row.flags;
        while (!all.empty()) {
            auto comma = all.find(',');
            auto flag = all.substr(0, comma);
            if (flag.size() > 2 && flag.substr(0, 2) == "--")
                flags.emplace_back(std::string(flag), "'" + std::string(row.key) + "'");
            all = comma == std::string_view::npos ? std::string_view{} : all.substr(comma + 1);
        }
    }
    std::sort(flags.begin(), flags.end(),
              [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    for (const auto& [flag, key] : flags) {
        for (std::size_t at = 0; (at = message.find(flag, at)) != std::string::npos;) {
            auto end = at + flag.size();
            bool whole =
                end == message.size() ||
                !(std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '-');
            if (!whole) {
                at = end;
                continue;
            }
            message.replace(at, flag.size(), key);
            at += key.size();
        }
    }
    return message;
}

// ---- the commands: read the request (requests.cpp), run, answer or raise ------------------------

json calc_command(const json& j) {
    auto outcome = run_calc(read_calc_request(j, Caller::json));
    if (outcome.exit_code() == ExitCode::input_error) fail_with({&outcome.diags.items()});
    return kernel::to_json(*outcome.model);
}

json table_command(const json& j) {
    auto outcome = run_table(read_table_request(j, Caller::json));
    if (outcome.exit_code() == ExitCode::input_error)
        for (const auto& d : outcome.diags.items())
            if (d.severity == Severity::error) fail("table: " + d.message);
    return kernel::to_json(outcome.rows);
}

json config_command(const json& j) {
    auto outcome = run_config(read_config_request(j, Caller::json));
    if (outcome.exit_code() == ExitCode::input_error) fail_with({&outcome.diags.items()});
    return kconfig::to_json(outcome.evaluation->config);
}

json check_command(const json& j) {
    auto [request, sweep] = read_check_request(j, Caller::json);
    if (sweep) {
        auto outcome = run_check_sweep(request, *sweep);
        std::vector<Diagnostic> errors = outcome.errors;
        for (const auto& c : outcome.cells)
            if (c.cell.change.unavailable.empty() && c.outcome.unusable_input()) {
                errors.insert(errors.end(), c.outcome.config_diagnostics.begin(),
                              c.outcome.config_diagnostics.end());
                errors.insert(errors.end(), c.outcome.input_errors.begin(),
                              c.outcome.input_errors.end());
            }
        for (const auto& d : errors)
            if (d.severity == Severity::error) throw Error(d);
        return sweep_check_json(outcome);
    }
    auto outcome = run_check(request);
    // One unreadable board among several is part of the result, as in the CLI's JSON; only a
    // request nothing could be checked for is an error of the call.
    if (!outcome.model || (outcome.results.empty() && !outcome.input_errors.empty()))
        fail_with({&outcome.config_diagnostics, &outcome.input_errors});
    return check_json(outcome, !request.affected_by.empty());
}

json fix_command(const json& j) {
    auto request = read_fix_request(j, Caller::json);
    auto outcome = run_fix(request);
    // As check: unreadable boards among readable ones are in "diagnostics".
    // (A missing path is not among outcome.inputs: its error has no `input`.)
    std::set<std::string> failed_inputs;
    for (const auto& d : outcome.input_errors)
        if (d.severity == Severity::error && !d.input.empty()) failed_inputs.insert(d.input);
    bool every_input_failed = !outcome.input_errors.empty() &&
                              (outcome.inputs == 0 || failed_inputs.size() >= outcome.inputs);
    if (!outcome.model || !outcome.io_errors.empty() || every_input_failed)
        fail_with({&outcome.config_diagnostics, &outcome.input_errors, &outcome.io_errors});
    auto answer = fix_json(outcome);
    // The CLI prints it; here it travels with the edits.
    if (request.mode == FixMode::diff) answer["diff"] = outcome.diff;
    return answer;
}

json suggest_command(const json& j) {
    auto [request, sweep] = read_suggest_request(j, Caller::json);
    if (sweep) {
        auto outcome = run_suggest_sweep(request, *sweep);
        for (const auto& d : outcome.errors)
            if (d.severity == Severity::error) throw Error(d);
        return sweep_suggest_json(outcome);
    }
    auto outcome = run_suggest(request);
    if (outcome.exit_code() == ExitCode::input_error) fail_with({&outcome.errors});
    return suggest_json(outcome);
}

json tree_command(const json& j) {
    auto outcome = run_tree(read_tree_request(j, Caller::json));
    if (outcome.exit_code() == ExitCode::input_error) fail_with({&outcome.diags.items()});
    if (outcome.dts) return json{{"dts", *outcome.dts}};
    return json::parse(*outcome.json);
}

json pcp_command(const json& j) {
    auto outcome = run_pcp(read_pcp_request(j, Caller::json));
    if (outcome.exit_code() == ExitCode::input_error) fail_with({&outcome.diags.items()});
    return pcp_json(outcome);
}

json heap_command(const json& j) {
    auto outcome = run_heap(read_heap_request(j, Caller::json));
    if (outcome.exit_code() == ExitCode::input_error) fail_with({&outcome.diags.items()});
    return heap_json(outcome);
}

json explain_command(const json& j) {
    auto outcome = run_explain(read_explain_request(j, Caller::json));
    if (outcome.exit_code() == ExitCode::input_error) fail_with({&outcome.errors});
    return explain_json(outcome);
}

json boot_check_command(const json& j) {
    // A boot that did not happen is still an answer (errors, log_tail).
    return boot_check_json(run_boot_check(read_boot_check_request(j, Caller::json)));
}

json map_command(const json& j) {
    auto outcome = run_map(read_map_request(j, Caller::json));
    if (!outcome.layout) fail_with({&outcome.errors, &outcome.config_diagnostics});
    return map::to_json(*outcome.layout);
}

// Adding a command: its definition (commands.cpp), one function above and one row here; the C
// API's cmalign_run_json() and the Python package reach it by name.
struct Command {
    const char* name;
    json (*run)(const json&);
};
constexpr Command commands[] = {
    {"calc", calc_command},       {"table", table_command},     {"config", config_command},
    {"check", check_command},     {"tree", tree_command},       {"fix", fix_command},
    {"suggest", suggest_command}, {"pcp", pcp_command},         {"heap", heap_command},
    {"map", map_command},         {"explain", explain_command}, {"boot_check", boot_check_command},
};

} // namespace

json run_json(std::string_view command, const json& request) {
    auto it = std::find_if(std::begin(commands), std::end(commands),
                           [&](const Command& c) { return same_command_name(command, c.name); });
    if (it == std::end(commands)) {
        auto known = json_commands();
        auto near = did_you_mean(command, known);
        fail(fmt::format("unknown command '{}'{} (known: {})", command,
                         near ? fmt::format(" (did you mean '{}'?)", *near) : "",
                         fmt::join(known, ", ")));
    }
    const auto* definition = find_command(command);
    if (!definition) throw std::logic_error(fmt::format("{}: no definition", command));
    try {
        return it->run(request);
    } catch (const Error& e) {
        // The caller wrote a request, not a command line: its error names keys, not flags.
        Diagnostic d = e.diagnostic();
        d.message = in_request_words(d.message, *definition);
        throw Error(std::move(d));
    }
}

std::string run_json_text(std::string_view command, std::string_view request) {
    json parsed;
    try {
        parsed = request.empty() ? json::object() : json::parse(request);
    } catch (const json::parse_error& e) {
        // e.byte is 1-based, one past the offending character; gcc-style line:col of it.
        std::size_t offset = e.byte > 0 ? std::min<std::size_t>(e.byte - 1, request.size()) : 0;
        int line = 1, column = 1;
        for (std::size_t i = 0; i < offset; ++i) {
            if (request[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        Diagnostic d;
        d.where = {request_file, line, column};
        std::string what = e.what();
        auto colon = what.find("syntax error");
        d.message = "invalid JSON: " + (colon == std::string::npos ? what : what.substr(colon));
        throw Error(std::move(d));
    }
    return run_json(command, parsed).dump(-1, ' ', false, json::error_handler_t::replace);
}

json command_definitions_json() {
    auto out = json::array();
    for (const auto& command : command_definitions()) {
        auto options = json::array();
        for (const auto& o : command.options)
            options.push_back({{"key", o.key},
                               {"flags", o.flags},
                               {"type", to_string(o.type)},
                               {"repeatable", o.repeatable},
                               {"required", o.required},
                               {"positional", o.positional},
                               {"metavar", o.metavar},
                               {"default", o.default_value},
                               {"choices", o.choices},
                               {"help", o.help},
                               {"surface", o.surface == Surface::both  ? "both"
                                           : o.surface == Surface::cli ? "cli"
                                                                       : "api"}});
        out.push_back({{"name", command.name},
                       {"summary", command.summary},
                       {"usage", command.usage},
                       {"options", options}});
    }
    return out;
}

std::string command_definitions_json_text() {
    return command_definitions_json().dump();
}

std::vector<std::string> json_commands() {
    std::vector<std::string> out;
    for (const auto& c : commands)
        out.emplace_back(c.name);
    return out;
}

} // namespace cmalign
