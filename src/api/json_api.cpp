// Requests as JSON objects (the Python keyword arguments) → the library's option structs →
// the CLI's JSON. One function per command, one table entry each; the C API and the Python
// module call run_json() and so accept exactly the same keys.
#include "cmalign/json_api.hpp"
#include "cmalign/kernel/versions.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <regex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "cmalign/api.hpp"
#include "cmalign/boot_check.hpp"
#include "cmalign/commands.hpp"
#include "cmalign/core/error.hpp"
#include "cmalign/core/size.hpp"
#include "cmalign/dt/write.hpp"
#include "cmalign/explain.hpp"
#include "cmalign/kconfig/write.hpp"
#include "cmalign/kernel/report.hpp"
#include "cmalign/map/map.hpp"
#include "cmalign/report/report.hpp"
#include "cmalign/run.hpp"
#include "cmalign/run_fix.hpp"
#include "cmalign/run_inputs.hpp"
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

// Reads the keys of one request; every key must be read by the command (finish()), so a
// misspelt keyword is an error instead of being ignored.
class Request {
public:
    Request(const json& j, const CommandDefinition& definition)
        : j_(j), command_(definition.name), definition_(definition) {
        if (!j_.is_object() && !j_.is_null())
            fail(fmt::format("{}: the request must be a JSON object", command_));
    }

    bool has(const char* key) {
        // Every key read is a row of the command's definition (commands.cpp): the reader cannot
        // accept what the definition, the docs and the Python signatures do not name.
        const auto* row = find_option(definition_, key);
        if (!row || row->surface == Surface::cli)
            throw std::logic_error(
                fmt::format("{}: key '{}' is read but not defined", command_, key));
        seen_.insert(key);
        return j_.is_object() && j_.contains(key) && !j_.at(key).is_null();
    }

    std::optional<std::string> string(const char* key) {
        if (!has(key)) return std::nullopt;
        const auto& v = j_.at(key);
        if (!v.is_string()) fail(fmt::format("{}: '{}' must be a string", command_, key));
        return v.get<std::string>();
    }

    // A list of strings; a single string is taken as a list of one.
    std::vector<std::string> strings(const char* key) {
        if (!has(key)) return {};
        const auto& v = j_.at(key);
        if (v.is_string()) return {v.get<std::string>()};
        if (!v.is_array()) fail(fmt::format("{}: '{}' must be a list of strings", command_, key));
        std::vector<std::string> out;
        for (const auto& item : v) {
            if (!item.is_string())
                fail(fmt::format("{}: '{}' must be a list of strings", command_, key));
            out.push_back(item.get<std::string>());
        }
        return out;
    }

    // {"NAME": value} (value a string, an integer, true → "y", false → "n", null/"" → bare
    // NAME) or ["NAME=VALUE", ...], as "NAME=VALUE" / "NAME" strings in order.
    std::vector<std::string> assignments(const char* key) {
        if (!has(key)) return {};
        const auto& v = j_.at(key);
        if (v.is_array()) return strings(key);
        if (!v.is_object())
            fail(fmt::format("{}: '{}' must be an object or a list of \"NAME=VALUE\"", command_,
                             key));
        std::vector<std::string> out;
        for (const auto& [name, value] : v.items()) {
            if (value.is_null() || (value.is_string() && value.get<std::string>().empty()))
                out.push_back(name);
            else if (value.is_string())
                out.push_back(name + "=" + value.get<std::string>());
            else if (value.is_boolean())
                out.push_back(name + "=" + (value.get<bool>() ? "y" : "n"));
            else if (value.is_number_integer())
                out.push_back(name + "=" + value.dump());
            else
                fail(fmt::format("{}: '{}': the value of {} must be a string, an integer or a "
                                 "boolean",
                                 command_, key, name));
        }
        return out;
    }

    bool flag(const char* key) {
        if (!has(key)) return false;
        const auto& v = j_.at(key);
        if (!v.is_boolean()) fail(fmt::format("{}: '{}' must be true or false", command_, key));
        return v.get<bool>();
    }

    unsigned count(const char* key) {
        if (!has(key)) return 0;
        const auto& v = j_.at(key);
        if (!v.is_number_unsigned() || v.get<std::uint64_t>() > 4096)
            fail(fmt::format("{}: '{}' must be an integer from 0 to 4096", command_, key));
        return v.get<unsigned>();
    }

    // An integer, or a string as the command line takes it ("4M", "0x400000", "SZ_4M").
    std::optional<std::uint64_t> size(const char* key) {
        if (!has(key)) return std::nullopt;
        const auto& v = j_.at(key);
        if (v.is_number_unsigned()) return v.get<std::uint64_t>();
        if (v.is_string())
            if (auto parsed = parse_size(v.get<std::string>())) return parsed;
        fail(fmt::format("{}: '{}' must be a size (4194304, \"0x400000\", \"4M\", \"SZ_4M\")",
                         command_, key));
    }

    // A size kept as text for the command to read ("1G"); an integer is taken as bytes.
    std::optional<std::string> size_text(const char* key) {
        if (!has(key)) return std::nullopt;
        const auto& v = j_.at(key);
        if (v.is_number_unsigned()) return v.dump();
        if (!v.is_string())
            fail(fmt::format("{}: '{}' must be a size (4194304, \"0x400000\", \"4M\")", command_,
                             key));
        return v.get<std::string>();
    }

    // The common options (docs/cli.md, common options).
    ConfigOptions config() {
        ConfigOptions options;
        options.config_files = strings("configs");
        options.sets = assignments("sets");
        options.unsets = strings("unsets");
        options.arch = string("arch");
        options.kernel_version = string("kernel_version");
        options.kernel_tree = string("kernel_tree");
        options.kconfig_shell = flag("kconfig_shell");
        options.limits = limits();
        return options;
    }

    // {"node-depth": 1000, "file-bytes": "128M"}: --limit NAME=VALUE for each entry.
    InputLimits limits() {
        InputLimits out;
        if (!has("limits")) return out;
        const auto& v = j_.at("limits");
        if (!v.is_object()) fail(fmt::format("{}: 'limits' must be an object", command_));
        for (const auto& [name, value] : v.items()) {
            std::string text = value.is_string() ? value.get<std::string>() : value.dump();
            if (auto error = set_limit(out, name + "=" + text))
                fail(fmt::format("{}: {}", command_, *error));
        }
        return out;
    }

    // -I, -D, --kernel-tree of the commands that read device trees.
    TreeOptions tree() {
        TreeOptions options;
        options.include_dirs = strings("include_dirs");
        options.defines = assignments("defines");
        options.kernel_tree = string("kernel_tree");
        options.overlays = strings("overlays");
        options.limits = limits();
        return options;
    }

    // Unknown keys are errors, named all at once with the valid ones (and the likely one).
    void finish() const {
        if (!j_.is_object()) return;
        std::vector<std::string> unknown;
        for (const auto& [key, value] : j_.items())
            if (!seen_.count(key)) unknown.push_back(key);
        if (unknown.empty()) return;
        std::vector<std::string> valid;
        for (const auto& row : definition_.options)
            if (row.surface != Surface::cli) valid.emplace_back(row.key);
        std::string named;
        for (const auto& key : unknown) {
            named += (named.empty() ? "'" : ", '") + key + "'";
            if (auto near = did_you_mean(key, valid))
                named += fmt::format(" (did you mean '{}'?)", *near);
        }
        fail(fmt::format("{}: unknown key{} {}; valid keys: {}", command_,
                         unknown.size() == 1 ? "" : "s", named, fmt::join(valid, ", ")));
    }

private:
    const json& j_;
    std::string command_;
    const CommandDefinition& definition_;
    std::set<std::string> seen_;
};

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

// ---- the commands -----------------------------------------------------------------------------

json calc_command(Request& r) {
    auto options = r.config();
    r.finish();
    Diagnostics diags;
    auto model = load_model(options, diags);
    if (!model || diags.has_errors()) fail_with({&diags.items()});
    return kernel::to_json(*model);
}

json table_command(Request& r) {
    auto arch_name = r.string("arch").value_or("arm64");
    auto version_text = r.string("kernel_version");
    auto tree = r.string("kernel_tree");
    r.finish();
    Diagnostics arch_diags;
    auto arch = arch_option(arch_name, arch_diags);
    if (!arch) fail("table: " + arch_diags.items().front().message);
    Diagnostics diags;
    auto version = table_version(version_text, tree, diags);
    if (!version) fail("table: " + diags.items().back().message);
    return kernel::to_json(kernel::table(*arch, *version));
}

json config_command(Request& r) {
    auto options = r.config();
    r.finish();
    Diagnostics diags;
    auto config = load_config(options, diags);
    if (!config || diags.has_errors()) fail_with({&diags.items()});
    return kconfig::to_json(*config);
}

json check_command(Request& r) {
    CheckRequest request;
    request.inputs = r.strings("files");
    request.config = r.config();
    request.tree = r.tree();
    request.checks.bootargs = r.string("bootargs");
    request.checks.werror = r.flag("werror");
    request.affected_by = r.strings("affected_by");
    auto sweep_versions = r.string("sweep_versions");
    auto sweep_page_sizes = r.string("sweep_page_sizes");
    request.jobs = r.count("jobs");
    Diagnostics switch_errors;
    for (const auto& s : r.strings("switches")) {
        // "-Wno-overlap", "-Eoverlap", as on the command line.
        if (s.size() < 3 || s[0] != '-' || (s[1] != 'W' && s[1] != 'E'))
            fail(fmt::format("check: switch '{}' is not -W<check>, -Wno-<check>, -E<check> or "
                             "-Eno-<check>",
                             s));
        if (auto parsed = checks::parse_switch(s[1], s.substr(2), switch_errors))
            request.checks.switches.push_back(*parsed);
    }
    r.finish();
    if (switch_errors.has_errors()) fail_with({&switch_errors.items()});
    if (request.inputs.empty()) fail("check: 'files' is required");
    if (sweep_page_sizes && !sweep_versions)
        fail("check: 'sweep_page_sizes' needs 'sweep_versions'");
    if (sweep_versions) {
        auto outcome = run_check_sweep(request, SweepSpec{*sweep_versions, sweep_page_sizes});
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

json fix_command(Request& r) {
    FixRequest request;
    if (r.has("file")) request.inputs = {*r.string("file")};
    auto files = r.strings("files");
    request.inputs.insert(request.inputs.end(), files.begin(), files.end());
    request.config = r.config();
    request.tree = r.tree();
    request.bootargs = r.string("bootargs");
    request.jobs = r.count("jobs");
    auto out = r.string("out");
    bool in_place = r.flag("in_place");
    bool diff = r.flag("diff");
    r.finish();
    if (request.inputs.empty()) fail("fix: 'file' is required");
    if ((out ? 1 : 0) + (in_place ? 1 : 0) + (diff ? 1 : 0) > 1)
        fail("fix: give at most one of 'out', 'in_place' and 'diff'");
    if (in_place) request.mode = FixMode::in_place;
    if (out) {
        request.mode = FixMode::output;
        request.out_path = std::move(out);
    }
    if (diff) {
        request.mode = FixMode::diff;
        std::error_code ec;
        request.diff_base = std::filesystem::current_path(ec).string();
    }
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
    auto j = fix_json(outcome);
    if (diff) j["diff"] = outcome.diff; // the CLI prints it; here it travels with the edits
    return j;
}

json suggest_command(Request& r) {
    SuggestRequest request;
    request.inputs = r.strings("files");
    request.config = r.config();
    request.tree = r.tree();
    request.target_alignment = r.size("target_alignment");
    auto sweep_versions = r.string("sweep_versions");
    auto sweep_page_sizes = r.string("sweep_page_sizes");
    r.finish();
    if (sweep_page_sizes && !sweep_versions)
        fail("suggest: 'sweep_page_sizes' needs 'sweep_versions'");
    if (sweep_versions) {
        auto sweep = run_suggest_sweep(request, SweepSpec{*sweep_versions, sweep_page_sizes});
        for (const auto& d : sweep.errors)
            if (d.severity == Severity::error) throw Error(d);
        return sweep_suggest_json(sweep);
    }
    auto outcome = run_suggest(request);
    if (outcome.exit_code() == ExitCode::input_error) fail_with({&outcome.errors});
    return suggest_json(outcome);
}

json tree_command(Request& r) {
    auto file = r.string("file");
    auto options = r.tree();
    auto path = r.string("path").value_or("/");
    auto format = r.string("format").value_or("json");
    r.finish();
    if (!file) fail("tree: 'file' is required");
    if (format != "json" && format != "dts") fail("tree: 'format' must be \"json\" or \"dts\"");
    Diagnostics diags;
    dt::FileCache cache;
    auto pp = preprocess_options(options);
    std::optional<dt::Tree> tree;
    if (options.overlays.empty())
        tree = load_tree(*file, pp, cache, diags);
    else if (auto overlays = load_overlays(options.overlays, pp, cache, diags))
        tree = load_board(*file, pp, cache, diags, {}, *overlays);
    if (!tree || diags.has_errors()) fail_with({&diags.items()});
    if (format == "dts") {
        auto text = dt::tree_dts(*tree, path);
        if (!text) fail(fmt::format("tree: no node at path '{}'", path));
        return json{{"dts", *text}};
    }
    auto j = dt::tree_json(*tree, path);
    if (!j) fail(fmt::format("tree: no node at path '{}'", path));
    return *j;
}

json pcp_command(Request& r) {
    PcpRequest request;
    request.config = r.config();
    request.memory = r.size_text("memory");
    request.memory_base = r.size_text("memory_base");
    request.zones = r.assignments("zones");
    request.zoneinfo = r.string("zoneinfo");
    if (r.has("cpus")) request.cpus = r.count("cpus");
    request.sysctls = r.assignments("sysctls");
    request.sysctl_file = r.string("sysctl_file");
    request.bootargs = r.string("bootargs");
    request.dt = r.string("dt");
    request.vendor_params = r.strings("vendor_params");
    r.finish();
    auto outcome = run_pcp(request);
    if (outcome.exit_code() == ExitCode::input_error) fail_with({&outcome.diags.items()});
    return pcp_json(outcome);
}

json heap_command(Request& r) {
    HeapRequest request;
    request.config = r.config();
    auto size = r.size_text("size");
    if (r.has("available_order"))
        request.available_order = static_cast<int>(r.count("available_order"));
    r.finish();
    if (!size) fail("heap: 'size' is required");
    request.size = *size;
    auto outcome = run_heap(request);
    if (outcome.exit_code() == ExitCode::input_error) fail_with({&outcome.diags.items()});
    return heap_json(outcome);
}

json explain_command(Request& r) {
    ExplainRequest request;
    auto log = r.string("log");
    auto board = r.string("board");
    request.config = r.config();
    request.tree = r.tree();
    request.checks.bootargs = r.string("bootargs");
    r.finish();
    if (!log || !board) fail("explain: 'log' and 'board' are required");
    request.log_path = *log;
    request.board = *board;
    auto outcome = run_explain(request);
    if (outcome.exit_code() == ExitCode::input_error) fail_with({&outcome.errors});
    return explain_json(outcome);
}

json boot_check_command(Request& r) {
    BootCheckRequest request;
    auto board = r.string("board");
    auto kernel = r.string("kernel");
    request.config = r.config();
    request.tree = r.tree();
    request.checks.bootargs = r.string("bootargs");
    request.qemu = r.string("qemu");
    if (r.has("timeout")) request.timeout_seconds = r.count("timeout");
    request.save_log = r.string("save_log");
    request.save_dtb = r.string("save_dtb");
    request.stop_early = r.flag("stop_early");
    r.finish();
    if (!board || !kernel) fail("boot_check: 'board' and 'kernel' are required");
    request.board = *board;
    request.kernel_image = *kernel;
    auto outcome = run_boot_check(request);
    // A boot that did not happen is still an answer (errors, log_tail): only unreadable input
    // raises.
    return boot_check_json(outcome);
}

json map_command(Request& r) {
    MapRequest request;
    auto board = r.string("board");
    request.config = r.config();
    request.tree = r.tree();
    request.checks.bootargs = r.string("bootargs");
    r.finish();
    if (!board) fail("map: 'board' is required");
    request.input = *board;
    auto outcome = run_map(request);
    if (!outcome.layout) fail_with({&outcome.errors, &outcome.config_diagnostics});
    return map::to_json(*outcome.layout);
}

// Adding a command: its definition (commands.cpp), one function above and one row here; the C
// API's cmalign_run_json() and the Python package reach it by name.
struct Command {
    const char* name;
    json (*run)(Request&);
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
    Request reader(request, *definition);
    try {
        return it->run(reader);
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

std::vector<std::string> json_commands() {
    std::vector<std::string> out;
    for (const auto& c : commands)
        out.emplace_back(c.name);
    return out;
}

} // namespace cmalign
