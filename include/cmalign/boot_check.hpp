// `cmalign boot-check BOARD --kernel IMAGE`: boots the kernel image in QEMU's virt machine with
// the board's memory and reservations grafted on (boot/graft.hpp), reads the log with explain's
// reader, and sets what that kernel did with each reservation next to what `check` predicts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cmalign/boot/graft.hpp"
#include "cmalign/boot/image.hpp"
#include "cmalign/explain.hpp"
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

// One reservation: the kernel's word and check's.
struct BootReservation {
    std::string node;
    std::string name;
    Location where;
    bool pool = false; // a pool the kernel should create (CMA, DMA coherent, restricted)
    NodeOutcome kernel = NodeOutcome::absent;
    bool kernel_lost = false; // rejected, failed, or a pool the log never mentions
    std::vector<bootlog::Message> log;
    std::string check = "ok"; // "error", "warning" or "ok": check's worst finding for the node
    std::vector<Diagnostic> findings;
    bool agree = true; // check error ⇔ kernel_lost
    std::string note;  // the disagreement, in words
};

struct BootCheckOutcome {
    std::optional<boot::KernelImage> image; // bytes dropped after the boot
    std::string config_source;              // "-c", "the image (IKCONFIG)", "beside the image: …"
    std::vector<std::string> config_files;
    std::optional<std::string> qemu;
    std::vector<std::string> command;
    std::optional<boot::Graft> graft;
    double boot_seconds = 0;
    bool timed_out = false;
    bool reached_panic = false; // the root-mount panic (or, stopping early, the atomic pools)
    // The kernel panicked before the root mount (an oops in CMA activation, …): the board does
    // not boot at all. The panic line and the first warning/oops lines before it.
    std::vector<std::string> crash;
    std::string log;
    std::optional<ExplainOutcome> explained;
    std::vector<BootReservation> reservations;
    std::vector<std::string> notes;
    std::vector<Diagnostic> errors;    // could not boot or read: exit 2
    std::vector<std::string> log_tail; // the last lines of the log when the boot failed

    std::size_t disagreements() const;
    // input_error: errors (no QEMU, no root-mount panic in time, unsupported arch, bad input);
    // findings: the kernel lost a pool or crashed; else clean.
    ExitCode exit_code() const;
};

BootCheckOutcome run_boot_check(const BootCheckRequest& request);

std::string boot_check_text(const BootCheckOutcome& outcome);

} // namespace cmalign
