// build(): the Layout of one board from the facts of the other layers (see map.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "cmalign/internal/map/map_json.hpp"
#include "cmalign/map/map.hpp"

namespace cmalign::map {

const char* to_string(Status s) {
    switch (s) {
    case Status::ok:
        return "ok";
    case Status::warning:
        return "warning";
    case Status::rejected:
        return "rejected";
    case Status::inactive:
        return "inactive";
    }
    return "ok";
}

namespace {

constexpr std::uint64_t top = std::numeric_limits<std::uint64_t>::max();

std::uint64_t end_of(std::uint64_t base, std::uint64_t size) {
    return size > top - base ? top : base + size;
}

// Axis units of a piece of `length` bytes: grows with log2 of the length, so a 4 KiB entry
// and a 4 GiB bank both stay readable. Gaps outside every bank are a fixed broken-axis mark.
double height_of(std::uint64_t length, bool gap) {
    if (gap) return 2.0;
    const double mib = static_cast<double>(length) / (1024.0 * 1024.0);
    return 1.0 + 0.5 * std::log2(1.0 + mib);
}

std::string last_component(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

double Layout::y(std::uint64_t address) const {
    double acc = 0;
    for (const auto& s : axis) {
        if (address < s.begin) return acc;
        if (address < s.end) {
            const double fraction =
                static_cast<double>(address - s.begin) / static_cast<double>(s.end - s.begin);
            return acc + fraction * s.height;
        }
        acc += s.height;
    }
    return acc;
}

double Layout::height() const {
    double h = 0;
    for (const auto& s : axis)
        h += s.height;
    return h;
}

namespace {

std::vector<Bank> banks_of(const reserved::Reservations& rv) {
    std::vector<Bank> banks;
    for (const auto& bank : rv.memory) {
        Bank b;
        b.label = last_component(bank.path);
        b.base = bank.range.base;
        b.size = bank.range.size;
        for (const auto& other : banks)
            if (other.label == b.label) b.label += fmt::format(" #{}", banks.size() + 1);
        banks.push_back(std::move(b));
    }
    std::sort(banks.begin(), banks.end(),
              [](const Bank& a, const Bank& b) { return a.base < b.base; });
    return banks;
}

// A region as drawn: its status and why (the worst finding of the checks), whether its edges
// sit on the CMA grid, and what `fix` would make of it.
Block block_of(const reserved::Region& region, const checks::Result& result,
               const std::optional<std::uint64_t>& alignment,
               const std::optional<fix::Plan>& plan) {
    auto finding = [&](Severity severity) -> const Diagnostic* {
        for (const auto& d : result.diagnostics)
            if (d.node == region.path && d.severity == severity) return &d;
        return nullptr;
    };
    Block b;
    b.label = region.name;
    b.path = region.path;
    b.kind = reserved::to_string(region.kind);
    b.base = region.base;
    b.size = *region.size;
    b.no_map = region.no_map;
    b.reusable = region.reusable;
    if (const auto* e = finding(Severity::error)) {
        b.status = Status::rejected;
        b.reason = e->message;
    } else if (region.kind == reserved::Kind::inactive) {
        b.status = Status::inactive;
        b.reason = region.inactive_reason;
    } else if (const auto* w = finding(Severity::warning)) {
        b.status = Status::warning;
        b.reason = w->message;
    }
    if (region.kind == reserved::Kind::cma && alignment && *alignment) {
        if (b.base) b.base_aligned = *b.base % *alignment == 0;
        b.size_aligned = b.size % *alignment == 0;
    }
    if (plan) {
        for (const auto& e : plan->edits)
            if (e.node == region.path && e.new_value != e.old_value) b.fixed_size = e.new_value;
        for (const auto& d : plan->diagnostics)
            if (d.node == region.path && d.severity == Severity::error && b.fix_blocked.empty())
                b.fix_blocked = d.message;
    }
    return b;
}

// Every region with a size (placed or dynamic) and every /memreserve/ entry, placed ones in
// address order.
void add_blocks(const checks::Result& result, const std::optional<fix::Plan>& plan,
                Layout& layout) {
    const auto& rv = result.reservations;
    for (const auto& region : rv.regions) {
        if (!region.size) {
            layout.notes.push_back(
                fmt::format("{}: no size the kernel reads, not drawn", region.path));
            continue;
        }
        Block b = block_of(region, result, layout.alignment, plan);
        (b.base ? layout.placed : layout.dynamic).push_back(std::move(b));
    }
    // The default CMA area (cma= or CONFIG_CMA_SIZE_*) where the checks place it.
    if (const auto& area = result.default_area;
        area && (area->outcome == checks::DefaultArea::Outcome::created ||
                 area->outcome == checks::DefaultArea::Outcome::failed)) {
        Block b;
        b.label = fmt::format("default CMA area ({})", area->asked);
        b.kind = "cma";
        b.reusable = true;
        b.base = area->base;
        b.size = area->size ? area->size : area->requested;
        if (area->outcome == checks::DefaultArea::Outcome::failed) {
            b.status = Status::rejected;
            b.reason = area->reason;
        } else {
            layout.notes.push_back(fmt::format(
                "{}: placed where memblock finds room after the tree's reservations; the "
                "kernel's own early allocations (page tables, the memmap) may push it lower",
                b.label));
        }
        (b.base ? layout.placed : layout.dynamic).push_back(std::move(b));
    }
    int index = 0;
    for (const auto& m : rv.memreserve) {
        ++index;
        Block b;
        b.label = fmt::format("/memreserve/ {}", index);
        b.kind = "memreserve";
        b.base = m.address;
        b.size = m.size;
        layout.placed.push_back(std::move(b));
    }
    std::stable_sort(layout.placed.begin(), layout.placed.end(),
                     [](const Block& a, const Block& b) { return *a.base < *b.base; });
}

// Lanes: first lane whose last block ends at or before this one's base (fixed size counted, so
// the proposed extent does not hide a neighbour).
void assign_lanes(Layout& layout) {
    std::vector<std::uint64_t> lane_end;
    for (auto& b : layout.placed) {
        const std::uint64_t end = end_of(*b.base, std::max(b.size, b.fixed_size.value_or(0)));
        std::size_t lane = 0;
        while (lane < lane_end.size() && lane_end[lane] > *b.base)
            ++lane;
        if (lane == lane_end.size()) lane_end.push_back(0);
        lane_end[lane] = end;
        b.lane = static_cast<int>(lane);
    }
    layout.lanes = std::max<int>(1, static_cast<int>(lane_end.size()));
}

// The axis: every start and end cuts it.
std::vector<Segment> axis_of(const Layout& layout) {
    std::set<std::uint64_t> cuts;
    for (const auto& b : layout.banks) {
        cuts.insert(b.base);
        cuts.insert(end_of(b.base, b.size));
    }
    for (const auto& b : layout.placed) {
        cuts.insert(*b.base);
        cuts.insert(end_of(*b.base, b.size));
        if (b.fixed_size) cuts.insert(end_of(*b.base, *b.fixed_size));
    }
    auto covered_by_bank = [&](std::uint64_t lo, std::uint64_t hi) {
        for (const auto& b : layout.banks)
            if (b.base <= lo && hi <= end_of(b.base, b.size)) return true;
        return false;
    };
    auto covered_by_block = [&](std::uint64_t lo, std::uint64_t hi) {
        for (const auto& b : layout.placed) {
            const auto end = end_of(*b.base, std::max(b.size, b.fixed_size.value_or(0)));
            if (*b.base < hi && lo < end) return true;
        }
        return false;
    };
    std::vector<Segment> axis;
    if (cuts.size() < 2) return axis;
    auto it = cuts.begin();
    std::uint64_t prev = *it++;
    for (; it != cuts.end(); ++it) {
        Segment s;
        s.begin = prev;
        s.end = *it;
        s.in_memory = covered_by_bank(s.begin, s.end);
        s.gap = !s.in_memory && !covered_by_block(s.begin, s.end);
        s.height = height_of(s.end - s.begin, s.gap);
        axis.push_back(s);
        prev = *it;
    }
    return axis;
}

} // namespace

Layout build(const std::string& input, const checks::Result& result, const kernel::Model& model,
             const std::optional<fix::Plan>& plan) {
    Layout layout;
    layout.input = input;
    layout.arch = kernel::to_string(model.arch);
    layout.kernel_version = model.version.str();
    layout.page_size = model.page_size;
    layout.alignment = fix::required_alignment(model);
    layout.alignment_at_boot = !model.cma_min_alignment_bytes.has_value();
    for (const auto& step : model.derivation)
        if (step.quantity == "cma_min_alignment_bytes") layout.alignment_rule = step.rule;
    layout.errors = result.count(Severity::error);
    layout.warnings = result.count(Severity::warning);
    layout.banks = banks_of(result.reservations);
    add_blocks(result, plan, layout);
    assign_lanes(layout);
    layout.axis = axis_of(layout);
    if (layout.banks.empty())
        layout.notes.push_back("no /memory bank with a size: RAM cannot be drawn");
    if (!layout.alignment)
        layout.notes.push_back("the model gives no CMA alignment: no grid is drawn");
    return layout;
}

nlohmann::json to_json(const Layout& layout) {
    using nlohmann::json;
    json banks = json::array();
    for (const auto& b : layout.banks)
        banks.push_back({{"label", b.label}, {"base", b.base}, {"size", b.size}});
    auto opt = [](const auto& o) -> json { return o ? json(*o) : json(nullptr); };
    json blocks = json::array();
    for (const auto* list : {&layout.placed, &layout.dynamic})
        for (const auto& b : *list)
            blocks.push_back({{"label", b.label},
                              {"path", b.path},
                              {"kind", b.kind},
                              {"base", opt(b.base)},
                              {"size", b.size},
                              {"no_map", b.no_map},
                              {"reusable", b.reusable},
                              {"status", to_string(b.status)},
                              {"reason", b.reason},
                              {"base_aligned", opt(b.base_aligned)},
                              {"size_aligned", opt(b.size_aligned)},
                              {"fixed_size", opt(b.fixed_size)},
                              {"fix_blocked", b.fix_blocked},
                              {"lane", b.lane}});
    json axis = json::array();
    for (const auto& s : layout.axis)
        axis.push_back(
            {{"begin", s.begin}, {"end", s.end}, {"in_memory", s.in_memory}, {"gap", s.gap}});
    return {{"input", layout.input},
            {"arch", layout.arch},
            {"kernel_version", layout.kernel_version},
            {"page_size", layout.page_size},
            {"cma_alignment_bytes", opt(layout.alignment)},
            {"alignment_at_boot", layout.alignment_at_boot},
            {"banks", banks},
            {"blocks", blocks},
            {"axis", axis},
            {"notes", layout.notes},
            {"summary", {{"errors", layout.errors}, {"warnings", layout.warnings}}}};
}

} // namespace cmalign::map
