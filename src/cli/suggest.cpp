// cmalign suggest [FILE...] [--target-alignment SIZE]: configuration changes instead of bigger
// pools, best first. Exit 0 with suggestions (or when the pools are already valid), 1 when no
// configuration change helps, 2 on input errors.
#include <iostream>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/report/json_text.hpp"
#include "cmalign/run_fix.hpp"
#include "cmalign/sweep.hpp"
#include "common.hpp"

namespace cmalign::cli {

namespace {

std::string changes_of(const std::vector<std::pair<std::string, std::string>>& changes) {
    std::string out;
    for (const auto& [k, v] : changes)
        out += fmt::format("{}{}={}", out.empty() ? "" : " ", k, v);
    return out;
}

// One line per cell: its first suggestion.
void print_sweep_text(const SweepSuggestOutcome& sweep) {
    for (const auto& c : sweep.cells) {
        const auto& o = c.outcome;
        std::string page =
            c.cell.page_shift
                ? fmt::format(", {} pages", format_size(std::uint64_t{1} << *c.cell.page_shift))
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
            std::cout << fmt::format(
                "{} → CMA alignment {}{}\n", changes_of(s.changes),
                format_size(s.cma_min_alignment_bytes),
                o.result->suggestions.size() > 1
                    ? fmt::format(" (+{} more)", o.result->suggestions.size() - 1)
                    : std::string());
        }
        for (const auto& note : c.cell.change.notes)
            std::cout << "  note: " << note << '\n';
    }
}

void print_text(const SuggestOutcome& outcome) {
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
    for (const auto& s : r.suggestions)
        std::cout << fmt::format("{}. {}  → CMA alignment {} (pageblock_order {})\n   {}\n", ++n,
                                 changes_of(s.changes), format_size(s.cma_min_alignment_bytes),
                                 s.pageblock_order, s.note);
    for (const auto& note : r.notes)
        std::cout << "note: " << note << '\n';
}

} // namespace

ExitCode suggest_command(const Invocation& invocation) {
    auto [request, sweep] = invocation.read(read_suggest_request);
    pass_environment(request.config, invocation);
    const bool json = invocation.value("format") == "json";
    if (sweep) {
        auto outcome = run_suggest_sweep(request, *sweep);
        for (const auto& d : outcome.errors)
            std::cerr << format_gcc(d) << '\n';
        if (json)
            std::cout << report::pretty_json(sweep_suggest_json(outcome)) << '\n';
        else
            print_sweep_text(outcome);
        return outcome.exit_code();
    }
    auto outcome = run_suggest(request);
    if (json)
        std::cout << report::pretty_json(suggest_json(outcome)) << '\n';
    else
        print_text(outcome);
    return outcome.exit_code();
}

} // namespace cmalign::cli
