// The matrix of a check sweep: one pool per row of the legend, one (version, page size) per
// column, rendered for a terminal. Data in, text out; the sweep decides what is in the cells.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cmalign/checks/checks.hpp"
#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/version.hpp"

namespace cmalign::report {

enum class PoolState {
    ok,          // the kernel creates the pool
    rejected,    // an error-level finding: the kernel does not create it as written
    warning,     // created, with a warning
    not_a_pool,  // in this combination the node is no pool (CMA off, ...)
    unavailable, // the version does not offer the page size
    failed,      // the configuration or the input could not be used
};
const char* to_string(PoolState state);

struct SweepPool {
    std::string input;
    std::string node; // DT path
    Location where;
};

struct SweepColumn {
    KernelVersion version;
    std::uint64_t page_size = 0;
    std::optional<std::uint64_t> alignment; // CMA_MIN_ALIGNMENT_BYTES; nullopt: decided at boot
    std::vector<std::string> notes;         // config symbols dropped/ignored in this version
    // No rule changes between the previous column's version and this one, so a row may span
    // both ("v6.4–v6.9") without hiding a version that was not checked.
    bool follows_previous = false;
};

struct SweepMatrix {
    std::vector<SweepPool> pools;
    std::vector<SweepColumn> columns;
    std::vector<std::vector<PoolState>> cells;              // [pool][column]
    std::vector<std::vector<std::string>> rejecting_checks; // [pool][column]: "a,b" checks
};

// One (version, page size) cell of a check sweep as the matrix reads it.
struct SweepCellResults {
    SweepColumn column;       // alignment unset when there is no model
    bool unavailable = false; // the version does not offer the page size
    bool has_model = false;   // false: the configuration could not be used
    std::span<const checks::Result> results;
};

// Pools: every region that is a pool (cma, coherent, restricted) or has an error in some cell, in
// document order of the first cell that lists it; each cell's state from the checks' findings.
SweepMatrix sweep_matrix(std::span<const SweepCellResults> cells);

// Per pool and page size: the first version (column order) whose cell is `rejected`.
std::optional<KernelVersion> first_rejecting_version(const SweepMatrix& m, std::size_t pool,
                                                     std::uint64_t page_size);

// A legend of pools (letter, node, file:line, first rejecting version per page size), then one
// row per run of consecutive versions with the same page size, alignment, notes and cells, one
// column per pool, then the notes. Lines fit `width` columns (more pools: more tables).
std::string render_sweep_text(const SweepMatrix& m, std::size_t width = 80);

} // namespace cmalign::report
