// `cmalign explain LOG BOARD`: what a boot log shows happened to each /reserved-memory node of a
// board, why (the finding `check` gives for the kernel version the log names), and the fix
// (`fix`'s plan). The log is read by bootlog::parse and its lines tied to the board's nodes by
// bootlog::match_nodes (cmalign/bootlog/match.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cmalign/bootlog/bootlog.hpp"
#include "cmalign/bootlog/match.hpp"
#include "cmalign/fix/fix.hpp"
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

struct NodeExplanation {
    std::string node; // DT path
    std::string name; // as the kernel prints it (node name with unit address)
    Location where;
    NodeOutcome outcome = NodeOutcome::absent;
    std::vector<bootlog::Message> log;
    std::vector<Diagnostic> findings;   // check's findings for the node, in check's order
    std::optional<Diagnostic> finding;  // the one that explains the outcome (first error)
    std::string message;                // why, in words
    std::vector<fix::Edit> edits;       // fix's plan for the node
    std::vector<Diagnostic> fix_issues; // what fix could not do for the node
};

struct ExplainOutcome {
    bootlog::Log log;
    std::optional<KernelVersion> version;
    std::string version_source; // "log line 3", "--kernel-version", "the configuration"
    std::optional<kernel::Model> model;
    std::vector<NodeExplanation> nodes;      // board order
    std::vector<bootlog::Message> unmatched; // lines naming nodes the board does not have
    std::vector<bootlog::Message> other;     // lines about no node (the cma= area, …)
    std::vector<Diagnostic> errors;          // unreadable log or board, no version, config
    std::vector<std::string> notes;
    // input_error: errors; findings: the log shows a pool lost (rejected or failed) or check
    // finds an error.
    ExitCode exit_code() const;
};

ExplainOutcome run_explain(const ExplainRequest& request);

std::string explain_text(const ExplainOutcome& outcome);

} // namespace cmalign
