// Running `map` on one board: load the model and the tree, run the checks, plan the fix, and
// build the map::Layout the renderers draw. No output format here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cmalign/api.hpp"
#include "cmalign/map/map.hpp"
#include "cmalign/run.hpp"

namespace cmalign {

struct MapRequest {
    std::string input; // one .dts/.dtb board
    ConfigOptions config;
    TreeOptions tree;
    checks::Options checks; // -W/-E switches and --bootargs, as `check` takes them
};

struct MapOutcome {
    std::optional<kernel::Model> model;
    std::optional<map::Layout> layout;
    std::vector<Diagnostic> errors;             // configuration or input errors (exit 2)
    std::vector<Diagnostic> config_diagnostics; // warnings about the configuration
    // input_error: configuration or input error; findings: the kernel rejects something on the
    // map.
    ExitCode exit_code() const;
};

MapOutcome run_map(const MapRequest& request);

} // namespace cmalign
