// Log lines tied to a board's /reserved-memory nodes (see cmalign/bootlog/match.hpp).
#include "cmalign/bootlog/match.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

namespace cmalign::bootlog {

const char* to_string(NodeOutcome outcome) {
    switch (outcome) {
    case NodeOutcome::created:
        return "created";
    case NodeOutcome::rejected:
        return "rejected";
    case NodeOutcome::failed:
        return "failed";
    case NodeOutcome::bypassed:
        return "bypassed";
    case NodeOutcome::absent:
        return "absent";
    }
    return "absent";
}

namespace {

std::string without_unit(std::string_view name) {
    auto at = name.find('@');
    return std::string(name.substr(0, at));
}

// What a line says about its node's fate; stronger outcomes win (the kernel's last word on a
// pool: "could not be activated" after "created").
int strength(NodeOutcome o) {
    switch (o) {
    case NodeOutcome::absent:
        return 0;
    case NodeOutcome::created:
        return 1;
    case NodeOutcome::failed:
        return 2;
    case NodeOutcome::rejected:
        return 3;
    case NodeOutcome::bypassed:
        return 4;
    }
    return 0;
}

std::optional<NodeOutcome> outcome_of(Event e) {
    switch (e) {
    case Event::created_cma_pool:
    case Event::created_dma_pool:
    case Event::created_restricted_pool:
    case Event::initialized_node:
    case Event::region_listed:
        return NodeOutcome::created;
    case Event::incorrect_alignment:
        return NodeOutcome::rejected;
    case Event::bypass_cmdline:
    case Event::skipping_cma_default:
        return NodeOutcome::bypassed;
    case Event::unable_to_setup:
    case Event::matching_fail:
    case Event::failed_to_allocate:
    case Event::failed_to_reserve:
    case Event::invalid_reg:
    case Event::invalid_size:
    case Event::invalid_alignment:
    case Event::invalid_alloc_ranges:
    case Event::too_many_dynamic:
    case Event::not_enough_slots:
    case Event::not_activated:
    case Event::coherent_needs_no_map:
        return NodeOutcome::failed;
    default:
        return std::nullopt;
    }
}

// The region line ("BASE..END (K KiB) map reusable NAME", v6.12+) is printed for every region the
// init functions did not fail, also when none of them took it (-ENOENT/-ENODEV:
// fdt_init_reserved_mem_node(), v6.12 and v7.2): for a pool it says the memory stays reserved,
// not that a pool exists (v7.2 declines reusable + no-map that way, silently).
bool is_pool(const reserved::Region& r) {
    return r.declared_kind == reserved::Kind::cma || r.declared_kind == reserved::Kind::coherent ||
           r.declared_kind == reserved::Kind::restricted || r.shared_dma_pool;
}

class Matcher {
public:
    explicit Matcher(const std::vector<reserved::Region>& regions) : regions_(regions) {
        out_.nodes.resize(regions.size());
    }

    Matching run(const std::vector<Message>& messages) {
        for (const auto& m : messages)
            take(m);
        place_pending_by_base();
        for (auto& n : out_.nodes)
            std::stable_sort(n.lines.begin(), n.lines.end(), [](const auto& a, const auto& b) {
                return a.line_number < b.line_number;
            });
        return std::move(out_);
    }

private:
    const std::vector<reserved::Region>& regions_;
    Matching out_;
    std::vector<Message> pending_; // lines naming no node, waiting for their init line

    // The node the kernel's name stands for.
    std::optional<std::size_t> find_node(const std::string& name) const {
        for (std::size_t i = 0; i < regions_.size(); ++i)
            if (regions_[i].name == name) return i;
        // The kernel prints the full name; a log of a board whose unit address moved still names
        // the same node when only one node has that base name.
        std::optional<std::size_t> only;
        for (std::size_t i = 0; i < regions_.size(); ++i) {
            if (without_unit(regions_[i].name) != without_unit(name)) continue;
            if (only) return std::nullopt;
            only = i;
        }
        return only;
    }

    void attach(std::size_t i, const Message& m) {
        auto& n = out_.nodes[i];
        n.lines.push_back(m);
        if (m.event == Event::region_listed && is_pool(regions_[i])) return;
        if (auto o = outcome_of(m.event); o && strength(*o) > strength(n.outcome)) n.outcome = *o;
    }

    void take(const Message& m) {
        if (m.event == Event::skipping_cma_default) {
            // About the board's linux,cma-default pool, which the line does not name.
            bool any = false;
            for (std::size_t i = 0; i < regions_.size(); ++i)
                if (regions_[i].cma_default) {
                    attach(i, m);
                    any = true;
                }
            if (!any) out_.unmatched.push_back(m);
            return;
        }
        if (names_no_node(m.event)) {
            pending_.push_back(m);
            return;
        }
        if (m.nodes.empty()) {
            out_.other.push_back(m);
            return;
        }
        take_named(m);
    }

    void take_named(const Message& m) {
        bool init_line = m.event == Event::initialized_node || m.event == Event::matching_fail;
        bool any = false;
        for (const auto& name : m.nodes) {
            if (auto i = find_node(name)) {
                if (init_line)
                    for (const auto& p : pending_)
                        attach(*i, p);
                attach(*i, m);
                any = true;
            }
        }
        if (!any) {
            if (init_line)
                out_.unmatched.insert(out_.unmatched.end(), pending_.begin(), pending_.end());
            out_.unmatched.push_back(m);
        }
        if (init_line) pending_.clear();
    }

    // Lines no init line followed (a truncated log): a created pool is found by its base.
    void place_pending_by_base() {
        for (const auto& p : pending_) {
            std::optional<std::size_t> by_base;
            if (p.base)
                for (std::size_t i = 0; i < regions_.size(); ++i)
                    if (regions_[i].base == p.base) by_base = i;
            if (by_base)
                attach(*by_base, p);
            else
                out_.other.push_back(p);
        }
    }
};

} // namespace

Matching match_nodes(const std::vector<Message>& messages,
                     const std::vector<reserved::Region>& regions) {
    return Matcher(regions).run(messages);
}

} // namespace cmalign::bootlog
