// The request readers: a JSON object whose keys are those of the command's definition
// (cmalign/internal/commands.hpp) → the typed request its run_*() takes, with every check of the
// values. The C API and Python hand in the caller's request (json_api.cpp); the CLI collects its
// parsed command line under the same keys (src/cli/invocation.cpp). One reader per command, so both
// front ends accept and refuse exactly the same things.
//
// A bad request throws cmalign::Error naming the option in the caller's words: the key for a
// JSON request ("<request>: error: check: 'jobs' must be ..."), the flag on the command line
// ("cmalign check: error: --jobs must be ...").
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp> // IWYU pragma: export (callers take the JSON apart)

#include "cmalign/api.hpp"
#include "cmalign/boot_check.hpp"
#include "cmalign/explain.hpp"
#include "cmalign/internal/commands.hpp"
#include "cmalign/run.hpp"
#include "cmalign/run_fix.hpp"
#include "cmalign/run_map.hpp"
#include "cmalign/sweep.hpp"
#include "cmalign/tune.hpp"

namespace cmalign {

// Who wrote the request: the words its errors use.
enum class Caller { json, cli };

// An option as the caller names it: 'jobs' (JSON), --jobs (the command line; its long flag,
// else its short one, a positional by its key).
std::string option_name(const OptionDefinition& option, Caller caller);

// check and suggest run once, or once per cell of a sweep.
struct CheckCommand {
    CheckRequest request;
    std::optional<SweepSpec> sweep;
};
struct SuggestCommand {
    SuggestRequest request;
    std::optional<SweepSpec> sweep;
};

ConfigOptions read_calc_request(const nlohmann::json& request, Caller caller);
TableRequest read_table_request(const nlohmann::json& request, Caller caller);
ConfigOptions read_config_request(const nlohmann::json& request, Caller caller);
CheckCommand read_check_request(const nlohmann::json& request, Caller caller);
TreeRequest read_tree_request(const nlohmann::json& request, Caller caller);
FixRequest read_fix_request(const nlohmann::json& request, Caller caller);
SuggestCommand read_suggest_request(const nlohmann::json& request, Caller caller);
PcpRequest read_pcp_request(const nlohmann::json& request, Caller caller);
HeapRequest read_heap_request(const nlohmann::json& request, Caller caller);
MapRequest read_map_request(const nlohmann::json& request, Caller caller);
ExplainRequest read_explain_request(const nlohmann::json& request, Caller caller);
BootCheckRequest read_boot_check_request(const nlohmann::json& request, Caller caller);

} // namespace cmalign
