// run_calc(), run_table() and run_config() (cmalign/api.hpp): the commands that are one library
// call each, as outcomes the CLI prints and run_json() answers with.
#include <algorithm>

#include "cmalign/api.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/report/json_text.hpp"
#include "cmalign/internal/run_inputs.hpp"

namespace cmalign {

CalcOutcome run_calc(const ConfigOptions& options) {
    const RunScope run_scope; // pipes read once, files stamped once
    CalcOutcome out;
    out.model = load_model(options, out.diags);
    return out;
}

std::vector<Diagnostic> CalcOutcome::reading_diagnostics() const {
    std::vector<Diagnostic> out;
    for (const auto& d : diags.items()) {
        bool in_model =
            model &&
            std::any_of(model->diagnostics.begin(), model->diagnostics.end(), [&](const auto& m) {
                return m.message == d.message && m.where == d.where;
            });
        if (!in_model) out.push_back(d);
    }
    return out;
}

ExitCode CalcOutcome::exit_code() const {
    return model && !diags.has_errors() ? ExitCode::clean : ExitCode::input_error;
}

TableOutcome run_table(const TableRequest& request) {
    const RunScope run_scope; // pipes read once, files stamped once
    TableOutcome out;
    out.arch = arch_option(request.arch, out.diags);
    if (!out.arch) return out;
    out.version = table_version(request.kernel_version, request.kernel_tree, out.diags);
    if (out.version) out.rows = kernel::table(*out.arch, *out.version);
    return out;
}

ExitCode TableOutcome::exit_code() const {
    return arch && version ? ExitCode::clean : ExitCode::input_error;
}

ConfigOutcome run_config(const ConfigOptions& options) {
    const RunScope run_scope; // pipes read once, files stamped once
    ConfigOutcome out;
    out.evaluation = evaluate_config(options, out.diags);
    return out;
}

ExitCode ConfigOutcome::exit_code() const {
    return evaluation && !diags.has_errors() ? ExitCode::clean : ExitCode::input_error;
}

} // namespace cmalign
