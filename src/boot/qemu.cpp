// QEMU processes: found on PATH, run with a deadline, output captured.
#include "cmalign/internal/boot/qemu.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

namespace cmalign::boot {

namespace fs = std::filesystem;

std::optional<std::string> qemu_binary_name(kernel::Arch arch) {
    switch (arch) {
    case kernel::Arch::arm64:
        return "qemu-system-aarch64";
    case kernel::Arch::arm:
        return "qemu-system-arm";
    case kernel::Arch::riscv:
        return "qemu-system-riscv64";
    default:
        return std::nullopt;
    }
}

std::optional<std::string> find_qemu(kernel::Arch arch, const std::optional<std::string>& given) {
    if (given) {
        if (given->find('/') != std::string::npos)
            return access(given->c_str(), X_OK) == 0 ? given : std::nullopt;
    }
    auto name = given ? given : qemu_binary_name(arch);
    if (!name) return std::nullopt;
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    std::size_t start = 0;
    while (start <= dirs.size()) {
        auto end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        auto dir = dirs.substr(start, end - start);
        if (!dir.empty()) {
            auto candidate = dir + "/" + *name;
            if (access(candidate.c_str(), X_OK) == 0) return candidate;
        }
        start = end + 1;
    }
    return std::nullopt;
}

ProcessResult run_process(const std::vector<std::string>& argv, double timeout_seconds,
                          const std::string& stop_after, double grace_seconds) {
    ProcessResult result;
    int fds[2];
    if (argv.empty() || pipe(fds) != 0) return result;
    auto started = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return result;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        std::vector<char*> args;
        for (const auto& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    result.started = true;
    close(fds[1]);
    using clock = std::chrono::steady_clock;
    auto deadline = started + std::chrono::duration_cast<clock::duration>(
                                  std::chrono::duration<double>(timeout_seconds));
    bool stopping = false;
    char buffer[65536];
    for (;;) {
        auto now = clock::now();
        if (now >= deadline) {
            if (!stopping) result.timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
        pollfd p{fds[0], POLLIN, 0};
        int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        ssize_t n = read(fds[0], buffer, sizeof buffer);
        if (n <= 0) break; // EOF: the process closed its output (it exited)
        result.output.append(buffer, static_cast<std::size_t>(n));
        if (result.output.size() > (std::size_t{64} << 20)) { // a runaway log
            kill(pid, SIGKILL);
            break;
        }
        if (!stopping && !stop_after.empty() &&
            result.output.find(stop_after) != std::string::npos) {
            stopping = true;
            auto grace = clock::now() + std::chrono::duration_cast<clock::duration>(
                                            std::chrono::duration<double>(grace_seconds));
            deadline = std::min(deadline, grace);
        }
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.seconds = std::chrono::duration<double>(clock::now() - started).count();
    return result;
}

std::vector<std::string> virt_machine_args(kernel::Arch arch, std::uint64_t ram_bytes) {
    std::vector<std::string> args{"-M", "virt"};
    if (arch == kernel::Arch::arm64) args.insert(args.end(), {"-cpu", "max,pauth-impdef=on"});
    if (arch == kernel::Arch::arm) args.insert(args.end(), {"-cpu", "cortex-a15"});
    std::uint64_t mib = (ram_bytes + (1u << 20) - 1) >> 20;
    args.insert(args.end(), {"-smp", "1", "-m", fmt::format("{}M", mib), "-nic", "none"});
    return args;
}

std::optional<std::vector<std::uint8_t>> dump_virt_dtb(const std::string& qemu, kernel::Arch arch,
                                                       std::uint64_t ram_bytes,
                                                       const std::string& work_dir,
                                                       std::string& error) {
    auto file = (fs::path(work_dir) / "virt.dtb").string();
    std::vector<std::string> argv{qemu};
    auto machine = virt_machine_args(arch, ram_bytes);
    machine[1] = "virt,dumpdtb=" + file;
    argv.insert(argv.end(), machine.begin(), machine.end());
    argv.insert(argv.end(), {"-display", "none", "-monitor", "none", "-serial", "none"});
    auto run = run_process(argv, 60);
    std::ifstream in(file, std::ios::binary);
    if (!run.started || !in) {
        error = run.started ? run.output : "cannot run " + qemu;
        return std::nullopt;
    }
    return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(in)), {});
}

std::vector<std::string> boot_command(const std::string& qemu, kernel::Arch arch,
                                      const Graft& graft, const std::string& image_file,
                                      const std::string& dtb_file, const std::string& stub_file) {
    std::vector<std::string> argv{qemu};
    auto machine = virt_machine_args(arch, graft.ram_size);
    argv.insert(argv.end(), machine.begin(), machine.end());
    argv.insert(argv.end(),
                {"-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot"});
    if (arch == kernel::Arch::riscv) {
        // OpenSBI enters the Image with the tree (boot/graft.cpp place_riscv); riscv's virt
        // machine keeps a -dtb's memory nodes.
        argv.insert(argv.end(), {"-bios", "default", "-kernel", image_file, "-dtb", dtb_file});
        return argv;
    }
    // QEMU's own -kernel would replace the board's /memory with one node for all of RAM
    // (hw/arm/boot.c arm_load_dtb): the generic loader puts the pieces in place instead, and a
    // stub enters the kernel as a boot loader does.
    auto loader = [&](const std::string& file, std::uint64_t addr) {
        argv.insert(argv.end(),
                    {"-device", fmt::format("loader,file={},addr={:#x},force-raw=on", file, addr)});
    };
    loader(image_file, graft.kernel_address);
    loader(dtb_file, graft.dtb_address);
    loader(stub_file, graft.stub_address);
    argv.insert(argv.end(),
                {"-device", fmt::format("loader,addr={:#x},cpu-num=0", graft.stub_address)});
    return argv;
}

bool reached_root_mount_panic(const std::string& log) {
    return log.find("VFS: Unable to mount root fs") != std::string::npos ||
           log.find("Kernel panic - not syncing: No working init found") != std::string::npos;
}

} // namespace cmalign::boot
