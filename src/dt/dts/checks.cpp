// The checks of dtc's checks.c that change the tree: duplicate names and labels, "name"
// properties, explicit phandles, phandle and path reference fixups, /omit-if-no-ref/.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "cmalign/internal/core/bytes.hpp"
#include "cmalign/internal/dt/dts_resolver.hpp"

namespace cmalign::dt::dts_resolver {

// Run only when some body names two entries alike (File::duplicate_names): pairwise is enough.
void Resolver::check_duplicates(BNode& root) {
    for_live(root, [&](BNode& n) {
        for (std::size_t i = 0; i < n.children.size(); ++i) {
            if (n.children[i]->deleted) continue;
            for (std::size_t j = i + 1; j < n.children.size(); ++j)
                if (!n.children[j]->deleted && n.children[j]->name == n.children[i]->name) {
                    error(node_location(*n.children[j]),
                          fmt::format("duplicate node name '{}'", n.children[j]->name), n.fullpath);
                    break;
                }
        }
        for (std::size_t i = 0; i < n.props.size(); ++i) {
            if (n.props[i].deleted) continue;
            for (std::size_t j = i + 1; j < n.props.size(); ++j)
                if (!n.props[j].deleted && n.props[j].name == n.props[i].name) {
                    error(file_.locate(n.props[j].def->name_span),
                          fmt::format("duplicate property name '{}'", n.props[j].name), n.fullpath);
                    break;
                }
        }
    });
}

// A correct "name" property is redundant and dtc drops it; a wrong one is an error.
void Resolver::check_name_properties(BNode& root) {
    for_live(root, [&](BNode& n) {
        for (std::size_t i = 0; i < n.props.size(); ++i) {
            BProp& p = n.props[i];
            if (p.deleted || p.name != "name" || !p.def) continue;
            evaluate(*p.def, nullptr, nullptr, false, scratch_);
            std::string_view base = n.name.substr(0, n.name.find('@'));
            if (scratch_.bytes.size() == base.size() + 1 &&
                std::equal(base.begin(), base.end(), scratch_.bytes.begin()))
                n.props.erase(n.props.begin() + static_cast<std::ptrdiff_t>(i));
            else
                error(file_.locate(p.def->name_span),
                      "\"name\" property is incorrect (not the base node name)", n.fullpath);
            return;
        }
    });
}

void Resolver::check_duplicate_labels() {
    // Where a label was written is looked up only for a duplicate: a node label's span
    // (label_span) costs a search, and a board has hundreds of labels.
    auto span_of = [&](std::string_view label, const LabelOwner& o) {
        return o.node ? label_span(*o.node, label) : o.span;
    };
    if (!labels_on_many_nodes_ && !property_or_value_labels_) return; // no label twice
    label_owners_.clear();
    auto note = [&](std::string_view label, std::uint32_t hash, LabelOwner owner) {
        bool made = false;
        LabelNodes& entry = label_index_.get(label, hash, made);
        if (!entry.owner) {
            label_owners_.push_back(owner);
            entry.owner = static_cast<std::uint32_t>(label_owners_.size());
            return;
        }
        const LabelOwner& kept = label_owners_[entry.owner - 1];
        if (kept.what == owner.what) return;
        const Location first = file_.locate(span_of(label, kept));
        error(span_of(label, owner), fmt::format("duplicate label '{}' (also defined at {}:{}:{})",
                                                 label, first.file, first.line, first.column));
    };
    for_live(*root_, [&](BNode& n) {
        for (const auto& l : n.labels)
            if (!l.deleted) note(l.name, l.hash, {&n, {}, &n});
        for (const auto& p : n.props) {
            if (p.deleted || !p.def) continue;
            for (const auto& l : p.labels())
                if (!l.deleted) note(l.name, l.hash, {&p, p.def->name_span});
            if (!p.def->has_value_labels) continue;
            for (const auto& item : p.def->value) {
                if (item.kind == syntax::ValueItem::Kind::label)
                    note(item.view, 0, {&item, item.span});
                for (const auto& c : item.cells)
                    if (c.kind == syntax::Cell::Kind::label)
                        note(c.name, c.label_hash, {&c, c.span});
                if (item.data)
                    for (const auto& l : item.data->inner_labels)
                        note(l.name, l.hash, {&l, l.span});
            }
        }
    });
}

// Where a node label was written (the first syntax node of that node carrying it), or the
// node itself.
TextSpan Resolver::label_span(const BNode& n, std::string_view label) const {
    if (n.first_def)
        for (const auto& l : n.first_def->labels)
            if (l.name == label) return l.span;
    return n.first_def ? n.first_def->name_span : TextSpan{};
}

std::uint32_t Resolver::explicit_phandle(BNode& n, std::string_view prop_name) {
    for (auto& p : n.props) {
        if (p.deleted || p.name != prop_name || !p.def) continue;
        evaluate(*p.def, nullptr, nullptr, false, scratch_);
        if (scratch_.bytes.size() != 4) {
            error(file_.locate(p.def->name_span),
                  fmt::format("bad length ({}) {} property", scratch_.bytes.size(), p.name),
                  n.fullpath);
            return 0;
        }
        for (const auto& item : p.def->value)
            for (const auto& c : item.cells)
                if (c.kind == syntax::Cell::Kind::reference) {
                    if (by_ref(c.name) != &n)
                        error(file_.locate(c.span),
                              fmt::format("{} is a reference to another node", p.name), n.fullpath);
                    return 0; // "allocate one for me": filled in by the reference fixup
                }
        const std::uint32_t v = bytes::be32(scratch_.bytes.data());
        if (!phandle_valid(v)) {
            error(file_.locate(p.def->name_span),
                  fmt::format("bad value (0x{:x}) in {} property", v, p.name), n.fullpath);
            return 0;
        }
        return v;
    }
    return 0;
}

void Resolver::check_explicit_phandles(BNode& root) {
    for_live(root, [&](BNode& n) {
        std::uint32_t ph = explicit_phandle(n, "phandle");
        std::uint32_t linux_ph = explicit_phandle(n, "linux,phandle");
        if (!ph && !linux_ph) return;
        if (ph && linux_ph && ph != linux_ph)
            error(node_location(n), "mismatching 'phandle' and 'linux,phandle' properties",
                  n.fullpath);
        if (!ph) ph = linux_ph;
        auto [it, inserted] = phandle_owner_.try_emplace(ph, &n);
        if (!inserted && it->second != &n) {
            error(node_location(n),
                  fmt::format("duplicated phandle 0x{:x} (seen before at {})", ph,
                              it->second->fullpath),
                  n.fullpath);
            return;
        }
        n.phandle = ph;
    });
}

// get_node_phandle
std::uint32_t Resolver::node_phandle(BNode& n) {
    if (phandle_valid(n.phandle)) return n.phandle;
    while (phandle_owner_.count(next_phandle_))
        ++next_phandle_;
    n.phandle = next_phandle_;
    phandle_owner_.emplace(n.phandle, &n);
    bool has = false;
    for (const auto& p : n.props)
        if (!p.deleted && p.name == "phandle") has = true;
    if (!has) {
        BProp p;
        p.name = "phandle";
        p.generated_phandle = true;
        n.props.push_back(std::move(p));
    }
    return n.phandle;
}

void Resolver::fixup_phandle_references(BNode& root) {
    for_live(root, [&](BNode& n) {
        // Every reference is resolved (a phandle assigned in dtc's order, an unknown label
        // reported), but the values are kept only where the Tree will hold the property.
        if (!n.reference_props) return;
        const bool keep = file_.plugin || n.in_tree;
        // node_phandle() may append to n.props: index, do not hold references.
        for (std::size_t i = 0; i < n.props.size(); ++i) {
            if (n.props[i].deleted || !n.props[i].def) continue;
            const syntax::Property* def = n.props[i].def;
            if (!def->has_references) continue;
            // In the property's Extra, which stays where it is when n.props grows.
            std::vector<std::uint32_t>* phandles = keep ? &n.props[i].own().phandles : nullptr;
            for (const auto& item : def->value)
                for (const auto& c : item.cells) {
                    if (c.kind != syntax::Cell::Kind::reference) continue;
                    if (item.bits != 32) continue; // already an error at parse time
                    BNode* target = by_ref(c.name, c.label_hash);
                    if (!target) {
                        if (!file_.plugin) not_found(c.ref());
                        if (phandles) phandles->push_back(0xffffffffu);
                        continue;
                    }
                    const std::uint32_t ph = node_phandle(*target);
                    if (phandles) phandles->push_back(ph);
                    target->referenced = true;
                }
        }
    });
}

void Resolver::fixup_path_references(BNode& root) {
    for_live(root, [&](BNode& n) {
        if (!n.reference_props) return;
        for (auto& p : n.props) {
            if (p.deleted || !p.def || !p.def->has_references) continue;
            for (const auto& item : p.def->value) {
                if (item.kind != syntax::ValueItem::Kind::reference) continue;
                BNode* target = by_ref(item.view);
                if (!target) {
                    not_found(item.ref());
                    p.own().path_targets.push_back(nullptr);
                    continue;
                }
                p.own().path_targets.push_back(target);
                target->referenced = true;
            }
        }
    });
}

void Resolver::omit_unused(BNode& root) {
    for_live(root, [&](BNode& n) {
        if (options_.symbols && !n.labels.empty()) return; // dtc -@ keeps labelled nodes
        if (n.omit_if_unused && !n.referenced) delete_node(&n);
    });
}

} // namespace cmalign::dt::dts_resolver
