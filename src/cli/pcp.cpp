// cmalign pcp: per-CPU page list batch/high, watermarks and min_free_kbytes of a board.
#include <iostream>

#include "cmalign/tune.hpp"
#include "common.hpp"

namespace cmalign::cli {

void register_pcp(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand("pcp");
    auto request = std::make_shared<PcpRequest>();
    auto format = std::make_shared<std::string>("text");
    add_config_options(*cmd, request->config);
    cmd->add_option("--memory", request->memory);
    cmd->add_option("--memory-base", request->memory_base);
    cmd->add_option("--zone", request->zones);
    cmd->add_option("--zoneinfo", request->zoneinfo);
    cmd->add_option("--cpus", request->cpus);
    cmd->add_option("--sysctl", request->sysctls);
    cmd->add_option("--sysctl-file", request->sysctl_file);
    cmd->add_option("--bootargs", request->bootargs);
    cmd->add_option("--dt", request->dt);
    cmd->add_option("--vendor-param", request->vendor_params);
    add_format(cmd, *format);
    on_run(cmd, [request, format, &exit_code] {
        auto outcome = run_pcp(*request);
        print_diagnostics(outcome.diags);
        exit_code = outcome.exit_code();
        if (exit_code == ExitCode::input_error) return;
        if (*format == "json")
            std::cout << pcp_json(outcome).dump(2) << '\n';
        else
            std::cout << pcp_text(outcome);
    });
}

void register_heap(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand("heap");
    auto request = std::make_shared<HeapRequest>();
    auto format = std::make_shared<std::string>("text");
    add_config_options(*cmd, request->config);
    cmd->add_option("--size", request->size)->required();
    cmd->add_option("--available-order", request->available_order);
    add_format(cmd, *format);
    on_run(cmd, [request, format, &exit_code] {
        auto outcome = run_heap(*request);
        print_diagnostics(outcome.diags);
        exit_code = outcome.exit_code();
        if (exit_code == ExitCode::input_error) return;
        if (*format == "json")
            std::cout << heap_json(outcome).dump(2) << '\n';
        else
            std::cout << heap_text(outcome);
    });
}

} // namespace cmalign::cli
