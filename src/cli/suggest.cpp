// cmalign suggest [FILE...] [--target-alignment SIZE]: configuration changes instead of bigger
// pools, best first. Exit 0 with suggestions (or when the pools are already valid), 1 when no
// configuration change helps, 2 on input errors.
#include <iostream>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/run_fix.hpp"
#include "cmalign/sweep.hpp"
#include "common.hpp"

namespace cmalign::cli {

void register_suggest(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand("suggest");
    auto request = std::make_shared<SuggestRequest>();
    auto format = std::make_shared<std::string>("text");
    auto target = std::make_shared<std::string>();
    add_inputs(cmd, "files", request->inputs, "boards whose CMA pools must stay as they are",
               false);
    add_config_options(*cmd, request->config);
    add_tree_options(*cmd, request->tree);
    cmd->add_option("--target-alignment", *target);
    add_format(cmd, *format);
    auto sweep_options = std::make_shared<SweepOptions>();
    add_sweep_options(*cmd, *sweep_options, "suggest for");

    on_run(cmd, [=, &exit_code] {
        if (!target->empty()) {
            request->target_alignment = parse_size(*target);
            if (!request->target_alignment) {
                std::cerr << fmt::format("cmalign: error: invalid size '{}'\n", *target);
                exit_code = ExitCode::input_error;
                return;
            }
        }
        auto spec = sweep_spec(*sweep_options, exit_code);
        if (exit_code == ExitCode::input_error) return;
        if (spec) {
            auto sweep = run_suggest_sweep(*request, *spec);
            for (const auto& d : sweep.errors)
                std::cerr << format_gcc(d) << '\n';
            exit_code = sweep.exit_code();
            if (*format == "json") {
                std::cout << sweep_suggest_json(sweep).dump(2) << '\n';
                return;
            }
            for (const auto& c : sweep.cells) {
                const auto& o = c.outcome;
                std::string page =
                    c.cell.page_shift
                        ? fmt::format(", {} pages",
                                      format_size(std::uint64_t{1} << *c.cell.page_shift))
                        : std::string();
                std::cout << fmt::format("v{}{}: ", c.cell.version.str(), page);
                if (!c.cell.change.unavailable.empty()) {
                    std::cout << c.cell.change.unavailable << '\n';
                } else if (!o.result) {
                    std::cout << "configuration unusable\n";
                    for (const auto& d : o.errors)
                        std::cout << "  " << format_gcc(d) << '\n';
                } else if (o.result->already_valid) {
                    std::cout << "pools already valid\n";
                } else if (o.result->suggestions.empty()) {
                    std::cout << "no configuration change helps\n";
                } else {
                    const auto& s = o.result->suggestions.front();
                    std::string changes;
                    for (const auto& [k, v] : s.changes)
                        changes += fmt::format("{}{}={}", changes.empty() ? "" : " ", k, v);
                    std::cout << fmt::format(
                        "{} → CMA alignment {}{}\n", changes,
                        format_size(s.cma_min_alignment_bytes),
                        o.result->suggestions.size() > 1
                            ? fmt::format(" (+{} more)", o.result->suggestions.size() - 1)
                            : std::string());
                }
                for (const auto& note : c.cell.change.notes)
                    std::cout << "  note: " << note << '\n';
            }
            return;
        }
        auto outcome = run_suggest(*request);
        exit_code = outcome.exit_code();
        if (*format == "json") {
            std::cout << suggest_json(outcome).dump(2) << '\n';
            return;
        }
        for (const auto& d : outcome.config_notes)
            std::cerr << format_gcc(d) << '\n';
        for (const auto& d : outcome.errors)
            std::cerr << format_gcc(d) << '\n';
        if (!outcome.result) return;
        const auto& r = *outcome.result;
        std::cout << fmt::format("pools need a CMA alignment dividing {}; this configuration "
                                 "gives {}\n",
                                 format_size(r.needed_alignment),
                                 r.current_alignment ? format_size(*r.current_alignment)
                                                     : std::string("one decided at boot"));
        int n = 0;
        for (const auto& s : r.suggestions) {
            std::string changes;
            for (const auto& [k, v] : s.changes)
                changes += fmt::format("{}{}={}", changes.empty() ? "" : " ", k, v);
            std::cout << fmt::format("{}. {}  → CMA alignment {} (pageblock_order {})\n   {}\n",
                                     ++n, changes, format_size(s.cma_min_alignment_bytes),
                                     s.pageblock_order, s.note);
        }
        for (const auto& note : r.notes)
            std::cout << "note: " << note << '\n';
    });
}

} // namespace cmalign::cli
