#include "cmalign/core/interval.hpp"

#include <algorithm>
#include <cstdint>

namespace cmalign {

Interval Interval::of(std::uint64_t base, std::uint64_t size) {
    return {base, wraps(base, size) ? UINT64_MAX : base + size};
}

bool overlaps(Interval a, Interval b) {
    return a.begin < b.end && b.begin < a.end;
}

bool contains(Interval outer, Interval inner) {
    return inner.begin >= outer.begin && inner.end <= outer.end;
}

IntervalSet::IntervalSet(const std::vector<Interval>& ranges) {
    for (const auto& r : ranges)
        add(r);
}

void IntervalSet::add(Interval range) {
    if (range.empty()) return;
    // First span that ends at or after range.begin (touching counts: they merge).
    auto first = std::lower_bound(spans_.begin(), spans_.end(), range.begin,
                                  [](const Interval& s, std::uint64_t b) { return s.end < b; });
    auto last = first;
    while (last != spans_.end() && last->begin <= range.end) {
        range.begin = std::min(range.begin, last->begin);
        range.end = std::max(range.end, last->end);
        ++last;
    }
    first = spans_.erase(first, last);
    spans_.insert(first, range);
}

bool IntervalSet::covers(Interval range) const {
    return std::any_of(spans_.begin(), spans_.end(),
                       [&](const Interval& s) { return contains(s, range); });
}

std::uint64_t IntervalSet::largest_piece_within(Interval range) const {
    std::uint64_t best = 0;
    for (const auto& s : spans_) {
        std::uint64_t lo = std::max(range.begin, s.begin);
        std::uint64_t hi = std::min(range.end, s.end);
        if (hi > lo) best = std::max(best, hi - lo);
    }
    return best;
}

bool IntervalSet::has_span_of(std::uint64_t size) const {
    return std::any_of(spans_.begin(), spans_.end(),
                       [&](const Interval& s) { return s.length() >= size; });
}

} // namespace cmalign
