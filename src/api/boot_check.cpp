// boot-check: the board booted on the kernel itself, in QEMU, next to check's prediction.
#include "cmalign/boot_check.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h> // fmt::join (fmt 11 moved it here)

#include "cmalign/core/size.hpp"
#include "cmalign/internal/boot/qemu.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/internal/report/log_lines.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/reserved/regions.hpp"

namespace cmalign {

namespace fs = std::filesystem;

ExitCode BootCheckOutcome::exit_code() const {
    if (!errors.empty()) return ExitCode::input_error;
    if (!crash.empty()) return ExitCode::findings;
    for (const auto& r : reservations)
        if (r.kernel_lost) return ExitCode::findings;
    return ExitCode::clean;
}

namespace {

// A private directory for the pieces QEMU loads; removed when the run ends.
class WorkDir {
public:
    WorkDir() {
        auto pattern = (fs::temp_directory_path() / "cmalign-boot-XXXXXX").string();
        if (mkdtemp(pattern.data())) path_ = pattern;
    }
    ~WorkDir() {
        std::error_code ec;
        if (!path_.empty()) fs::remove_all(path_, ec);
    }
    WorkDir(const WorkDir&) = delete;
    WorkDir& operator=(const WorkDir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

private:
    std::string path_;
};

bool write_file(const std::string& path, const void* data, std::size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    return static_cast<bool>(out);
}

std::vector<std::string> last_lines(const std::string& text, std::size_t count) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(line);
    }
    if (lines.size() > count) lines.erase(lines.begin(), lines.end() - static_cast<long>(count));
    return lines;
}

// Debian installs /boot/vmlinuz-VERSION beside /boot/config-VERSION; scripts/kernel-images keeps
// `vmlinuz` beside `config`.
std::optional<std::string> config_beside(const std::string& image) {
    fs::path p(image);
    auto name = p.filename().string();
    std::vector<fs::path> candidates;
    for (const char* prefix : {"vmlinuz-", "vmlinux-", "Image-", "zImage-"})
        if (name.rfind(prefix, 0) == 0)
            candidates.push_back(p.parent_path() /
                                 ("config-" + name.substr(std::string(prefix).size())));
    candidates.push_back(p.parent_path() / "config");
    for (const auto& c : candidates) {
        std::error_code ec;
        if (fs::is_regular_file(c, ec)) return c.string();
    }
    return std::nullopt;
}

Diagnostic error_at(const std::string& file, std::string message) {
    return make_diagnostic(Severity::error, {file, 0, 0}, std::move(message));
}

// A bypassed linux,cma-default node is not lost: cma= on the command line sizes the default
// CMA area instead (check's cmdline-cma warns).
bool lost(NodeOutcome o) {
    return o == NodeOutcome::rejected || o == NodeOutcome::failed;
}

// The QEMU that boots kernels of `arch`; nullopt (with an error) when none is found.
std::optional<std::string> qemu_for(const BootCheckRequest& request, kernel::Arch arch,
                                    Diagnostics& diags) {
    auto qemu = boot::find_qemu(arch, request.qemu);
    if (qemu) return qemu;
    auto name = request.qemu ? request.qemu : boot::qemu_binary_name(arch);
    diags.error(
        {request.kernel_image, 0, 0},
        name ? fmt::format("{} kernel image, but no {} to boot it (Debian: "
                           "scripts/install-deps --with-qemu)",
                           kernel::to_string(arch), *name)
             : fmt::format("QEMU's virt machine cannot run {} kernels", kernel::to_string(arch)));
    return std::nullopt;
}

// The configuration check uses: -c, else the image's own (IKCONFIG), else the one beside it.
std::optional<ConfigOptions> boot_config(const BootCheckRequest& request,
                                         const boot::KernelImage& image, const WorkDir& work,
                                         BootCheckOutcome& out, Diagnostics& diags) {
    ConfigOptions config = request.config;
    if (!config.arch) config.arch = kernel::to_string(image.arch);
    if (!config.config_files.empty()) {
        out.config_source = "-c";
    } else if (image.config) {
        auto file = work.file("ikconfig");
        write_file(file, image.config->data(), image.config->size());
        config.config_files.push_back(file);
        out.config_source = "the image (IKCONFIG)";
    } else if (auto beside = config_beside(request.kernel_image)) {
        config.config_files.push_back(*beside);
        out.config_source = "beside the image";
        out.notes.push_back(fmt::format("the image embeds no configuration (CONFIG_IKCONFIG): "
                                        "check uses {} found beside it",
                                        *beside));
    } else {
        diags.error({request.kernel_image, 0, 0},
                    "the image embeds no configuration (CONFIG_IKCONFIG) and none lies beside it: "
                    "give the kernel's .config with -c");
        return std::nullopt;
    }

    return config;
}

// The graft, on virt's tree for the RAM size the banks need.
std::optional<boot::Graft> graft_on_virt(const BootCheckRequest& request,
                                         const boot::KernelImage& image, const std::string& qemu,
                                         const dt::Tree& tree,
                                         const reserved::Reservations& reservations,
                                         const WorkDir& work, std::vector<std::string>& log_tail,
                                         Diagnostics& diags) {
    boot::GraftOptions graft_options;
    graft_options.arch = image.arch;
    graft_options.console = image.arch == kernel::Arch::riscv ? "ttyS0" : "ttyAMA0";
    graft_options.image_size = image.image_size;
    graft_options.text_offset = image.text_offset;
    graft_options.extra_bootargs = request.extra_bootargs;
    std::string qemu_error;
    std::uint64_t ram = std::uint64_t{1} << 30;
    std::optional<boot::Graft> graft;
    for (int attempt = 0; attempt < 2; ++attempt) {
        auto virt = boot::dump_virt_dtb(qemu, image.arch, ram, work.path(), qemu_error);
        if (!virt) {
            diags.error({qemu, 0, 0},
                        fmt::format("QEMU could not dump its virt machine's tree: {}", qemu_error));
            log_tail = last_lines(qemu_error, 20);
            return std::nullopt;
        }
        graft = boot::graft(*virt, tree, reservations, graft_options, diags);
        if (!graft) return std::nullopt;
        if (graft->ram_size == ram) break;
        ram = graft->ram_size;
    }
    return graft;
}

// The lines of a kernel crash worth showing (warnings, oopses, the panic), at most 12.
std::vector<std::string> crash_lines(const std::string& output) {
    std::vector<std::string> crash;
    std::istringstream lines(output);
    std::string line;
    while (std::getline(lines, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        for (const char* mark : {"WARNING: CPU", "WARNING: mm/", "Unable to handle kernel",
                                 "BUG:", "Oops", "pc : ", "Kernel panic - not syncing"})
            if (line.find(mark) != std::string::npos && crash.size() < 12) {
                crash.push_back(line);
                break;
            }
    }
    return crash;
}

// What the kernel did with a node next to check's verdict, and a note when they disagree.
BootReservation compare_node(const NodeExplanation& n, const reserved::Reservations& reservations) {
    BootReservation r;
    r.node = n.node;
    r.name = n.name;
    r.where = n.where;
    r.kernel = n.outcome;
    r.log = n.log;
    r.findings = n.findings;
    for (const auto& region : reservations.regions)
        if (region.path == n.node)
            r.pool = !region.disabled &&
                     (region.declared_kind == reserved::Kind::cma ||
                      region.declared_kind == reserved::Kind::coherent ||
                      region.declared_kind == reserved::Kind::restricted || region.shared_dma_pool);
    r.kernel_lost = lost(n.outcome) || (r.pool && n.outcome == NodeOutcome::absent);
    for (const auto& d : n.findings) {
        if (d.severity == Severity::error)
            r.check = "error";
        else if (d.severity == Severity::warning && r.check != "error")
            r.check = "warning";
    }
    bool check_error = r.check == "error";
    r.agree = check_error == r.kernel_lost;
    if (!r.agree) {
        std::string printed;
        for (const auto& m : n.log)
            printed += (printed.empty() ? "" : " / ") + m.message;
        if (printed.empty()) printed = "nothing about it";
        r.note = check_error
                     ? fmt::format("check predicts the kernel loses it ({}), but this "
                                   "kernel printed: {}",
                                   n.finding ? n.finding->message : std::string("error"), printed)
                     : fmt::format("this kernel {} it (printed: {}), but check finds no error "
                                   "for it: the kernel differs from the model (a vendor patch, "
                                   "or a rule cmalign lacks)",
                                   r.kernel == NodeOutcome::absent ? "did not create"
                                                                   : to_string(r.kernel),
                                   printed);
    }
    return r;
}

// When the kernel stopped printing in early boot: the findings of check that predict exactly that
// (arm-dma-remap, arm-section-split: a BUG or fault in paging_init()), as words to add to the
// error. The boot still has no answer (exit 2); this says which node to suspect.
std::string predicted_hang(const BootCheckRequest& request, const ConfigOptions& config,
                           const WorkDir& work, const std::string& output) {
    auto log_file = work.file("partial.log");
    write_file(log_file, output.data(), output.size());
    ExplainRequest explain;
    explain.log_path = log_file;
    explain.board = request.board;
    explain.config = config;
    explain.tree = request.tree;
    explain.checks = request.checks;
    auto explained = run_explain(explain);
    std::vector<std::string> nodes;
    for (const auto& n : explained.nodes)
        for (const auto& f : n.findings)
            if ((f.check == "arm-dma-remap" || f.check == "arm-section-split") &&
                f.severity == Severity::error) {
                nodes.push_back(n.node);
                break;
            }
    if (nodes.empty()) return {};
    return fmt::format("; check predicts a hang in early boot on {}", fmt::join(nodes, ", "));
}

// What the booted kernel has reserved in memblock before it reads /reserved-memory, in the
// board's addresses, so that check places the dynamic nodes where this kernel will: the image
// (arm64, riscv64: _stext.._end = the header's image_size at the load address; 32-bit arm: the
// decompressed size is not in the zImage header, so check's assumption stays), OpenSBI's 2 MiB
// below a riscv64 kernel, and the DTB (early_init_fdt_reserve_self()).
std::vector<checks::EarlyReservation>
booted_early_reservations(const boot::Graft& graft, std::uint64_t dtb_size,
                          const boot::KernelImage& image,
                          const reserved::Reservations& reservations, const kernel::Model& model) {
    std::vector<checks::EarlyReservation> out;
    auto board = [&](std::uint64_t qemu_address) {
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(qemu_address) - graft.shift);
    };
    const std::uint64_t two_mib = std::uint64_t{2} << 20;
    switch (image.arch) {
    case kernel::Arch::arm: {
        // The zImage decompresses the kernel to (its own address & ~(128 MiB - 1)) +
        // TEXT_OFFSET (AUTO_ZRELADDR), swapper_pg_dir right below (16 KiB, 20 KiB with LPAE);
        // its data table gives the running size. Without a table, check's assumption stays.
        if (image.arm_running_size == 0) {
            for (auto& e : checks::assumed_early_reservations(reservations, model))
                out.push_back(std::move(e));
            break;
        }
        const std::uint64_t text =
            board(graft.kernel_address & ~((std::uint64_t{128} << 20) - 1)) + image.text_offset;
        const std::uint64_t pg_dir = model.image.lpae ? 0x5000 : 0x4000;
        out.push_back({Interval::of(text - pg_dir, image.arm_running_size + pg_dir),
                       "the kernel image", false,
                       "the zImage's decompressed size and bss, where it decompresses itself"});
        break;
    }
    case kernel::Arch::riscv:
        out.push_back({Interval::of(board(graft.kernel_address) - two_mib, two_mib),
                       "OpenSBI's firmware", false});
        [[fallthrough]];
    default:
        out.push_back({Interval::of(board(graft.kernel_address), image.image_size),
                       "the kernel image", false});
        break;
    }
    // arm64 (setup_machine_fdt()) and arm (setup_arch()) reserve the DTB before the
    // reserved-memory scan, riscv after it (arch/riscv/mm/init.c setup_bootmem(), 5.10.223 to
    // 7.2.13): its dynamic nodes may lie over the DTB (booted on 7.2 riscv64).
    out.push_back({Interval::of(board(graft.dtb_address), dtb_size), "the DTB", false, "",
                   image.arch == kernel::Arch::riscv});
    return out;
}

} // namespace

BootCheckOutcome run_boot_check(const BootCheckRequest& request) {
    const RunScope run_scope; // pipes read once, files stamped once
    BootCheckOutcome out;
    Diagnostics diags;
    auto fail = [&](Diagnostics& d) {
        for (const auto& item : d.items())
            if (item.severity == Severity::error) out.errors.push_back(item);
        if (out.errors.empty()) out.errors.push_back(error_at(request.board, "cannot boot-check"));
        return out;
    };

    // The image: arch, page size and (maybe) its own configuration.
    auto image = boot::read_kernel_image(request.kernel_image, diags);
    if (!image) return fail(diags);
    out.qemu = qemu_for(request, image->arch, diags);
    if (!out.qemu) return fail(diags);
    WorkDir work;
    if (work.path().empty()) {
        diags.error({request.board, 0, 0}, "cannot create a temporary directory");
        return fail(diags);
    }

    auto config = boot_config(request, *image, work, out, diags);
    if (!config) return fail(diags);
    out.config_files = config->config_files;

    // The board as check reads it.
    dt::FileCache cache;
    auto pp = detail::preprocess_options(request.tree);
    auto overlays = detail::load_overlays(request.tree.overlays, pp, cache, diags);
    if (!overlays) return fail(diags);
    auto tree = detail::load_board(request.board, pp, cache, diags, {}, *overlays);
    if (!tree || diags.has_errors()) return fail(diags);
    auto model = load_model(*config, diags);
    if (!model) return fail(diags);
    if (image->page_size && model->page_size != image->page_size)
        out.notes.push_back(fmt::format("the image's header says {} pages, the configuration {}: "
                                        "the configuration is not this image's",
                                        format_size(image->page_size, ByteUnit::bytes),
                                        format_size(model->page_size, ByteUnit::bytes)));
    auto reservations =
        reserved::read(*tree, checks::read_options(*model, request.checks.bootargs));

    auto graft =
        graft_on_virt(request, *image, *out.qemu, *tree, reservations, work, out.log_tail, diags);
    if (!graft) return fail(diags);
    out.notes.insert(out.notes.end(), graft->notes.begin(), graft->notes.end());
    auto dtb_file = work.file("board.dtb");
    auto stub_file = work.file("entry.bin");
    auto image_file = work.file("Image");
    write_file(dtb_file, graft->dtb.data(), graft->dtb.size());
    const std::uint64_t dtb_size = graft->dtb.size();
    write_file(stub_file, graft->stub.data(), graft->stub.size());
    write_file(image_file, image->bytes.data(), image->bytes.size());
    if (request.save_dtb) write_file(*request.save_dtb, graft->dtb.data(), graft->dtb.size());
    image->bytes.clear();
    image->bytes.shrink_to_fit();
    out.image = image;

    out.command =
        boot::boot_command(*out.qemu, image->arch, *graft, image_file, dtb_file, stub_file);
    // kernel/dma/pool.c "DMA: preallocated %zu KiB %pGg pool for atomic allocations" (arm64,
    // riscv); 32-bit arm's own "… pool for atomic coherent allocations" (arch/arm/mm/
    // dma-mapping.c). Both come after the CMA areas are activated (core_initcall).
    const std::string early_mark = "pool for atomic";
    auto run = boot::run_process(out.command, request.timeout_seconds,
                                 request.stop_early ? early_mark : "Kernel panic - not syncing",
                                 request.stop_early ? 0.5 : 5);
    out.graft = graft;
    out.graft->dtb.clear();
    out.boot_seconds = run.seconds;
    out.timed_out = run.timed_out;
    out.log = run.output;
    out.reached_panic = boot::reached_root_mount_panic(run.output) ||
                        (request.stop_early && run.output.find(early_mark) != std::string::npos &&
                         run.output.find("Kernel panic - not syncing") == std::string::npos);
    if (request.save_log) write_file(*request.save_log, run.output.data(), run.output.size());
    // A panic before the root mount is an answer too: the board does not boot on this kernel.
    // So is an oops or BUG after which the kernel never got there (32-bit arm stops in its oops
    // handler, "Internal error: Oops - bad mode", or after "BUG: Bad page state", without the
    // panic line).
    const bool oopsed =
        run.timed_out && (run.output.find("Internal error: Oops") != std::string::npos ||
                          run.output.find("Unable to handle kernel") != std::string::npos ||
                          run.output.find("] BUG: ") != std::string::npos);
    if (!out.reached_panic &&
        (run.output.find("Kernel panic - not syncing") != std::string::npos || oopsed)) {
        out.crash = crash_lines(run.output);
        out.notes.push_back(
            oopsed ? fmt::format("the kernel oopsed and did not get further within {} s: the "
                                 "board does not boot on it (see \"crash\")",
                                 request.timeout_seconds)
                   : "the kernel crashed before the root mount: the board does not boot on it "
                     "(see \"crash\")");
    }
    if (!run.started || (!out.reached_panic && out.crash.empty())) {
        out.log_tail = last_lines(run.output, 25);
        std::string why =
            !run.started ? fmt::format("could not start {}", *out.qemu)
            : run.timed_out
                ? fmt::format("the kernel did not reach {} within {} s",
                              request.stop_early ? "its DMA atomic pools" : "the root-mount panic",
                              request.timeout_seconds)
                : fmt::format("QEMU stopped (status {}) before the kernel reached the root-mount "
                              "panic",
                              run.exit_status);
        if (run.timed_out) why += predicted_hang(request, *config, work, run.output);
        out.errors.push_back(error_at(request.kernel_image, why));
        return out;
    }

    // The log read as explain reads it, with the same board and configuration.
    auto log_file = work.file("boot.log");
    write_file(log_file, run.output.data(), run.output.size());
    ExplainRequest explain;
    explain.log_path = log_file;
    explain.board = request.board;
    explain.config = *config;
    explain.tree = request.tree;
    explain.checks = request.checks;
    explain.checks.early_reservations =
        booted_early_reservations(*graft, dtb_size, *image, reservations, *model);
    auto explained = run_explain(explain);
    if (!explained.errors.empty()) {
        out.errors = explained.errors;
        return out;
    }
    for (const auto& n : explained.nodes)
        out.reservations.push_back(compare_node(n, reservations));
    // The kernel prints the default area's base in QEMU's addresses; check places it in the
    // board's (riscv64: RAM moved up by 1 GiB).
    if (auto& area = explained.default_area; area && area->kernel_base)
        area->kernel_base = static_cast<std::uint64_t>(
            static_cast<std::int64_t>(*area->kernel_base) - graft->shift);
    out.explained = std::move(explained);
    return out;
}

nlohmann::json boot_check_json(const BootCheckOutcome& outcome) {
    return report::boot_check_json(outcome);
}

std::string boot_check_text(const BootCheckOutcome& outcome) {
    return report::boot_check_text(outcome);
}

} // namespace cmalign
