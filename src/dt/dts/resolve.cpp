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
//
// This file: property values, building and merging nodes, references; the tree-changing checks
// are dts/checks.cpp, generated nodes and the conversion to dt::Tree dts/generate.cpp.
#include <algorithm>
#include <deque>

#include <fmt/format.h>

#include "cmalign/internal/dt/dts_resolver.hpp"

namespace cmalign::dt {

namespace dts_resolver {

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
            const std::string_view text = item.contents();
            out.bytes.insert(out.bytes.end(), text.begin(), text.end());
            out.bytes.push_back(0);
            if (want_chunks) out.chunks.push_back({at, out.bytes.size() - at, item.span, false});
            break;
        }
        case K::bytes:
        case K::incbin: {
            const std::size_t at = out.bytes.size();
            const std::string_view data = item.contents();
            out.bytes.insert(out.bytes.end(), data.begin(), data.end());
            if (want_chunks && !data.empty())
                out.chunks.push_back({at, data.size(), item.span, false});
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

std::optional<Tree> Resolver::run() {
    for (const auto& item : file_.items)
        top_level(item);
    if (!root_) {
        // Only /memreserve/ or nothing at all: an empty root, as for an empty .dtsi.
        root_ = new_node();
    }
    if (errors_) return std::nullopt;
    fill_paths(*root_, "", false, true);
    if (file_.duplicate_names || file_.plugin) check_duplicates(*root_); // (plugins: fragment@N)
    // Checks that find nothing where no body has what they look at (the parser says).
    const bool special = file_.name_or_phandle_properties || file_.plugin;
    if (special) check_name_properties(*root_);
    check_duplicate_labels();
    if (special) check_explicit_phandles(*root_);
    if (errors_) return std::nullopt;
    // Until omit_unused, only `phandle` properties are added: by_label keeps its answers.
    labels_settled_ = true;
    fixup_phandle_references(*root_);
    fixup_path_references(*root_);
    labels_settled_ = false;
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

void Resolver::error(const Location& at, std::string message, std::string_view node) {
    Diagnostic d;
    d.severity = Severity::error;
    d.where = at;
    d.message = std::move(message);
    d.node = std::string(node);
    diags_.add(std::move(d));
    errors_ = true;
}

namespace {
// A board's nodes fit in this; a bigger one goes on in blocks from the heap.
constexpr std::size_t arena_start_bytes = std::size_t{512} << 10;
struct ThreadArena {
    std::unique_ptr<std::byte[]> block;
    bool in_use = false; // a resolver inside another (none today) starts from the heap
};
thread_local ThreadArena thread_arena;
} // namespace

Resolver::ArenaStart::ArenaStart() {
    if (thread_arena.in_use) return;
    if (!thread_arena.block) thread_arena.block = std::make_unique<std::byte[]>(arena_start_bytes);
    thread_arena.in_use = true;
    block = thread_arena.block.get();
    size = arena_start_bytes;
}

Resolver::ArenaStart::~ArenaStart() {
    if (block) thread_arena.in_use = false;
}

// build_node: a fresh node from one syntax body, deleted markers included.
BNode* Resolver::build(const syntax::Node& sn, BNode* parent) {
    BNode* n = new_node();
    n->name = sn.name;
    n->first_def = &sn;
    n->parent = parent;
    n->deleted = sn.deleted;
    n->omit_if_unused = sn.omit_if_no_ref;
    // "a: b: n" is a: (b: (n)) in dtc's grammar: the inner label is added first
    for (auto l = sn.labels.rbegin(); l != sn.labels.rend(); ++l)
        node_label(n, l->name, l->hash);
    n->props.reserve(sn.properties.size() + 1); // + the `phandle` a reference may add
    for (const auto& sp : sn.properties) {
        BProp& p = n->props.emplace_back();
        p.name = sp.name;
        p.def = &sp;
        p.deleted = sp.deleted;
        n->reference_props |= sp.has_references;
        property_or_value_labels_ |= sp.has_value_labels || !sp.labels.empty();
        for (auto l = sp.labels.rbegin(); l != sp.labels.rend(); ++l)
            add_label(p.own().labels, l->name, l->hash);
    }
    n->children.reserve(sn.children.size());
    for (const auto& sc : sn.children)
        n->children.push_back(build(sc, n));
    return n;
}

void Resolver::delete_node(BNode* n) {
    n->deleted = true;
    for (auto* c : n->children)
        if (!c->deleted) delete_node(c);
    for (auto& p : n->props)
        if (!p.deleted) {
            p.deleted = true;
            if (p.extra) delete_labels(p.extra->labels);
        }
    delete_labels(n->labels);
}

// merge_nodes(old, new): `fresh` is consumed.
void Resolver::merge(BNode* old, BNode* fresh) {
    fresh->merged_away = true; // its labels were indexed when it was built
    old->deleted = false;
    old->reference_props |= fresh->reference_props;
    for (const auto& l : fresh->labels)
        node_label(old, l.name, l.hash);
    for (auto& np : fresh->props) {
        if (np.deleted) {
            for (auto& op : old->props)
                if (op.name == np.name) {
                    op.deleted = true;
                    if (op.extra) delete_labels(op.extra->labels);
                    break;
                }
            continue;
        }
        bool found = false;
        for (auto& op : old->props)
            if (op.name == np.name) {
                for (const auto& l : np.labels())
                    add_label(op.own().labels, l.name, l.hash);
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

BNode* Resolver::by_label(std::string_view label, std::uint32_t hash) const {
    LabelNodes* nodes = label_index_.find(label, hash);
    if (!nodes) return nullptr;
    if (labels_settled_) {
        if (!nodes->resolved_known) {
            nodes->resolved = live_carrier(*nodes, label);
            nodes->resolved_known = true;
        }
        return nodes->resolved;
    }
    return live_carrier(*nodes, label);
}

// The live node that carries `label` (not deleted), the first indexed first.
BNode* Resolver::live_carrier(const LabelNodes& nodes, std::string_view label) const {
    auto carries = [&](BNode* n) {
        if (!live(n)) return false;
        for (const auto& l : n->labels)
            if (l.name == label && !l.deleted) return true;
        return false;
    };
    if (!nodes.first) return nullptr; // a label only properties or values carry
    if (carries(nodes.first)) return nodes.first;
    if (nodes.more)
        for (BNode* n : label_more_[nodes.more - 1])
            if (carries(n)) return n;
    return nullptr;
}

// get_node_by_path relative to `from`.
BNode* Resolver::by_path(BNode* from, std::string_view path) {
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

BNode* Resolver::by_ref(std::string_view ref, std::uint32_t label_hash) const {
    if (!root_) return nullptr;
    if (ref == "/") return root_;
    if (ref.front() == '/') return by_path(root_, ref);
    const std::string_view label = syntax::reference_label(ref);
    BNode* target = by_label(label, label_hash);
    if (!target || label.size() == ref.size()) return target;
    return by_path(target, ref.substr(label.size() + 1));
}

void Resolver::not_found(const syntax::Reference& ref) {
    if (ref.target.front() == '/' || ref.target.find('/') != std::string::npos)
        error(ref.span, fmt::format("reference to non-existent node '{}'", ref.target));
    else
        error(ref.span, fmt::format("undefined label '{}'", ref.target));
}

// add_orphan_node (plugins): fragment@N { target = <&ref>; | target-path = "/p"; __overlay__ }
void Resolver::add_orphan(const syntax::TopLevel& item) {
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
        v.own_data().bytes = item.ref.target;
    } else {
        sp.name = "target";
        v.kind = syntax::ValueItem::Kind::cells;
        syntax::Cell c;
        c.kind = syntax::Cell::Kind::reference;
        c.name = item.ref.target;
        c.braced = item.ref.braced;
        c.span = item.ref.span;
        v.cells = orphan_cells_.store(std::span(&c, 1));
    }
    sp.has_references = true;
    sp.value = orphan_values_.store(std::span(&v, 1));
    sp.name_span = item.ref.span;
    BProp p;
    p.name = sp.name;
    p.def = &sp;
    frag->props.push_back(std::move(p));
    frag->reference_props = true;
    BNode* overlay = build(item.node, frag);
    overlay->name = "__overlay__";
    frag->children.push_back(overlay);
    root_->children.push_back(frag);
}

void Resolver::top_level(const syntax::TopLevel& item) {
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
                node_label(target, l->name, l->hash);
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

std::string_view Resolver::keep_path(std::string_view parent, std::string_view name) {
    // "" + "" is the root's "/"; below the root, parent + '/' + name.
    const bool root = parent.empty() && name.empty();
    const bool slash = !root && parent != "/";
    const std::size_t size = root ? 1 : parent.size() + (slash ? 1 : 0) + name.size();
    if (path_left_ < size + 1) {
        const std::size_t block = std::max<std::size_t>(size + 1, 16384);
        path_blocks_.push_back(std::make_unique_for_overwrite<char[]>(block));
        path_free_ = path_blocks_.back().get();
        path_left_ = block;
    }
    char* at = path_free_;
    char* p = at;
    if (root) {
        *p++ = '/';
    } else {
        p = std::copy(parent.begin(), parent.end(), p);
        if (slash) *p++ = '/';
        p = std::copy(name.begin(), name.end(), p);
    }
    *p = '\0'; // for a /__symbols__ value
    path_free_ += size + 1;
    path_left_ -= size + 1;
    return {at, size};
}

void Resolver::fill_paths(BNode& n, std::string_view parent_path, bool under, bool leads) {
    const bool root = &n == root_;
    n.fullpath = root ? keep_path({}, {}) : keep_path(parent_path, n.name);
    // What convert() puts into the Tree (ResolveOptions::whole_tree): the root, its children,
    // what lies under chunk_paths (everything when there are none); everything for a whole tree.
    under = under || (leads && under_chunk_paths(n));
    leads = leads && !under && (root || leads_to_chunk_path(n));
    n.in_tree = options_.whole_tree || root || parent_path == "/" || under;
    for (BNode* c : n.children)
        fill_paths(*c, n.fullpath, under, leads);
}

} // namespace dts_resolver

std::optional<Tree> resolve(const syntax::File& file, Diagnostics& diags,
                            const ResolveOptions& options) {
    dts_resolver::Resolver r(file, diags, options);
    return r.run();
}

ParseOptions parse_options_for(const PreprocessOptions& options) {
    ParseOptions popts;
    popts.include_dirs = options.include_dirs;
    popts.limits = options.limits;
    if (options.kernel_tree) {
        popts.include_dirs.push_back(*options.kernel_tree + "/scripts/dtc/include-prefixes");
        popts.include_dirs.push_back(*options.kernel_tree + "/include");
    }
    return popts;
}

std::optional<Tree> load_dts(const std::string& path, const PreprocessOptions& options,
                             FileCache& cache, Diagnostics& diags,
                             const ResolveOptions& resolve_options) {
    auto text = preprocess(path, options, cache, diags);
    if (!text) return std::nullopt;
    auto syntax_file = parse(*text, parse_options_for(options), cache, diags);
    if (!syntax_file) return std::nullopt;
    ResolveOptions ropts = resolve_options;
    if (ropts.input.empty()) ropts.input = path;
    auto tree = resolve(*syntax_file, diags, ropts);
    if (tree && !syntax_file->read_files) {
        tree->sources.emplace();
        for (const auto& file : text->files)
            if (file) tree->sources->push_back(file->path);
    }
    return tree;
}

} // namespace cmalign::dt
