// What the fix files share: the diagnostics fix writes, the edits of one value, how a value is
// written in cells, and where a grown pool may lie. Private to src/fix.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/core/interval.hpp"
#include "cmalign/fix/fix.hpp"
#include "cmalign/internal/dt/preprocess.hpp"

namespace cmalign::fix::detail {

// A diagnostic of fix (check cma-size-alignment unless the caller renames it).
Diagnostic make_diag(Severity severity, Location where, std::string node, std::string input,
                     std::string message, std::vector<FixHint> fix = {});

// The edits of one value (a size of one or more cells): one per chunk whose value changes, or a
// problem (an error diagnostic) when a changed chunk has no literal to rewrite.
struct ValueEdits {
    std::vector<Edit> edits;
    std::optional<Diagnostic> problem;
};

// literal.cpp: `value` written big-endian into the last min(length, 8) bytes of a copy of `old`
// (nullopt when it does not fit); "<0x0 0x2000000>"; the DTS edits of one value.
std::optional<std::vector<std::uint8_t>> encode(const std::vector<std::uint8_t>& old,
                                                std::uint64_t value);
std::string cells_text(std::uint64_t value, std::size_t length);
ValueEdits value_edits(const reserved::Region& r, const reserved::ValueRef& ref,
                       const std::vector<std::uint8_t>& value, std::uint64_t new_value,
                       const std::vector<std::uint8_t>& new_bytes, const std::string& input,
                       dt::FileCache& cache);

// plan_dtb.cpp: a .dtb/.dtbo read once, and the in-place edit of one value in it.
struct Blob {
    std::string bytes;
    std::vector<std::uint64_t> aligned; // the same bytes, aligned for libfdt
    bool valid = false;
};
Blob read_blob(const std::string& path);
ValueEdits blob_value_edit(const std::string& path, const std::string& node_path, const Blob& blob,
                           const reserved::Region& r, const reserved::ValueRef& ref,
                           std::uint64_t new_size, const std::vector<std::uint8_t>& new_bytes,
                           const std::string& input);

// placement.cpp
struct BaseCandidates {
    std::optional<std::uint64_t> below;
    std::optional<std::uint64_t> above;
};
// Nearest aligned bases below and above `base` where [c, c+size) lies in a /memory bank and
// overlaps no other reservation.
BaseCandidates aligned_bases(std::uint64_t base, std::uint64_t size, std::uint64_t alignment,
                             const std::vector<Interval>& occupied, const IntervalSet& memory);
// Every other reservation (all reg tuples except the region's own first one) and /memreserve/.
std::vector<Interval> occupied_except(const reserved::Reservations& rs, const reserved::Region& r);
// Why the grown pool could not be placed by the kernel (empty: it can).
std::string placement_problem(const reserved::Region& r, std::uint64_t new_size,
                              std::uint64_t alignment, const reserved::Reservations& rs,
                              const IntervalSet& memory);

} // namespace cmalign::fix::detail
