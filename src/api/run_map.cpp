#include "cmalign/run_map.hpp"
#include "cmalign/internal/fix/plan.hpp"

#include "cmalign/fix/fix.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/run_inputs.hpp"

namespace cmalign {

ExitCode MapOutcome::exit_code() const {
    if (!errors.empty() || !layout) return ExitCode::input_error;
    return layout->errors > 0 ? ExitCode::findings : ExitCode::clean;
}

MapOutcome run_map(const MapRequest& request) {
    const RunScope run_scope; // pipes read once, files stamped once
    MapOutcome outcome;
    Diagnostics config_diags;
    outcome.model = load_model(request.config, config_diags);
    for (auto& d : config_diags.items())
        (d.severity == Severity::error ? outcome.errors : outcome.config_diagnostics)
            .push_back(std::move(d));
    if (!outcome.model) return outcome;

    auto pp = detail::preprocess_options(request.tree);
    if (!pp.kernel_tree && request.config.kernel_tree) pp.kernel_tree = request.config.kernel_tree;
    dt::FileCache cache;
    Diagnostics diags;
    auto tree =
        detail::load_tree(request.input, pp, cache, diags, detail::reservation_resolve_options());
    for (auto& d : diags.items()) {
        if (d.input.empty()) d.input = request.input;
        if (d.severity == Severity::error) outcome.errors.push_back(std::move(d));
    }
    if (!tree || !outcome.errors.empty()) return outcome;

    auto result = checks::run(*tree, *outcome.model, request.checks);
    // What `fix` would write: the library's own plan, so the picture and `fix` never disagree.
    std::optional<fix::Plan> plan;
    if (auto alignment = fix::required_alignment(*outcome.model)) {
        plan = tree->from_dtb ? fix::plan_dtb_fixes(*tree, result.reservations, *alignment)
                              : fix::plan_fixes(*tree, result.reservations, *alignment, cache);
    }
    outcome.layout = map::build(request.input, result, *outcome.model, plan);
    return outcome;
}

} // namespace cmalign
