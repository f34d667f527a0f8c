#include "cmalign/run_fix.hpp"
#include "cmalign/internal/fix/plan.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "cmalign/checks/checks.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/report/fix_report.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/reserved/regions.hpp"

namespace cmalign {

namespace {

// The same reading as `check` (checks::read_options), so fix sees exactly the pools check judges.
reserved::Reservations read_reservations(const dt::Tree& tree, const kernel::Model& model,
                                         const std::optional<std::string>& bootargs) {
    return reserved::read(tree, checks::read_options(model, bootargs));
}

// Reads every input on all cores and hands (tree, reservations) to `visit` in input order.
struct Loaded {
    std::optional<dt::Tree> tree;
    std::optional<reserved::Reservations> reservations;
    std::vector<Diagnostic> errors;
};

std::vector<Loaded> load_all(const std::vector<std::string>& inputs,
                             const TreeOptions& tree_options, const ConfigOptions& config,
                             const kernel::Model& model, const std::optional<std::string>& bootargs,
                             dt::FileCache& cache, unsigned jobs) {
    auto pp = detail::preprocess_options(tree_options);
    if (!pp.kernel_tree && config.kernel_tree) pp.kernel_tree = config.kernel_tree;
    std::vector<Loaded> out(inputs.size());
    auto resolve = detail::reservation_resolve_options();
    Diagnostics overlay_diags;
    auto overlays = detail::load_overlays(tree_options.overlays, pp, cache, overlay_diags);
    if (!overlays) {
        // Every board needs them: the errors stand for all inputs.
        if (!out.empty())
            for (const auto& d : overlay_diags.items())
                if (d.severity == Severity::error) out.front().errors.push_back(d);
        return out;
    }
    detail::for_each_input(inputs.size(), jobs, [&](std::size_t i) {
        Diagnostics diags;
        auto tree = detail::load_board(inputs[i], pp, cache, diags, resolve, *overlays);
        if (tree && !diags.has_errors()) {
            out[i].reservations = read_reservations(*tree, model, bootargs);
            out[i].tree = std::move(tree);
        }
        for (auto& d : diags.items()) {
            if (d.input.empty()) d.input = inputs[i];
            if (d.severity == Severity::error) out[i].errors.push_back(std::move(d));
        }
        if (!out[i].errors.empty()) {
            out[i].tree.reset();
            out[i].reservations.reset();
        }
    });
    return out;
}

// The pools that the grown sizes no longer let the kernel place (dynamic-no-room on the board as
// fixed, not on the board as it was): fix cannot make room, so it says which and counts them
// as unfixable rather than handing over a board that loses other pools.
std::vector<Diagnostic> no_room_after(const reserved::Reservations& before,
                                      const std::vector<fix::Edit>& edits,
                                      const kernel::Model& model) {
    auto lost = [&](const reserved::Reservations& r) {
        std::vector<Diagnostic> out;
        for (auto& d : checks::run(r, model, {}).diagnostics)
            if (d.check == "dynamic-no-room") out.push_back(std::move(d));
        return out;
    };
    auto after = before;
    for (const auto& e : edits)
        for (auto& region : after.regions)
            if (region.path == e.node && region.size && *region.size == e.old_value)
                region.size = e.new_value;
    auto was = lost(before);
    std::vector<Diagnostic> out;
    for (auto& d : lost(after)) {
        if (std::any_of(was.begin(), was.end(), [&](const auto& w) { return w.node == d.node; }))
            continue;
        d.message = "after the fix, " + d.message +
                    "; the grown pools need more RAM than the board "
                    "leaves them: make room (fewer or smaller pools, or more RAM) by hand";
        out.push_back(std::move(d));
    }
    return out;
}

// Every board's plan, then the edits of all boards merged (a shared .dtsi edited once,
// conflicts refused).
void plan_boards(const std::vector<Loaded>& loaded, dt::FileCache& cache, FixOutcome& outcome) {
    std::vector<fix::Edit> all;
    for (std::size_t i = 0; i < loaded.size(); ++i) {
        const auto& l = loaded[i];
        outcome.input_errors.insert(outcome.input_errors.end(), l.errors.begin(), l.errors.end());
        if (!l.tree) continue;
        auto plan = fix::plan_fixes(*l.tree, *l.reservations, *outcome.alignment, cache);
        outcome.unfixable = outcome.unfixable || plan.unfixable;
        if (!plan.edits.empty()) {
            ++outcome.boards_with_edits;
            auto lost = no_room_after(*l.reservations, plan.edits, *outcome.model);
            outcome.unfixable = outcome.unfixable || !lost.empty();
            plan.diagnostics.insert(plan.diagnostics.end(), lost.begin(), lost.end());
        }
        outcome.diagnostics.insert(outcome.diagnostics.end(), plan.diagnostics.begin(),
                                   plan.diagnostics.end());
        all.insert(all.end(), plan.edits.begin(), plan.edits.end());
    }
    auto merged = fix::merge_edits(all);
    outcome.edits = std::move(merged.edits);
    outcome.conflict = merged.conflict;
    outcome.diagnostics.insert(outcome.diagnostics.end(), merged.diagnostics.begin(),
                               merged.diagnostics.end());
}

// -o writes one file: the board named on the command line, edited. Edits that land in an
// included file cannot be expressed that way (the copy would still include the old file).
void write_output(const FixRequest& request, const std::vector<std::string>& inputs,
                  std::vector<fix::FileChange>& changes, FixOutcome& outcome, Diagnostics& io) {
    if (!outcome.input_errors.empty() || inputs.empty()) return;
    namespace fs = std::filesystem;
    std::error_code ec;
    // The same name first: fs::equivalent() refuses two pipes (a board read from /dev/stdin).
    auto is_board = [&](const std::string& file) {
        return file == inputs.front() || fs::equivalent(file, inputs.front(), ec);
    };
    fix::FileChange top;
    bool elsewhere = false;
    for (auto& c : changes) {
        if (is_board(c.file))
            top = std::move(c);
        else
            elsewhere = true;
    }
    if (elsewhere) {
        std::string files;
        for (const auto& e : outcome.edits)
            if (!is_board(e.file) && files.find(e.file) == std::string::npos)
                files += (files.empty() ? "" : ", ") + e.file;
        io.error({*request.out_path, 0, 0},
                 fmt::format("the sizes to change are written in included files ({}), not "
                             "in {}: -o writes only the edited board file, so nothing is "
                             "written; use --in-place or --diff",
                             files, inputs.front()));
        return;
    }
    if (top.file.empty()) {
        // Nothing to change: -o still gets the input, unchanged (a filter's contract).
        if (outcome.unfixable) return;
        auto content = read_whole_input(inputs.front());
        if (!content) {
            io.error({inputs.front(), 0, 0}, "cannot read the input");
            return;
        }
        top.file = inputs.front();
        top.new_content = std::move(*content);
    }
    std::vector<fix::FileChange> one{std::move(top)};
    if (fix::write_changes(one, io, request.out_path)) outcome.written.push_back(*request.out_path);
}

} // namespace

ExitCode FixOutcome::exit_code() const {
    if (!model || !input_errors.empty() || !io_errors.empty()) return ExitCode::input_error;
    if (unfixable || conflict) return ExitCode::findings;
    bool only_shown = mode == FixMode::plan || mode == FixMode::diff;
    if (only_shown && !edits.empty()) return ExitCode::findings;
    return ExitCode::clean;
}

FixOutcome run_fix(const FixRequest& request) {
    const RunScope run_scope; // pipes read once, files stamped once
    FixOutcome outcome;
    outcome.mode = request.mode;
    auto [config, model, config_diagnostics, config_sources] =
        detail::command_model(request.config, request.inputs);
    outcome.model = std::move(model);
    outcome.config_diagnostics = std::move(config_diagnostics);
    if (!outcome.model) return outcome;
    outcome.alignment = fix::required_alignment(*outcome.model);
    if (!outcome.alignment) {
        outcome.config_diagnostics.push_back(
            make_diagnostic(Severity::error, Location{},
                            "the kernel decides the CMA alignment at boot and the "
                            "configuration gives no bound: there is nothing to round to"));
        outcome.model.reset();
        return outcome;
    }
    Diagnostics expand_diags;
    auto inputs = expand_inputs(request.inputs, expand_diags);
    outcome.input_errors = expand_diags.items();
    outcome.inputs = inputs.size();
    if (request.mode == FixMode::output && inputs.size() != 1) {
        outcome.io_errors.push_back(
            make_diagnostic(Severity::error, {request.out_path.value_or(""), 0, 0},
                            fmt::format("-o takes exactly one input board ({} given); "
                                        "use --in-place or --diff for several",
                                        inputs.size())));
        return outcome;
    }

    dt::FileCache cache;
    auto loaded = load_all(inputs, request.tree, config, *outcome.model, request.bootargs, cache,
                           request.jobs);
    plan_boards(loaded, cache, outcome);
    if (outcome.conflict) return outcome; // nothing is shown as applicable, nothing written

    if (request.mode == FixMode::plan) return outcome;

    Diagnostics io;
    auto changes = fix::render(outcome.edits, io);
    // The file is read again to render the edits: it must still be what was parsed.
    for (const auto& c : changes) {
        if (c.binary) continue; // DTBs are not kept in the cache; render re-validates them
        auto parsed = cache.load(c.file);
        if (parsed && parsed->text != c.old_content)
            io.error({c.file, 0, 0},
                     "the file changed while cmalign was reading the boards; nothing written "
                     "(run fix again)");
    }
    // Several boards are fixed together or not at all: one that could not be read leaves every
    // file as it is (the edits are still listed).
    if (request.mode == FixMode::in_place && !outcome.input_errors.empty())
        io.error({}, "an input could not be read (its errors are above); nothing written, "
                     "so that the boards are fixed together or not at all");
    if (io.has_errors()) {
        outcome.io_errors = io.items();
        return outcome;
    }
    switch (request.mode) {
    case FixMode::plan:
        break;
    case FixMode::diff:
        for (const auto& c : changes)
            outcome.diff += fix::unified_diff(c, request.diff_base);
        break;
    case FixMode::in_place:
        if (fix::write_changes(changes, io))
            for (const auto& c : changes)
                outcome.written.push_back(c.file);
        break;
    case FixMode::output:
        write_output(request, inputs, changes, outcome, io);
        break;
    }
    outcome.io_errors = io.items();
    return outcome;
}

nlohmann::json fix_json(const FixOutcome& outcome) {
    return report::fix_json(outcome.edits,
                            {&outcome.config_diagnostics, &outcome.input_errors,
                             &outcome.diagnostics, &outcome.io_errors},
                            outcome.written, outcome.alignment);
}

ExitCode SuggestOutcome::exit_code() const {
    if (!errors.empty() || !result) return ExitCode::input_error;
    if (result->already_valid || !result->suggestions.empty()) return ExitCode::clean;
    return ExitCode::findings;
}

SuggestOutcome run_suggest(const SuggestRequest& request) {
    const RunScope run_scope; // pipes read once, files stamped once
    SuggestOutcome outcome;
    Diagnostics diags;
    const ConfigOptions resolved = resolve_config_options(request.config, request.inputs, diags);
    auto options = kernel_options(resolved, diags);
    auto config = options ? load_config(resolved, diags) : std::nullopt;
    if (config) outcome.model = kernel::derive(*config, *options, diags);
    if (outcome.model) outcome.config_notes = diags.items();
    if (!outcome.model) {
        outcome.errors = diags.items();
        if (outcome.errors.empty())
            outcome.errors.push_back(
                make_diagnostic(Severity::error, Location{}, "unusable configuration"));
        return outcome;
    }
    std::optional<std::uint64_t> needed;
    if (request.target_alignment) {
        if (*request.target_alignment == 0) {
            outcome.errors.push_back(make_diagnostic(Severity::error, Location{},
                                                     "--target-alignment must be positive"));
            return outcome;
        }
        needed = fix::largest_power_of_two_dividing(*request.target_alignment);
    }
    if (!request.inputs.empty()) {
        Diagnostics expand_diags;
        auto inputs = expand_inputs(request.inputs, expand_diags);
        for (const auto& d : expand_diags.items())
            outcome.errors.push_back(d);
        dt::FileCache cache;
        auto loaded =
            load_all(inputs, request.tree, resolved, *outcome.model, std::nullopt, cache, 0);
        std::vector<reserved::Reservations> all;
        for (auto& l : loaded) {
            outcome.errors.insert(outcome.errors.end(), l.errors.begin(), l.errors.end());
            if (l.reservations) all.push_back(std::move(*l.reservations));
        }
        if (!outcome.errors.empty()) return outcome;
        auto from_pools = fix::needed_alignment(all);
        if (from_pools)
            needed = needed ? std::min(*needed, *from_pools) : *from_pools;
        else if (!needed) {
            outcome.errors.push_back(
                make_diagnostic(Severity::error, Location{},
                                "the inputs have no CMA pool (and no --target-alignment)"));
            return outcome;
        }
    }
    if (!needed) {
        outcome.errors.push_back(make_diagnostic(Severity::error, Location{},
                                                 "give board files or --target-alignment SIZE"));
        return outcome;
    }
    Diagnostics sdiags;
    outcome.result = fix::suggest(*config, *options, *needed, sdiags);
    if (!outcome.result) outcome.errors = sdiags.items();
    return outcome;
}

nlohmann::json suggest_json(const SuggestOutcome& outcome) {
    return report::suggest_json(outcome.result, outcome.errors);
}

} // namespace cmalign
