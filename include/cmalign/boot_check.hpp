// `cmalign boot-check BOARD --kernel IMAGE`: boots the kernel image in QEMU's virt machine with
// the board's memory and reservations grafted on (boot/graft.hpp), reads the log with explain's
// reader, and sets what that kernel did with each reservation next to what `check` predicts.
#pragma once

#include <optional>
#include <string>

#include "cmalign/report/boot_check.hpp"
#include "cmalign/run.hpp"

namespace cmalign {

struct BootCheckRequest {
    std::string board;        // .dts/.dtb
    std::string kernel_image; // --kernel
    ConfigOptions config;     // -c …: else the image's IKCONFIG, else a config beside the image
    TreeOptions tree;         // -I, -D, --overlay
    checks::Options checks;   // --bootargs overrides /chosen/bootargs
    std::optional<std::string> qemu; // --qemu: binary (name or path)
    double timeout_seconds = 120;
    std::optional<std::string> save_log; // --save-log FILE: the serial console capture
    std::optional<std::string> save_dtb; // --save-dtb FILE: the grafted tree QEMU booted
    std::string extra_bootargs;          // appended to the grafted command line
    // --stop-early: stop the machine once the kernel prints its DMA atomic pools
    // (postcore_initcall dma_atomic_pool_init, kernel/dma/pool.c v5.10-v7.2): every
    // reserved-memory and CMA line (fdt init, core_initcall cma_init_reserved_areas) is out by
    // then. About 2.5 times faster than waiting for the root-mount panic; arm64 only (the pools
    // need CONFIG_DMA_DIRECT_REMAP).
    bool stop_early = false;
};

using report::BootReservation;

// The report (report/boot_check.hpp) and the exit status of the command.
struct BootCheckOutcome : report::BootCheckReport {
    // input_error: errors (no QEMU, no root-mount panic in time, unsupported arch, bad input);
    // findings: the kernel lost a pool or crashed; else clean.
    ExitCode exit_code() const;
};

BootCheckOutcome run_boot_check(const BootCheckRequest& request);

std::string boot_check_text(const BootCheckOutcome& outcome);

} // namespace cmalign
