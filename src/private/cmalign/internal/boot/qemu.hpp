// Running QEMU's virt machine: finding the binary for an arch, dumping virt's device tree, and
// booting a kernel with a grafted tree until it panics at the root mount (or a timeout).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/boot/graft.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::boot {

// qemu-system-aarch64 / -arm / -riscv64 for the arch; nullopt for arches virt does not model.
std::optional<std::string> qemu_binary_name(kernel::Arch arch);
// `given` when set (--qemu), else the arch's binary found on PATH; nullopt when absent.
std::optional<std::string> find_qemu(kernel::Arch arch, const std::optional<std::string>& given);

struct ProcessResult {
    bool started = false;
    bool timed_out = false;
    int exit_status = -1; // exit code, or 128 + signal
    double seconds = 0;
    std::string output; // stdout and stderr interleaved
};

// Runs argv (no shell), stdin from /dev/null, killing it after `timeout_seconds`. When
// `stop_after` appears in the output, the process gets `grace_seconds` more to exit by itself.
ProcessResult run_process(const std::vector<std::string>& argv, double timeout_seconds,
                          const std::string& stop_after = {}, double grace_seconds = 5);

// The machine's CPU for an arch: arm64 "max" (every page size; pauth-impdef keeps pointer
// authentication cheap under TCG).
std::vector<std::string> virt_machine_args(kernel::Arch arch, std::uint64_t ram_bytes);

// `qemu -M virt,dumpdtb=FILE …`: virt's own tree for that RAM size; nullopt and the output in
// `error` when QEMU fails.
std::optional<std::vector<std::uint8_t>> dump_virt_dtb(const std::string& qemu, kernel::Arch arch,
                                                       std::uint64_t ram_bytes,
                                                       const std::string& work_dir,
                                                       std::string& error);

// The command line that boots `image_file` with the graft: the image, the DTB and the entry stub
// loaded where the graft placed them, the CPU started at the stub, -no-reboot.
std::vector<std::string> boot_command(const std::string& qemu, kernel::Arch arch,
                                      const Graft& graft, const std::string& image_file,
                                      const std::string& dtb_file, const std::string& stub_file);

// The line the kernel prints when it stops for want of a root file system (init/do_mounts.c
// mount_root / mount_block_root, v5.10–v7.2): the boot got as far as it needs to.
bool reached_root_mount_panic(const std::string& log);

} // namespace cmalign::boot
