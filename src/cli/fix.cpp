// cmalign fix FILE... (--in-place | -o OUT | --diff): CMA pool sizes rounded up where written.
//
// Exit codes: 0 nothing needed fixing, or everything was fixed (--in-place / -o); 1 something
// needs a fix that was not applied: an unfixable size or base, conflicting edits, or — with
// --diff or without a mode — edits that are only shown (as `ruff --diff` and `black --check`
// do, so CI can fail on them); 2 configuration, input, usage or write errors.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/report/report.hpp"
#include "cmalign/run_fix.hpp"
#include "common.hpp"

namespace cmalign::cli {

void register_fix(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand("fix");
    auto request = std::make_shared<FixRequest>();
    auto format = std::make_shared<std::string>("text");
    auto in_place = std::make_shared<bool>(false);
    auto diff = std::make_shared<bool>(false);
    auto out = std::make_shared<std::string>();
    add_inputs(cmd, "files", request->inputs, ".dts/.dtso/.dtb/.dtbo files or directories", true);
    add_config_options(*cmd, request->config);
    add_tree_options(*cmd, request->tree);
    cmd->add_option("--bootargs", request->bootargs);
    auto* in_place_opt = cmd->add_flag("--in-place", *in_place);
    auto* out_opt = cmd->add_option("-o,--output", *out);
    auto* diff_opt = cmd->add_flag("--diff", *diff);
    in_place_opt->excludes(out_opt)->excludes(diff_opt);
    out_opt->excludes(diff_opt);
    cmd->add_option("-j,--jobs", request->jobs);
    add_format(cmd, *format);

    on_run(cmd, [=, &exit_code] {
        if (*in_place)
            request->mode = FixMode::in_place;
        else if (!out->empty()) {
            request->mode = FixMode::output;
            request->out_path = *out;
        } else if (*diff) {
            request->mode = FixMode::diff;
            std::error_code ec;
            request->diff_base = std::filesystem::current_path(ec).string();
        }
        auto outcome = run_fix(*request);

        if (*format == "json") {
            std::cout << fix_json(outcome).dump(2) << '\n';
            if (request->mode == FixMode::diff) std::cerr << outcome.diff;
        } else {
            std::vector<Diagnostic> all = outcome.config_diagnostics;
            for (const auto* list :
                 {&outcome.input_errors, &outcome.diagnostics, &outcome.io_errors})
                all.insert(all.end(), list->begin(), list->end());
            report::TextOptions options;
            options.color = isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
            std::cerr << report::text(all, options);
            if (request->mode == FixMode::diff) std::cout << outcome.diff;
            if (request->mode != FixMode::diff) { // what was (or would be) changed
                for (const auto& e : outcome.edits)
                    std::cout << fmt::format(
                        "{}:{}:{}: {} {}: {} -> {}\n", e.where.file, e.where.line, e.where.column,
                        e.node, e.property,
                        e.binary ? fmt::format("{:#x}", e.old_value) : e.old_text,
                        e.binary ? fmt::format("{:#x}", e.new_value) : e.new_text);
            }
            if (outcome.model && outcome.alignment) {
                std::size_t files = 0;
                std::vector<std::string> seen;
                for (const auto& e : outcome.edits)
                    if (std::find(seen.begin(), seen.end(), e.file) == seen.end()) {
                        seen.push_back(e.file);
                        ++files;
                    }
                std::cerr << fmt::format(
                    "{} board{}, alignment {}: {} edit{} in {} file{}{}\n", outcome.inputs,
                    outcome.inputs == 1 ? "" : "s", format_size(*outcome.alignment),
                    outcome.edits.size(), outcome.edits.size() == 1 ? "" : "s", files,
                    files == 1 ? "" : "s",
                    outcome.written.empty()
                        ? (request->mode == FixMode::in_place || request->mode == FixMode::output
                               ? ", nothing written"
                               : "")
                        : fmt::format(", {} file{} written", outcome.written.size(),
                                      outcome.written.size() == 1 ? "" : "s"));
            }
        }
        exit_code = outcome.exit_code();
    });
}

} // namespace cmalign::cli
