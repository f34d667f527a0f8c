// cmalign config: the configuration after merging the inputs.
#include <iostream>

#include "cmalign/kconfig/write.hpp"
#include "common.hpp"

namespace cmalign::cli {

void register_config(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand("config");
    auto options = std::make_shared<ConfigOptions>();
    auto format = std::make_shared<std::string>("config");
    add_config_options(*cmd, *options);
    add_format(cmd, *format);
    on_run(cmd, [options, format, &exit_code] {
        Diagnostics diags;
        auto evaluation = evaluate_config(*options, diags);
        print_diagnostics(diags); // redefinition warnings and errors, gcc-style, on stderr
        if (!evaluation || diags.has_errors()) {
            exit_code = ExitCode::input_error;
            return;
        }
        if (*format == "json")
            std::cout << kconfig::to_json(evaluation->config).dump(2) << '\n';
        else if (!evaluation->dotconfig.empty())
            std::cout << evaluation->dotconfig; // as conf_write() writes it, menu comments included
        else
            std::cout << kconfig::to_config_text(evaluation->config);
        exit_code = ExitCode::clean;
    });
}

} // namespace cmalign::cli
