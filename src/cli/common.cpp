#include "common.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace cmalign::cli {

namespace {

struct Positional {
    std::string name;
    std::vector<std::string>* list = nullptr; // a list takes every remaining word
    std::string* single = nullptr;
    bool required = false;
};

struct Command {
    std::function<void()> run;
    std::vector<Positional> positionals;
};

std::map<const CLI::App*, Command>& commands() {
    static std::map<const CLI::App*, Command> registry;
    return registry;
}

std::set<const CLI::Option*>& list_options() {
    static std::set<const CLI::Option*> options;
    return options;
}

} // namespace

void on_run(CLI::App* cmd, std::function<void()> run) {
    commands()[cmd].run = std::move(run);
}

CLI::Option* add_inputs(CLI::App* cmd, const std::string& name, std::vector<std::string>& target,
                        const std::string& help, bool required) {
    commands()[cmd].positionals.push_back({name, &target, nullptr, required});
    return cmd->add_option(name, target, help);
}

CLI::Option* add_input(CLI::App* cmd, const std::string& name, std::string& target,
                       const std::string& help) {
    commands()[cmd].positionals.push_back({name, nullptr, &target, true});
    return cmd->add_option(name, target, help);
}

CLI::Option* takes_list(CLI::Option* option) {
    list_options().insert(option);
    return option;
}

CLI::Option* add_format(CLI::App* cmd, std::string& format) {
    return cmd->add_option("--format", format);
}

namespace {

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

const OptionDefinition* definition_of(const CommandDefinition& command, const CLI::Option& o) {
    for (const auto& row : command.options) {
        if (row.surface == Surface::api) continue;
        if (!o.nonpositional()) {
            if (row.positional && row.key == o.get_name()) return &row;
            continue;
        }
        auto flags = split(row.flags, ',');
        for (const auto& name : names_of(o))
            if (std::find(flags.begin(), flags.end(), name) != flags.end()) return &row;
    }
    return nullptr;
}

} // namespace

void apply_definitions(CLI::App& app) {
    for (auto* cmd : app.get_subcommands([](CLI::App*) { return true; })) {
        // A command without a definition keeps its own CLI11 texts (tests/cli/reference_test.cpp
        // fails on it); a defined one must match its definition exactly.
        const auto* command = find_command(cmd->get_name());
        if (!command) continue;
        cmd->description(std::string(command->summary));
        std::set<const OptionDefinition*> used;
        for (auto* option : cmd->get_options()) {
            if (option == cmd->get_help_ptr()) continue;
            const auto* row = definition_of(*command, *option);
            if (!row)
                throw std::logic_error(fmt::format("cmalign {}: option {} has no definition",
                                                   cmd->get_name(), option->get_name()));
            used.insert(row);
            option->description(std::string(row->help));
            if (row->type != ValueType::flag && !row->metavar.empty())
                option->type_name(std::string(row->metavar));
            if (row->type == ValueType::choice) {
                auto choices = split(row->choices, ',');
                option->check(CLI::IsMember(choices));
                option->type_name(std::string(row->metavar) + ":{" + std::string(row->choices) +
                                  "}");
            }
            if (!row->default_value.empty()) option->default_str(std::string(row->default_value));
        }
        for (const auto& row : command->options)
            if (row.surface != Surface::api && !used.count(&row))
                throw std::logic_error(fmt::format("cmalign {}: defined option '{}' is missing",
                                                   cmd->get_name(), row.key));
    }
}

int run_command_line(CLI::App& app, int argc, char** argv, const ExitCode& exit_code) {
    apply_definitions(app);
    // Options never eat inputs: a repeatable option takes one value per occurrence, so in
    // `check a.dts -I inc b.dts -c x` both boards are inputs.
    for (auto* cmd : app.get_subcommands([](CLI::App*) { return true; }))
        for (auto* option : cmd->get_options())
            if (option->nonpositional() && option->get_items_expected_max() > 1 &&
                !list_options().count(option))
                option->allow_extra_args(false);

    // `--` ends the options: what follows is positional whatever it looks like. Split here
    // because CLI11 2.1 hands the words after `--` back to the parent once a subcommand's
    // positional has a value.
    std::vector<std::string> args(argv + 1, argv + argc);
    std::vector<std::string> after;
    if (auto dashes = std::find(args.begin(), args.end(), "--"); dashes != args.end()) {
        after.assign(dashes + 1, args.end());
        args.erase(dashes, args.end());
    }
    // Friendly edges before CLI11 sees the words: a bare `cmalign` or `cmalign help` lists the
    // commands, an unknown command or long option gets "did you mean".
    std::vector<std::string> command_names;
    for (const auto* cmd : app.get_subcommands([](CLI::App*) { return true; }))
        command_names.push_back(cmd->get_name());
    if (args.empty() || args.front() == "help") {
        if (args.size() > 1 &&
            std::find(command_names.begin(), command_names.end(), args[1]) == command_names.end()) {
            auto near = did_you_mean(args[1], command_names);
            std::cerr << fmt::format("cmalign: error: unknown command '{}'{}\n", args[1],
                                     near ? fmt::format(" (did you mean '{}'?)", *near) : "");
            return to_int(ExitCode::input_error);
        }
        std::cout << (args.size() > 1 ? app.get_subcommand(args[1])->help() : app.help());
        return to_int(args.empty() ? ExitCode::input_error : ExitCode::clean);
    }
    if (args.front().empty() || args.front()[0] != '-') {
        if (std::find(command_names.begin(), command_names.end(), args.front()) ==
            command_names.end()) {
            auto near = did_you_mean(args.front(), command_names);
            std::cerr << fmt::format("cmalign: error: unknown command '{}'{}\ncommands: {}\n",
                                     args.front(),
                                     near ? fmt::format(" (did you mean '{}'?)", *near) : "",
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
            auto near = did_you_mean(name, long_names);
            std::cerr << fmt::format("cmalign {}: error: unknown option '{}'{}\nRun with --help "
                                     "for more information.\n",
                                     args.front(), name,
                                     near ? fmt::format(" (did you mean '{}'?)", *near) : "");
            return to_int(ExitCode::input_error);
        }
    }
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
    auto& command = commands()[cmd];
    auto usage_error = [&](const std::string& message) {
        std::cerr << "cmalign " << cmd->get_name() << ": error: " << message << "\n"
                  << "Run with --help for more information.\n";
        return to_int(ExitCode::input_error);
    };
    std::size_t next = 0;
    for (auto& p : command.positionals) {
        if (next == after.size()) break;
        if (p.list) {
            p.list->insert(p.list->end(), after.begin() + static_cast<std::ptrdiff_t>(next),
                           after.end());
            next = after.size();
        } else if (p.single->empty()) {
            *p.single = after[next++];
        }
    }
    if (next < after.size())
        return usage_error(fmt::format("unexpected argument '{}' after --", after[next]));
    for (const auto& p : command.positionals)
        if (p.required && (p.list ? p.list->empty() : p.single->empty()))
            return usage_error(fmt::format("{} is required", p.name));
    if (command.run) command.run();
    return to_int(exit_code);
}

void add_limit_option(CLI::App& cmd, InputLimits& limits) {
    // One --limit per command, written to every InputLimits the command's request holds (the
    // configuration's and the device trees').
    static std::map<const CLI::App*, std::shared_ptr<std::vector<InputLimits*>>> targets;
    auto& list = targets[&cmd];
    if (!list) {
        list = std::make_shared<std::vector<InputLimits*>>();
        cmd.add_option_function<std::vector<std::string>>(
            "--limit", [list = list](const std::vector<std::string>& specs) {
                for (const auto& spec : specs)
                    for (auto* target : *list)
                        if (auto error = set_limit(*target, spec))
                            throw CLI::ValidationError(*error);
            });
    }
    list->push_back(&limits);
}

void add_config_options(CLI::App& cmd, ConfigOptions& options) {
    cmd.add_option("-c,--config", options.config_files);
    cmd.add_option("--set", options.sets);
    cmd.add_option("--unset", options.unsets);
    cmd.add_option("--arch", options.arch);
    cmd.add_option("--kernel-version", options.kernel_version);
    cmd.add_option("--kernel-tree", options.kernel_tree)->check(CLI::ExistingDirectory);
    cmd.add_flag("--kconfig-shell", options.kconfig_shell);
    add_limit_option(cmd, options.limits);
    // The library reads no environment: ARCH is passed in, as the last source of the arch.
    if (const char* arch = std::getenv("ARCH"); arch && *arch) options.environment_arch = arch;
    for (const char* name : {"CROSS_COMPILE", "LLVM"})
        if (const char* value = std::getenv(name)) options.kconfig_environment[name] = value;
}

void add_sweep_options(CLI::App& cmd, SweepOptions& options, const std::string& each) {
    cmd.add_option("--sweep-versions", options.versions,
                   each + " each kernel version: 6.1,6.6,6.12 or 6.1..6.18, boundaries, all");
    cmd.add_option("--sweep-page-sizes", options.page_sizes);
}

std::optional<SweepSpec> sweep_spec(const SweepOptions& options, ExitCode& exit_code) {
    if (!options.page_sizes.empty() && options.versions.empty()) {
        std::cerr << "cmalign: error: --sweep-page-sizes needs --sweep-versions\n";
        exit_code = ExitCode::input_error;
        return std::nullopt;
    }
    if (options.versions.empty()) return std::nullopt;
    SweepSpec spec{options.versions, std::nullopt};
    if (!options.page_sizes.empty()) spec.page_sizes = options.page_sizes;
    return spec;
}

void print_diagnostics(const Diagnostics& diags) {
    // Errors first: what stopped the command is not buried under notes about assumptions.
    for (auto severity : {Severity::error, Severity::warning, Severity::note})
        for (const auto& d : diags.items())
            if (d.severity == severity) std::cerr << format_gcc(d) << '\n';
}

std::vector<std::string> names_of(const CLI::Option& o) {
    std::vector<std::string> out;
    for (const auto& n : o.get_snames())
        out.push_back("-" + n);
    for (const auto& n : o.get_lnames())
        out.push_back("--" + n);
    return out;
}

void register_commands(CLI::App& app, ExitCode& exit_code) {
    register_calc(app, exit_code);
    register_table(app, exit_code);
    register_config(app, exit_code);
    register_check(app, exit_code);
    register_tree(app, exit_code);
    register_fix(app, exit_code);
    register_suggest(app, exit_code);
    register_pcp(app, exit_code);
    register_heap(app, exit_code);
    register_map(app, exit_code);
    register_explain(app, exit_code);
    register_boot_check(app, exit_code);
    add_manual(app);
}

} // namespace cmalign::cli
