#include "cmalign/explain.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/kernel/report.hpp"
#include "cmalign/report/report.hpp"
#include "cmalign/run_fix.hpp"
#include "cmalign/sweep.hpp"

namespace cmalign {

const char* to_string(NodeOutcome outcome) {
    switch (outcome) {
    case NodeOutcome::created:
        return "created";
    case NodeOutcome::rejected:
        return "rejected";
    case NodeOutcome::failed:
        return "failed";
    case NodeOutcome::bypassed:
        return "bypassed";
    case NodeOutcome::absent:
        return "absent";
    }
    return "absent";
}

ExitCode ExplainOutcome::exit_code() const {
    if (!errors.empty()) return ExitCode::input_error;
    for (const auto& n : nodes) {
        if (n.outcome == NodeOutcome::rejected || n.outcome == NodeOutcome::failed)
            return ExitCode::findings;
        if (n.finding && n.finding->severity == Severity::error) return ExitCode::findings;
    }
    return ExitCode::clean;
}

namespace {

using bootlog::Event;

std::string without_unit(std::string_view name) {
    auto at = name.find('@');
    return std::string(name.substr(0, at));
}

// What a line says about its node's fate; stronger outcomes win (the kernel's last word on a
// pool: "could not be activated" after "created").
int strength(NodeOutcome o) {
    switch (o) {
    case NodeOutcome::absent:
        return 0;
    case NodeOutcome::created:
        return 1;
    case NodeOutcome::failed:
        return 2;
    case NodeOutcome::rejected:
        return 3;
    case NodeOutcome::bypassed:
        return 4;
    }
    return 0;
}

std::optional<NodeOutcome> outcome_of(Event e) {
    switch (e) {
    case Event::created_cma_pool:
    case Event::created_dma_pool:
    case Event::created_restricted_pool:
    case Event::initialized_node:
    case Event::region_listed:
        return NodeOutcome::created;
    case Event::incorrect_alignment:
        return NodeOutcome::rejected;
    case Event::bypass_cmdline:
    case Event::skipping_cma_default:
        return NodeOutcome::bypassed;
    case Event::unable_to_setup:
    case Event::matching_fail:
    case Event::failed_to_allocate:
    case Event::failed_to_reserve:
    case Event::invalid_reg:
    case Event::invalid_size:
    case Event::invalid_alignment:
    case Event::invalid_alloc_ranges:
    case Event::too_many_dynamic:
    case Event::not_enough_slots:
    case Event::not_activated:
    case Event::coherent_needs_no_map:
        return NodeOutcome::failed;
    default:
        return std::nullopt;
    }
}

std::string where_text(const Location& l) {
    if (!l.known()) return "";
    return l.line ? fmt::format("{}:{}", l.file, l.line) : l.file;
}

} // namespace

ExplainOutcome run_explain(const ExplainRequest& request) {
    ExplainOutcome out;
    // Within --limit file-bytes/line-bytes; /dev/kmsg and pipes to their current end; a
    // compressed log (dmesg.gz) is read as its text, binary junk is one error.
    TextFile log;
    if (auto error =
            read_text_file(request.log_path, request.config.limits, {"the log", true}, log)) {
        out.errors.push_back(
            make_diagnostic(Severity::error, std::move(error->where), std::move(error->message)));
        return out;
    }
    out.log = bootlog::parse(log.text);

    // The kernel version: --kernel-version, else the log's, else the configuration's header.
    ConfigOptions config = request.config;
    if (config.kernel_version) {
        out.version = KernelVersion::parse(*config.kernel_version);
        out.version_source = "--kernel-version";
        if (out.log.version && out.version &&
            (out.log.version->major != out.version->major ||
             out.log.version->minor != out.version->minor))
            out.notes.push_back(fmt::format("the log is from v{} (line {}); explaining with "
                                            "--kernel-version {} as asked",
                                            out.log.version->str(), out.log.version_line,
                                            *config.kernel_version));
    } else if (out.log.version) {
        out.version = out.log.version;
        out.version_source = fmt::format("log line {}", out.log.version_line);
        config.kernel_version = out.version->str();
    } else {
        Diagnostics probe;
        auto cfg = load_config(config, probe);
        if (cfg && cfg->header_version) {
            out.version = KernelVersion::parse(*cfg->header_version);
            out.version_source = "the configuration's header";
            out.notes.push_back(fmt::format("no \"Linux version\" line in the log: using v{} "
                                            "from the configuration's header",
                                            *cfg->header_version));
        }
        if (!out.version) {
            out.errors.push_back(
                make_diagnostic(Severity::error, {request.log_path, 0, 0},
                                "no \"Linux version\" line in the log: give --kernel-version "
                                "(the rules differ between versions)"));
            return out;
        }
    }

    // The same check and the same fix plan as `check`/`fix` with that version.
    CheckRequest check;
    check.inputs = {request.board};
    check.config = config;
    check.tree = request.tree;
    check.checks = request.checks;
    auto checked = run_check(check);
    out.model = checked.model;
    out.errors.insert(out.errors.end(), checked.config_diagnostics.begin(),
                      checked.config_diagnostics.end());
    out.errors.insert(out.errors.end(), checked.input_errors.begin(), checked.input_errors.end());
    if (!checked.model || checked.results.empty()) {
        if (out.errors.empty())
            out.errors.push_back(
                make_diagnostic(Severity::error, {request.board, 0, 0}, "cannot read the board"));
        return out;
    }
    // Errors of the configuration are fatal; its warnings are not.
    std::erase_if(out.errors, [](const Diagnostic& d) { return d.severity != Severity::error; });
    if (!out.errors.empty()) return out;
    const auto& result = checked.results.front();

    FixRequest fix_request;
    fix_request.inputs = {request.board};
    fix_request.config = config;
    fix_request.tree = request.tree;
    fix_request.bootargs = request.checks.bootargs;
    fix_request.mode = FixMode::plan;
    auto planned = run_fix(fix_request);

    for (const auto& region : result.reservations.regions) {
        NodeExplanation n;
        n.node = region.path;
        n.name = region.name;
        n.where = region.where;
        for (const auto& d : result.diagnostics) {
            if (d.node != region.path) continue;
            n.findings.push_back(d);
            if (!n.finding ||
                (d.severity == Severity::error && n.finding->severity != Severity::error))
                n.finding = d;
        }
        for (const auto& e : planned.edits)
            if (e.node == region.path) n.edits.push_back(e);
        for (const auto& d : planned.diagnostics)
            if (d.node == region.path && d.severity == Severity::error) n.fix_issues.push_back(d);
        out.nodes.push_back(std::move(n));
    }

    // Ties log lines to nodes by the name the kernel prints.
    auto find_node = [&](const std::string& name) -> NodeExplanation* {
        for (auto& n : out.nodes)
            if (n.name == name) return &n;
        // The kernel prints the full name; a log of a board whose unit address moved still
        // names the same node when only one node has that base name.
        NodeExplanation* only = nullptr;
        for (auto& n : out.nodes) {
            if (without_unit(n.name) != without_unit(name)) continue;
            if (only) return nullptr;
            only = &n;
        }
        return only;
    };
    std::vector<bootlog::Message> pending;
    // The region line ("BASE..END (K KiB) map reusable NAME", v6.12+) is printed for every
    // region the init functions did not fail, also when none of them took it (-ENOENT/-ENODEV:
    // fdt_init_reserved_mem_node(), v6.12 and v7.2): for a pool it says the memory stays
    // reserved, not that a pool exists (v7.2 declines reusable + no-map that way, silently).
    auto is_pool = [&](const NodeExplanation& n) {
        auto i = static_cast<std::size_t>(&n - out.nodes.data());
        const auto& r = result.reservations.regions[i];
        return r.declared_kind == reserved::Kind::cma ||
               r.declared_kind == reserved::Kind::coherent ||
               r.declared_kind == reserved::Kind::restricted || r.shared_dma_pool;
    };
    auto attach = [&](NodeExplanation& n, const bootlog::Message& m) {
        n.log.push_back(m);
        if (m.event == Event::region_listed && is_pool(n)) return;
        if (auto o = outcome_of(m.event); o && strength(*o) > strength(n.outcome)) n.outcome = *o;
    };
    for (const auto& m : out.log.messages) {
        if (m.event == Event::skipping_cma_default) {
            // About the board's linux,cma-default pool, which the line does not name.
            bool any = false;
            for (std::size_t i = 0; i < out.nodes.size(); ++i)
                if (result.reservations.regions[i].cma_default) {
                    attach(out.nodes[i], m);
                    any = true;
                }
            if (!any) out.unmatched.push_back(m);
            continue;
        }
        if (bootlog::names_no_node(m.event)) {
            pending.push_back(m);
            continue;
        }
        if (m.nodes.empty()) {
            out.other.push_back(m);
            continue;
        }
        bool init_line = m.event == Event::initialized_node || m.event == Event::matching_fail;
        bool any = false;
        for (const auto& name : m.nodes) {
            if (auto* n = find_node(name)) {
                if (init_line)
                    for (const auto& p : pending)
                        attach(*n, p);
                attach(*n, m);
                any = true;
            }
        }
        if (!any) {
            if (init_line)
                out.unmatched.insert(out.unmatched.end(), pending.begin(), pending.end());
            out.unmatched.push_back(m);
        }
        if (init_line) pending.clear();
    }
    // Lines no init line followed (a truncated log): a created pool is found by its base.
    for (const auto& p : pending) {
        NodeExplanation* by_base = nullptr;
        if (p.base)
            for (std::size_t i = 0; i < out.nodes.size(); ++i)
                if (result.reservations.regions[i].base == p.base) by_base = &out.nodes[i];
        if (by_base)
            attach(*by_base, p);
        else
            out.other.push_back(p);
    }
    for (auto& n : out.nodes)
        std::stable_sort(n.log.begin(), n.log.end(), [](const auto& a, const auto& b) {
            return a.line_number < b.line_number;
        });

    // Why, in words: the log's outcome next to check's verdict for this version.
    const auto& model = *out.model;
    std::string kernel = fmt::format(
        "v{} ({} pages, CMA alignment {})", out.version->str(),
        format_size(model.page_size, ByteUnit::bytes),
        model.cma_min_alignment_bytes ? format_size(*model.cma_min_alignment_bytes, ByteUnit::bytes)
                                      : std::string("decided at boot"));
    std::optional<report::SweepMatrix> by_page_size;
    for (auto& n : out.nodes) {
        bool check_rejects = n.finding && n.finding->severity == Severity::error;
        bool log_lost = n.outcome == NodeOutcome::rejected || n.outcome == NodeOutcome::failed;
        if (check_rejects) {
            n.message = n.finding->message;
            if (n.outcome == NodeOutcome::created)
                n.message += fmt::format(" — but the log shows the pool created: the kernel that "
                                         "booted was configured differently from {} (give its "
                                         ".config with -c)",
                                         kernel);
        } else if (log_lost && n.finding) {
            // A warning of check's (CMA not configured, a doubtful cmdline) that the log shows
            // cost the pool.
            n.message = fmt::format("{}; the log shows the pool {}", n.finding->message,
                                    to_string(n.outcome));
        } else if (log_lost) {
            // The configuration given does not explain the log: say which page sizes would.
            if (!by_page_size) {
                auto sweep = run_check_sweep(check, SweepSpec{out.version->str(), "all"});
                by_page_size = sweep_matrix(sweep);
            }
            std::string would;
            const auto& m = *by_page_size;
            for (std::size_t p = 0; p < m.pools.size(); ++p) {
                if (m.pools[p].node != n.node) continue;
                for (std::size_t c = 0; c < m.columns.size(); ++c)
                    if (m.cells[p][c] == report::PoolState::rejected)
                        would +=
                            fmt::format("{}{} pages (CMA alignment {})", would.empty() ? "" : ", ",
                                        format_size(m.columns[c].page_size, ByteUnit::bytes),
                                        m.columns[c].alignment
                                            ? format_size(*m.columns[c].alignment, ByteUnit::bytes)
                                            : std::string("decided at boot"));
            }
            n.message = fmt::format(
                "the log shows the pool {}, but check finds nothing wrong with it for {}: the "
                "kernel that booted was configured differently (give its .config with -c){}",
                to_string(n.outcome), kernel,
                would.empty() ? std::string()
                              : "; v" + out.version->str() + " rejects it with " + would);
        } else if (n.finding) {
            n.message = n.finding->message;
        } else if (n.outcome == NodeOutcome::absent && !n.log.empty()) {
            n.message = fmt::format("the kernel kept the memory reserved but created no pool (no "
                                    "init function took the node), while check finds nothing "
                                    "wrong with it for {}",
                                    kernel);
        } else if (n.outcome == NodeOutcome::absent) {
            n.message = fmt::format("the log says nothing about this node; check finds nothing "
                                    "wrong with it for {}",
                                    kernel);
        } else {
            n.message = fmt::format("{}; check agrees for {}", to_string(n.outcome), kernel);
        }
    }
    if (!out.unmatched.empty())
        out.notes.push_back(fmt::format("{} log line{} name{} nodes this board does not have: the "
                                        "log may come from another device tree",
                                        out.unmatched.size(), out.unmatched.size() == 1 ? "" : "s",
                                        out.unmatched.size() == 1 ? "s" : ""));
    return out;
}

namespace {

nlohmann::json lines_json(const std::vector<bootlog::Message>& lines) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& m : lines)
        out.push_back({{"line_number", m.line_number},
                       {"text", m.text},
                       {"event", bootlog::to_string(m.event)},
                       {"source", bootlog::source_of(m.event)}});
    return out;
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

nlohmann::json explain_json(const ExplainOutcome& outcome) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : outcome.nodes) {
        nlohmann::json findings = nlohmann::json::array();
        for (const auto& d : n.findings)
            findings.push_back(report::to_json(d));
        nodes.push_back({{"node", n.node},
                         {"name", n.name},
                         {"file", n.where.file},
                         {"line", n.where.line},
                         {"outcome", to_string(n.outcome)},
                         {"log", lines_json(n.log)},
                         {"check", n.finding ? nlohmann::json(n.finding->check) : nullptr},
                         {"message", n.message},
                         {"fix", fix_json_of(n)},
                         {"findings", findings}});
    }
    nlohmann::json errors = nlohmann::json::array();
    for (const auto& d : outcome.errors)
        errors.push_back(report::to_json(d));
    nlohmann::json j;
    j["kernel_version"] = outcome.version ? nlohmann::json(outcome.version->str()) : nullptr;
    j["kernel_version_source"] = outcome.version_source;
    j["alignment"] = outcome.model ? kernel::to_json(*outcome.model) : nlohmann::json(nullptr);
    j["nodes"] = nodes;
    j["unmatched_log_lines"] = lines_json(outcome.unmatched);
    j["other_log_lines"] = lines_json(outcome.other);
    j["notes"] = outcome.notes;
    j["errors"] = errors;
    return j;
}

std::string explain_text(const ExplainOutcome& outcome) {
    std::string out;
    if (outcome.version && outcome.model)
        out +=
            fmt::format("kernel v{} ({}), {}, {} pages, CMA alignment {}\n", outcome.version->str(),
                        outcome.version_source, kernel::to_string(outcome.model->arch),
                        format_size(outcome.model->page_size, ByteUnit::bytes),
                        outcome.model->cma_min_alignment_bytes
                            ? format_size(*outcome.model->cma_min_alignment_bytes, ByteUnit::bytes)
                            : std::string("decided at boot"));
    for (const auto& n : outcome.nodes) {
        out += fmt::format("\n{}  {}  {}\n", n.node, where_text(n.where), to_string(n.outcome));
        for (const auto& m : n.log)
            out += fmt::format("  log {:>5}: {}\n", m.line_number, m.message);
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
    if (!outcome.other.empty()) {
        out += "\nother reserved-memory and CMA lines:\n";
        for (const auto& m : outcome.other)
            out += fmt::format("  log {:>5}: {}\n", m.line_number, m.message);
    }
    for (const auto& note : outcome.notes)
        out += "note: " + note + '\n';
    return out;
}

} // namespace cmalign
