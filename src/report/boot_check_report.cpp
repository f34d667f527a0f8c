// boot-check's text and JSON (report/boot_check.hpp, report/json.hpp).
#include "cmalign/report/boot_check.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h> // fmt::join (fmt 11 moved it here)

#include "cmalign/core/size.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/internal/report/log_lines.hpp"

namespace cmalign::report {

std::size_t BootCheckReport::disagreements() const {
    return static_cast<std::size_t>(std::count_if(reservations.begin(), reservations.end(),
                                                  [](const auto& r) { return !r.agree; }));
}

namespace {

std::string hex(std::uint64_t v) {
    return fmt::format("{:#x}", v);
}

} // namespace

nlohmann::json boot_check_json(const BootCheckReport& o) {
    nlohmann::json j;
    nlohmann::json kernel = nullptr;
    if (o.image)
        kernel = {{"image", o.image->path},
                  {"format", o.image->format},
                  {"arch", kernel::to_string(o.image->arch)},
                  {"page_size", o.image->page_size ? nlohmann::json(o.image->page_size) : nullptr},
                  {"banner", o.image->banner ? nlohmann::json(*o.image->banner) : nullptr},
                  {"embedded_config", o.image->config.has_value()},
                  {"config_source", o.config_source},
                  {"config_files", o.config_files}};
    j["kernel"] = kernel;
    j["qemu"] = {{"binary", o.qemu ? nlohmann::json(*o.qemu) : nullptr},
                 {"command", o.command},
                 {"seconds", o.boot_seconds},
                 {"timed_out", o.timed_out},
                 {"reached_root_mount_panic", o.reached_panic}};
    j["crash"] = o.crash;
    if (o.graft)
        j["graft"] = {{"shift", o.graft->shift},
                      {"ram_base", hex(o.graft->ram_base)},
                      {"ram_size", o.graft->ram_size},
                      {"kernel_address", hex(o.graft->kernel_address)},
                      {"dtb_address", hex(o.graft->dtb_address)},
                      {"bootargs", o.graft->bootargs}};
    else
        j["graft"] = nullptr;
    nlohmann::json reservations = nlohmann::json::array();
    for (const auto& r : o.reservations) {
        reservations.push_back({{"node", r.node},
                                {"name", r.name},
                                {"file", r.where.file},
                                {"line", r.where.line},
                                {"pool", r.pool},
                                {"kernel", bootlog::to_string(r.kernel)},
                                {"kernel_lost", r.kernel_lost},
                                {"kernel_log", log_lines_json(r.log, LogLineText::kernel_message)},
                                {"check", r.check},
                                {"findings", diagnostics_json(r.findings)},
                                {"agree", r.agree},
                                {"note", r.note}});
    }
    j["reservations"] = reservations;
    j["disagreements"] = o.disagreements();
    j["explain"] = o.explained ? explain_json(*o.explained) : nlohmann::json(nullptr);
    j["default_cma_area"] =
        o.explained ? default_area_json(o.explained->default_area) : nlohmann::json(nullptr);
    j["notes"] = o.notes;
    j["errors"] = diagnostics_json(o.errors);
    j["log_tail"] = o.log_tail;
    return j;
}

std::string boot_check_text(const BootCheckReport& o) {
    std::string out;
    if (o.image) {
        out += fmt::format(
            "kernel: {} ({}, {}{})\n", o.image->banner ? *o.image->banner : o.image->path,
            o.image->format, kernel::to_string(o.image->arch),
            o.image->page_size ? ", " + format_size(o.image->page_size, ByteUnit::bytes) + " pages"
                               : std::string());
        if (!o.config_files.empty())
            out += fmt::format("configuration: {} ({})\n", fmt::join(o.config_files, ", "),
                               o.config_source);
    }
    if (o.graft)
        out += fmt::format("booted in QEMU virt ({}) in {:.1f} s: RAM {:#x}+{}, kernel at {:#x}, "
                           "DTB at {:#x}, bootargs \"{}\"\n",
                           o.qemu ? *o.qemu : "", o.boot_seconds, o.graft->ram_base,
                           format_size(o.graft->ram_size, ByteUnit::bytes), o.graft->kernel_address,
                           o.graft->dtb_address, o.graft->bootargs);
    std::size_t created = 0, lost_count = 0;
    for (const auto& r : o.reservations) {
        out += fmt::format("\n{}  {}{}\n", r.node,
                           r.where.line ? fmt::format("{}:{}", r.where.file, r.where.line)
                                        : r.where.file,
                           r.pool ? "" : "  (not a pool)");
        std::string kernel_word = r.kernel_lost && r.kernel == bootlog::NodeOutcome::absent
                                      ? "not created (the log never names it)"
                                      : bootlog::to_string(r.kernel);
        out += fmt::format("  kernel: {}\n", kernel_word);
        for (const auto& m : r.log)
            out += fmt::format("    log {:>5}: {}\n", m.line_number, m.message);
        if (r.findings.empty()) out += "  check:  no finding\n";
        for (const auto& d : r.findings)
            out +=
                fmt::format("  check:  {}: {} [{}]\n", to_string(d.severity), d.message, d.check);
        out += r.agree ? "  agree\n" : fmt::format("  DISAGREE: {}\n", r.note);
        if (r.pool) (r.kernel_lost ? lost_count : created) += 1;
    }
    if (!o.reservations.empty())
        out += fmt::format("\n{} reservation{}: {} pool{} kept, {} lost by this kernel; check "
                           "disagrees on {}\n",
                           o.reservations.size(), o.reservations.size() == 1 ? "" : "s", created,
                           created == 1 ? "" : "s", lost_count, o.disagreements());
    if (o.explained && o.explained->default_area) {
        const auto& a = *o.explained->default_area;
        out += fmt::format("\ndefault CMA area ({})\n  kernel: {}{}\n", a.asked, a.kernel,
                           a.kernel_base ? fmt::format(" at {:#x}", *a.kernel_base) : "");
        for (const auto& m : a.log)
            out += fmt::format("    log {:>5}: {}\n", m.line_number, m.message);
        out += fmt::format("  check:  {}{}\n", a.predicted,
                           a.predicted_base   ? fmt::format(" at {:#x}", *a.predicted_base)
                           : a.reason.empty() ? ""
                                              : " (" + a.reason + ")");
        out += a.agree ? "  agree\n" : "  DISAGREE\n";
    }
    for (const auto& n : o.notes)
        out += "note: " + n + '\n';
    if (!o.crash.empty()) {
        out += "the kernel crashed before the root mount:\n";
        for (const auto& l : o.crash)
            out += "  | " + l + '\n';
    }
    if (!o.log_tail.empty()) {
        out += "last lines of the log:\n";
        for (const auto& l : o.log_tail)
            out += "  | " + l + '\n';
    }
    return out;
}

} // namespace cmalign::report
