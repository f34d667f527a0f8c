#include "app.hpp"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h> // fmt::join (fmt 11 moved it here)

namespace cmalign::cli {

namespace {

// Where CLI11 writes the values of one option of the definition.
struct Value {
    const OptionDefinition* row = nullptr;
    CLI::Option* option = nullptr; // nullptr for -W/-E (their words go to `switches`)
    std::string single;
    std::vector<std::string> list;
    bool flag = false;

    bool given() const {
        if (row->type == ValueType::flag) return flag;
        if (row->positional) return row->repeatable ? !list.empty() : !single.empty();
        return option && option->count() > 0;
    }
};

struct Command {
    std::deque<Value> values;          // one per option of the definition; stable addresses
    std::vector<std::string> switches; // -W/-E as written ("-Wno-overlap"), in order
    Run run;
};

std::map<const CLI::App*, Command>& commands() {
    static std::map<const CLI::App*, Command> registry;
    return registry;
}

std::map<const CLI::Option*, const OptionDefinition*>& rows() {
    static std::map<const CLI::Option*, const OptionDefinition*> registry;
    return registry;
}

std::vector<std::string> split(std::string_view text, char separator) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto end = text.find(separator, start);
        if (end == std::string_view::npos) end = text.size();
        if (end > start) out.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

// Help text, value name, choices and default of an option, from its row.
void describe(CLI::Option* option, const OptionDefinition& row) {
    rows()[option] = &row;
    option->description(std::string(row.help));
    if (row.type != ValueType::flag && !row.metavar.empty())
        option->type_name(std::string(row.metavar));
    // A choice shows its values after the name: CLI11 adds the validator's "{text,json}".
    if (row.type == ValueType::choice) option->check(CLI::IsMember(split(row.choices, ',')));
    if (!row.default_value.empty()) option->default_str(std::string(row.default_value));
}

// The CLI11 option(s) of one row.
void add_option(CLI::App* cmd, Command& command, const OptionDefinition& row) {
    auto& value = command.values.emplace_back();
    value.row = &row;
    if (row.type == ValueType::check_switch) {
        // -W/-E keep command-line order (later wins, as in dtc): each word as it is parsed.
        for (const auto& name : split(row.flags, ',')) {
            auto* option =
                cmd->add_option_function<std::string>(name,
                                                      [&command, name](const std::string& v) {
                                                          command.switches.push_back(name + v);
                                                      })
                    ->trigger_on_parse()
                    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
            describe(option, row);
        }
        return;
    }
    const std::string names = row.positional ? std::string(row.key) : std::string(row.flags);
    if (row.type == ValueType::flag)
        value.option = cmd->add_flag(names, value.flag);
    else if (row.repeatable)
        value.option = cmd->add_option(names, value.list);
    else
        value.option = cmd->add_option(names, value.single);
    if (row.repeatable && !row.positional) {
        value.option->take_all();
        // Options never eat inputs: in `check a.dts -I inc b.dts -c x` both boards are inputs.
        if (!row.takes_list) value.option->allow_extra_args(false);
    }
    describe(value.option, row);
}

// A count as JSON takes it; anything else stays text, for the reader to refuse by name.
nlohmann::json count_value(const std::string& text) {
    if (!text.empty() && text.size() <= 9 &&
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::stoul(text);
    return text;
}

Invocation invocation_of(const Command& command) {
    auto request = nlohmann::json::object();
    std::map<std::string, std::string> cli_values;
    for (const auto& value : command.values) {
        const auto& row = *value.row;
        const std::string key(row.key);
        if (row.surface == Surface::cli) {
            if (row.type == ValueType::flag)
                cli_values[key] = value.flag ? "true" : "";
            else
                cli_values[key] = value.given() ? value.single : std::string(row.default_value);
            continue;
        }
        if (row.type == ValueType::check_switch) {
            if (!command.switches.empty()) request[key] = command.switches;
        } else if (!value.given()) {
            continue;
        } else if (row.type == ValueType::flag) {
            request[key] = true;
        } else if (row.repeatable) {
            request[key] = value.list;
        } else if (row.type == ValueType::count) {
            request[key] = count_value(value.single);
        } else {
            request[key] = value.single;
        }
    }
    return Invocation(std::move(request), std::move(cli_values));
}

// Friendly edges before CLI11 sees the words: a bare `cmalign` or `cmalign help` lists the
// commands, an unknown command or long option gets "did you mean". nullopt: go on parsing.
std::optional<int> friendly_edges(CLI::App& app, const std::vector<std::string>& args) {
    std::vector<std::string> command_names;
    for (const auto* cmd : app.get_subcommands([](CLI::App*) { return true; }))
        command_names.push_back(cmd->get_name());
    auto known = [&](const std::string& name) {
        return std::find(command_names.begin(), command_names.end(), name) != command_names.end();
    };
    auto near_text = [](const std::optional<std::string>& near) {
        return near ? fmt::format(" (did you mean '{}'?)", *near) : std::string();
    };
    if (args.empty() || args.front() == "help") {
        if (args.size() > 1 && !known(args[1])) {
            std::cerr << fmt::format("cmalign: error: unknown command '{}'{}\n", args[1],
                                     near_text(did_you_mean(args[1], command_names)));
            return to_int(ExitCode::input_error);
        }
        std::cout << (args.size() > 1 ? app.get_subcommand(args[1])->help() : app.help());
        return to_int(args.empty() ? ExitCode::input_error : ExitCode::clean);
    }
    if (args.front().empty() || args.front()[0] == '-') return std::nullopt;
    if (!known(args.front())) {
        std::cerr << fmt::format("cmalign: error: unknown command '{}'{}\ncommands: {}\n",
                                 args.front(), near_text(did_you_mean(args.front(), command_names)),
                                 fmt::join(command_names, ", "));
        return to_int(ExitCode::input_error);
    }
    auto* cmd = app.get_subcommand(args.front());
    std::vector<std::string> long_names = {"--help"};
    for (const auto* option : cmd->get_options())
        for (const auto& n : option->get_lnames())
            long_names.push_back("--" + n);
    for (std::size_t i = 1; i < args.size(); ++i) {
        const auto& word = args[i];
        if (word.size() < 3 || word.compare(0, 2, "--") != 0) continue;
        auto name = word.substr(0, word.find('='));
        if (std::find(long_names.begin(), long_names.end(), name) != long_names.end()) continue;
        std::cerr << fmt::format("cmalign {}: error: unknown option '{}'{}\nRun with --help for "
                                 "more information.\n",
                                 args.front(), name, near_text(did_you_mean(name, long_names)));
        return to_int(ExitCode::input_error);
    }
    return std::nullopt;
}

int usage_error(const std::string& message, bool point_to_help = true) {
    std::cerr << message << '\n';
    if (point_to_help) std::cerr << "Run with --help for more information.\n";
    return to_int(ExitCode::input_error);
}

} // namespace

CLI::App* add_command(CLI::App& app, std::string_view name, Run run) {
    const auto* definition = find_command(name);
    if (!definition) throw std::logic_error(fmt::format("cmalign {}: no definition", name));
    auto* cmd = app.add_subcommand(std::string(definition->name), std::string(definition->summary));
    auto& command = commands()[cmd];
    command.run = std::move(run);
    std::set<std::string_view> keys;
    for (const auto& row : definition->options) {
        if (!keys.insert(row.key).second)
            throw std::logic_error(
                fmt::format("cmalign {}: key '{}' defined twice", name, row.key));
        if (row.surface != Surface::api) add_option(cmd, command, row);
    }
    // A command line parsed again (fuzz_argv keeps one App) starts without the earlier -W/-E.
    cmd->preparse_callback([&command](std::size_t) { command.switches.clear(); });
    return cmd;
}

int run_command_line(CLI::App& app, int argc, char** argv) {
    // `--` ends the options: what follows is positional whatever it looks like. Split here
    // because CLI11 2.1 hands the words after `--` back to the parent once a subcommand's
    // positional has a value.
    std::vector<std::string> args(argv + 1, argv + argc);
    const std::vector<std::string> typed = args;
    std::vector<std::string> after;
    if (auto dashes = std::find(args.begin(), args.end(), "--"); dashes != args.end()) {
        after.assign(dashes + 1, args.end());
        args.erase(dashes, args.end());
    }
    if (auto status = friendly_edges(app, args)) return *status;
    std::reverse(args.begin(), args.end()); // CLI11 takes them last first
    try {
        app.parse(args);
    } catch (const CLI::Success& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e); // prints the message and usage
        return to_int(ExitCode::input_error);
    }
    auto chosen = app.get_subcommands();
    if (chosen.empty()) return to_int(ExitCode::input_error);
    auto* cmd = chosen.front();
    auto& command = commands().at(cmd);
    // The words after `--` fill the positional inputs in the definition's order.
    std::size_t next = 0;
    for (auto& value : command.values) {
        if (!value.row->positional || next == after.size()) continue;
        if (value.row->repeatable) {
            value.list.insert(value.list.end(), after.begin() + static_cast<std::ptrdiff_t>(next),
                              after.end());
            next = after.size();
        } else if (value.single.empty()) {
            value.single = after[next++];
        }
    }
    if (next < after.size())
        return usage_error(fmt::format("cmalign {}: error: unexpected argument '{}' after --",
                                       cmd->get_name(), after[next]));
    try {
        auto invocation = invocation_of(command);
        invocation.set_typed(typed);
        return to_int(command.run(invocation));
    } catch (const UsageError& e) {
        return usage_error(e.what(), e.point_to_help());
    }
}

std::string Invocation::text() const {
    std::string text = request_.dump();
    for (const auto& [key, value] : cli_values_)
        text += '\n' + key + '=' + value;
    return text;
}

void pass_environment(ConfigOptions& options, const Invocation& invocation) {
    // The library reads no environment: ARCH is passed in, as the last source of the arch.
    if (const char* arch = std::getenv("ARCH"); arch && *arch) options.environment_arch = arch;
    for (const char* name : {"CROSS_COMPILE", "LLVM"})
        if (const char* value = std::getenv(name)) options.kconfig_environment[name] = value;
    // The on-disk cache is on for the command line (the library's default is off): the XDG
    // base directory's cache home, else ~/.cache; --no-cache turns it off.
    if (invocation.flag("no_cache"))
        options.cache_dir.reset();
    else if (!options.cache_dir)
        options.cache_dir = default_cache_dir();
}

std::optional<std::string> default_cache_dir() {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    if (xdg && *xdg == '/') return std::string(xdg) + "/cmalign";
    if (home && *home == '/') return std::string(home) + "/.cache/cmalign";
    return std::nullopt;
}

void print_diagnostics(const std::vector<Diagnostic>& diags) {
    // Errors first: what stopped the command is not buried under notes about assumptions.
    for (auto severity : {Severity::error, Severity::warning, Severity::note})
        for (const auto& d : diags)
            if (d.severity == severity) std::cerr << format_gcc(d) << '\n';
}

const OptionDefinition* definition_of(const CLI::Option& option) {
    auto it = rows().find(&option);
    return it == rows().end() ? nullptr : it->second;
}

std::vector<std::string> names_of(const CLI::Option& o) {
    std::vector<std::string> out;
    for (const auto& n : o.get_snames())
        out.push_back("-" + n);
    for (const auto& n : o.get_lnames())
        out.push_back("--" + n);
    return out;
}

std::string_view command_named(int argc, char** argv) {
    if (argc < 2) return {};
    const std::string_view first = argv[1];
    for (const auto& command : command_definitions())
        if (command.name == first) return command.name;
    return {};
}

void register_commands(CLI::App& app, std::string_view only) {
    struct Entry {
        const char* name;
        ExitCode (*run)(const Invocation&);
    };
    static constexpr Entry entries[] = {
        {"calc", calc_command},       {"table", table_command},
        {"config", config_command},   {"check", check_command},
        {"tree", tree_command},       {"fix", fix_command},
        {"suggest", suggest_command}, {"pcp", pcp_command},
        {"heap", heap_command},       {"map", map_command},
        {"explain", explain_command}, {"boot-check", boot_check_command},
    };
    for (const auto& command : command_definitions()) {
        auto entry = std::find_if(std::begin(entries), std::end(entries),
                                  [&](const Entry& e) { return e.name == command.name; });
        if (entry == std::end(entries))
            throw std::logic_error(fmt::format("cmalign {}: defined but not run", command.name));
        if (only.empty() || only == command.name)
            add_command(app, command.name, entry->run);
        else // named and summarised for the listings; never parsed in this run
            app.add_subcommand(std::string(command.name), std::string(command.summary));
    }
    // A value check of the printing side: the text picture needs room.
    if (only.empty() || only == "map")
        app.get_subcommand("map")->get_option("--columns")->check(CLI::Range(60, 1000));
    add_manual(app);
}

} // namespace cmalign::cli
