// cmalign boot-check BOARD --kernel IMAGE: boot the kernel in QEMU with the board's reservations
// and set what it did next to check's prediction. Help texts come from the command's definition.
#include <iostream>

#include "cmalign/boot_check.hpp"
#include "common.hpp"

namespace cmalign::cli {

void register_boot_check(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand("boot-check");
    auto request = std::make_shared<BootCheckRequest>();
    auto format = std::make_shared<std::string>("text");
    add_input(cmd, "board", request->board, "the board's .dts or .dtb");
    cmd->add_option("--kernel", request->kernel_image)->required();
    add_config_options(*cmd, request->config);
    add_tree_options(*cmd, request->tree);
    cmd->add_option("--bootargs", request->checks.bootargs);
    cmd->add_option("--qemu", request->qemu);
    cmd->add_option("--timeout", request->timeout_seconds);
    cmd->add_flag("--stop-early", request->stop_early);
    cmd->add_option("--save-log", request->save_log);
    cmd->add_option("--save-dtb", request->save_dtb);
    add_format(cmd, *format);

    on_run(cmd, [=, &exit_code] {
        auto outcome = run_boot_check(*request);
        for (const auto& d : outcome.errors)
            std::cerr << format_gcc(d) << '\n';
        if (*format == "json")
            std::cout << boot_check_json(outcome).dump(2) << '\n';
        else
            std::cout << boot_check_text(outcome);
        exit_code = outcome.exit_code();
    });
}

} // namespace cmalign::cli
