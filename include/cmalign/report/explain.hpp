// What `cmalign explain` found, as the report layer renders it (text here, JSON in the private
// report/json.hpp): for each /reserved-memory node of a board, what the boot log shows the kernel
// did, why (check's finding), and the fix. ExplainOutcome (cmalign/explain.hpp) is this plus its
// exit status.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/bootlog/bootlog.hpp"
#include "cmalign/bootlog/match.hpp"
#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/version.hpp"
#include "cmalign/fix/fix.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::report {

struct NodeExplanation {
    std::string node; // DT path
    std::string name; // as the kernel prints it (node name with unit address)
    Location where;
    bootlog::NodeOutcome outcome = bootlog::NodeOutcome::absent;
    std::vector<bootlog::Message> log;
    // check's findings that concern the node, in check's order: those on the node, on its parent
    // /reserved-memory (reserved-memory-format), and those elsewhere (the command line, /memory)
    // that name it.
    std::vector<Diagnostic> findings;
    std::optional<Diagnostic> finding;  // the one that explains the outcome (first error)
    std::string message;                // why, in words
    std::vector<fix::Edit> edits;       // fix's plan for the node
    std::vector<Diagnostic> fix_issues; // what fix could not do for the node
};

struct Explanation {
    bootlog::Log log;
    std::optional<KernelVersion> version;
    std::string version_source; // "log line 3", "--kernel-version", "the configuration"
    std::optional<kernel::Model> model;
    std::vector<NodeExplanation> nodes;      // board order
    std::vector<bootlog::Message> unmatched; // lines naming nodes the board does not have
    std::vector<bootlog::Message> other;     // lines about no node (the cma= area, …)
    // Lines naming no node that no node alone can have caused (bootlog::Matching::orphans
    // explain could not attribute).
    std::vector<bootlog::Message> unexplained;
    // check's findings that concern no /reserved-memory node (the command line, /memory, …).
    std::vector<Diagnostic> board_findings;
    std::vector<Diagnostic> errors; // unreadable log or board, configuration
    std::vector<std::string> notes;
};

// The text `cmalign explain` prints.
std::string explain_text(const Explanation& explanation);

// A CMA alignment in words: the size, or "decided at boot" (pageblock_order set at boot).
std::string alignment_text(const std::optional<std::uint64_t>& alignment);

} // namespace cmalign::report
