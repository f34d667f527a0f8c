// Physical address ranges: the one place check and fix compute "inside /memory", "overlaps" and
// "largest piece of RAM", so the two can never disagree.
//
// Ends are exclusive and saturate at UINT64_MAX: a range written as base + size that wraps past
// 2^64 (a malformed reg) ends at the top of the address space instead of wrapping to a small
// number. Banks are merged when they overlap or touch ([a, b) and [b, c) are one span of RAM):
// memblock_add() merges adjacent regions the same way (mm/memblock.c memblock_merge_regions()),
// so a pool that spans two adjacent /memory banks lies in RAM.
#pragma once

#include <cstdint>
#include <vector>

namespace cmalign {

struct Interval {
    std::uint64_t begin = 0; // inclusive
    std::uint64_t end = 0;   // exclusive, saturated at UINT64_MAX

    // [base, base + size), the end saturated instead of wrapping.
    static Interval of(std::uint64_t base, std::uint64_t size);
    std::uint64_t length() const { return end - begin; }
    bool empty() const { return end <= begin; }
    // True when base + size did not fit 64 bits (the end was saturated).
    static bool wraps(std::uint64_t base, std::uint64_t size) { return base + size < base; }
    friend bool operator==(const Interval&, const Interval&) = default;
};

bool overlaps(Interval a, Interval b);
bool contains(Interval outer, Interval inner);

// Disjoint, sorted spans: every range added is merged with those it overlaps or touches.
class IntervalSet {
public:
    IntervalSet() = default;
    explicit IntervalSet(const std::vector<Interval>& ranges);

    void add(Interval range); // empty ranges are ignored
    const std::vector<Interval>& spans() const { return spans_; }
    bool empty() const { return spans_.empty(); }

    // `range` lies entirely inside one merged span.
    bool covers(Interval range) const;
    // The longest part of `range` inside the set (memblock allocates from range ∩ memory).
    std::uint64_t largest_piece_within(Interval range) const;
    // Some span is at least `size` long.
    bool has_span_of(std::uint64_t size) const;
    // The end of the highest span (0 when empty).
    std::uint64_t top() const { return spans_.empty() ? 0 : spans_.back().end; }

private:
    std::vector<Interval> spans_;
};

} // namespace cmalign
