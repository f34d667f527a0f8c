// cmalign boot-check BOARD --kernel IMAGE: boot the kernel in QEMU with the board's reservations
// and set what it did next to check's prediction.
#include <iostream>

#include "cmalign/boot_check.hpp"
#include "common.hpp"

namespace cmalign::cli {

void register_boot_check(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand(
        "boot-check", "boot a kernel image in QEMU with the board's memory reservations and "
                      "compare what it did with check's prediction");
    auto request = std::make_shared<BootCheckRequest>();
    auto format = std::make_shared<std::string>("text");
    cmd->add_option("board", request->board, "the board's .dts or .dtb")->required();
    cmd->add_option("--kernel", request->kernel_image,
                    "the kernel image (arm64 Image/vmlinuz, gzip or EFI zboot)")
        ->required();
    add_config_options(*cmd, request->config);
    add_tree_options(*cmd, request->tree);
    cmd->add_option("--bootargs", request->checks.bootargs,
                    "kernel command line (overrides /chosen/bootargs; its cma= is passed on)");
    cmd->add_option("--qemu", request->qemu, "the QEMU binary (default: by the image's arch)");
    cmd->add_option("--timeout", request->timeout_seconds,
                    "seconds to wait for the root-mount panic (default 120)");
    cmd->add_flag("--stop-early", request->stop_early,
                  "stop once the kernel has set up its DMA atomic pools (after every "
                  "reserved-memory and CMA line) instead of at the root-mount panic");
    cmd->add_option("--save-log", request->save_log, "write the boot log to this file");
    cmd->add_option("--save-dtb", request->save_dtb, "write the grafted DTB to this file");
    cmd->add_option("--format", *format, "text or json")->check(CLI::IsMember({"text", "json"}));

    cmd->callback([=, &exit_code] {
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
