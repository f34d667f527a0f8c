// A boot log's lines tied to the /reserved-memory nodes of a board, and what they show happened to
// each node (`cmalign explain`, `cmalign boot-check`).
//
// How lines reach nodes, following the order the kernel prints them in (v6.1, v6.12
// fdt_init_reserved_mem): lines that name a node go to it; lines that name none (rmem_cma_setup's
// "incorrect alignment", "created CMA memory pool", …) are printed by the init function of the
// node that the next "initialized node X" or "node X compatible matching fail" line names. A
// failed init is followed by "compatible matching fail" only since that line exists (5.4.286 and
// 5.10 print it [likely since v5.x]; a 4.x fdt_init_reserved_mem() ignores the init's result and
// prints nothing naming the node), so a failure line ("incorrect alignment") is never given to
// the next "initialized node": that node's init succeeded. Lines no init line or base claims are
// left for the caller, who knows which nodes can have caused them (`orphans`, attribute()).
#pragma once

#include <cstddef>
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
    // Lines that name no node and that no init line or base tied to one: a failed init's line
    // (no "compatible matching fail" after it: a 4.x kernel, a cut log), "unsupported node
    // format" (about /reserved-memory itself) and "cma: Failed to reserve" (the cma= area).
    std::vector<Message> orphans;
};

// The messages of a log tied to the regions (the board's /reserved-memory nodes).
Matching match_nodes(const std::vector<Message>& messages,
                     const std::vector<reserved::Region>& regions);

// Ties `line` to region `index` (its `matched_by` says how), with what it shows happened.
void attribute(Matching& matching, const std::vector<reserved::Region>& regions, std::size_t index,
               Message line);

} // namespace cmalign::bootlog
