// cmalign check FILE...: find every reservation the kernel will reject.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/kernel/report.hpp"
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
} // namespace

void add_tree_options(CLI::App& cmd, TreeOptions& options) {
    cmd.add_option("-I", options.include_dirs);
    cmd.add_option("-D", options.defines);
    cmd.add_option("--overlay", options.overlays)->take_all()->allow_extra_args(false);
    add_limit_option(cmd, options.limits);
}

void register_check(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand("check");
    auto request = std::make_shared<CheckRequest>();
    auto format = std::make_shared<std::string>("text");
    auto switch_errors = std::make_shared<Diagnostics>();
    auto no_progress = std::make_shared<bool>(false);
    auto base_dir = std::make_shared<std::string>();
    add_inputs(cmd, "files", request->inputs, ".dts/.dtsi/.dtso/.dtb/.dtbo files or directories",
               true);
    add_config_options(*cmd, request->config);
    add_tree_options(*cmd, request->tree);
    cmd->add_option("--bootargs", request->checks.bootargs);
    // -W/-E keep command-line order (later wins, as in dtc): each value is handled as parsed.
    cmd->add_option_function<std::string>("-W",
                                          [request, switch_errors](const std::string& v) {
                                              if (auto s =
                                                      checks::parse_switch('W', v, *switch_errors))
                                                  request->checks.switches.push_back(*s);
                                          })
        ->trigger_on_parse()
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option_function<std::string>("-E",
                                          [request, switch_errors](const std::string& v) {
                                              if (auto s =
                                                      checks::parse_switch('E', v, *switch_errors))
                                                  request->checks.switches.push_back(*s);
                                          })
        ->trigger_on_parse()
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_flag("--werror", request->checks.werror);
    cmd->add_option("-j,--jobs", request->jobs);
    cmd->add_flag("--no-progress", *no_progress);
    // FILE... as `$(git diff --name-only)` gives them: the list ends at the next option or `--`.
    takes_list(cmd->add_option("--affected-by", request->affected_by));
    add_format(cmd, *format);
    cmd->add_option("--sarif-base", *base_dir);
    auto sweep_options = std::make_shared<SweepOptions>();
    add_sweep_options(*cmd, *sweep_options, "check under");

    on_run(cmd, [=, &exit_code] {
        // The list of --affected-by ends only at an option: a directory in it is an input
        // swallowed by the list, never a changed file.
        for (const auto& changed : request->affected_by) {
            std::error_code ec;
            if (std::filesystem::is_directory(changed, ec)) {
                std::cerr << fmt::format(
                    "cmalign check: error: --affected-by takes the changed files, and '{}' is a "
                    "directory; give the inputs before --affected-by, or after --\n",
                    changed);
                exit_code = ExitCode::input_error;
                return;
            }
        }
        if (switch_errors->has_errors()) {
            print_diagnostics(*switch_errors);
            exit_code = ExitCode::input_error;
            return;
        }
        auto spec = sweep_spec(*sweep_options, exit_code);
        if (exit_code == ExitCode::input_error) return;
        if (spec) {
            if (*format == "sarif") {
                std::cerr << "cmalign: error: a sweep prints text or json, not sarif\n";
                exit_code = ExitCode::input_error;
                return;
            }
            auto sweep = run_check_sweep(*request, *spec);
            // Errors of the sweep, then each distinct error of its cells (an unreadable input
            // fails every cell the same way).
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
            if (*format == "json")
                std::cout << sweep_check_json(sweep).dump(2) << '\n';
            else if (sweep.plan)
                std::cout << report::render_sweep_text(sweep_matrix(sweep));
            exit_code = sweep.exit_code(request->checks.werror);
            return;
        }
        bool show_progress = !*no_progress && isatty(STDERR_FILENO);
        if (show_progress) {
            request->progress = [](std::size_t done, std::size_t total) {
                if (total > 1) std::fprintf(stderr, "\rchecking %zu/%zu", done, total);
            };
        }
        auto outcome = run_check(*request);
        if (show_progress && outcome.inputs > 1) std::fputs("\r\033[K", stderr);
        if (!outcome.model) {
            for (const auto& d : outcome.config_diagnostics)
                std::cerr << format_gcc(d) << '\n';
            exit_code = ExitCode::input_error;
            return;
        }

        std::vector<Diagnostic> all = outcome.input_errors;
        for (const auto& r : outcome.results)
            all.insert(all.end(), r.diagnostics.begin(), r.diagnostics.end());

        // On stderr for every format but JSON (whose "summary" holds the same counts): how many
        // boards were checked, so a gate that checked nothing cannot look green.
        auto print_summary = [&] {
            const bool affected = !request->affected_by.empty();
            if (affected)
                std::cerr << fmt::format(
                    "{} board{} affected by {}{}\n", outcome.inputs, outcome.inputs == 1 ? "" : "s",
                    file_list(request->affected_by),
                    outcome.unaffected_inputs > 0
                        ? fmt::format(" ({} not affected, skipped)", outcome.unaffected_inputs)
                        : std::string());
            std::size_t failing = 0;
            for (const auto& r : outcome.results)
                if (r.failed(request->checks.werror)) ++failing;
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
        };

        if (*format == "json") {
            std::cout << check_json(outcome, !request->affected_by.empty()).dump(2) << '\n';
        } else if (*format == "github") {
            for (const auto& d : outcome.config_diagnostics)
                std::cerr << format_gcc(d) << '\n';
            std::cout << report::github(report::merge_shared(all));
            print_summary();
        } else if (*format == "sarif") {
            report::SarifOptions options;
            if (!base_dir->empty()) options.base_dir = *base_dir;
            std::cout << report::sarif(all, options).dump(2) << '\n';
            print_summary();
        } else {
            for (const auto& d : outcome.config_diagnostics)
                std::cerr << format_gcc(d) << '\n';
            report::TextOptions options;
            options.color = isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
            // Findings go to stdout; inputs that could not be read are errors of the run (stderr).
            if (!outcome.input_errors.empty()) {
                report::TextOptions err_options = options;
                err_options.color = isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
                std::cerr << report::text(outcome.input_errors, err_options);
            }
            std::vector<Diagnostic> findings;
            for (const auto& r : outcome.results)
                findings.insert(findings.end(), r.diagnostics.begin(), r.diagnostics.end());
            // A finding in a shared .dtsi once, naming its boards.
            std::cout << report::text(report::merge_shared(findings), options);
            print_summary();
        }

        exit_code = outcome.exit_code(request->checks.werror);
    });
}

} // namespace cmalign::cli
