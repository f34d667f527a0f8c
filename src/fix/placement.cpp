// Where a pool may lie: the nearest aligned bases for a misaligned static pool, and whether a
// grown pool still fits its place (no overlap, inside /memory, inside alloc-ranges).
#include <algorithm>

#include <fmt/format.h>

#include "cmalign/internal/core/amount.hpp"
#include "cmalign/internal/fix/detail.hpp"

namespace cmalign::fix::detail {

using reserved::Region;

// Conflicts are jumped over, so the search is short.
BaseCandidates aligned_bases(std::uint64_t base, std::uint64_t size, std::uint64_t alignment,
                             const std::vector<Interval>& occupied, const IntervalSet& memory) {
    auto in_memory = [&](std::uint64_t c) {
        if (memory.empty()) return true; // nothing to hold it against: say so in the message
        if (Interval::wraps(c, size)) return false;
        return memory.covers(Interval::of(c, size));
    };
    auto conflict = [&](std::uint64_t c) -> const Interval* {
        auto want = Interval::of(c, size);
        for (const auto& o : occupied)
            if (overlaps(want, o)) return &o;
        return nullptr;
    };
    constexpr int max_steps = 1 << 16;
    BaseCandidates out;
    // Downwards.
    std::uint64_t c = base - base % alignment;
    for (int step = 0; step < max_steps; ++step) {
        const Interval* hit = conflict(c);
        if (!hit && in_memory(c)) {
            out.below = c;
            break;
        }
        std::uint64_t next;
        if (hit) {
            if (hit->begin < size) break;
            next = hit->begin - size;
            next -= next % alignment;
        } else {
            if (c < alignment) break;
            next = c - alignment;
        }
        if (next >= c) break;
        c = next;
    }
    // Upwards.
    auto up = round_up(base, alignment);
    if (up && *up == base)
        up = base + alignment < base ? std::nullopt : std::optional(base + alignment);
    if (up) {
        c = *up;
        for (int step = 0; step < max_steps; ++step) {
            const Interval* hit = conflict(c);
            if (!hit && in_memory(c)) {
                out.above = c;
                break;
            }
            std::optional<std::uint64_t> next =
                hit ? round_up(hit->end, alignment)
                    : (c + alignment < c ? std::nullopt : std::optional(c + alignment));
            if (!next || *next <= c) break;
            bool beyond_memory = !memory.empty() && *next >= memory.top();
            if (beyond_memory) break;
            c = *next;
        }
    }
    return out;
}

std::vector<Interval> occupied_except(const reserved::Reservations& rs, const Region& r) {
    std::vector<Interval> occupied;
    for (const auto& other : rs.regions) {
        for (std::size_t i = 0; i < other.reg.size(); ++i) {
            if (&other == &r && i == 0) continue;
            if (other.reg[i].size)
                occupied.push_back(Interval::of(other.reg[i].base, other.reg[i].size));
        }
    }
    for (const auto& m : rs.memreserve)
        if (m.size) occupied.push_back(Interval::of(m.address, m.size));
    return occupied;
}

// Why the grown pool could not be placed by the kernel (empty: it can). A fix that trades a
// misaligned pool for one the kernel cannot reserve is no fix, so such a board is left alone.
std::string placement_problem(const Region& r, std::uint64_t new_size, std::uint64_t alignment,
                              const reserved::Reservations& rs, const IntervalSet& memory) {
    if (!r.dynamic && r.base) {
        auto want = Interval::of(*r.base, new_size);
        for (const auto& o : occupied_except(rs, r))
            if (overlaps(want, o))
                return fmt::format("the grown pool {}..{} would overlap the reservation at {}",
                                   hex(want.begin), hex(want.end), hex(o.begin));
        // Adjacent banks are one span of RAM, as for the outside-memory check.
        if (!memory.empty() && !memory.covers(want))
            return fmt::format("the grown pool {}..{} would reach outside /memory", hex(want.begin),
                               hex(want.end));
        return {};
    }
    if (!r.alloc_ranges.empty()) {
        // __reserved_mem_alloc_size(): align = max(alignment property, CMA alignment).
        std::uint64_t align = std::max(alignment, r.alignment.value_or(0));
        for (const auto& range : r.alloc_ranges) {
            auto start = round_up(range.base, align);
            auto end = Interval::of(range.base, range.size).end;
            if (start && *start <= end && end - *start >= new_size) return {};
        }
        return fmt::format("no alloc-ranges window holds {} at a {}-aligned address: widen "
                           "alloc-ranges, or keep the size and change the configuration "
                           "(cmalign suggest)",
                           format_size(new_size), format_size(align));
    }
    if (!memory.empty() && !memory.has_span_of(new_size))
        return fmt::format("no /memory bank is as large as {}", format_size(new_size));
    return {};
}

} // namespace cmalign::fix::detail
