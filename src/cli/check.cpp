// cmalign check FILE...: find every reservation the kernel will reject.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "answers.hpp"
#include "cmalign/core/size.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/kernel/report.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/internal/report/json_text.hpp"
#include "cmalign/report/report.hpp"
#include "cmalign/run.hpp"
#include "cmalign/sweep.hpp"
#include "common.hpp"

namespace cmalign::cli {

namespace {

// "a.dtsi, b.h and 3 more files"
std::string file_list(const std::vector<std::string>& files) {
    constexpr std::size_t shown = 3;
    std::string out;
    for (std::size_t i = 0; i < files.size() && i < shown; ++i)
        out += (i == 0 ? "" : ", ") + files[i];
    if (files.size() > shown)
        out += fmt::format(" and {} more file{}", files.size() - shown,
                           files.size() - shown == 1 ? "" : "s");
    return out;
}

bool color(int fd) {
    return isatty(fd) && std::getenv("NO_COLOR") == nullptr;
}

ExitCode print_sweep(const CheckRequest& request, const SweepSpec& spec,
                     const std::string& format) {
    if (format == "sarif") {
        std::cerr << "cmalign: error: a sweep prints text or json, not sarif\n";
        return ExitCode::input_error;
    }
    auto sweep = run_check_sweep(request, spec);
    // Errors of the sweep, then each distinct error of its cells (an unreadable input fails
    // every cell the same way).
    std::set<std::string> shown;
    auto show = [&](const Diagnostic& d) {
        if (d.severity != Severity::error) return;
        if (auto line = format_gcc(d); shown.insert(line).second) std::cerr << line << '\n';
    };
    for (const auto& d : sweep.errors)
        show(d);
    for (const auto& c : sweep.cells) {
        for (const auto& d : c.outcome.config_diagnostics)
            show(d);
        for (const auto& d : c.outcome.input_errors)
            show(d);
    }
    if (format == "json")
        std::cout << report::pretty_json(sweep_check_json(sweep)) << '\n';
    else if (sweep.plan)
        std::cout << report::render_sweep_text(sweep_matrix(sweep));
    return sweep.exit_code(request.checks.werror);
}

// On stderr for every format but JSON (whose "summary" holds the same counts): how many boards
// were checked, so a gate that checked nothing cannot look green.
void print_summary(const CheckRequest& request, const CheckOutcome& outcome,
                   const std::vector<Diagnostic>& all) {
    if (!request.affected_by.empty())
        std::cerr << fmt::format(
            "{} board{} affected by {}{}\n", outcome.inputs, outcome.inputs == 1 ? "" : "s",
            file_list(request.affected_by),
            outcome.unaffected_inputs > 0
                ? fmt::format(" ({} not affected, skipped)", outcome.unaffected_inputs)
                : std::string());
    std::size_t failing = 0;
    for (const auto& r : outcome.results)
        if (r.failed(request.checks.werror)) ++failing;
    auto summary = report::summary_line(all);
    std::cerr << fmt::format(
        "{} board{} checked against {} {} (CMA alignment {}){}{}\n", outcome.inputs,
        outcome.inputs == 1 ? "" : "s", kernel::to_string(outcome.model->arch),
        outcome.model->version.str(),
        outcome.model->cma_min_alignment_bytes
            ? format_size(*outcome.model->cma_min_alignment_bytes, ByteUnit::bytes)
            : std::string("decided at boot"),
        summary.empty() ? ": no findings" : ": " + summary,
        failing ? fmt::format(", {} failing", failing) : "");
}

void print_outcome(const CheckRequest& request, const CheckOutcome& outcome,
                   const Invocation& invocation) {
    const auto format = invocation.value("format");
    if (format == "json") {
        write_check_json(std::cout, outcome, !request.affected_by.empty());
        std::cout << '\n';
        return;
    }
    std::vector<Diagnostic> all = outcome.input_errors;
    for (const auto& r : outcome.results)
        all.insert(all.end(), r.diagnostics.begin(), r.diagnostics.end());
    if (format == "sarif") {
        report::SarifOptions options;
        if (auto base = invocation.value("sarif_base"); !base.empty()) options.base_dir = base;
        std::cout << report::pretty_json(report::sarif(all, options)) << '\n';
        print_summary(request, outcome, all);
        return;
    }
    for (const auto& d : outcome.config_diagnostics)
        std::cerr << format_gcc(d) << '\n';
    if (format == "github") {
        std::cout << report::github(report::merge_shared(all));
        print_summary(request, outcome, all);
        return;
    }
    report::TextOptions options;
    options.color = color(STDOUT_FILENO);
    // Findings go to stdout; inputs that could not be read are errors of the run (stderr).
    if (!outcome.input_errors.empty()) {
        report::TextOptions err_options = options;
        err_options.color = color(STDERR_FILENO);
        std::cerr << report::text(outcome.input_errors, err_options);
    }
    std::vector<Diagnostic> findings;
    for (const auto& r : outcome.results)
        findings.insert(findings.end(), r.diagnostics.begin(), r.diagnostics.end());
    // A finding in a shared .dtsi once, naming its boards.
    std::cout << report::text(report::merge_shared(findings), options);
    print_summary(request, outcome, all);
}

ExitCode check_and_print(CheckRequest& request, const Invocation& invocation,
                         std::optional<std::vector<std::string>>& sources) {
    bool show_progress = !invocation.flag("no_progress") && isatty(STDERR_FILENO);
    if (show_progress) {
        request.progress = [](std::size_t done, std::size_t total) {
            if (total > 1) std::fprintf(stderr, "\rchecking %zu/%zu", done, total);
        };
    }
    auto outcome = run_check(request);
    sources = answers::check_sources(request, outcome);
    if (show_progress && outcome.inputs > 1) std::fputs("\r\033[K", stderr);
    if (!outcome.model) {
        for (const auto& d : outcome.config_diagnostics)
            std::cerr << format_gcc(d) << '\n';
        return ExitCode::input_error;
    }
    print_outcome(request, outcome, invocation);
    const ExitCode status = outcome.exit_code(request.checks.werror);
    RunScope::free_at_close(std::make_shared<CheckOutcome>(std::move(outcome))); // see main.cpp
    return status;
}

} // namespace

ExitCode check_command(const Invocation& invocation) {
    auto command = invocation.read(read_check_request);
    CheckRequest& request = command.request; // a name, not a binding: lambdas capture it below
    pass_environment(request.config, invocation);
    if (command.sweep) return print_sweep(request, *command.sweep, invocation.value("format"));
    // A command line answered before over unchanged files prints that answer again. One that
    // is never kept (a directory of boards: a new one would not be seen) is not recorded: a
    // whole tree's JSON is megabytes.
    std::optional<std::vector<std::string>> sources;
    if (!answers::check_keepable(request)) return check_and_print(request, invocation, sources);
    return cached_answer(
        invocation, "check", request.config,
        [&] { return check_and_print(request, invocation, sources); }, [&] { return sources; });
}

} // namespace cmalign::cli
