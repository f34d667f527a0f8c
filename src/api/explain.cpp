#include "cmalign/explain.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cmalign/bootlog/match.hpp"
#include "cmalign/core/size.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/kernel/report.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/internal/report/log_lines.hpp"
#include "cmalign/report/report.hpp"
#include "cmalign/run_fix.hpp"
#include "cmalign/sweep.hpp"

namespace cmalign {

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

// The kernel version: --kernel-version, else the log's, else the configuration's header (which
// `config` then names). false (with an error) when none gives one.
bool find_version(const ExplainRequest& request, ConfigOptions& config, ExplainOutcome& out) {
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
            return false;
        }
    }
    return true;
}

// One explanation per /reserved-memory node: check's findings and fix's plan for it.
std::vector<NodeExplanation> nodes_of(const checks::Result& result, const FixOutcome& planned) {
    std::vector<NodeExplanation> nodes;
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
        nodes.push_back(std::move(n));
    }
    return nodes;
}

// The page sizes whose kernels of this version reject `node` ("16 KiB pages (CMA alignment …)"),
// from a sweep of `check` over every page size.
std::string rejecting_page_sizes(const report::SweepMatrix& m, const std::string& node) {
    std::string would;
    for (std::size_t p = 0; p < m.pools.size(); ++p) {
        if (m.pools[p].node != node) continue;
        for (std::size_t c = 0; c < m.columns.size(); ++c)
            if (m.cells[p][c] == report::PoolState::rejected)
                would += fmt::format("{}{} pages (CMA alignment {})", would.empty() ? "" : ", ",
                                     format_size(m.columns[c].page_size, ByteUnit::bytes),
                                     report::alignment_text(m.columns[c].alignment));
    }
    return would;
}

// Why, in words: the log's outcome next to check's verdict for this version (`kernel`).
// `rejected_with` names the page sizes that would reject the node, asked only when the
// configuration given does not explain a lost pool.
template <class RejectedWith>
std::string node_message(const NodeExplanation& n, const std::string& kernel,
                         RejectedWith rejected_with) {
    bool check_rejects = n.finding && n.finding->severity == Severity::error;
    bool log_lost = n.outcome == NodeOutcome::rejected || n.outcome == NodeOutcome::failed;
    if (check_rejects) {
        if (n.outcome != NodeOutcome::created) return n.finding->message;
        return n.finding->message +
               fmt::format(" — but the log shows the pool created: the kernel that booted was "
                           "configured differently from {} (give its .config with -c)",
                           kernel);
    }
    if (log_lost && n.finding) {
        // A warning of check's (CMA not configured, a doubtful cmdline) that the log shows cost
        // the pool.
        return fmt::format("{}; the log shows the pool {}", n.finding->message,
                           to_string(n.outcome));
    }
    if (log_lost) {
        // The configuration given does not explain the log: say which page sizes would.
        return fmt::format("the log shows the pool {}, but check finds nothing wrong with it for "
                           "{}: the kernel that booted was configured differently (give its "
                           ".config with -c){}",
                           to_string(n.outcome), kernel, rejected_with());
    }
    if (n.finding) return n.finding->message;
    if (n.outcome == NodeOutcome::absent && !n.log.empty())
        return fmt::format("the kernel kept the memory reserved but created no pool (no init "
                           "function took the node), while check finds nothing wrong with it "
                           "for {}",
                           kernel);
    if (n.outcome == NodeOutcome::absent)
        return fmt::format("the log says nothing about this node; check finds nothing wrong with "
                           "it for {}",
                           kernel);
    return fmt::format("{}; check agrees for {}", to_string(n.outcome), kernel);
}

void explain_in_words(const CheckRequest& check, ExplainOutcome& out) {
    const auto& model = *out.model;
    std::string kernel = fmt::format("v{} ({} pages, CMA alignment {})", out.version->str(),
                                     format_size(model.page_size, ByteUnit::bytes),
                                     report::alignment_text(model.cma_min_alignment_bytes));
    std::optional<report::SweepMatrix> by_page_size;
    for (auto& n : out.nodes) {
        n.message = node_message(n, kernel, [&] {
            if (!by_page_size) {
                auto sweep = run_check_sweep(check, SweepSpec{out.version->str(), "all"});
                by_page_size = sweep_matrix(sweep);
            }
            std::string would = rejecting_page_sizes(*by_page_size, n.node);
            return would.empty() ? std::string()
                                 : "; v" + out.version->str() + " rejects it with " + would;
        });
    }
}

} // namespace

ExplainOutcome run_explain(const ExplainRequest& request) {
    const RunScope run_scope; // pipes read once, files stamped once
    ExplainOutcome out;
    // Within --limit file-bytes/line-bytes; /dev/kmsg and named FIFOs to their current end; a
    // compressed log (dmesg.gz) is read as its text, binary junk is one error.
    TextFile log;
    if (auto error =
            read_text_file(request.log_path, request.config.limits, {"the log", true}, log)) {
        out.errors.push_back(
            make_diagnostic(Severity::error, std::move(error->where), std::move(error->message)));
        return out;
    }
    out.log = bootlog::parse(log.text);

    ConfigOptions config = request.config;
    if (!find_version(request, config, out)) return out;

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

    out.nodes = nodes_of(result, planned);

    auto matching = bootlog::match_nodes(out.log.messages, result.reservations.regions);
    for (std::size_t i = 0; i < out.nodes.size(); ++i) {
        out.nodes[i].outcome = matching.nodes[i].outcome;
        out.nodes[i].log = std::move(matching.nodes[i].lines);
    }
    out.unmatched = std::move(matching.unmatched);
    out.other = std::move(matching.other);
    if (result.default_area)
        out.default_area = report::explain_default_area(*result.default_area, out.other);

    explain_in_words(check, out);
    if (!out.unmatched.empty())
        out.notes.push_back(fmt::format("{} log line{} name{} nodes this board does not have: the "
                                        "log may come from another device tree",
                                        out.unmatched.size(), out.unmatched.size() == 1 ? "" : "s",
                                        out.unmatched.size() == 1 ? "s" : ""));
    return out;
}

nlohmann::json explain_json(const ExplainOutcome& outcome) {
    return report::explain_json(outcome);
}

std::string explain_text(const ExplainOutcome& outcome) {
    return report::explain_text(outcome);
}

} // namespace cmalign
