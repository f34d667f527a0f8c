#include "cmalign/explain.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include <fmt/format.h>

#include "cmalign/bootlog/match.hpp"
#include "cmalign/core/interval.hpp"
#include "cmalign/core/size.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/kconfig/version.hpp"
#include "cmalign/internal/kernel/arch.hpp"
#include "cmalign/internal/kernel/report.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/internal/report/log_lines.hpp"
#include "cmalign/kernel/versions.hpp"
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
    for (const auto& d : board_findings)
        if (d.severity == Severity::error) return ExitCode::findings;
    return ExitCode::clean;
}

namespace {

// The kernel version: --kernel-version, else the log's, else the configuration's header, else
// the kernel tree's Makefile, else the newest version cmalign models (each but the first two
// said in a note). A pasted excerpt often has no "Linux version" line: it is still explained.
void find_version(const ExplainRequest& request, ConfigOptions& config, ExplainOutcome& out) {
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
        return;
    }
    if (out.log.version) {
        out.version = out.log.version;
        out.version_source = fmt::format("log line {}", out.log.version_line);
        config.kernel_version = out.version->str();
        return;
    }
    Diagnostics probe;
    if (auto cfg = load_config(config, probe); cfg && cfg->header_version) {
        if (auto v = KernelVersion::parse(*cfg->header_version)) {
            out.version = v;
            out.version_source = "the configuration's header";
            out.notes.push_back(fmt::format("no \"Linux version\" line in the log: using v{} "
                                            "from the configuration's header",
                                            *cfg->header_version));
            return;
        }
    }
    const auto resolved = resolve_config_options(config, {request.board}, probe);
    if (resolved.kernel_tree) {
        if (auto tree = kconfig::read_tree_version(*resolved.kernel_tree, probe)) {
            out.version = tree->version;
            out.version_source = "the kernel tree";
            config.kernel_version = out.version->str();
            out.notes.push_back(fmt::format("no \"Linux version\" line in the log: using v{} "
                                            "of the kernel tree {}",
                                            out.version->str(), *resolved.kernel_tree));
            return;
        }
    }
    out.version = kernel::newest_modelled_version();
    out.version_source = "the newest modelled version";
    config.kernel_version = out.version->str();
    out.notes.push_back(fmt::format("no \"Linux version\" line in the log and no version in the "
                                    "configuration: explaining with v{}, the newest version "
                                    "cmalign models (give --kernel-version; the rules differ "
                                    "between versions)",
                                    out.version->str()));
}

// The arch when neither --arch, the configuration nor the board's path tells it: the flavour a
// distribution kernel's release ends with ("6.1.0-28-arm64"), else arm64, each with a note.
void find_arch(const ExplainRequest& request, ConfigOptions& config, ExplainOutcome& out) {
    if (config.arch) return;
    Diagnostics probe;
    if (resolve_config_options(config, {request.board}, probe).arch) return;
    if (auto cfg = load_config(config, probe);
        cfg && (cfg->header_arch || kernel::arch_from_symbols(*cfg)))
        return;
    const std::string& line = out.log.version_text;
    if (auto at = line.find("Linux version "); at != std::string::npos) {
        std::string release = line.substr(at + 14);
        release = release.substr(0, release.find_first_of(" \t"));
        const auto dash = release.rfind('-');
        if (dash != std::string::npos && kernel::parse_arch(release.substr(dash + 1))) {
            config.arch = release.substr(dash + 1);
            out.notes.push_back(fmt::format("arch {} from the release \"{}\" of log line {} (not "
                                            "given, and the configuration does not say)",
                                            *config.arch, release, out.log.version_line));
            return;
        }
    }
    config.arch = "arm64";
    out.notes.push_back("the arch is not given and neither the configuration nor the log says "
                        "it: explaining for arm64 (give --arch)");
}

// `name` stands in `text` as a whole word of DT name characters.
bool names_node(const std::string& text, const std::string& name) {
    auto is_name_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == ',' || c == '.' || c == '_' ||
               c == '+' || c == '-' || c == '@';
    };
    for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
        const auto end = at + name.size();
        if ((at == 0 || !is_name_char(text[at - 1])) &&
            (end == text.size() || !is_name_char(text[end])))
            return true;
    }
    return false;
}

// Whether check's finding `d` concerns `region`: it is on the node or on an ancestor
// (/reserved-memory: reserved-memory-format), or it is about no /reserved-memory node (the
// command line, /memory) and names the node in its words (its path, or its name with its unit
// address).
bool concerns(const Diagnostic& d, const reserved::Region& region,
              const std::string& reserved_memory_path) {
    if (d.node == region.path) return true;
    if (d.node.size() > 1 && region.path.starts_with(d.node + "/")) return true;
    const bool about_reserved_memory =
        !reserved_memory_path.empty() &&
        (d.node == reserved_memory_path || d.node.starts_with(reserved_memory_path + "/"));
    if (about_reserved_memory || d.node == "/") return false;
    // A bare name ("cma") is a common word of the command line's findings; a unit address
    // makes it the node's.
    return names_node(d.message, region.path) ||
           (region.name.find('@') != std::string::npos && names_node(d.message, region.name));
}

// One explanation per /reserved-memory node: check's findings that concern it and fix's plan for
// it; check's findings about no node are the board's.
std::vector<NodeExplanation> nodes_of(const checks::Result& result, const FixOutcome& planned,
                                      std::vector<Diagnostic>& board_findings) {
    const auto& rs = result.reservations;
    std::vector<NodeExplanation> nodes;
    std::vector<char> placed(result.diagnostics.size(), 0);
    for (const auto& region : rs.regions) {
        NodeExplanation n;
        n.node = region.path;
        n.name = region.name;
        n.where = region.where;
        for (std::size_t i = 0; i < result.diagnostics.size(); ++i) {
            const auto& d = result.diagnostics[i];
            if (!concerns(d, region, rs.reserved_memory_path)) continue;
            placed[i] = 1;
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
    for (std::size_t i = 0; i < result.diagnostics.size(); ++i)
        if (!placed[i]) board_findings.push_back(result.diagnostics[i]);
    return nodes;
}

// Lines naming no node that no init line or base tied to one (bootlog::Matching::orphans): tied
// to the one node that can have caused each, from check's findings for the same kernel or, when
// check predicts none, from the board's shape; the rest are unexplained.
class Attributor {
public:
    Attributor(const checks::Result& result, const kernel::Model& model,
               bootlog::Matching& matching)
        : result_(result), rs_(result.reservations), model_(model), matching_(matching) {}

    void run(std::vector<bootlog::Message>& unexplained) {
        auto orphans = std::move(matching_.orphans);
        matching_.orphans.clear();
        for (auto& line : orphans) {
            if (place(line)) continue;
            // cma_declare_contiguous_nid()'s failure of the default CMA area (mm/cma.c): the
            // default area's explanation reads it with the other lines about no node.
            if (line.event == bootlog::Event::cmdline_failed && result_.default_area)
                matching_.other.push_back(std::move(line));
            else
                unexplained.push_back(std::move(line));
        }
        std::stable_sort(
            matching_.other.begin(), matching_.other.end(),
            [](const auto& a, const auto& b) { return a.line_number < b.line_number; });
    }

private:
    const checks::Result& result_;
    const reserved::Reservations& rs_;
    const kernel::Model& model_;
    bootlog::Matching& matching_;

    bool has_error(std::size_t i, std::initializer_list<const char*> checks) const {
        for (const auto& d : result_.diagnostics)
            if (d.node == rs_.regions[i].path && d.severity == Severity::error)
                for (const char* c : checks)
                    if (d.check == c) return true;
        return false;
    }
    bool has_event(std::size_t i, bootlog::Event e) const {
        for (const auto& m : matching_.nodes[i].lines)
            if (m.event == e) return true;
        return false;
    }
    // Not shown created or lost by a line of its own, and not yet given a line like this one.
    bool unaccounted(std::size_t i, bootlog::Event e) const {
        return matching_.nodes[i].outcome == NodeOutcome::absent && !has_event(i, e);
    }
    template <class Pred> std::vector<std::size_t> candidates(Pred pred) const {
        std::vector<std::size_t> out;
        for (std::size_t i = 0; i < rs_.regions.size(); ++i)
            if (pred(i)) out.push_back(i);
        return out;
    }
    std::string kernel_words() const {
        return fmt::format("v{} (CMA alignment {})", model_.version.str(),
                           report::alignment_text(model_.cma_min_alignment_bytes));
    }
    bool give(std::size_t i, bootlog::Message& line, std::string how) {
        line.matched_by = std::move(how);
        bootlog::attribute(matching_, rs_.regions, i, line);
        return true;
    }
    // The one node check's error names, else the one the board's shape allows.
    bool give_one(bootlog::Message& line, const std::vector<std::size_t>& by_check,
                  const std::string& check_words, const std::vector<std::size_t>& by_shape,
                  const std::string& shape_words) {
        if (by_check.size() == 1) return give(by_check.front(), line, check_words);
        if (by_check.empty() && by_shape.size() == 1)
            return give(by_shape.front(), line, shape_words);
        return false;
    }

    bool place(bootlog::Message& line) {
        using E = bootlog::Event;
        const auto e = line.event;
        const auto& regions = rs_.regions;
        auto active = [&](std::size_t i) {
            return !regions[i].disabled && regions[i].accepted_by_parser;
        };
        auto cma_pool = [&](std::size_t i) {
            return active(i) && regions[i].shared_dma_pool && regions[i].reusable &&
                   !regions[i].no_map;
        };
        switch (e) {
        case E::incorrect_alignment:
            // rmem_cma_setup() (kernel/dma/contiguous.c; drivers/base/dma-contiguous.c in 4.x):
            // a reusable shared-dma-pool whose base or size is off the CMA alignment.
            return give_one(
                line, candidates([&](std::size_t i) {
                    return unaccounted(i, e) &&
                           has_error(i, {"cma-base-alignment", "cma-size-alignment"});
                }),
                "the only reusable pool check finds misaligned for " + kernel_words(),
                candidates([&](std::size_t i) { return cma_pool(i) && unaccounted(i, e); }),
                "the only reusable shared-dma-pool the log shows nothing else about (check, "
                "with " +
                    kernel_words() + ", finds none misaligned)");
        case E::unable_to_setup:
        case E::not_enough_slots:
            // cma_init_reserved_mem() refused the pool: no free CMA area slot (mm/cma.c).
            return give_one(
                line, candidates([&](std::size_t i) {
                    return unaccounted(i, e) && has_error(i, {"cma-areas"});
                }),
                "the only pool check finds without a CMA area slot for " + kernel_words(), {}, "");
        case E::coherent_needs_no_map:
            // rmem_dma_setup() on arm (kernel/dma/coherent.c): a non-reusable shared-dma-pool
            // without no-map.
            return give_one(
                line, candidates([&](std::size_t i) {
                    return unaccounted(i, e) && has_error(i, {"coherent-no-map"});
                }),
                "the only coherent pool without no-map check reports",
                candidates([&](std::size_t i) {
                    return active(i) && regions[i].shared_dma_pool && !regions[i].reusable &&
                           !regions[i].no_map && unaccounted(i, e);
                }),
                "the only shared-dma-pool without reusable and no-map the log shows nothing "
                "else about");
        case E::created_cma_pool:
        case E::created_dma_pool:
        case E::created_restricted_pool: {
            // Its base is no node's (a dynamic node placed at boot): the one pool of that kind
            // and size ((unsigned long)size / SZ_1M MiB, as printed).
            if (!line.bytes) return false;
            const auto kind = e == E::created_cma_pool   ? reserved::Kind::cma
                              : e == E::created_dma_pool ? reserved::Kind::coherent
                                                         : reserved::Kind::restricted;
            return give_one(line, {}, "", candidates([&](std::size_t i) {
                                return active(i) && regions[i].kind == kind && regions[i].size &&
                                       (*regions[i].size >> 20) == (*line.bytes >> 20) &&
                                       unaccounted(i, e);
                            }),
                            fmt::format("the only {} of {} MiB the log shows nothing else about",
                                        e == E::created_cma_pool   ? "CMA pool"
                                        : e == E::created_dma_pool ? "coherent pool"
                                                                   : "restricted pool",
                                        *line.bytes >> 20));
        }
        case E::unsupported_format: {
            // __reserved_mem_check_root() refused /reserved-memory itself (drivers/of/fdt.c 5.10,
            // 6.1; drivers/of/of_reserved_mem.c 6.12): every node under it is ignored.
            const bool refused = std::any_of(
                result_.diagnostics.begin(), result_.diagnostics.end(),
                [](const Diagnostic& d) { return d.check == "reserved-memory-format"; });
            if (!refused || regions.empty()) return false;
            for (std::size_t i = 0; i < regions.size(); ++i)
                give(i, line,
                     fmt::format("printed for {} itself, whose #address-cells, #size-cells or "
                                 "ranges the kernel refuses (check: reserved-memory-format): "
                                 "every node under it is ignored",
                                 rs_.reserved_memory_path));
            return true;
        }
        case E::cmdline_failed: {
            // cma_declare_contiguous_nid() (mm/cma.c) for cma=SIZE@BASE: the fixed range is
            // already reserved (memblock_is_region_reserved()) by a node over it.
            if (!rs_.cma_cmdline || !rs_.cma_cmdline->fixed || !rs_.cma_cmdline->base) return false;
            const auto area = Interval::of(*rs_.cma_cmdline->base, rs_.cma_cmdline->size);
            return give_one(line, {}, "", candidates([&](std::size_t i) {
                                if (!active(i)) return false;
                                for (const auto& r : regions[i].reg)
                                    if (overlaps(Interval::of(r.base, r.size), area)) return true;
                                return false;
                            }),
                            fmt::format("the only node reserving memory inside the fixed area of "
                                        "cma={}",
                                        rs_.cma_cmdline->text));
        }
        default:
            return false;
        }
    }
};

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
    for (const auto& m : n.log)
        if (m.event == bootlog::Event::cmdline_failed && !log_lost)
            return fmt::format("the kernel could not reserve the cma= area: {}, so memblock "
                               "refused the area over it{}",
                               m.matched_by,
                               n.finding ? "; check: " + n.finding->message : std::string());
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
    find_version(request, config, out);
    find_arch(request, config, out);

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

    out.nodes = nodes_of(result, planned, out.board_findings);

    auto matching = bootlog::match_nodes(out.log.messages, result.reservations.regions);
    Attributor(result, *out.model, matching).run(out.unexplained);
    for (std::size_t i = 0; i < out.nodes.size(); ++i) {
        out.nodes[i].outcome = matching.nodes[i].outcome;
        out.nodes[i].log = std::move(matching.nodes[i].lines);
    }
    out.unmatched = std::move(matching.unmatched);
    out.other = std::move(matching.other);
    if (result.default_area) {
        // The default area's "cma: Failed to reserve" also when it was tied to the node that
        // holds the fixed area of cma= (the node's outcome is another matter).
        std::vector<bootlog::Message> area_lines = out.other;
        for (const auto& n : out.nodes)
            for (const auto& m : n.log)
                if (m.event == bootlog::Event::cmdline_failed) area_lines.push_back(m);
        std::stable_sort(area_lines.begin(), area_lines.end(), [](const auto& a, const auto& b) {
            return a.line_number < b.line_number;
        });
        out.default_area = report::explain_default_area(*result.default_area, area_lines);
    }

    explain_in_words(check, out);
    if (!out.board_findings.empty())
        out.notes.push_back(fmt::format("check reports {} finding{} about no /reserved-memory "
                                        "node (the command line, /memory): listed apart",
                                        out.board_findings.size(),
                                        out.board_findings.size() == 1 ? "" : "s"));
    if (!out.unexplained.empty())
        out.notes.push_back(fmt::format(
            "{} log line{} name{} no node and no one node of the "
            "board can have caused {}: listed as unexplained",
            out.unexplained.size(), out.unexplained.size() == 1 ? "" : "s",
            out.unexplained.size() == 1 ? "s" : "", out.unexplained.size() == 1 ? "it" : "them"));
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
