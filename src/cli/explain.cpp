// cmalign explain LOG BOARD: what a boot log shows happened to each reserved-memory node, why,
// and the fix.
#include <iostream>

#include "cmalign/explain.hpp"
#include "common.hpp"

namespace cmalign::cli {

void register_explain(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand("explain");
    auto request = std::make_shared<ExplainRequest>();
    auto format = std::make_shared<std::string>("text");
    add_input(cmd, "log", request->log_path, "dmesg, journalctl -k or serial console capture");
    add_input(cmd, "board", request->board, "the board's .dts or .dtb");
    add_config_options(*cmd, request->config);
    add_tree_options(*cmd, request->tree);
    cmd->add_option("--bootargs", request->checks.bootargs);
    add_format(cmd, *format);

    on_run(cmd, [=, &exit_code] {
        auto outcome = run_explain(*request);
        for (const auto& d : outcome.errors)
            std::cerr << format_gcc(d) << '\n';
        if (*format == "json")
            // A log is bytes from a serial line: invalid UTF-8 becomes U+FFFD, as run_json() does.
            std::cout << explain_json(outcome).dump(2, ' ', false,
                                                    nlohmann::json::error_handler_t::replace)
                      << '\n';
        else if (outcome.errors.empty())
            std::cout << explain_text(outcome);
        exit_code = outcome.exit_code();
    });
}

} // namespace cmalign::cli
