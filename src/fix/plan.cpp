// Planning size fixes: which CMA pools must grow, to what, whether the board can take it, and
// the edits (in DTS source or in the blob) that do it.
#include <map>

#include <fmt/format.h>

#include "cmalign/checks/checks.hpp"
#include "cmalign/internal/core/amount.hpp"
#include "cmalign/internal/fix/detail.hpp"
#include "cmalign/internal/fix/plan.hpp"

namespace cmalign::fix {

using namespace detail;
using reserved::Kind;
using reserved::Region;
using reserved::ValueRef;

namespace detail {

Diagnostic make_diag(Severity severity, Location where, std::string node, std::string input,
                     std::string message, std::vector<FixHint> fix) {
    Diagnostic d;
    d.severity = severity;
    d.where = std::move(where);
    d.check = "cma-size-alignment";
    d.node = std::move(node);
    d.input = std::move(input);
    d.message = std::move(message);
    d.fix = std::move(fix);
    return d;
}

} // namespace detail

std::optional<std::uint64_t> required_alignment(const kernel::Model& model) {
    auto facts = checks::alignment_facts(model);
    if (facts.exact) return facts.exact;
    return facts.largest;
}

namespace {

// Everything except the edit itself that is common to DTS and DTB planning.
template <typename MakeEdits>
Plan plan_common(const dt::Tree& tree, const reserved::Reservations& rs, std::uint64_t alignment,
                 MakeEdits make_edits) {
    Plan plan;
    // A size that cannot be fixed without breaking the board (overflow, no room once grown):
    // the board gets no edit at all.
    bool blocking = false;
    std::vector<Diagnostic> edit_notes; // "written in an included file", only for edits kept
    IntervalSet memory;
    for (const auto& m : rs.memory)
        memory.add(Interval::of(m.range.base, m.range.size));

    for (const auto& r : rs.regions) {
        if (r.kind != Kind::cma) continue;
        std::uint64_t size = r.size.value_or(0);
        std::optional<std::uint64_t> new_size;
        if (r.size && r.size_ref && size % alignment != 0) {
            const ValueRef& ref = *r.size_ref;
            new_size = round_up(size, alignment);
            const dt::Node* node = tree.find(r.path);
            const dt::Property* prop = node ? node->find_property(ref.property) : nullptr;
            if (!new_size) {
                plan.diagnostics.push_back(make_diag(
                    Severity::error, ref.where, r.path, rs.input,
                    fmt::format("CMA pool size {} rounded up to a multiple of {} exceeds 64 bits",
                                amount(size), amount(alignment))));
                plan.unfixable = true;
                blocking = true;
            } else if (ref.overflowed || ref.length == 0 || !prop ||
                       ref.offset + ref.length > prop->value.size()) {
                plan.diagnostics.push_back(make_diag(
                    Severity::error, ref.where, r.path, rs.input,
                    fmt::format("CMA pool size {} must become {}, but its {} property is not "
                                "one plain value fix can rewrite",
                                amount(size), amount(*new_size), ref.property)));
                plan.unfixable = true;
                blocking = true;
            } else {
                std::vector<std::uint8_t> old_bytes(
                    prop->value.begin() + static_cast<std::ptrdiff_t>(ref.offset),
                    prop->value.begin() + static_cast<std::ptrdiff_t>(ref.offset + ref.length));
                auto new_bytes = encode(old_bytes, *new_size);
                if (!new_bytes) {
                    plan.diagnostics.push_back(make_diag(
                        Severity::error, ref.where, r.path, rs.input,
                        fmt::format("CMA pool size {} must become {}, which does not fit in {} "
                                    "cell{} of {}: nothing written (use #size-cells = <2> or a "
                                    "smaller pool)",
                                    amount(size), amount(*new_size), ref.length / 4,
                                    ref.length / 4 == 1 ? "" : "s", ref.property),
                        {{ref.property, size, *new_size}}));
                    plan.unfixable = true;
                    blocking = true;
                } else if (auto placement = placement_problem(r, *new_size, alignment, rs, memory);
                           !placement.empty()) {
                    plan.diagnostics.push_back(make_diag(
                        Severity::error, ref.where, r.path, rs.input,
                        fmt::format("CMA pool size {} must become {}, but {}: nothing written",
                                    amount(size), amount(*new_size), placement),
                        {{ref.property, size, *new_size}}));
                    plan.unfixable = true;
                    blocking = true;
                } else {
                    auto made = make_edits(r, ref, *prop, *new_size, *new_bytes);
                    if (made.problem) {
                        // Written with a macro or an expression: this size is reported with the
                        // value to write; the other pools of the board are still fixed.
                        plan.diagnostics.push_back(std::move(*made.problem));
                        plan.unfixable = true;
                    }
                    for (auto& e : made.edits) {
                        // An included .dtsi, or an overlay (--overlay) that wrote the size.
                        if (!e.binary && e.file != tree.input)
                            edit_notes.push_back(make_diag(
                                Severity::note, e.where, r.path, rs.input,
                                fmt::format("the size of {} is written in {}, not in the board "
                                            "file: {} → {} changes every board that includes it "
                                            "or applies it as an overlay",
                                            r.path, e.file, e.old_text, e.new_text)));
                        plan.edits.push_back(std::move(e));
                    }
                }
            }
        }

        // A static base is never moved: report it with the nearest usable aligned bases.
        if (!r.dynamic && r.base && r.base_ref && *r.base % alignment != 0) {
            auto occupied = occupied_except(rs, r);
            std::uint64_t want = new_size.value_or(size);
            auto c = aligned_bases(*r.base, want, alignment, occupied, memory);
            std::string options;
            if (c.below) options += fmt::format("{} (below)", hex(*c.below));
            if (c.above)
                options +=
                    fmt::format("{}{} (above)", options.empty() ? "" : " or ", hex(*c.above));
            if (options.empty()) options = "none: no aligned place inside /memory overlaps nothing";
            Diagnostic d = make_diag(
                Severity::error, r.base_ref->where, r.path, rs.input,
                fmt::format("CMA pool base {} is not a multiple of {}; fix never moves a base. "
                            "The nearest aligned bases for {} that lie inside /memory{} and "
                            "overlap no other reservation: {}",
                            hex(*r.base), amount(alignment), format_size(want),
                            memory.empty() ? " (the tree has no /memory: not checked)" : "",
                            options));
            d.check = "cma-base-alignment";
            plan.diagnostics.push_back(std::move(d));
            // The size edit stays valid on its own: the base is a separate, reported decision.
            plan.unfixable = true;
        }
    }
    if (blocking)
        plan.edits.clear();
    else
        plan.diagnostics.insert(plan.diagnostics.end(), edit_notes.begin(), edit_notes.end());
    return plan;
}

} // namespace

Plan plan_fixes(const dt::Tree& tree, const reserved::Reservations& reservations,
                std::uint64_t alignment, dt::FileCache& cache) {
    // Each value is edited where it is written: DTS digits, or the bytes of the blob it came
    // from (the base .dtb, or an overlay's .dtbo: Property::blob_node).
    std::map<std::string, Blob> blobs;
    return plan_common(tree, reservations, alignment,
                       [&](const Region& r, const ValueRef& ref, const dt::Property& prop,
                           std::uint64_t new_size, const std::vector<std::uint8_t>& new_bytes) {
                           bool in_blob =
                               !prop.blob_node.empty() || (tree.from_dtb && prop.chunks.empty());
                           if (!in_blob)
                               return value_edits(r, ref, prop.value, new_size, new_bytes,
                                                  reservations.input, cache);
                           std::string file = prop.blob_node.empty() ? tree.input : prop.where.file;
                           std::string node = prop.blob_node.empty() ? r.path : prop.blob_node;
                           auto it = blobs.find(file);
                           if (it == blobs.end()) it = blobs.emplace(file, read_blob(file)).first;
                           return blob_value_edit(file, node, it->second, r, ref, new_size,
                                                  new_bytes, reservations.input);
                       });
}

Plan plan_dtb_fixes(const dt::Tree& tree, const reserved::Reservations& reservations,
                    std::uint64_t alignment) {
    dt::FileCache unused;
    return plan_fixes(tree, reservations, alignment, unused);
}

} // namespace cmalign::fix
