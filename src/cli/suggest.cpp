// cmalign suggest [FILE...] [--target-alignment SIZE]: configuration changes instead of bigger
// pools, best first. Exit 0 with suggestions (or when the pools are already valid), 1 when no
// configuration change helps, 2 on input errors.
#include <iostream>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/run_fix.hpp"
#include "common.hpp"

namespace cmalign::cli {

void register_suggest(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "suggest", "configuration changes that make the CMA pools valid without growing them");
    auto request = std::make_shared<SuggestRequest>();
    auto format = std::make_shared<std::string>("text");
    auto target = std::make_shared<std::string>();
    cmd->add_option("files", request->inputs, "boards whose CMA pools must stay as they are");
    add_config_options(*cmd, request->config);
    add_tree_options(*cmd, request->tree);
    cmd->add_option("--target-alignment", *target,
                    "an alignment the configuration must divide (4M, 0x400000, SZ_4M, ...)");
    cmd->add_option("--format", *format, "text or json")->check(CLI::IsMember({"text", "json"}));

    cmd->callback([=, &exit_code] {
        if (!target->empty()) {
            request->target_alignment = parse_size(*target);
            if (!request->target_alignment) {
                std::cerr << fmt::format("cmalign: error: invalid size '{}'\n", *target);
                exit_code = exit_input_error;
                return;
            }
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
