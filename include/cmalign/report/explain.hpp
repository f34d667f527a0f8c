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
#include "cmalign/checks/checks.hpp"
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

// The default CMA area (cma= or CONFIG_CMA_SIZE_*): check's prediction (checks::DefaultArea)
// next to the "cma: " lines of the log no node took.
struct DefaultAreaExplanation {
    std::string asked;     // "cma=64M", "CONFIG_CMA_SIZE_MBYTES=16"
    std::string predicted; // checks::to_string(DefaultArea::Outcome)
    std::optional<std::uint64_t> predicted_base;
    std::uint64_t predicted_size = 0;
    std::vector<std::string> predicted_lines;
    std::string reason;          // check's why, for a failure or no area
    std::string kernel = "none"; // "created", "failed", "none" (no such line in the log)
    std::optional<std::uint64_t> kernel_base;
    std::optional<std::uint64_t> kernel_size; // as the line prints it (MiB)
    std::vector<bootlog::Message> log;
    bool agree = true; // created ⇔ created; failed ⇔ failed; no area ⇔ no line
};
// Ties the lines about no node (Explanation::other) to the default area check predicts; they
// stay in `other` too.
DefaultAreaExplanation explain_default_area(const checks::DefaultArea& area,
                                            const std::vector<bootlog::Message>& other);

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
    std::optional<DefaultAreaExplanation> default_area; // with CONFIG_DMA_CMA
    std::vector<Diagnostic> errors;                     // unreadable log or board, configuration
    std::vector<std::string> notes;
};

// The text `cmalign explain` prints.
std::string explain_text(const Explanation& explanation);

// A CMA alignment in words: the size, or "decided at boot" (pageblock_order set at boot).
std::string alignment_text(const std::optional<std::uint64_t>& alignment);

} // namespace cmalign::report
