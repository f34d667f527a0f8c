// `cmalign explain LOG BOARD`: what a boot log shows happened to each /reserved-memory node of a
// board, why (the finding `check` gives for the kernel version the log names), and the fix
// (`fix`'s plan). The log is read by bootlog::parse and its lines tied to the board's nodes by
// bootlog::match_nodes (cmalign/bootlog/match.hpp).
#pragma once

#include <string>

#include "cmalign/bootlog/match.hpp"
#include "cmalign/report/explain.hpp"
#include "cmalign/run.hpp"

namespace cmalign {

struct ExplainRequest {
    std::string log_path;
    std::string board;    // .dts/.dtb
    ConfigOptions config; // kernel_version, when given, overrides the log's
    TreeOptions tree;
    checks::Options checks;
};

using bootlog::NodeOutcome;
using bootlog::to_string;

using report::NodeExplanation;

// The explanation (report/explain.hpp) and the exit status of the command.
struct ExplainOutcome : report::Explanation {
    // input_error: errors; findings: the log shows a pool lost (rejected or failed) or check
    // finds an error.
    ExitCode exit_code() const;
};

ExplainOutcome run_explain(const ExplainRequest& request);

std::string explain_text(const ExplainOutcome& outcome);

} // namespace cmalign
