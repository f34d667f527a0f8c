// What `cmalign boot-check` found, as the report layer renders it (text here, JSON in the private
// report/json.hpp): the boot, and per reservation what the kernel did next to what check
// predicts. BootCheckOutcome (cmalign/boot_check.hpp) is this plus its exit status.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/boot/graft.hpp"
#include "cmalign/boot/image.hpp"
#include "cmalign/report/explain.hpp"

namespace cmalign::report {

// One reservation: the kernel's word and check's.
struct BootReservation {
    std::string node;
    std::string name;
    Location where;
    bool pool = false; // a pool the kernel should create (CMA, DMA coherent, restricted)
    bootlog::NodeOutcome kernel = bootlog::NodeOutcome::absent;
    bool kernel_lost = false; // rejected, failed, or a pool the log never mentions
    std::vector<bootlog::Message> log;
    std::string check = "ok"; // "error", "warning" or "ok": check's worst finding for the node
    std::vector<Diagnostic> findings;
    bool agree = true; // check error ⇔ kernel_lost
    std::string note;  // the disagreement, in words
};

struct BootCheckReport {
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
    std::optional<Explanation> explained;
    std::vector<BootReservation> reservations;
    std::vector<std::string> notes;
    std::vector<Diagnostic> errors;    // could not boot or read: exit 2
    std::vector<std::string> log_tail; // the last lines of the log when the boot failed

    std::size_t disagreements() const; // reservations where check and the kernel disagree
};

// The text `cmalign boot-check` prints.
std::string boot_check_text(const BootCheckReport& report);

} // namespace cmalign::report
