// cmalign calc / table / config: what the kernel will compute for a configuration, the what-if
// grid, the configuration after merging.
#include <iostream>

#include "cmalign/internal/kconfig/config_json.hpp"
#include "cmalign/internal/kconfig/write.hpp"
#include "cmalign/internal/kernel/report.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/internal/report/json_text.hpp"
#include "common.hpp"

namespace cmalign::cli {

ExitCode calc_command(const Invocation& invocation) {
    auto options = invocation.read(read_calc_request);
    pass_environment(options, invocation);
    auto outcome = run_calc(options);
    if (outcome.exit_code() == ExitCode::input_error) {
        print_diagnostics(outcome.diags);
        return ExitCode::input_error;
    }
    if (invocation.value("format") == "json") {
        std::cout << report::pretty_json(kernel::to_json(*outcome.model)) << '\n';
    } else {
        // Warnings of reading the files go to stderr, gcc-style; those about the model's
        // inputs are part of the explanation on stdout, so they are not repeated.
        print_diagnostics(outcome.reading_diagnostics());
        std::cout << kernel::render_text(*outcome.model);
    }
    return ExitCode::clean;
}

ExitCode table_command(const Invocation& invocation) {
    auto outcome = run_table(invocation.read(read_table_request));
    print_diagnostics(outcome.diags);
    if (outcome.exit_code() == ExitCode::input_error) return ExitCode::input_error;
    const auto format = invocation.value("format");
    if (format == "json")
        std::cout << report::pretty_json(kernel::to_json(outcome.rows)) << '\n';
    else if (format == "markdown")
        std::cout << kernel::render_table_markdown(outcome.rows, *outcome.arch, *outcome.version);
    else
        std::cout << kernel::render_table_text(outcome.rows, *outcome.arch, *outcome.version);
    return ExitCode::clean;
}

ExitCode config_command(const Invocation& invocation) {
    auto options = invocation.read(read_config_request);
    pass_environment(options, invocation);
    auto outcome = run_config(options);
    print_diagnostics(outcome.diags); // redefinition warnings and errors, gcc-style, on stderr
    if (outcome.exit_code() == ExitCode::input_error) return ExitCode::input_error;
    const auto& evaluation = *outcome.evaluation;
    if (invocation.value("format") == "json")
        std::cout << report::pretty_json(kconfig::to_json(evaluation.config)) << '\n';
    else if (!evaluation.dotconfig.empty())
        std::cout << evaluation.dotconfig; // as conf_write() writes it, menu comments included
    else
        std::cout << kconfig::to_config_text(evaluation.config);
    return ExitCode::clean;
}

} // namespace cmalign::cli
