// A boot log's lines tied to the /reserved-memory nodes of a board, and what they show happened to
// each node (`cmalign explain`, `cmalign boot-check`).
//
// How lines reach nodes, following the order the kernel prints them in (v6.1, v6.12
// fdt_init_reserved_mem): lines that name a node go to it; lines that name none (rmem_cma_setup's
// "incorrect alignment", "created CMA memory pool", …) are printed by the init function of the
// node that the next "initialized node X" or "node X compatible matching fail" line names.
#pragma once

#include <vector>

#include "cmalign/bootlog/bootlog.hpp"
#include "cmalign/reserved/regions.hpp"

namespace cmalign::bootlog {

enum class NodeOutcome { created, rejected, failed, bypassed, absent };
const char* to_string(NodeOutcome outcome);

struct NodeLog {
    NodeOutcome outcome = NodeOutcome::absent;
    std::vector<Message> lines; // log order
};

struct Matching {
    std::vector<NodeLog> nodes;     // one per region, in the regions' order
    std::vector<Message> unmatched; // lines naming nodes the board does not have
    std::vector<Message> other;     // lines about no node (the cma= area, …)
};

// The messages of a log tied to the regions (the board's /reserved-memory nodes).
Matching match_nodes(const std::vector<Message>& messages,
                     const std::vector<reserved::Region>& regions);

} // namespace cmalign::bootlog
