// explain's text and JSON (report/explain.hpp, report/json.hpp).
#include "cmalign/report/explain.hpp"

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/kernel/report.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/internal/report/log_lines.hpp"

namespace cmalign::report {

std::string alignment_text(const std::optional<std::uint64_t>& alignment) {
    return alignment ? format_size(*alignment, ByteUnit::bytes) : std::string("decided at boot");
}

namespace {

std::string where_text(const Location& l) {
    if (!l.known()) return "";
    return l.line ? fmt::format("{}:{}", l.file, l.line) : l.file;
}

nlohmann::json fix_json_of(const NodeExplanation& n) {
    if (!n.edits.empty()) {
        const auto& e = n.edits.front();
        return {{"file", e.file},         {"line", e.where.line},   {"column", e.where.column},
                {"property", e.property}, {"old", e.old_value},     {"new", e.new_value},
                {"old_text", e.old_text}, {"new_text", e.new_text}, {"edits", n.edits.size()}};
    }
    if (n.finding && !n.finding->fix.empty()) {
        const auto& h = n.finding->fix.front();
        nlohmann::json j = {{"property", h.property}, {"old", h.old_value}, {"new", h.new_value}};
        if (!n.fix_issues.empty()) j["note"] = n.fix_issues.front().message;
        return j;
    }
    return nullptr;
}

} // namespace

nlohmann::json default_area_json(const std::optional<DefaultAreaExplanation>& area) {
    if (!area) return nullptr;
    auto opt = [](const auto& o) { return o ? nlohmann::json(*o) : nlohmann::json(nullptr); };
    return {{"asked", area->asked},
            {"predicted", area->predicted},
            {"predicted_base", opt(area->predicted_base)},
            {"predicted_size", area->predicted_size},
            {"predicted_lines", area->predicted_lines},
            {"reason", area->reason},
            {"kernel", area->kernel},
            {"kernel_base", opt(area->kernel_base)},
            {"kernel_size", opt(area->kernel_size)},
            {"log", log_lines_json(area->log, LogLineText::as_read)},
            {"agree", area->agree}};
}

namespace {

std::string default_area_text(const DefaultAreaExplanation& a) {
    std::string out = fmt::format("\ndefault CMA area ({}): check says {}", a.asked, a.predicted);
    if (a.predicted_base)
        out += fmt::format(" at {:#x} ({})", *a.predicted_base, format_size(a.predicted_size));
    else if (!a.reason.empty())
        out += fmt::format(" ({})", a.reason);
    out += fmt::format("; the log shows {}", a.kernel);
    if (a.kernel_base) out += fmt::format(" at {:#x}", *a.kernel_base);
    out += a.agree ? "\n" : " (disagreement)\n";
    for (const auto& m : a.log)
        out += fmt::format("  {}: {}\n", m.line_number, m.message);
    return out;
}

} // namespace

nlohmann::json explain_json(const Explanation& outcome) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : outcome.nodes) {
        nodes.push_back({{"node", n.node},
                         {"name", n.name},
                         {"file", n.where.file},
                         {"line", n.where.line},
                         {"outcome", bootlog::to_string(n.outcome)},
                         {"log", log_lines_json(n.log, LogLineText::as_read)},
                         {"check", n.finding ? nlohmann::json(n.finding->check) : nullptr},
                         {"message", n.message},
                         {"fix", fix_json_of(n)},
                         {"findings", diagnostics_json(n.findings)}});
    }
    nlohmann::json j;
    j["kernel_version"] = outcome.version ? nlohmann::json(outcome.version->str()) : nullptr;
    j["kernel_version_source"] = outcome.version_source;
    j["alignment"] = outcome.model ? kernel::to_json(*outcome.model) : nlohmann::json(nullptr);
    j["nodes"] = nodes;
    j["unmatched_log_lines"] = log_lines_json(outcome.unmatched, LogLineText::as_read);
    j["other_log_lines"] = log_lines_json(outcome.other, LogLineText::as_read);
    j["unexplained_log_lines"] = log_lines_json(outcome.unexplained, LogLineText::as_read);
    j["board_findings"] = diagnostics_json(outcome.board_findings);
    j["default_cma_area"] = default_area_json(outcome.default_area);
    j["notes"] = outcome.notes;
    j["errors"] = diagnostics_json(outcome.errors);
    return j;
}

std::string explain_text(const Explanation& outcome) {
    std::string out;
    if (outcome.version && outcome.model)
        out +=
            fmt::format("kernel v{} ({}), {}, {} pages, CMA alignment {}\n", outcome.version->str(),
                        outcome.version_source, kernel::to_string(outcome.model->arch),
                        format_size(outcome.model->page_size, ByteUnit::bytes),
                        alignment_text(outcome.model->cma_min_alignment_bytes));
    for (const auto& n : outcome.nodes) {
        out += fmt::format("\n{}  {}  {}\n", n.node, where_text(n.where),
                           bootlog::to_string(n.outcome));
        for (const auto& m : n.log) {
            out += fmt::format("  log {:>5}: {}\n", m.line_number, m.message);
            if (!m.matched_by.empty())
                out += fmt::format("             (names no node: {})\n", m.matched_by);
        }
        if (n.finding)
            out += fmt::format("  why: {}: {} [{}]\n", where_text(n.finding->where), n.message,
                               n.finding->check);
        else
            out += fmt::format("  why: {}\n", n.message);
        for (const auto& e : n.edits) {
            if (e.binary)
                out += fmt::format("  fix: {}: {} {:#x} → {:#x} (the blob's cells)\n", e.file,
                                   e.property, e.old_value, e.new_value);
            else
                out += fmt::format("  fix: {}:{}:{}: {} {} → {}\n", e.file, e.where.line,
                                   e.where.column, e.property, e.old_text, e.new_text);
        }
        if (n.edits.empty() && n.finding && !n.finding->fix.empty()) {
            const auto& h = n.finding->fix.front();
            out +=
                fmt::format("  fix: {} {:#x} → {:#x}{}\n", h.property, h.old_value, h.new_value,
                            n.fix_issues.empty() ? "" : " (" + n.fix_issues.front().message + ")");
        }
    }
    if (!outcome.unmatched.empty()) {
        out += "\nlines about nodes this board does not have:\n";
        for (const auto& m : outcome.unmatched)
            out += fmt::format("  log {:>5}: {}\n", m.line_number, m.message);
    }
    if (!outcome.unexplained.empty()) {
        out += "\nlines naming no node that no one node of the board can have caused:\n";
        for (const auto& m : outcome.unexplained)
            out += fmt::format("  log {:>5}: {}\n", m.line_number, m.message);
    }
    if (!outcome.board_findings.empty()) {
        out += "\ncheck's findings about no /reserved-memory node:\n";
        for (const auto& d : outcome.board_findings)
            out += "  " + format_gcc(d) + '\n';
    }
    if (outcome.default_area) out += default_area_text(*outcome.default_area);
    if (!outcome.other.empty()) {
        out += "\nother reserved-memory and CMA lines:\n";
        for (const auto& m : outcome.other)
            out += fmt::format("  log {:>5}: {}\n", m.line_number, m.message);
    }
    for (const auto& note : outcome.notes)
        out += "note: " + note + '\n';
    return out;
}

} // namespace cmalign::report
