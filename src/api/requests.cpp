// The request readers (cmalign/internal/requests.hpp): JSON object → typed request, every check of
// the values, errors in the caller's words.
#include "cmalign/internal/requests.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h> // fmt::join (fmt 11 moved it here)

#include "cmalign/core/error.hpp"
#include "cmalign/core/size.hpp"

namespace cmalign {

std::string option_name(const OptionDefinition& option, Caller caller) {
    if (caller == Caller::json || option.flags.empty()) {
        if (caller == Caller::json) return "'" + std::string(option.key) + "'";
        return std::string(option.key); // a positional: "file is required"
    }
    if (option.type == ValueType::check_switch) return "-W/-E";
    std::string_view all = option.flags;
    std::string_view best;
    while (!all.empty()) {
        auto comma = all.find(',');
        auto flag = all.substr(0, comma);
        if (best.empty() || flag.size() > best.size()) best = flag;
        all = comma == std::string_view::npos ? std::string_view{} : all.substr(comma + 1);
    }
    return std::string(best);
}

namespace {

using nlohmann::json;

// Reads the keys of one request; every key must be read by the command (finish()), so a
// misspelt keyword is an error instead of being ignored.
class Request {
public:
    Request(const json& j, std::string_view command, Caller caller)
        : j_(j), caller_(caller), definition_(definition_of(command)) {
        for (char c : definition_.name)
            command_ += caller == Caller::json && c == '-' ? '_' : c;
        if (!j_.is_object() && !j_.is_null()) fail("the request must be a JSON object");
    }

    Caller caller() const { return caller_; }

    // The option as the caller names it ('jobs' or --jobs).
    std::string name(const char* key) const { return option_name(row(key), caller_); }

    [[noreturn]] void fail(const std::string& message) const {
        Diagnostic d;
        if (caller_ == Caller::json) {
            d.where.file = "<request>";
            d.message = command_ + ": " + message;
        } else {
            d.where.file = "cmalign " + command_; // "cmalign check: error: ..."
            d.message = message;
        }
        throw Error(std::move(d));
    }

    // The first error among `lists` as the error of the request.
    [[noreturn]] void fail_with(const std::vector<Diagnostic>& list) const {
        for (const auto& d : list)
            if (d.severity == Severity::error) throw Error(d);
        fail("invalid request");
    }

    bool has(const char* key) {
        row(key);
        seen_.insert(key);
        return j_.is_object() && j_.contains(key) && !j_.at(key).is_null();
    }

    std::optional<std::string> string(const char* key) {
        if (!has(key)) return std::nullopt;
        const auto& v = j_.at(key);
        if (!v.is_string()) fail(fmt::format("{} must be a string", name(key)));
        return v.get<std::string>();
    }

    // A directory that must exist (--kernel-tree).
    std::optional<std::string> directory(const char* key) {
        auto path = string(key);
        std::error_code ec;
        if (path && !std::filesystem::is_directory(*path, ec))
            fail(fmt::format("{}: no such directory: {}", name(key), *path));
        return path;
    }

    // A list of strings; a single string is taken as a list of one.
    std::vector<std::string> strings(const char* key) {
        if (!has(key)) return {};
        const auto& v = j_.at(key);
        if (v.is_string()) return {v.get<std::string>()};
        if (!v.is_array()) fail(fmt::format("{} must be a list of strings", name(key)));
        std::vector<std::string> out;
        for (const auto& item : v) {
            if (!item.is_string()) fail(fmt::format("{} must be a list of strings", name(key)));
            out.push_back(item.get<std::string>());
        }
        return out;
    }

    // {"NAME": value} (value a string, an integer, true → "y", false → "n", null/"" → bare
    // NAME) or ["NAME=VALUE", ...], as "NAME=VALUE" / "NAME" strings in order.
    std::vector<std::string> assignments(const char* key) {
        if (!has(key)) return {};
        const auto& v = j_.at(key);
        if (v.is_array() || v.is_string()) return strings(key);
        if (!v.is_object())
            fail(fmt::format("{} must be an object or a list of \"NAME=VALUE\"", name(key)));
        std::vector<std::string> out;
        for (const auto& [item, value] : v.items()) {
            if (value.is_null() || (value.is_string() && value.get<std::string>().empty()))
                out.push_back(item);
            else if (value.is_string())
                out.push_back(item + "=" + value.get<std::string>());
            else if (value.is_boolean())
                out.push_back(item + "=" + (value.get<bool>() ? "y" : "n"));
            else if (value.is_number_integer())
                out.push_back(item + "=" + value.dump());
            else
                fail(fmt::format("{}: the value of {} must be a string, an integer or a boolean",
                                 name(key), item));
        }
        return out;
    }

    bool flag(const char* key) {
        if (!has(key)) return false;
        const auto& v = j_.at(key);
        if (!v.is_boolean()) fail(fmt::format("{} must be true or false", name(key)));
        return v.get<bool>();
    }

    std::optional<unsigned> count(const char* key) {
        if (!has(key)) return std::nullopt;
        const auto& v = j_.at(key);
        if (!v.is_number_unsigned() || v.get<std::uint64_t>() > 4096)
            fail(fmt::format("{} must be an integer from 0 to 4096", name(key)));
        return v.get<unsigned>();
    }

    // An integer, or a string as the command line takes it ("4M", "0x400000", "SZ_4M").
    std::optional<std::uint64_t> size(const char* key) {
        if (!has(key)) return std::nullopt;
        const auto& v = j_.at(key);
        if (v.is_number_unsigned()) return v.get<std::uint64_t>();
        if (v.is_string())
            if (auto parsed = parse_size(v.get<std::string>())) return parsed;
        fail(fmt::format("{} must be a size ({})", name(key), size_forms()));
    }

    // A size kept as text for the command to read ("1G"); an integer is taken as bytes.
    std::optional<std::string> size_text(const char* key) {
        if (!has(key)) return std::nullopt;
        const auto& v = j_.at(key);
        if (v.is_number_unsigned()) return v.dump();
        if (!v.is_string()) fail(fmt::format("{} must be a size ({})", name(key), size_forms()));
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
        options.kernel_tree = directory("kernel_tree");
        options.kconfig_shell = flag("kconfig_shell");
        options.limits = limits();
        options.cache_dir = string("cache_dir");
        return options;
    }

    // {"node-depth": 1000, "file-bytes": "128M"} or ["node-depth=1000", ...] (--limit
    // NAME=VALUE each).
    InputLimits limits() {
        InputLimits out;
        for (const auto& spec : assignments("limits"))
            if (auto error = set_limit(out, spec)) fail(*error);
        return out;
    }

    // -I, -D, --overlay, --kernel-tree, --limit of the commands that read device trees.
    TreeOptions tree() {
        TreeOptions options;
        options.include_dirs = strings("include_dirs");
        options.defines = assignments("defines");
        options.kernel_tree = directory("kernel_tree");
        options.overlays = strings("overlays");
        options.limits = limits();
        return options;
    }

    // The sweep asked for; page sizes need versions.
    std::optional<SweepSpec> sweep() {
        auto versions = string("sweep_versions");
        auto page_sizes = string("sweep_page_sizes");
        if (page_sizes && !versions)
            fail(fmt::format("{} needs {}", name("sweep_page_sizes"), name("sweep_versions")));
        if (!versions) return std::nullopt;
        return SweepSpec{*versions, page_sizes};
    }

    // The configuration, tree options and --bootargs of a command that reads boards.
    template <class BoardRequest> void board_options(BoardRequest& request) {
        request.config = config();
        request.tree = tree();
        request.checks.bootargs = string("bootargs");
    }

    // --kernel-image BASE,SIZE: where the kernel lies in memblock before /reserved-memory is read.
    std::optional<std::vector<checks::EarlyReservation>> kernel_image() {
        auto text = string("kernel_image");
        if (!text) return std::nullopt;
        const auto comma = text->find(',');
        std::optional<std::uint64_t> base, size;
        if (comma != std::string::npos) {
            base = parse_size(text->substr(0, comma));
            size = parse_size(text->substr(comma + 1));
        }
        if (!base || !size || *size == 0)
            fail(fmt::format("{} takes BASE,SIZE, each a size ({}), the size not 0: '{}'",
                             name("kernel_image"), size_forms(), *text));
        return std::vector<checks::EarlyReservation>{
            {Interval::of(*base, *size), "the kernel image", false}};
    }

    // The value of a required option (read before finish()); fails naming the option when absent.
    template <class T> T required(std::optional<T> value, const char* key) const {
        if (!value) fail(name(key) + " is required");
        return std::move(*value);
    }

    // Unknown keys are errors, named all at once with the valid ones (and the likely one).
    void finish() const {
        if (!j_.is_object()) return;
        std::vector<std::string> unknown;
        for (const auto& [key, value] : j_.items())
            if (!seen_.count(key)) unknown.push_back(key);
        if (unknown.empty()) return;
        std::vector<std::string> valid;
        for (const auto& option : definition_.options)
            if (option.surface != Surface::cli) valid.emplace_back(option.key);
        std::string named;
        for (const auto& key : unknown) {
            named += (named.empty() ? "'" : ", '") + key + "'";
            if (auto near = did_you_mean(key, valid))
                named += fmt::format(" (did you mean '{}'?)", *near);
        }
        fail(fmt::format("unknown key{} {}; valid keys: {}", unknown.size() == 1 ? "" : "s", named,
                         fmt::join(valid, ", ")));
    }

private:
    static const CommandDefinition& definition_of(std::string_view command) {
        const auto* definition = find_command(command);
        if (!definition) throw std::logic_error(fmt::format("{}: no definition", command));
        return *definition;
    }

    // Every key read is a row of the command's definition (commands.cpp): the reader cannot
    // accept what the definition, the docs and the Python signatures do not name.
    const OptionDefinition& row(const char* key) const {
        const auto* option = find_option(definition_, key);
        if (!option || option->surface == Surface::cli)
            throw std::logic_error(
                fmt::format("{}: key '{}' is read but not defined", definition_.name, key));
        return *option;
    }

    std::string size_forms() const {
        return caller_ == Caller::json ? "4194304, \"0x400000\", \"4M\", \"SZ_4M\""
                                       : "4194304, 0x400000, 4M, SZ_4M";
    }

    const json& j_;
    Caller caller_;
    const CommandDefinition& definition_;
    std::string command_;
    std::set<std::string> seen_;
};

// A request that is the configuration alone (calc, config).
ConfigOptions read_configuration(const json& j, const char* command, Caller caller) {
    Request r(j, command, caller);
    auto options = r.config();
    r.finish();
    return options;
}

} // namespace

ConfigOptions read_calc_request(const json& j, Caller caller) {
    return read_configuration(j, "calc", caller);
}

TableRequest read_table_request(const json& j, Caller caller) {
    Request r(j, "table", caller);
    TableRequest request;
    if (auto arch = r.string("arch")) request.arch = *arch;
    request.kernel_version = r.string("kernel_version");
    request.kernel_tree = r.directory("kernel_tree");
    r.finish();
    return request;
}

ConfigOptions read_config_request(const json& j, Caller caller) {
    return read_configuration(j, "config", caller);
}

CheckCommand read_check_request(const json& j, Caller caller) {
    Request r(j, "check", caller);
    CheckCommand command;
    auto& request = command.request;
    request.inputs = r.strings("files");
    r.board_options(request);
    request.checks.early_reservations = r.kernel_image();
    request.checks.werror = r.flag("werror");
    request.affected_by = r.strings("affected_by");
    command.sweep = r.sweep();
    request.jobs = r.count("jobs").value_or(0);
    Diagnostics switch_errors;
    for (const auto& s : r.strings("switches")) {
        // "-Wno-overlap", "-Eoverlap", as on the command line.
        if (s.size() < 3 || s[0] != '-' || (s[1] != 'W' && s[1] != 'E'))
            r.fail(fmt::format("switch '{}' is not -W<check>, -Wno-<check>, -E<check> or "
                               "-Eno-<check>",
                               s));
        if (auto parsed = checks::parse_switch(s[1], s.substr(2), switch_errors))
            request.checks.switches.push_back(*parsed);
    }
    r.finish();
    if (switch_errors.has_errors()) r.fail_with(switch_errors.items());
    if (request.inputs.empty()) r.fail(r.name("files") + " is required");
    // The changed files, never an input: on the command line the list of --affected-by ends
    // only at an option, so a directory in it is an input it swallowed.
    for (const auto& changed : request.affected_by) {
        std::error_code ec;
        if (std::filesystem::is_directory(changed, ec))
            r.fail(fmt::format("{} takes the changed files, and '{}' is a directory{}",
                               r.name("affected_by"), changed,
                               caller == Caller::cli
                                   ? "; give the inputs before --affected-by, or after --"
                                   : ""));
    }
    return command;
}

TreeRequest read_tree_request(const json& j, Caller caller) {
    Request r(j, "tree", caller);
    TreeRequest request;
    auto file = r.string("file");
    request.tree = r.tree();
    if (auto path = r.string("path")) request.path = *path;
    auto format = r.string("format").value_or("json");
    r.finish();
    request.file = r.required(file, "file");
    if (format != "json" && format != "dts")
        r.fail(fmt::format("{} must be \"json\" or \"dts\"", r.name("format")));
    request.format = format == "dts" ? TreeFormat::dts : TreeFormat::json;
    return request;
}

FixRequest read_fix_request(const json& j, Caller caller) {
    Request r(j, "fix", caller);
    FixRequest request;
    if (r.has("file")) request.inputs = {*r.string("file")};
    auto files = r.strings("files");
    request.inputs.insert(request.inputs.end(), files.begin(), files.end());
    request.config = r.config();
    request.tree = r.tree();
    request.bootargs = r.string("bootargs");
    request.jobs = r.count("jobs").value_or(0);
    auto out = r.string("out");
    bool in_place = r.flag("in_place");
    bool diff = r.flag("diff");
    r.finish();
    if (request.inputs.empty())
        r.fail(r.name(caller == Caller::json ? "file" : "files") + " is required");
    if ((out ? 1 : 0) + (in_place ? 1 : 0) + (diff ? 1 : 0) > 1)
        r.fail(fmt::format("give at most one of {}, {} and {}", r.name("out"), r.name("in_place"),
                           r.name("diff")));
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
    return request;
}

SuggestCommand read_suggest_request(const json& j, Caller caller) {
    Request r(j, "suggest", caller);
    SuggestCommand command;
    auto& request = command.request;
    request.inputs = r.strings("files");
    request.config = r.config();
    request.tree = r.tree();
    request.target_alignment = r.size("target_alignment");
    command.sweep = r.sweep();
    r.finish();
    return command;
}

PcpRequest read_pcp_request(const json& j, Caller caller) {
    Request r(j, "pcp", caller);
    PcpRequest request;
    request.config = r.config();
    request.memory = r.size_text("memory");
    request.memory_base = r.size_text("memory_base");
    request.zones = r.assignments("zones");
    request.zoneinfo = r.string("zoneinfo");
    request.cpus = r.count("cpus");
    request.sysctls = r.assignments("sysctls");
    request.sysctl_file = r.string("sysctl_file");
    request.bootargs = r.string("bootargs");
    request.dt = r.string("dt");
    request.vendor_params = r.strings("vendor_params");
    r.finish();
    return request;
}

HeapRequest read_heap_request(const json& j, Caller caller) {
    Request r(j, "heap", caller);
    HeapRequest request;
    request.config = r.config();
    auto size = r.size_text("size");
    if (auto order = r.count("available_order")) request.available_order = static_cast<int>(*order);
    r.finish();
    request.size = r.required(size, "size");
    return request;
}

MapRequest read_map_request(const json& j, Caller caller) {
    Request r(j, "map", caller);
    MapRequest request;
    auto board = r.string("board");
    r.board_options(request);
    request.checks.early_reservations = r.kernel_image();
    r.finish();
    request.input = r.required(board, "board");
    return request;
}

ExplainRequest read_explain_request(const json& j, Caller caller) {
    Request r(j, "explain", caller);
    ExplainRequest request;
    auto log = r.string("log");
    auto board = r.string("board");
    r.board_options(request);
    request.checks.early_reservations = r.kernel_image();
    r.finish();
    request.log_path = r.required(log, "log");
    request.board = r.required(board, "board");
    return request;
}

BootCheckRequest read_boot_check_request(const json& j, Caller caller) {
    Request r(j, "boot-check", caller);
    BootCheckRequest request;
    auto board = r.string("board");
    auto kernel = r.string("kernel");
    r.board_options(request);
    request.qemu = r.string("qemu");
    if (auto timeout = r.count("timeout")) request.timeout_seconds = *timeout;
    request.save_log = r.string("save_log");
    request.save_dtb = r.string("save_dtb");
    request.stop_early = r.flag("stop_early");
    r.finish();
    request.board = r.required(board, "board");
    request.kernel_image = r.required(kernel, "kernel");
    return request;
}

} // namespace cmalign
