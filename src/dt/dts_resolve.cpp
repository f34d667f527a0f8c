// Builds the resolved tree from the syntax tree the way dtc does (Linux 6.12 scripts/dtc:
// livetree.c merge_nodes/delete_node/get_node_by_ref/get_node_phandle, checks.c fixups):
//   1. top-level items in order: '/ { }' merges into the root, '&ref { }' into its target
//      (looked up at that moment, so only earlier labels count), /delete-node/ &ref marks the
//      target deleted, /omit-if-no-ref/ &ref flags it;
//   2. checks that change the tree, in dtc's order: duplicate names and labels, "name"
//      properties, explicit phandles, phandle references (assigning phandles depth-first, and
//      adding a `phandle` property as dtc's default -H epapr does), path references, then
//      /omit-if-no-ref/ nodes nobody referenced are deleted.
// Deleted nodes and properties stay in place, marked, until the end — as in dtc, where a later
// definition brings them back at their old position.
#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "cmalign/dt/dts.hpp"

namespace cmalign::dt {

namespace {

constexpr std::uint32_t no_phandle = 0;

bool phandle_valid(std::uint32_t p) {
    return p != 0 && p != 0xffffffffu;
}

struct BLabel {
    std::string_view name;
    bool deleted = false;
};

// dtc's add_label: revives a deleted label of the same name, else puts the new one first (the
// order shows in __symbols__ and in DTS output).
void add_label(std::vector<BLabel>& labels, std::string_view name) {
    for (auto& l : labels)
        if (l.name == name) {
            l.deleted = false;
            return;
        }
    labels.insert(labels.begin(), BLabel{name, false});
}

struct BNode;

struct BProp {
    std::string_view name;
    const syntax::Property* def = nullptr; // the assignment whose value counts; null: generated
    std::vector<BLabel> labels;
    bool deleted = false;
    // Filled by the reference fixups, in the order the references appear in the value.
    std::vector<std::uint32_t> phandles;
    std::vector<const BNode*> path_targets;
    bool generated_phandle = false;      // `phandle` added by get_node_phandle
    std::vector<std::uint8_t> generated; // value of a property dtc generates (fixups, symbols)
};

struct BNode {
    std::string_view name;
    const syntax::Node* first_def = nullptr;
    BNode* parent = nullptr;
    std::vector<BLabel> labels;
    std::vector<BProp> props;
    std::vector<BNode*> children;
    bool deleted = false;
    bool merged_away = false; // a body merged into an existing node: not part of the tree
    bool omit_if_unused = false;
    bool referenced = false;
    std::uint32_t phandle = no_phandle;
    std::string fullpath;
};

// Evaluated property value.
struct Value {
    std::vector<std::uint8_t> bytes;
    struct Chunk {
        std::size_t offset;
        std::size_t size;
        TextSpan span;
        bool plain_literal;
    };
    std::vector<Chunk> chunks;
    std::vector<std::size_t> phandle_offsets; // byte offset of each 32-bit reference cell
    bool has_refs = false;
};

void put_be(std::vector<std::uint8_t>& out, std::uint64_t v, unsigned bits) {
    for (int shift = static_cast<int>(bits) - 8; shift >= 0; shift -= 8)
        out.push_back(static_cast<std::uint8_t>(v >> shift));
}

// `phandles` / `paths`: fixup results (nullptr before the fixups: placeholders, no paths).
void evaluate(const syntax::Property& prop, const std::vector<std::uint32_t>* phandles,
              const std::vector<const BNode*>* paths, bool want_chunks, Value& out) {
    out.bytes.clear();
    out.chunks.clear();
    out.phandle_offsets.clear();
    out.has_refs = false;
    std::size_t next_phandle = 0;
    std::size_t next_path = 0;
    for (const auto& item : prop.value) {
        using K = syntax::ValueItem::Kind;
        switch (item.kind) {
        case K::label:
            break;
        case K::cells:
            for (const auto& cell : item.cells) {
                if (cell.kind == syntax::Cell::Kind::label) continue;
                const std::size_t at = out.bytes.size();
                if (cell.kind == syntax::Cell::Kind::reference) {
                    out.has_refs = true;
                    std::uint64_t v = ~std::uint64_t{0} >> (64 - item.bits);
                    if (phandles && next_phandle < phandles->size()) v = (*phandles)[next_phandle];
                    ++next_phandle;
                    if (item.bits == 32) out.phandle_offsets.push_back(at);
                    put_be(out.bytes, v, item.bits);
                } else {
                    put_be(out.bytes, cell.value, item.bits);
                }
                if (want_chunks)
                    out.chunks.push_back(
                        {at, item.bits / 8, cell.span,
                         cell.kind == syntax::Cell::Kind::integer && cell.plain_literal});
            }
            break;
        case K::string: {
            const std::size_t at = out.bytes.size();
            out.bytes.insert(out.bytes.end(), item.data.begin(), item.data.end());
            out.bytes.push_back(0);
            if (want_chunks) out.chunks.push_back({at, out.bytes.size() - at, item.span, false});
            break;
        }
        case K::bytes:
        case K::incbin: {
            const std::size_t at = out.bytes.size();
            out.bytes.insert(out.bytes.end(), item.data.begin(), item.data.end());
            if (want_chunks && !item.data.empty())
                out.chunks.push_back({at, item.data.size(), item.span, false});
            break;
        }
        case K::reference: {
            out.has_refs = true;
            const BNode* target =
                paths && next_path < paths->size() ? (*paths)[next_path] : nullptr;
            ++next_path;
            if (!target) break;
            const std::size_t at = out.bytes.size();
            out.bytes.insert(out.bytes.end(), target->fullpath.begin(), target->fullpath.end());
            out.bytes.push_back(0);
            if (want_chunks) out.chunks.push_back({at, out.bytes.size() - at, item.span, false});
            break;
        }
        }
    }
}

class Resolver {
public:
    Resolver(const syntax::File& file, Diagnostics& diags, const ResolveOptions& options)
        : file_(file), diags_(diags), options_(options) {}

    std::optional<Tree> run() {
        for (const auto& item : file_.items)
            top_level(item);
        if (!root_) {
            // Only /memreserve/ or nothing at all: an empty root, as for an empty .dtsi.
            root_ = new_node();
        }
        if (errors_) return std::nullopt;
        fill_paths(*root_, "");
        check_duplicates(*root_);
        check_name_properties(*root_);
        check_duplicate_labels();
        check_explicit_phandles(*root_);
        if (errors_) return std::nullopt;
        fixup_phandle_references(*root_);
        fixup_path_references(*root_);
        if (errors_) return std::nullopt;
        omit_unused(*root_);
        if (options_.symbols) generate_symbols();
        if (file_.plugin) {
            generate_fixups();
            if (errors_) return std::nullopt;
        }

        Tree tree;
        tree.input = options_.input;
        if (tree.input.empty() && !file_.texts.empty()) {
            const auto& t = *file_.texts.front();
            if (!t.markers.empty()) tree.input = t.markers.front().file;
            if ((tree.input.empty() || tree.input.front() == '<') && !t.source->files.empty())
                tree.input = t.source->files.front()->path;
        }
        for (const auto& mr : file_.memreserves)
            tree.memreserve.push_back({mr.address, mr.size, file_.locate(mr.span)});
        tree.boot_cpuid = guess_boot_cpuid();
        convert(*root_, tree.root);
        return tree;
    }

private:
    const syntax::File& file_;
    Diagnostics& diags_;
    const ResolveOptions& options_;
    std::deque<BNode> arena_;
    BNode* root_ = nullptr;
    bool errors_ = false;
    // label -> nodes that carried it at some point (liveness is checked on lookup)
    std::unordered_map<std::string_view, std::vector<BNode*>> label_index_;
    std::unordered_set<std::uint32_t> used_phandles_;
    std::uint32_t next_phandle_ = 1;
    Value scratch_;

    void error(TextSpan at, std::string message) {
        diags_.error(file_.locate(at), std::move(message));
        errors_ = true;
    }
    void error(const Location& at, std::string message, const std::string& node = {}) {
        Diagnostic d;
        d.severity = Severity::error;
        d.where = at;
        d.message = std::move(message);
        d.node = node;
        diags_.add(std::move(d));
        errors_ = true;
    }

    BNode* new_node() { return &arena_.emplace_back(); }

    void node_label(BNode* node, std::string_view name) {
        add_label(node->labels, name);
        auto& v = label_index_[name];
        if (std::find(v.begin(), v.end(), node) == v.end()) v.push_back(node);
    }

    // build_node: a fresh node from one syntax body, deleted markers included.
    BNode* build(const syntax::Node& sn, BNode* parent) {
        BNode* n = new_node();
        n->name = sn.name;
        n->first_def = &sn;
        n->parent = parent;
        n->deleted = sn.deleted;
        n->omit_if_unused = sn.omit_if_no_ref;
        // "a: b: n" is a: (b: (n)) in dtc's grammar: the inner label is added first
        for (auto l = sn.labels.rbegin(); l != sn.labels.rend(); ++l)
            node_label(n, l->name);
        n->props.reserve(sn.properties.size());
        for (const auto& sp : sn.properties) {
            BProp p;
            p.name = sp.name;
            p.def = &sp;
            p.deleted = sp.deleted;
            for (auto l = sp.labels.rbegin(); l != sp.labels.rend(); ++l)
                add_label(p.labels, l->name);
            n->props.push_back(std::move(p));
        }
        n->children.reserve(sn.children.size());
        for (const auto& sc : sn.children)
            n->children.push_back(build(sc, n));
        return n;
    }

    static void delete_labels(std::vector<BLabel>& labels) {
        for (auto& l : labels)
            l.deleted = true;
    }

    static void delete_node(BNode* n) {
        n->deleted = true;
        for (auto* c : n->children)
            if (!c->deleted) delete_node(c);
        for (auto& p : n->props)
            if (!p.deleted) {
                p.deleted = true;
                delete_labels(p.labels);
            }
        delete_labels(n->labels);
    }

    // merge_nodes(old, new): `fresh` is consumed.
    void merge(BNode* old, BNode* fresh) {
        fresh->merged_away = true; // its labels were indexed when it was built
        old->deleted = false;
        for (const auto& l : fresh->labels)
            node_label(old, l.name);
        for (auto& np : fresh->props) {
            if (np.deleted) {
                for (auto& op : old->props)
                    if (op.name == np.name) {
                        op.deleted = true;
                        delete_labels(op.labels);
                        break;
                    }
                continue;
            }
            bool found = false;
            for (auto& op : old->props)
                if (op.name == np.name) {
                    for (const auto& l : np.labels)
                        add_label(op.labels, l.name);
                    op.def = np.def;
                    op.deleted = false;
                    found = true;
                    break;
                }
            if (!found) old->props.push_back(std::move(np));
        }
        for (BNode* nc : fresh->children) {
            if (nc->deleted) {
                for (BNode* oc : old->children)
                    if (oc->name == nc->name) {
                        delete_node(oc);
                        break;
                    }
                continue;
            }
            bool found = false;
            for (BNode* oc : old->children)
                if (oc->name == nc->name) {
                    merge(oc, nc);
                    found = true;
                    break;
                }
            if (!found) {
                nc->parent = old;
                old->children.push_back(nc);
            }
        }
    }

    static bool live(const BNode* n) {
        for (; n; n = n->parent)
            if (n->deleted || n->merged_away) return false;
        return true;
    }

    BNode* by_label(std::string_view label) const {
        auto it = label_index_.find(label);
        if (it == label_index_.end()) return nullptr;
        for (BNode* n : it->second) {
            if (!live(n)) continue;
            for (const auto& l : n->labels)
                if (l.name == label && !l.deleted) return n;
        }
        return nullptr;
    }

    // get_node_by_path relative to `from`.
    static BNode* by_path(BNode* from, std::string_view path) {
        BNode* node = from;
        for (;;) {
            if (path.empty()) return node->deleted ? nullptr : node;
            while (!path.empty() && path.front() == '/')
                path.remove_prefix(1);
            auto slash = path.find('/');
            std::string_view part = path.substr(0, slash);
            BNode* next = nullptr;
            for (BNode* c : node->children)
                if (!c->deleted && c->name == part) {
                    next = c;
                    break;
                }
            if (!next) return nullptr;
            if (slash == std::string_view::npos) return next;
            node = next;
            path = path.substr(slash + 1);
        }
    }

    BNode* by_ref(std::string_view ref) const {
        if (!root_) return nullptr;
        if (ref == "/") return root_;
        if (ref.front() == '/') return by_path(root_, ref);
        auto slash = ref.find('/');
        BNode* target = by_label(ref.substr(0, slash));
        if (!target || slash == std::string_view::npos) return target;
        return by_path(target, ref.substr(slash + 1));
    }

    void not_found(const syntax::Reference& ref) {
        if (ref.target.front() == '/' || ref.target.find('/') != std::string::npos)
            error(ref.span, fmt::format("reference to non-existent node '{}'", ref.target));
        else
            error(ref.span, fmt::format("undefined label '{}'", ref.target));
    }

    int orphan_count_ = 0;
    std::deque<syntax::Property> orphan_props_;

    // add_orphan_node (plugins): fragment@N { target = <&ref>; | target-path = "/p"; __overlay__ }
    void add_orphan(const syntax::TopLevel& item) {
        BNode* frag = new_node();
        name_storage_.push_back(fmt::format("fragment@{}", orphan_count_++));
        frag->name = name_storage_.back();
        frag->first_def = &item.node;
        frag->parent = root_;
        auto& sp = orphan_props_.emplace_back();
        syntax::ValueItem v;
        v.span = item.ref.span;
        if (item.ref.target.front() == '/') {
            sp.name = "target-path";
            v.kind = syntax::ValueItem::Kind::string;
            v.data = item.ref.target;
        } else {
            sp.name = "target";
            v.kind = syntax::ValueItem::Kind::cells;
            syntax::Cell c;
            c.kind = syntax::Cell::Kind::reference;
            c.ref = item.ref;
            c.span = item.ref.span;
            v.cells.push_back(c);
        }
        sp.value.push_back(std::move(v));
        sp.name_span = item.ref.span;
        BProp p;
        p.name = sp.name;
        p.def = &sp;
        frag->props.push_back(std::move(p));
        BNode* overlay = build(item.node, frag);
        overlay->name = "__overlay__";
        frag->children.push_back(overlay);
        root_->children.push_back(frag);
    }
    std::deque<std::string> name_storage_;

    void top_level(const syntax::TopLevel& item) {
        using K = syntax::TopLevel::Kind;
        switch (item.kind) {
        case K::root: {
            BNode* n = build(item.node, nullptr);
            n->name = "";
            if (!root_)
                root_ = n;
            else
                merge(root_, n);
            return;
        }
        case K::reference: {
            if (!root_) {
                root_ = new_node();
                root_->first_def = &item.node;
                if (!file_.plugin) {
                    not_found(item.ref);
                    return;
                }
            }
            BNode* target = by_ref(item.ref.target);
            const bool relative =
                item.ref.target.front() != '/' && item.ref.target.find('/') != std::string::npos;
            if (file_.plugin && relative) {
                error(item.ref.span, fmt::format("label-relative reference '{}' not supported in "
                                                 "a plugin",
                                                 item.ref.target));
                return;
            }
            if (file_.plugin && item.labels.empty() &&
                (item.ref.braced && item.ref.target.front() == '/')) {
                add_orphan(item);
                return;
            }
            if (target) {
                for (auto l = item.labels.rbegin(); l != item.labels.rend(); ++l)
                    node_label(target, l->name);
                merge(target, build(item.node, nullptr));
            } else if (file_.plugin && item.labels.empty()) {
                add_orphan(item);
            } else {
                not_found(item.ref);
            }
            return;
        }
        case K::delete_node:
        case K::omit_if_no_ref: {
            BNode* target = by_ref(item.ref.target);
            if (!target) {
                not_found(item.ref);
                return;
            }
            if (item.kind == K::delete_node)
                delete_node(target);
            else
                target->omit_if_unused = true;
            return;
        }
        }
    }

    void fill_paths(BNode& n, const std::string& parent_path) {
        if (&n == root_)
            n.fullpath = "/";
        else
            n.fullpath = parent_path + (parent_path == "/" ? "" : "/") + std::string(n.name);
        for (BNode* c : n.children)
            fill_paths(*c, n.fullpath);
    }

    Location node_location(const BNode& n) const {
        if (n.first_def) return file_.locate(n.first_def->name_span);
        return {};
    }

    // Pre-order over live nodes, as dtc's check_nodes_props.
    template <typename F> void for_live(BNode& n, F&& f) {
        if (n.deleted) return;
        f(n);
        for (BNode* c : n.children)
            if (!c->deleted) for_live(*c, f);
    }

    void check_duplicates(BNode& root) {
        for_live(root, [&](BNode& n) {
            for (std::size_t i = 0; i < n.children.size(); ++i) {
                if (n.children[i]->deleted) continue;
                for (std::size_t j = i + 1; j < n.children.size(); ++j)
                    if (!n.children[j]->deleted && n.children[j]->name == n.children[i]->name) {
                        error(node_location(*n.children[j]),
                              fmt::format("duplicate node name '{}'", n.children[j]->name),
                              n.fullpath);
                        break;
                    }
            }
            for (std::size_t i = 0; i < n.props.size(); ++i) {
                if (n.props[i].deleted) continue;
                for (std::size_t j = i + 1; j < n.props.size(); ++j)
                    if (!n.props[j].deleted && n.props[j].name == n.props[i].name) {
                        error(file_.locate(n.props[j].def->name_span),
                              fmt::format("duplicate property name '{}'", n.props[j].name),
                              n.fullpath);
                        break;
                    }
            }
        });
    }

    // A correct "name" property is redundant and dtc drops it; a wrong one is an error.
    void check_name_properties(BNode& root) {
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

    void check_duplicate_labels() {
        struct Owner {
            const void* what;
            TextSpan span;
        };
        std::unordered_map<std::string_view, Owner> seen;
        auto note = [&](std::string_view label, const void* what, TextSpan span) {
            auto [it, inserted] = seen.try_emplace(label, Owner{what, span});
            if (!inserted && it->second.what != what)
                error(span, fmt::format("duplicate label '{}' (also defined at {}:{}:{})", label,
                                        file_.locate(it->second.span).file,
                                        file_.locate(it->second.span).line,
                                        file_.locate(it->second.span).column));
        };
        for_live(*root_, [&](BNode& n) {
            for (const auto& l : n.labels)
                if (!l.deleted) note(l.name, &n, label_span(n, l.name));
            for (const auto& p : n.props) {
                if (p.deleted || !p.def) continue;
                for (const auto& l : p.labels)
                    if (!l.deleted) note(l.name, &p, p.def->name_span);
                for (const auto& item : p.def->value) {
                    if (item.kind == syntax::ValueItem::Kind::label)
                        note(item.label.name, &item, item.label.span);
                    for (const auto& c : item.cells)
                        if (c.kind == syntax::Cell::Kind::label) note(c.name, &c, c.span);
                    for (const auto& l : item.inner_labels)
                        note(l.name, &l, l.span);
                }
            }
        });
    }

    // Where a node label was written (the first syntax node of that node carrying it), or the
    // node itself.
    TextSpan label_span(const BNode& n, std::string_view label) const {
        if (n.first_def)
            for (const auto& l : n.first_def->labels)
                if (l.name == label) return l.span;
        return n.first_def ? n.first_def->name_span : TextSpan{};
    }

    std::uint32_t explicit_phandle(BNode& n, std::string_view prop_name) {
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
                        if (by_ref(c.ref.target) != &n)
                            error(file_.locate(c.span),
                                  fmt::format("{} is a reference to another node", p.name),
                                  n.fullpath);
                        return 0; // "allocate one for me": filled in by the reference fixup
                    }
            const std::uint32_t v = (std::uint32_t{scratch_.bytes[0]} << 24) |
                                    (std::uint32_t{scratch_.bytes[1]} << 16) |
                                    (std::uint32_t{scratch_.bytes[2]} << 8) | scratch_.bytes[3];
            if (!phandle_valid(v)) {
                error(file_.locate(p.def->name_span),
                      fmt::format("bad value (0x{:x}) in {} property", v, p.name), n.fullpath);
                return 0;
            }
            return v;
        }
        return 0;
    }

    std::unordered_map<std::uint32_t, BNode*> phandle_owner_;

    void check_explicit_phandles(BNode& root) {
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
    std::uint32_t node_phandle(BNode& n) {
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

    void fixup_phandle_references(BNode& root) {
        for_live(root, [&](BNode& n) {
            // node_phandle() may append to n.props: index, do not hold references.
            for (std::size_t i = 0; i < n.props.size(); ++i) {
                if (n.props[i].deleted || !n.props[i].def) continue;
                const syntax::Property* def = n.props[i].def;
                std::vector<std::uint32_t> phandles;
                for (const auto& item : def->value)
                    for (const auto& c : item.cells) {
                        if (c.kind != syntax::Cell::Kind::reference) continue;
                        if (item.bits != 32) continue; // already an error at parse time
                        BNode* target = by_ref(c.ref.target);
                        if (!target) {
                            if (file_.plugin) {
                                phandles.push_back(0xffffffffu);
                                continue;
                            }
                            not_found(c.ref);
                            phandles.push_back(0xffffffffu);
                            continue;
                        }
                        phandles.push_back(node_phandle(*target));
                        target->referenced = true;
                    }
                n.props[i].phandles = std::move(phandles);
            }
        });
    }

    void fixup_path_references(BNode& root) {
        for_live(root, [&](BNode& n) {
            for (auto& p : n.props) {
                if (p.deleted || !p.def) continue;
                for (const auto& item : p.def->value) {
                    if (item.kind != syntax::ValueItem::Kind::reference) continue;
                    BNode* target = by_ref(item.ref.target);
                    if (!target) {
                        not_found(item.ref);
                        p.path_targets.push_back(nullptr);
                        continue;
                    }
                    p.path_targets.push_back(target);
                    target->referenced = true;
                }
            }
        });
    }

    void omit_unused(BNode& root) {
        for_live(root, [&](BNode& n) {
            if (options_.symbols && !n.labels.empty()) return; // dtc -@ keeps labelled nodes
            if (n.omit_if_unused && !n.referenced) delete_node(&n);
        });
    }

    // build_root_node: an existing live child of the root, or a new one at the end.
    BNode* root_child(std::string_view name) {
        for (BNode* c : root_->children)
            if (!c->deleted && c->name == name) return c;
        BNode* n = new_node();
        n->name = name;
        n->parent = root_;
        n->fullpath = "/" + std::string(name);
        root_->children.push_back(n);
        return n;
    }

    static BNode* child_named(BNode* parent, std::string_view name) {
        for (BNode* c : parent->children)
            if (!c->deleted && c->name == name) return c;
        return nullptr;
    }

    // append_to_property
    static void append_generated(BNode* n, std::string_view name, const void* data,
                                 std::size_t len) {
        const auto* b = static_cast<const std::uint8_t*>(data);
        for (auto& p : n->props)
            if (!p.deleted && p.name == name) {
                p.generated.insert(p.generated.end(), b, b + len);
                return;
            }
        BProp p;
        p.name = name;
        p.generated.assign(b, b + len);
        n->props.push_back(std::move(p));
    }

    // dtc -@: /__symbols__ { label = "/path"; } for every labelled node, each given a phandle.
    void generate_symbols() {
        bool any = false;
        for_live(*root_, [&](BNode& n) { any = any || !n.labels.empty(); });
        if (!any) return;
        BNode* symbols = root_child("__symbols__");
        for_live(*root_, [&](BNode& n) {
            if (n.labels.empty()) return;
            for (const auto& l : n.labels) {
                if (l.deleted) continue;
                bool exists = false;
                for (const auto& p : symbols->props)
                    if (!p.deleted && p.name == l.name) exists = true;
                if (exists) continue; // dtc warns "label already exists" and skips
                append_generated(symbols, l.name, n.fullpath.c_str(), n.fullpath.size() + 1);
            }
            node_phandle(n);
        });
    }

    // Plugins: /__fixups__ { label = "/path:prop:offset", ...; } for references left open, and
    // /__local_fixups__ mirroring the nodes whose cells hold resolved references.
    void generate_fixups() {
        struct Ref {
            BNode* node;
            BProp* prop;
            std::size_t offset;
            const syntax::Reference* ref;
            BNode* target;
        };
        std::vector<Ref> refs;
        for_live(*root_, [&](BNode& n) {
            for (auto& p : n.props) {
                if (p.deleted || !p.def) continue;
                evaluate(*p.def, &p.phandles, &p.path_targets, false, scratch_);
                std::size_t k = 0;
                for (const auto& item : p.def->value)
                    for (const auto& c : item.cells)
                        if (c.kind == syntax::Cell::Kind::reference && item.bits == 32 &&
                            k < scratch_.phandle_offsets.size())
                            refs.push_back({&n, &p, scratch_.phandle_offsets[k++], &c.ref,
                                            by_ref(c.ref.target)});
            }
        });
        bool open = false;
        bool local = false;
        for (const auto& r : refs)
            (r.target ? local : open) = true;
        if (open) {
            BNode* fixups = root_child("__fixups__");
            for (const auto& r : refs) {
                if (r.target) continue;
                if (r.ref->target.find('/') != std::string::npos) {
                    error(r.ref->span, fmt::format("cannot generate a fixup for the path "
                                                   "reference &{{{}}}",
                                                   r.ref->target));
                    continue;
                }
                std::string entry =
                    fmt::format("{}:{}:{}", r.node->fullpath, r.prop->name, r.offset);
                append_generated(fixups, r.ref->target, entry.c_str(), entry.size() + 1);
            }
        }
        if (local) {
            BNode* lfn = root_child("__local_fixups__");
            for (const auto& r : refs) {
                if (!r.target) continue;
                std::vector<BNode*> chain;
                for (BNode* w = r.node; w && w != root_; w = w->parent)
                    chain.push_back(w);
                BNode* at = lfn;
                for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
                    BNode* next = child_named(at, (*it)->name);
                    if (!next) {
                        next = new_node();
                        next->name = (*it)->name;
                        next->parent = at;
                        at->children.push_back(next);
                    }
                    at = next;
                }
                const std::uint8_t be[4] = {static_cast<std::uint8_t>(r.offset >> 24),
                                            static_cast<std::uint8_t>(r.offset >> 16),
                                            static_cast<std::uint8_t>(r.offset >> 8),
                                            static_cast<std::uint8_t>(r.offset)};
                append_generated(at, r.prop->name, be, 4);
            }
        }
    }

    std::uint32_t guess_boot_cpuid() {
        BNode* cpus = by_path(root_, "/cpus");
        if (!cpus || cpus->children.empty()) return 0;
        BNode* cpu = cpus->children.front();
        for (auto& p : cpu->props) {
            if (p.deleted || p.name != "reg" || !p.def) continue;
            evaluate(*p.def, nullptr, nullptr, false, scratch_);
            if (scratch_.bytes.size() != 4) return 0;
            return (std::uint32_t{scratch_.bytes[0]} << 24) |
                   (std::uint32_t{scratch_.bytes[1]} << 16) |
                   (std::uint32_t{scratch_.bytes[2]} << 8) | scratch_.bytes[3];
        }
        return 0;
    }

    bool chunks_wanted(const BNode& bn) const {
        if (!options_.value_chunks) return false;
        return under_chunk_paths(bn);
    }

    // Node and property locations: everywhere, or (when the caller asks for fewer) for the root,
    // its children and what lies under chunk_paths. Locating costs a search and a string copy.
    bool locations_wanted(const BNode& bn) const {
        if (options_.all_locations) return true;
        const std::string& p = bn.fullpath;
        if (p.find('/', 1) == std::string::npos) return true; // "/" and its children
        return !options_.chunk_paths.empty() && under_chunk_paths(bn);
    }

    // Whether `bn` and what lies below it go into the Tree (see ResolveOptions::whole_tree).
    bool subtree_wanted(const BNode& bn) const {
        if (options_.whole_tree) return true;
        const std::string& p = bn.fullpath;
        if (p.find('/', 1) == std::string::npos) return true; // "/" and its children
        return under_chunk_paths(bn);
    }

    bool under_chunk_paths(const BNode& bn) const {
        if (options_.chunk_paths.empty()) return true;
        for (const auto& prefix : options_.chunk_paths) {
            const std::string& p = bn.fullpath;
            // "/memory" covers "/memory@40000000" and everything below either
            if (p == prefix || prefix == "/" ||
                (p.size() > prefix.size() && p.compare(0, prefix.size(), prefix) == 0 &&
                 (p[prefix.size()] == '/' || p[prefix.size()] == '@')))
                return true;
        }
        return false;
    }

    void convert(const BNode& bn, Node& out) {
        out.name = std::string(bn.name);
        const bool locate = locations_wanted(bn);
        if (locate) out.where = node_location(bn);
        for (const auto& l : bn.labels)
            if (!l.deleted) out.labels.emplace_back(l.name);
        std::size_t live_props = 0;
        for (const auto& p : bn.props)
            live_props += p.deleted ? 0 : 1;
        out.properties.reserve(live_props);
        for (const auto& bp : bn.props) {
            if (bp.deleted) continue;
            Property& p = out.properties.emplace_back();
            p.name = std::string(bp.name);
            for (const auto& l : bp.labels)
                if (!l.deleted) p.labels.emplace_back(l.name);
            if (bp.generated_phandle) {
                put_be(p.value, bn.phandle, 32);
                p.where = out.where;
                continue;
            }
            if (!bp.def) {
                p.value = bp.generated;
                p.where = out.where;
                continue;
            }
            if (locate) p.where = file_.locate(bp.def->name_span);
            evaluate(*bp.def, &bp.phandles, &bp.path_targets, chunks_wanted(bn), scratch_);
            p.value = scratch_.bytes;
            // A hand-written /__fixups__ or /__local_fixups__ entry gets the generated ones
            // appended (dtc's append_to_property()).
            p.value.insert(p.value.end(), bp.generated.begin(), bp.generated.end());
            p.has_refs = scratch_.has_refs;
            p.chunks.reserve(scratch_.chunks.size());
            for (const auto& c : scratch_.chunks) {
                ValueChunk& vc = p.chunks.emplace_back();
                vc.offset = c.offset;
                vc.size = c.size;
                vc.where = file_.locate(c.span);
                vc.text = file_.original_text(c.span);
                if (c.plain_literal) vc.literal = file_.source_span(c.span);
            }
        }
        std::size_t live_children = 0;
        for (const BNode* c : bn.children)
            live_children += !c->deleted && subtree_wanted(*c) ? 1 : 0;
        out.children.reserve(live_children);
        for (const BNode* c : bn.children)
            if (!c->deleted && subtree_wanted(*c)) convert(*c, out.children.emplace_back());
    }
};

} // namespace

std::optional<Tree> resolve(const syntax::File& file, Diagnostics& diags,
                            const ResolveOptions& options) {
    Resolver r(file, diags, options);
    return r.run();
}

std::optional<Tree> load_dts(const std::string& path, const PreprocessOptions& options,
                             FileCache& cache, Diagnostics& diags,
                             const ResolveOptions& resolve_options) {
    auto text = preprocess(path, options, cache, diags);
    if (!text) return std::nullopt;
    ParseOptions popts;
    popts.include_dirs = options.include_dirs;
    popts.limits = options.limits;
    if (options.kernel_tree) {
        popts.include_dirs.push_back(*options.kernel_tree + "/scripts/dtc/include-prefixes");
        popts.include_dirs.push_back(*options.kernel_tree + "/include");
    }
    auto syntax_file = parse(*text, popts, cache, diags);
    if (!syntax_file) return std::nullopt;
    ResolveOptions ropts = resolve_options;
    if (ropts.input.empty()) ropts.input = path;
    return resolve(*syntax_file, diags, ropts);
}

} // namespace cmalign::dt
