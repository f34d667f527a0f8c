// What dtc generates (/__symbols__, /__fixups__, /__local_fixups__, boot cpuid) and the
// conversion of the resolved tree into a dt::Tree.
#include <algorithm>

#include <fmt/format.h>

#include "cmalign/internal/core/bytes.hpp"
#include "cmalign/internal/dt/dts_resolver.hpp"

namespace cmalign::dt::dts_resolver {

// build_root_node: an existing live child of the root, or a new one at the end.
BNode* Resolver::root_child(std::string_view name) {
    for (BNode* c : root_->children)
        if (!c->deleted && c->name == name) return c;
    BNode* n = new_node();
    n->name = name;
    n->parent = root_;
    n->fullpath = keep_path("/", name);
    n->in_tree = true; // as every child of the root
    root_->children.push_back(n);
    return n;
}

// append_to_property
void Resolver::append_generated(BNode* n, std::string_view name, const void* data,
                                std::size_t len) {
    const auto* b = static_cast<const std::uint8_t*>(data);
    for (auto& p : n->props)
        if (!p.deleted && p.name == name) {
            p.own().generated.insert(p.own().generated.end(), b, b + len);
            return;
        }
    BProp& p = n->props.emplace_back();
    p.name = name;
    p.own().generated.assign(b, b + len);
}

// dtc -@: /__symbols__ { label = "/path"; } for every labelled node, each given a phandle.
void Resolver::generate_symbols() {
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
            append_generated(symbols, l.name, n.fullpath.data(), n.fullpath.size() + 1);
        }
        node_phandle(n);
    });
}

// Plugins: /__fixups__ { label = "/path:prop:offset", ...; } for references left open, and
// /__local_fixups__ mirroring the nodes whose cells hold resolved references.
void Resolver::generate_fixups() {
    struct Ref {
        BNode* node;
        BProp* prop;
        std::size_t offset;
        syntax::Reference ref;
        BNode* target;
    };
    std::vector<Ref> refs;
    for_live(*root_, [&](BNode& n) {
        for (auto& p : n.props) {
            if (p.deleted || !p.def || !p.def->has_references) continue;
            evaluate(*p.def, &p.phandles(), &p.path_targets(), false, scratch_);
            std::size_t k = 0;
            for (const auto& item : p.def->value)
                for (const auto& c : item.cells)
                    if (c.kind == syntax::Cell::Kind::reference && item.bits == 32 &&
                        k < scratch_.phandle_offsets.size())
                        refs.push_back({&n, &p, scratch_.phandle_offsets[k++], c.ref(),
                                        by_ref(c.name, c.label_hash)});
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
            if (r.ref.target.find('/') != std::string::npos) {
                error(r.ref.span, fmt::format("cannot generate a fixup for the path "
                                              "reference &{{{}}}",
                                              r.ref.target));
                continue;
            }
            std::string entry = fmt::format("{}:{}:{}", r.node->fullpath, r.prop->name, r.offset);
            append_generated(fixups, r.ref.target, entry.c_str(), entry.size() + 1);
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
            std::uint8_t be[4];
            bytes::put_be32(be, static_cast<std::uint32_t>(r.offset));
            append_generated(at, r.prop->name, be, 4);
        }
    }
}

std::uint32_t Resolver::guess_boot_cpuid() {
    BNode* cpus = by_path(root_, "/cpus");
    if (!cpus || cpus->children.empty()) return 0;
    BNode* cpu = cpus->children.front();
    for (auto& p : cpu->props) {
        if (p.deleted || p.name != "reg" || !p.def) continue;
        evaluate(*p.def, nullptr, nullptr, false, scratch_);
        if (scratch_.bytes.size() != 4) return 0;
        return bytes::be32(scratch_.bytes.data());
    }
    return 0;
}

// Node and property locations: everywhere, or (when the caller asks for fewer) for the root,
// the memory nodes among its children (device_type = "memory", wherever they are named) and
// what lies under chunk_paths. Locating costs a search and a string copy.
bool Resolver::locations_wanted(const BNode& bn) {
    if (options_.all_locations || &bn == root_) return true;
    if (!options_.chunk_paths.empty() && under_chunk_paths(bn)) return true;
    if (bn.fullpath.find('/', 1) != std::string_view::npos) return false; // not a root child
    for (const auto& p : bn.props) {
        if (p.deleted || p.name != "device_type" || !p.def) continue;
        evaluate(*p.def, nullptr, nullptr, false, scratch_);
        static constexpr std::string_view memory{"memory", 7}; // with its NUL
        return scratch_.bytes.size() >= memory.size() &&
               std::equal(memory.begin(), memory.end(), scratch_.bytes.begin());
    }
    return false;
}

bool Resolver::has_property(const BNode& bn, std::string_view name) {
    for (const auto& p : bn.props)
        if (!p.deleted && p.name == name) return true;
    return false;
}

bool Resolver::under_chunk_paths(const BNode& bn) const {
    if (options_.chunk_paths.empty()) return true;
    for (const auto& prefix : options_.chunk_paths) {
        const std::string_view p = bn.fullpath;
        // "/memory" covers "/memory@40000000" and everything below either
        if (p == prefix || prefix == "/" ||
            (p.size() > prefix.size() && p.starts_with(prefix) &&
             (p[prefix.size()] == '/' || p[prefix.size()] == '@')))
            return true;
    }
    return false;
}

// Whether some chunk path lies strictly below `bn` ("/" leads to "/reserved-memory").
bool Resolver::leads_to_chunk_path(const BNode& bn) const {
    const std::string_view p = bn.fullpath;
    for (const auto& prefix : options_.chunk_paths) {
        const std::string_view c = prefix;
        if (p == "/" ? c.size() > 1 : c.size() > p.size() && c.starts_with(p) && c[p.size()] == '/')
            return true;
    }
    return false;
}

void Resolver::convert(const BNode& bn, Node& out) {
    out.name = std::string(bn.name);
    if (!options_.whole_tree && !file_.plugin && bn.parent == root_ && !under_chunk_paths(bn) &&
        !has_property(bn, "device_type") && !has_property(bn, "target") &&
        !has_property(bn, "target-path"))
        return; // of such a root child (/soc, /cpus, ...) a partial Tree keeps only the name
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
        for (const auto& l : bp.labels())
            if (!l.deleted) p.labels.emplace_back(l.name);
        if (bp.generated_phandle) {
            put_be(p.value, bn.phandle, 32);
            p.where = out.where;
            continue;
        }
        if (!bp.def) {
            p.value = bp.generated();
            p.where = out.where;
            continue;
        }
        if (locate) p.where = file_.locate(bp.def->name_span);
        evaluate(*bp.def, &bp.phandles(), &bp.path_targets(), chunks_wanted(bn), scratch_);
        p.value = scratch_.bytes;
        // A hand-written /__fixups__ or /__local_fixups__ entry gets the generated ones
        // appended (dtc's append_to_property()).
        p.value.insert(p.value.end(), bp.generated().begin(), bp.generated().end());
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
        live_children += !c->deleted && c->in_tree ? 1 : 0;
    out.children.reserve(live_children);
    for (const BNode* c : bn.children)
        if (!c->deleted && c->in_tree) convert(*c, out.children.emplace_back());
}

} // namespace cmalign::dt::dts_resolver
