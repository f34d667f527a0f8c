#include "cmalign/sweep.hpp"

#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/kernel/report.hpp"
#include "cmalign/internal/report/json.hpp"

namespace cmalign {

std::optional<SweepPlan> plan_sweep(const ConfigOptions& config, const SweepSpec& spec,
                                    Diagnostics& diags) {
    auto base = load_config(config, diags);
    if (!base) return std::nullopt;
    auto options = kernel_options(config, diags);
    if (!options) return std::nullopt;
    // The arch as check would find it (the given configuration at its own version).
    Diagnostics derive_diags;
    auto model = kernel::derive(*base, *options, derive_diags);
    if (!model) {
        diags.append(derive_diags);
        return std::nullopt;
    }
    SweepPlan plan;
    plan.arch = model->arch;
    if (options->version)
        plan.own_version = options->version;
    else if (base->header_version)
        plan.own_version = KernelVersion::parse(*base->header_version);

    auto versions = kernel::parse_version_list(spec.versions, plan.arch, diags);
    if (!versions) return std::nullopt;
    std::vector<std::optional<int>> shifts{std::nullopt};
    if (spec.page_sizes) {
        auto list = kernel::parse_page_size_list(*spec.page_sizes, plan.arch, diags);
        if (!list) return std::nullopt;
        shifts.assign(list->begin(), list->end());
    }
    for (const auto& shift : shifts) {
        for (const auto& version : *versions) {
            SweepCell cell;
            cell.version = version;
            cell.page_shift = shift;
            cell.change = kernel::retarget(*base, plan.arch, version, shift, plan.own_version);
            cell.config = config;
            cell.config.kernel_version = version.str();
            cell.config.sets.insert(cell.config.sets.end(), cell.change.sets.begin(),
                                    cell.change.sets.end());
            cell.config.unsets.insert(cell.config.unsets.end(), cell.change.dropped.begin(),
                                      cell.change.dropped.end());
            plan.cells.push_back(std::move(cell));
        }
    }
    return plan;
}

namespace {

// The worst exit code of the cells that could run; input_error for an error of the sweep itself.
template <class Outcome, class CodeOf> ExitCode worst_cell(const Outcome& o, CodeOf code_of) {
    if (!o.plan || !o.errors.empty()) return ExitCode::input_error;
    ExitCode code = ExitCode::clean;
    for (const auto& c : o.cells)
        if (c.cell.change.unavailable.empty()) code = worst(code, code_of(c.outcome));
    return code;
}

// Plans the sweep and runs `run_one` on each cell's request (a copy of `request` with the
// cell's configuration); cells the version cannot have keep an empty outcome.
template <class Outcome, class Request, class RunOne>
Outcome run_cells(const Request& request, const SweepSpec& spec, RunOne run_one) {
    Outcome out;
    Diagnostics diags;
    out.plan = plan_sweep(request.config, spec, diags);
    out.errors = diags.items();
    if (!out.plan) return out;
    for (const auto& cell : out.plan->cells) {
        typename decltype(out.cells)::value_type done{cell, {}};
        if (cell.change.unavailable.empty()) {
            Request single = request;
            single.config = cell.config;
            done.outcome = run_one(single);
        }
        out.cells.push_back(std::move(done));
    }
    return out;
}

} // namespace

ExitCode SweepCheckOutcome::exit_code(bool werror) const {
    return worst_cell(*this, [werror](const CheckOutcome& o) { return o.exit_code(werror); });
}

SweepCheckOutcome run_check_sweep(const CheckRequest& request, const SweepSpec& spec) {
    const RunScope run_scope; // pipes read once, files stamped once
    return run_cells<SweepCheckOutcome>(request, spec, [](CheckRequest& single) {
        single.progress = nullptr;
        return run_check(single);
    });
}

namespace {

std::optional<std::uint64_t> requested_page_size(const SweepCell& cell) {
    if (!cell.page_shift) return std::nullopt;
    return std::uint64_t{1} << *cell.page_shift;
}

// The keys every sweep entry starts with: the cell, its page size and its CMA alignment.
nlohmann::json cell_entry(const SweepCell& cell, const std::optional<kernel::Model>& model) {
    return report::sweep_cell_json(
        cell.version, model ? std::optional(model->page_size) : requested_page_size(cell),
        cell.change, model ? model->cma_min_alignment_bytes : std::nullopt);
}

} // namespace

nlohmann::json sweep_check_json(const SweepCheckOutcome& outcome) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& c : outcome.cells) {
        const auto& model = c.outcome.model;
        auto j = cell_entry(c.cell, model);
        if (model) {
            j.update(check_json(c.outcome));
        } else {
            const auto& errors = c.outcome.config_diagnostics;
            j["alignment"] = nullptr;
            j["regions"] = nlohmann::json::array();
            j["diagnostics"] = report::diagnostics_json(errors);
            j["summary"] = report::summary_json(errors);
        }
        entries.push_back(std::move(j));
    }
    return {{"sweep", entries},
            {"pools", report::first_rejected_json(sweep_matrix(outcome))},
            {"errors", report::diagnostics_json(outcome.errors)}};
}

report::SweepMatrix sweep_matrix(const SweepCheckOutcome& outcome) {
    std::vector<report::SweepCellResults> cells;
    const SweepCell* previous = nullptr;
    for (const auto& c : outcome.cells) {
        report::SweepCellResults cell;
        cell.column.version = c.cell.version;
        if (previous && outcome.plan)
            cell.column.follows_previous =
                kernel::same_rules(outcome.plan->arch, previous->version, c.cell.version);
        previous = &c.cell;
        const auto& model = c.outcome.model;
        cell.column.page_size = model ? model->page_size : requested_page_size(c.cell).value_or(0);
        if (model) cell.column.alignment = model->cma_min_alignment_bytes;
        cell.column.notes = c.cell.change.notes;
        cell.unavailable = !c.cell.change.unavailable.empty();
        cell.has_model = model.has_value();
        cell.results = c.outcome.results;
        cells.push_back(std::move(cell));
    }
    return report::sweep_matrix(cells);
}

ExitCode SweepSuggestOutcome::exit_code() const {
    return worst_cell(*this, [](const SuggestOutcome& o) { return o.exit_code(); });
}

SweepSuggestOutcome run_suggest_sweep(const SuggestRequest& request, const SweepSpec& spec) {
    const RunScope run_scope; // pipes read once, files stamped once
    return run_cells<SweepSuggestOutcome>(
        request, spec, [](SuggestRequest& single) { return run_suggest(single); });
}

nlohmann::json sweep_suggest_json(const SweepSuggestOutcome& outcome) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& c : outcome.cells) {
        auto j = cell_entry(c.cell, c.outcome.model);
        if (c.cell.change.unavailable.empty()) j.update(suggest_json(c.outcome));
        entries.push_back(std::move(j));
    }
    return {{"sweep", entries}, {"errors", report::diagnostics_json(outcome.errors)}};
}

} // namespace cmalign
