// Log lines tied to a board's /reserved-memory nodes (see cmalign/bootlog/match.hpp).
#include "cmalign/bootlog/match.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

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
    case Event::unsupported_format:
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

// A line an init function prints when it takes the node: "initialized node" follows it in every
// version. The other lines naming no node are printed by a failing init.
bool printed_on_success(Event e) {
    return e == Event::created_cma_pool || e == Event::created_dma_pool ||
           e == Event::created_restricted_pool;
}

void attach_line(NodeLog& n, const reserved::Region& region, const Message& m) {
    n.lines.push_back(m);
    if (m.event == Event::region_listed && is_pool(region)) return;
    if (auto o = outcome_of(m.event); o && strength(*o) > strength(n.outcome)) n.outcome = *o;
}

class Matcher {
public:
    explicit Matcher(const std::vector<reserved::Region>& regions) : regions_(regions) {
        out_.nodes.resize(regions.size());
    }

    Matching run(const std::vector<Message>& messages) {
        for (std::size_t i = 0; i < messages.size(); ++i) {
            // rmem_cma_setup() follows a refused slot with "Reserved memory: unable to setup CMA
            // region" at once (kernel/dma/contiguous.c 5.10.223, 6.1.192, 6.12.117, 7.2.13); a
            // "Not enough slots" line without it is cma_declare_contiguous_nid()'s for the
            // default CMA area (mm/cma.c), which no node's init line follows.
            if (messages[i].event == Event::not_enough_slots &&
                (i + 1 == messages.size() || messages[i + 1].event != Event::unable_to_setup)) {
                out_.other.push_back(messages[i]);
                continue;
            }
            take(messages[i]);
        }
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
    std::vector<Message> orphans_; // failure lines an "initialized node" line passed over

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

    void attach(std::size_t i, const Message& m) { attach_line(out_.nodes[i], regions_[i], m); }

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
        if (m.event == Event::unsupported_format || m.event == Event::cmdline_failed) {
            out_.orphans.push_back(m);
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
        if (!init_line) {
            take_named_lines(m, {});
            return;
        }
        // A succeeding init printed only success lines; a failure line before it belongs to an
        // earlier node whose failure no line named (a 4.x kernel).
        std::vector<Message> own;
        for (auto& p : pending_) {
            if (m.event == Event::initialized_node && !printed_on_success(p.event))
                orphans_.push_back(std::move(p));
            else
                own.push_back(std::move(p));
        }
        pending_.clear();
        take_named_lines(m, own);
    }

    void take_named_lines(const Message& m, const std::vector<Message>& own) {
        bool any = false;
        for (const auto& name : m.nodes) {
            if (auto i = find_node(name)) {
                for (const auto& p : own)
                    attach(*i, p);
                attach(*i, m);
                any = true;
            }
        }
        if (!any) {
            out_.unmatched.insert(out_.unmatched.end(), own.begin(), own.end());
            out_.unmatched.push_back(m);
        }
    }

    // Lines no init line took (a truncated log, a 4.x kernel): a created pool is found by its
    // base; the rest are left to the caller.
    void place_pending_by_base() {
        orphans_.insert(orphans_.end(), pending_.begin(), pending_.end());
        pending_.clear();
        std::stable_sort(orphans_.begin(), orphans_.end(), [](const auto& a, const auto& b) {
            return a.line_number < b.line_number;
        });
        for (auto& p : orphans_) {
            std::optional<std::size_t> by_base;
            if (p.base && printed_on_success(p.event))
                for (std::size_t i = 0; i < regions_.size(); ++i)
                    if (regions_[i].base == p.base) by_base = i;
            if (by_base) {
                p.matched_by = fmt::format("its base {:#x} is this node's", *p.base);
                attach(*by_base, p);
            } else {
                out_.orphans.push_back(std::move(p));
            }
        }
        std::stable_sort(
            out_.orphans.begin(), out_.orphans.end(),
            [](const auto& a, const auto& b) { return a.line_number < b.line_number; });
    }
};

} // namespace

Matching match_nodes(const std::vector<Message>& messages,
                     const std::vector<reserved::Region>& regions) {
    return Matcher(regions).run(messages);
}

void attribute(Matching& matching, const std::vector<reserved::Region>& regions, std::size_t index,
               Message line) {
    auto& n = matching.nodes.at(index);
    attach_line(n, regions.at(index), line);
    std::stable_sort(n.lines.begin(), n.lines.end(),
                     [](const auto& a, const auto& b) { return a.line_number < b.line_number; });
}

} // namespace cmalign::bootlog
