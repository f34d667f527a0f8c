// cmalign calc: what the kernel will compute for a configuration, and why.
#include <algorithm>
#include <iostream>

#include "cmalign/kernel/report.hpp"
#include "cmalign/kernel/versions.hpp"
#include "common.hpp"

namespace cmalign::cli {

void register_calc(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand("calc");
    auto options = std::make_shared<ConfigOptions>();
    auto format = std::make_shared<std::string>("text");
    add_config_options(*cmd, *options);
    add_format(cmd, *format);
    on_run(cmd, [options, format, &exit_code] {
        Diagnostics diags;
        auto model = load_model(*options, diags);
        if (!model || diags.has_errors()) {
            print_diagnostics(diags);
            exit_code = ExitCode::input_error;
            return;
        }
        if (*format == "json") {
            std::cout << kernel::to_json(*model).dump(2) << '\n';
        } else {
            // Warnings of reading the files go to stderr, gcc-style; those about the model's
            // inputs are part of the explanation on stdout, so they are not repeated.
            Diagnostics reading;
            for (const auto& d : diags.items()) {
                bool in_model = std::any_of(
                    model->diagnostics.begin(), model->diagnostics.end(),
                    [&](const auto& m) { return m.message == d.message && m.where == d.where; });
                if (!in_model) reading.add(d);
            }
            print_diagnostics(reading);
            std::cout << kernel::render_text(*model);
        }
        exit_code = ExitCode::clean;
    });
}

void register_table(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand("table");
    auto arch = std::make_shared<std::string>("arm64");
    auto version = std::make_shared<std::string>();
    auto tree = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>("text");
    cmd->add_option("--arch", *arch);
    cmd->add_option("--kernel-version", *version);
    cmd->add_option("--kernel-tree", *tree);
    add_format(cmd, *format);
    on_run(cmd, [arch, version, tree, format, &exit_code] {
        Diagnostics diags;
        auto parsed_arch = arch_option(*arch, diags);
        auto nonempty = [](const std::string& s) {
            return s.empty() ? std::nullopt : std::optional<std::string>(s);
        };
        std::optional<KernelVersion> parsed_version;
        if (parsed_arch) parsed_version = table_version(nonempty(*version), nonempty(*tree), diags);
        print_diagnostics(diags);
        if (!parsed_arch || !parsed_version) {
            exit_code = ExitCode::input_error;
            return;
        }
        KernelVersion v = *parsed_version;
        auto rows = kernel::table(*parsed_arch, v);
        if (*format == "json")
            std::cout << kernel::to_json(rows).dump(2) << '\n';
        else if (*format == "markdown")
            std::cout << kernel::render_table_markdown(rows, *parsed_arch, v);
        else
            std::cout << kernel::render_table_text(rows, *parsed_arch, v);
        exit_code = ExitCode::clean;
    });
}

} // namespace cmalign::cli
