// fdt_overlay_apply() on dt::Tree (see dt/overlay.hpp); each step names its libfdt function.
#include "cmalign/internal/dt/overlay.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "cmalign/internal/core/bytes.hpp"
#include "cmalign/internal/core/integer.hpp"

namespace cmalign::dt {

namespace {

std::uint32_t load_be32(const std::vector<std::uint8_t>& v, std::size_t at) {
    return bytes::be32_at(v, at);
}

void store_be32(std::vector<std::uint8_t>& v, std::size_t at, std::uint32_t x) {
    bytes::put_be32(v.data() + at, x);
}

// fdt_nodename_eq_(): "name" matches "name" and, when it has no unit address, "name@addr".
bool nodename_eq(std::string_view node_name, std::string_view wanted) {
    if (node_name.substr(0, wanted.size()) != wanted) return false;
    if (node_name.size() == wanted.size()) return true;
    if (wanted.find('@') != std::string_view::npos) return false;
    return node_name[wanted.size()] == '@';
}

// fdt_subnode_offset(): the first child that matches.
Node* subnode(Node& parent, std::string_view name) {
    for (auto& c : parent.children)
        if (nodename_eq(c.name, name)) return &c;
    return nullptr;
}
const Node* subnode(const Node& parent, std::string_view name) {
    return subnode(const_cast<Node&>(parent), name);
}

std::optional<std::string> string_value(const Property& p) {
    if (p.value.empty() || p.value.back() != 0) return std::nullopt;
    std::string s(p.value.begin(), p.value.end() - 1);
    if (s.find('\0') != std::string::npos) return std::nullopt;
    return s;
}

// fdt_path_offset(): an absolute path, or "alias/rest" through /aliases.
Node* node_at_path(Node& root, std::string_view path) {
    Node* node = &root;
    std::size_t pos = 0;
    if (path.empty()) return nullptr;
    if (path.front() != '/') {
        auto slash = path.find('/');
        auto alias = path.substr(0, slash);
        const Node* aliases = subnode(root, "aliases");
        const Property* p = aliases ? aliases->find_property(alias) : nullptr;
        auto target = p ? string_value(*p) : std::nullopt;
        if (!target || target->empty() || target->front() != '/') return nullptr;
        node = node_at_path(root, *target);
        if (!node || slash == std::string_view::npos) return node;
        pos = slash;
    }
    while (pos < path.size()) {
        while (pos < path.size() && path[pos] == '/')
            ++pos;
        if (pos >= path.size()) break;
        auto slash = path.find('/', pos);
        auto part = path.substr(pos, slash == std::string_view::npos ? path.npos : slash - pos);
        node = subnode(*node, part);
        if (!node) return nullptr;
        pos = slash == std::string_view::npos ? path.size() : slash;
    }
    return node;
}

// fdt_get_phandle(): `phandle`, else `linux,phandle`, each only when one cell long.
std::uint32_t phandle_of(const Node& n) {
    for (const char* name : {"phandle", "linux,phandle"})
        if (const auto* p = n.find_property(name); p && p->value.size() == 4) {
            return load_be32(p->value, 0);
        }
    return 0;
}

void max_phandle(const Node& n, std::uint32_t& max) {
    auto ph = phandle_of(n);
    if (ph != 0xffffffffu) max = std::max(max, ph);
    for (const auto& c : n.children)
        max_phandle(c, max);
}

Node* node_by_phandle(Node& n, std::uint32_t phandle) {
    if (phandle_of(n) == phandle) return &n;
    for (auto& c : n.children)
        if (auto* hit = node_by_phandle(c, phandle)) return hit;
    return nullptr;
}

// Node paths as libfdt's fdt_get_path() prints them.
bool path_of(const Node& root, const Node* target, std::string& path) {
    if (&root == target) return true;
    for (const auto& c : root.children) {
        auto keep = path.size();
        path += "/" + c.name;
        if (path_of(c, target, path)) return true;
        path.resize(keep);
    }
    return false;
}

class Applier {
public:
    Applier(Tree& base, Tree overlay, Diagnostics& diags, OverlayOptions options = {})
        : base_(base), ov_(std::move(overlay)), diags_(diags), options_(options) {}

    // overlay_merge() alone: a lone overlay has no base to take phandles or labels from.
    void run_merge_only() { merge(); }

    bool run() {
        std::uint32_t delta = 0;
        max_phandle(base_.root, delta); // fdt_find_max_phandle
        if (!adjust_phandles(ov_.root, delta)) return false;
        if (const Node* lf = subnode(ov_.root, "__local_fixups__"))
            if (!adjust_local_references(ov_.root, *lf, delta, "/__local_fixups__")) return false;
        if (!fixup_phandles()) return false;
        if (options_.keep_target_phandles) prevent_phandle_overwrite();
        if (!merge()) return false;
        return update_symbols();
    }

private:
    Tree& base_;
    Tree ov_;
    Diagnostics& diags_;
    OverlayOptions options_;

    // libfdt ≥ 1.7.0 overlay_prevent_phandle_overwrite(): an overlay node merged onto a base
    // node that has a phandle takes the base's phandle, and the overlay's own references to it
    // (those /__local_fixups__ lists) follow.
    void prevent_phandle_overwrite() {
        for (const auto& fragment : ov_.root.children) {
            const Node* body = subnode(fragment, "__overlay__");
            if (!body) continue;
            Node* target = quiet_target(fragment);
            if (!target) continue; // merge() reports it
            Node* fragment_node = subnode(ov_.root, fragment.name);
            prevent_node(*target, *subnode(*fragment_node, "__overlay__"));
        }
    }

    void prevent_node(const Node& base_node, Node& ov_node) {
        auto base_ph = phandle_of(base_node);
        auto ov_ph = phandle_of(ov_node);
        if (base_ph && ov_ph) {
            for (const char* name : {"phandle", "linux,phandle"})
                if (Property* p = ov_node.find_property(name); p && p->value.size() == 4)
                    store_be32(p->value, 0, base_ph);
            if (const Node* lf = subnode(ov_.root, "__local_fixups__"))
                replace_local_references(ov_.root, *lf, ov_ph, base_ph);
        }
        for (auto& c : ov_node.children)
            if (const Node* bc = subnode(base_node, c.name)) prevent_node(*bc, c);
    }

    // overlay_update_node_conflicting_references()
    void replace_local_references(Node& tree_node, const Node& fixup_node, std::uint32_t from,
                                  std::uint32_t to) {
        for (const auto& fp : fixup_node.properties) {
            Property* tp = tree_node.find_property(fp.name);
            if (!tp || fp.value.size() % 4 != 0) continue; // checked by the first pass
            for (std::size_t i = 0; i < fp.value.size(); i += 4) {
                auto off = load_be32(fp.value, i);
                if (std::size_t{off} + 4 <= tp->value.size() && load_be32(tp->value, off) == from)
                    store_be32(tp->value, off, to);
            }
        }
        for (const auto& fc : fixup_node.children)
            if (Node* tc = subnode(tree_node, fc.name)) replace_local_references(*tc, fc, from, to);
    }

    // fdt_overlay_target_offset() without reporting: nullptr when there is no usable target.
    Node* quiet_target(const Node& fragment) {
        if (const Property* t = fragment.find_property("target")) {
            if (t->value.size() != 4) return nullptr;
            auto ph = load_be32(t->value, 0);
            if (ph == 0xffffffffu) return nullptr;
            if (ph != 0) return node_by_phandle(base_.root, ph);
        }
        const Property* tp = fragment.find_property("target-path");
        auto path = tp ? string_value(*tp) : std::nullopt;
        return path ? node_at_path(base_.root, *path) : nullptr;
    }

    bool fail(const Location& where, std::string message) {
        Location at = where.known() ? where : Location{ov_.input, 0, 0};
        diags_.error(at, fmt::format("cannot apply overlay {} to {}: {}", ov_.input, base_.input,
                                     std::move(message)));
        return false;
    }

    // overlay_adjust_local_phandles()
    bool adjust_phandles(Node& n, std::uint32_t delta) {
        for (const char* name : {"phandle", "linux,phandle"}) {
            Property* p = n.find_property(name);
            if (!p) continue;
            if (p->value.size() != 4)
                return fail(p->where,
                            fmt::format("`{}` is not one cell (FDT_ERR_BADPHANDLE)", name));
            auto v = load_be32(p->value, 0);
            if (v + delta < v || v + delta == 0xffffffffu)
                return fail(p->where, "no phandle numbers left (FDT_ERR_NOPHANDLES)");
            store_be32(p->value, 0, v + delta);
        }
        for (auto& c : n.children)
            if (!adjust_phandles(c, delta)) return false;
        return true;
    }

    // overlay_update_local_node_references()
    bool adjust_local_references(Node& tree_node, const Node& fixup_node, std::uint32_t delta,
                                 const std::string& fixup_path) {
        for (const auto& fp : fixup_node.properties) {
            if (fp.value.size() % 4 != 0)
                return fail(fp.where, fmt::format("{}/{}: length is not a multiple of 4 "
                                                  "(FDT_ERR_BADOVERLAY)",
                                                  fixup_path, fp.name));
            Property* tp = tree_node.find_property(fp.name);
            if (!tp)
                return fail(fp.where, fmt::format("{} names property `{}`, which the node lacks "
                                                  "(FDT_ERR_BADOVERLAY)",
                                                  fixup_path, fp.name));
            for (std::size_t i = 0; i < fp.value.size(); i += 4) {
                auto off = load_be32(fp.value, i);
                if (std::size_t{off} + 4 > tp->value.size())
                    return fail(fp.where, fmt::format("{}/{}: offset {} is past the value "
                                                      "(FDT_ERR_BADOFFSET)",
                                                      fixup_path, fp.name, off));
                store_be32(tp->value, off, load_be32(tp->value, off) + delta);
            }
        }
        for (const auto& fc : fixup_node.children) {
            Node* tc = subnode(tree_node, fc.name);
            if (!tc)
                return fail(fc.where, fmt::format("{}/{} has no node in the overlay "
                                                  "(FDT_ERR_BADOVERLAY)",
                                                  fixup_path, fc.name));
            if (!adjust_local_references(*tc, fc, delta, fixup_path + "/" + fc.name)) return false;
        }
        return true;
    }

    // overlay_fixup_phandles() / overlay_fixup_phandle()
    bool fixup_phandles() {
        const Node* fixups = subnode(ov_.root, "__fixups__");
        if (!fixups) return true;
        const Node* symbols = subnode(base_.root, "__symbols__");
        for (const auto& fp : fixups->properties) {
            if (!symbols)
                return fail(fp.where,
                            fmt::format("it refers to label `{}` but {} has no /__symbols__ (build "
                                        "the base with dtc -@)",
                                        fp.name, base_.input));
            const Property* sym = symbols->find_property(fp.name);
            if (!sym)
                return fail(fp.where, fmt::format("label `{}` is not in the /__symbols__ of {}",
                                                  fp.name, base_.input));
            auto sym_path = string_value(*sym);
            Node* target = sym_path ? node_at_path(base_.root, *sym_path) : nullptr;
            if (!target)
                return fail(fp.where, fmt::format("label `{}` names {}, which is not in {}",
                                                  fp.name, sym_path.value_or("?"), base_.input));
            auto phandle = phandle_of(*target);
            if (phandle == 0)
                return fail(fp.where, fmt::format("{} (label `{}`) has no phandle in {}", *sym_path,
                                                  fp.name, base_.input));
            // "path:property:offset" strings, each NUL-terminated.
            std::size_t pos = 0;
            const auto& v = fp.value;
            do {
                auto nul = std::find(v.begin() + static_cast<std::ptrdiff_t>(pos), v.end(), 0);
                if (nul == v.end())
                    return fail(fp.where, fmt::format("/__fixups__/{} is not NUL-terminated "
                                                      "(FDT_ERR_BADOVERLAY)",
                                                      fp.name));
                std::string entry(v.begin() + static_cast<std::ptrdiff_t>(pos), nul);
                pos = static_cast<std::size_t>(nul - v.begin()) + 1;
                auto c1 = entry.find(':');
                auto c2 = c1 == std::string::npos ? c1 : entry.find(':', c1 + 1);
                bool ok = c1 != std::string::npos && c1 + 1 != entry.size() &&
                          c2 != std::string::npos && c2 > c1 + 1 && c2 + 1 < entry.size() &&
                          std::all_of(entry.begin() + static_cast<std::ptrdiff_t>(c2 + 1),
                                      entry.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
                if (!ok)
                    return fail(fp.where, fmt::format("/__fixups__/{}: \"{}\" is not "
                                                      "path:property:offset (FDT_ERR_BADOVERLAY)",
                                                      fp.name, entry));
                auto path = entry.substr(0, c1);
                auto prop = entry.substr(c1 + 1, c2 - c1 - 1);
                // libfdt's strtoul() saturates; a number past any property's size is no cell.
                auto parsed =
                    parse_integer(std::string_view(entry).substr(c2 + 1), IntegerSyntax::decimal);
                if (!parsed)
                    return fail(fp.where, fmt::format("/__fixups__/{}: offset {} in \"{}\" is "
                                                      "out of range (FDT_ERR_BADOVERLAY)",
                                                      fp.name, entry.substr(c2 + 1), entry));
                auto offset = static_cast<std::uint64_t>(*parsed);
                Node* node = node_at_path(ov_.root, path);
                Property* p = node ? node->find_property(prop) : nullptr;
                if (!node)
                    return fail(fp.where, fmt::format("/__fixups__/{}: no node {} in the overlay "
                                                      "(FDT_ERR_BADOVERLAY)",
                                                      fp.name, path));
                if (!p || offset + 4 > p->value.size())
                    return fail(fp.where, fmt::format("/__fixups__/{}: {}:{} has no cell at "
                                                      "offset {}",
                                                      fp.name, path, prop, offset));
                store_be32(p->value, static_cast<std::size_t>(offset), phandle);
            } while (pos < v.size());
        }
        return true;
    }

    // fdt_overlay_target_offset(): nullptr with no error when the fragment has no target.
    Node* target_of(const Node& fragment, bool& error) {
        error = false;
        const Property* t = fragment.find_property("target");
        if (t) {
            if (t->value.size() != 4 || load_be32(t->value, 0) == 0xffffffffu) {
                error = true;
                fail(t->where, fmt::format("{}: `target` is not a resolved phandle "
                                           "(FDT_ERR_BADPHANDLE)",
                                           fragment.name));
                return nullptr;
            }
            auto ph = load_be32(t->value, 0);
            if (ph != 0) {
                Node* n = node_by_phandle(base_.root, ph);
                if (!n) {
                    error = true;
                    fail(t->where, fmt::format("{}: no node of {} has phandle {:#x}", fragment.name,
                                               base_.input, ph));
                }
                return n;
            }
        }
        const Property* tp = fragment.find_property("target-path");
        if (!tp) {
            error = true;
            fail(fragment.where, fmt::format("{} has neither `target` nor `target-path` "
                                             "(FDT_ERR_BADOVERLAY)",
                                             fragment.name));
            return nullptr;
        }
        auto path = string_value(*tp);
        Node* n = path ? node_at_path(base_.root, *path) : nullptr;
        if (!n) {
            error = true;
            fail(tp->where, fmt::format("{}: target-path \"{}\" is not in {}", fragment.name,
                                        path.value_or("?"), base_.input));
        }
        return n;
    }

    // overlay_apply_node(): fdt_setprop replaces in place or inserts before the other
    // properties; fdt_add_subnode inserts before the existing children.
    void apply_node(Node& target, const Node& ov, const std::string& ov_path) {
        for (const auto& p : ov.properties) {
            Property copy = p;
            if (ov_.from_dtb && copy.blob_node.empty()) copy.blob_node = ov_path;
            if (Property* existing = target.find_property(p.name))
                *existing = std::move(copy);
            else
                target.properties.insert(target.properties.begin(), std::move(copy));
        }
        for (const auto& c : ov.children) {
            Node* into = subnode(target, c.name);
            if (!into) {
                Node fresh;
                fresh.name = c.name;
                fresh.where = c.where;
                fresh.labels = c.labels;
                into = &*target.children.insert(target.children.begin(), std::move(fresh));
            }
            apply_node(*into, c, ov_path + "/" + c.name);
        }
    }

    // overlay_merge()
    bool merge() {
        for (const auto& fragment : ov_.root.children) {
            const Node* body = subnode(fragment, "__overlay__");
            if (!body) continue;
            bool error = false;
            Node* target = target_of(fragment, error);
            if (error) return false;
            apply_node(*target, *body, "/" + fragment.name + "/" + body->name);
        }
        return true;
    }

    // overlay_symbol_update()
    bool update_symbols() {
        const Node* ov_sym = subnode(ov_.root, "__symbols__");
        if (!ov_sym) return true;
        Node* root_sym = subnode(base_.root, "__symbols__");
        if (!root_sym) {
            Node fresh;
            fresh.name = "__symbols__";
            fresh.where = ov_sym->where;
            base_.root.children.insert(base_.root.children.begin(), std::move(fresh));
            root_sym = &base_.root.children.front();
        }
        for (const auto& p : ov_sym->properties) {
            auto path = string_value(p);
            if (!path || path->empty() || path->front() != '/')
                return fail(p.where, fmt::format("/__symbols__/{} is not a path "
                                                 "(FDT_ERR_BADVALUE)",
                                                 p.name));
            auto s = path->find('/', 1);
            if (s == std::string::npos) continue;
            std::string frag_name = path->substr(1, s - 1);
            std::string rest = path->substr(s);
            std::string rel;
            if (rest.rfind("/__overlay__/", 0) == 0 && rest.size() > 13)
                rel = rest.substr(13);
            else if (rest != "/__overlay__")
                continue;
            const Node* fragment = subnode(ov_.root, frag_name);
            if (!fragment || !subnode(*fragment, "__overlay__"))
                return fail(p.where, fmt::format("/__symbols__/{} names a fragment that is not "
                                                 "there (FDT_ERR_BADOVERLAY)",
                                                 p.name));
            bool error = false;
            Node* target = target_of(*fragment, error);
            if (error) return false;
            std::string target_path;
            if (const auto* tp = fragment->find_property("target-path");
                tp && !fragment->find_property("target"))
                target_path = string_value(*tp).value_or("");
            else
                path_of(base_.root, target, target_path);
            if (target_path == "/") target_path.clear();
            std::string full = target_path + "/" + rel;
            Property sym;
            sym.name = p.name;
            sym.where = p.where;
            sym.value.assign(full.begin(), full.end());
            sym.value.push_back(0);
            if (ov_.from_dtb) sym.blob_node = "/__symbols__";
            root_sym = subnode(base_.root, "__symbols__");
            if (Property* existing = root_sym->find_property(p.name))
                *existing = std::move(sym);
            else
                root_sym->properties.insert(root_sym->properties.begin(), std::move(sym));
        }
        return true;
    }
};

// A reservation-looking node: what a lone overlay may add that the checks would read.
bool holds_reservation(const Node& n) {
    bool pool = false;
    if (const auto* c = n.find_property("compatible")) {
        std::string v(c->value.begin(), c->value.end());
        pool = v.find("shared-dma-pool") != std::string::npos ||
               v.find("restricted-dma-pool") != std::string::npos;
    }
    // `size` and `alloc-ranges` exist only on reserved-memory nodes; `reg` is everywhere.
    if (n.find_property("size") || n.find_property("alloc-ranges")) return true;
    if (n.find_property("reg") &&
        (pool || n.find_property("reusable") || n.find_property("no-map")))
        return true;
    return std::any_of(n.children.begin(), n.children.end(), holds_reservation);
}

void put_cells(Node& n, const char* name, std::uint32_t value, const Location& where) {
    if (n.find_property(name)) return;
    Property p;
    p.name = name;
    p.where = where;
    p.value.resize(4);
    store_be32(p.value, 0, value);
    n.properties.push_back(std::move(p));
}

// #size-cells from a `size` (its whole length), #address-cells from a `reg` then; 2/2 else.
void guess_cells(const Node& n, std::optional<std::uint32_t>& addr,
                 std::optional<std::uint32_t>& size) {
    if (!size)
        if (const auto* p = n.find_property("size");
            p && (p->value.size() == 4 || p->value.size() == 8))
            size = static_cast<std::uint32_t>(p->value.size() / 4);
    for (const auto& c : n.children)
        guess_cells(c, addr, size);
    if (!addr)
        if (const auto* p = n.find_property("reg")) {
            auto cells = p->value.size() / 4;
            if (size && cells > *size && cells - *size <= 2)
                addr = static_cast<std::uint32_t>(cells - *size);
            else if (!size && (cells == 2 || cells == 4))
                addr = size = static_cast<std::uint32_t>(cells / 2);
        }
}

} // namespace

LoneOverlay overlay_without_base(const Tree& overlay) {
    LoneOverlay out;
    Tree filtered;
    filtered.input = overlay.input;
    filtered.from_dtb = overlay.from_dtb;
    filtered.root.where = overlay.root.where;
    std::optional<std::uint32_t> addr, size;
    for (const auto& fragment : overlay.root.children) {
        const Node* body = subnode(fragment, "__overlay__");
        if (!body) continue;
        const Property* target = fragment.find_property("target");
        const Property* target_path = fragment.find_property("target-path");
        auto path = target_path ? string_value(*target_path) : std::nullopt;
        bool by_label = target && !(target->value.size() == 4 && load_be32(target->value, 0) == 0);
        bool usable = !by_label && path && (*path == "/" || *path == "/reserved-memory");
        if (!usable) {
            if (holds_reservation(*body))
                out.skipped.push_back(by_label
                                          ? fmt::format("{} (target = <&label>)", fragment.name)
                                          : fmt::format("{} (target-path = \"{}\")", fragment.name,
                                                        path.value_or("?")));
            continue;
        }
        Node copy = fragment;
        std::erase_if(copy.properties, [](const Property& p) { return p.name == "target"; });
        filtered.root.children.push_back(std::move(copy));
        const Node* rm = *path == "/" ? subnode(*body, "reserved-memory") : body;
        if (rm) guess_cells(*rm, addr, size);
    }
    // The empty base: a root and a /reserved-memory whose cells match (else every pool would be
    // ignored by reserved-memory-format), written only where the overlay leaves them open.
    Tree base;
    base.input = overlay.input;
    base.from_dtb = overlay.from_dtb;
    Node rm;
    rm.name = "reserved-memory";
    base.root.children.push_back(std::move(rm));
    Diagnostics ignored;
    Applier(base, filtered, ignored).run_merge_only();
    Node& rm_node = *subnode(base.root, "reserved-memory");
    const Property* a = rm_node.find_property("#address-cells");
    const Property* s = rm_node.find_property("#size-cells");
    if (!a || !s) {
        std::uint32_t ac = a && a->value.size() == 4 ? load_be32(a->value, 0) : addr.value_or(2);
        std::uint32_t sc = s && s->value.size() == 4 ? load_be32(s->value, 0) : size.value_or(2);
        out.assumed_cells = fmt::format("#address-cells = <{}>, #size-cells = <{}>{}", ac, sc,
                                        addr || size ? " (from the lengths of its reg/size)" : "");
        Location nowhere{overlay.input, 0, 0};
        put_cells(rm_node, "#address-cells", ac, nowhere);
        put_cells(rm_node, "#size-cells", sc, nowhere);
        if (!rm_node.find_property("ranges")) {
            Property ranges;
            ranges.name = "ranges";
            ranges.where = nowhere;
            rm_node.properties.push_back(std::move(ranges));
        }
    }
    // The root's cells equal /reserved-memory's (what a base must have for the pools to count).
    for (const char* name : {"#address-cells", "#size-cells"}) {
        const Property* p = rm_node.find_property(name);
        if (p && p->value.size() == 4) put_cells(base.root, name, load_be32(p->value, 0), p->where);
    }
    out.tree = std::move(base);
    return out;
}

bool is_overlay(const Tree& tree) {
    return std::any_of(tree.root.children.begin(), tree.root.children.end(),
                       [](const Node& c) { return subnode(c, "__overlay__") != nullptr; });
}

bool apply_overlay(Tree& base, const Tree& overlay, Diagnostics& diags,
                   const OverlayOptions& options) {
    return Applier(base, overlay, diags, options).run();
}

} // namespace cmalign::dt
