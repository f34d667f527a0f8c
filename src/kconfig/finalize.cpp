// menu_finalize() of scripts/kconfig/menu.c, and the parse's entry point.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>

#include "cmalign/internal/kconfig/parser.hpp"

namespace cmalign::kconfig::model::parser {

// ------------------------------------------------------------------------------------------
// menu_finalize()

int Parser::rewrite_m(int e) {
    // 'm' in a dependency means 'm && MODULES'.
    if (e == none) return e;
    Expr x = tree_.exprs[e];
    switch (x.op) {
    case Op::not_: {
        int l = rewrite_m(x.left);
        return l == x.left ? e : tree_.add_expr(Op::not_, l, none);
    }
    case Op::and_:
    case Op::or_: {
        int l = rewrite_m(x.left), r = rewrite_m(x.right);
        return l == x.left && r == x.right ? e : tree_.add_expr(x.op, l, r);
    }
    case Op::symbol:
        if (x.left == tree_.sym_mod && tree_.modules_sym != none)
            return tree_.add_expr(Op::and_, e, tree_.make_symbol(tree_.modules_sym));
        return e;
    default:
        return e;
    }
}

namespace {

bool contains_symbol(const Tree& t, int e, int sym) {
    // expr_contains_symbol()
    if (e == none) return false;
    const Expr& x = t.exprs[e];
    switch (x.op) {
    case Op::and_:
    case Op::or_:
        return contains_symbol(t, x.left, sym) || contains_symbol(t, x.right, sym);
    case Op::not_:
        return contains_symbol(t, x.left, sym);
    case Op::symbol:
        return x.left == sym;
    default:
        return x.left == sym || x.right == sym;
    }
}

bool depends_symbol(const Tree& t, int e, int sym) {
    // expr_depends_symbol(): `sym`, `sym=y`, `sym=m` or `sym!=n` as a term of an && chain.
    if (e == none) return false;
    const Expr& x = t.exprs[e];
    switch (x.op) {
    case Op::and_:
        return depends_symbol(t, x.left, sym) || depends_symbol(t, x.right, sym);
    case Op::symbol:
        return x.left == sym;
    case Op::equal:
        return x.left == sym && (x.right == t.sym_yes || x.right == t.sym_mod);
    case Op::unequal:
        return x.left == sym && x.right == t.sym_no;
    default:
        return false;
    }
}

bool same_expr(const Tree& t, int a, int b) {
    if (a == b) return true;
    if (a == none || b == none) return false;
    const Expr& x = t.exprs[a];
    const Expr& y = t.exprs[b];
    if (x.op != y.op) return false;
    switch (x.op) {
    case Op::symbol:
        return x.left == y.left;
    case Op::not_:
        return same_expr(t, x.left, y.left);
    case Op::and_:
    case Op::or_:
        return (same_expr(t, x.left, y.left) && same_expr(t, x.right, y.right)) ||
               (same_expr(t, x.left, y.right) && same_expr(t, x.right, y.left));
    default:
        return x.left == y.left && x.right == y.right;
    }
}

// Whether `term` is one of the && terms of `e`.
bool has_and_term(const Tree& t, int e, int term) {
    if (e == none) return false;
    if (t.exprs[e].op == Op::and_)
        return has_and_term(t, t.exprs[e].left, term) || has_and_term(t, t.exprs[e].right, term);
    return same_expr(t, e, term);
}

// menu_finalize()'s "superset" test, on && chains: every term of `base` (the symbol's prompt
// condition) is also a term of `dep`, e.g. '(sym || Q) && R' when sym depends on R. Walks both
// chains in place: no term lists to allocate (gcc 14 also misreads freeing those as freeing
// a non-heap object once inlined into finalize_entry).
bool superset_of(const Tree& t, int dep, int base) {
    if (base == none) return true;
    if (t.exprs[base].op == Op::and_)
        return superset_of(t, dep, t.exprs[base].left) && superset_of(t, dep, t.exprs[base].right);
    if (t.exprs[base].op == Op::symbol && t.exprs[base].left == t.sym_yes) return true;
    return has_and_term(t, dep, base);
}

} // namespace

void Parser::finalize_entry(std::vector<int>& list, std::size_t i, bool inside_choice) {
    int c = list[i];
    bool leaf = tree_.menus[c].children.empty();
    finalize(c, inside_choice);
    int s = tree_.menus[c].sym;
    if (!leaf || s == none) return;
    // 6.11+ (_menu_finalize(menu, inside_choice)): every entry of a choice is a member, so
    // none nests under another there.
    if (inside_choice && !dialect_of(tree_.version_major, tree_.version_minor).choice_symbols)
        return;
    // Automatic submenu creation: the consecutive entries after a symbol that depend on it
    // become its entries (recursively: B after A that depends on A goes under A).
    int prompt = tree_.menus[c].prompt;
    int base = prompt != none ? tree_.props[prompt].visible : none;
    while (i + 1 < list.size()) {
        int m = list[i + 1];
        int mp = tree_.menus[m].prompt;
        int dep = mp != none ? tree_.props[mp].visible : tree_.menus[m].dep;
        if (!contains_symbol(tree_, dep, s)) break;
        if (!depends_symbol(tree_, dep, s) && !superset_of(tree_, dep, base)) break;
        finalize_entry(list, i + 1, false);
        tree_.menus[m].parent = c;
        tree_.menus[c].children.push_back(m);
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
}

void Parser::finalize(int parent, bool inside_choice) {
    int psym = tree_.menus[parent].sym;
    bool parent_is_choice = tree_.menus[parent].is_choice;
    bool old_choices = dialect_of(tree_.version_major, tree_.version_minor).choice_symbols;
    auto children = tree_.menus[parent].children;
    if (!children.empty()) {
        if (parent_is_choice && old_choices) {
            // 6.1: a choice's type comes from its first typed member; members get the choice's.
            auto& cs = tree_.symbols[psym];
            for (int c : children) {
                int s = tree_.menus[c].sym;
                if (s != none && tree_.symbols[s].type == Type::unknown)
                    tree_.symbols[s].type = cs.type;
            }
        }
        // Before 6.11 the members of a choice depend on the choice symbol itself.
        int parentdep =
            parent_is_choice && old_choices ? tree_.make_symbol(psym) : tree_.menus[parent].dep;
        for (int c : children) {
            int basedep = tree_.make_and(parentdep, rewrite_m(tree_.menus[c].dep));
            tree_.menus[c].dep = basedep;
            int csym = tree_.menus[c].sym;
            std::vector<int> props;
            if (csym != none)
                props = tree_.symbols[csym].props;
            else if (tree_.menus[c].prompt != none)
                props.push_back(tree_.menus[c].prompt);
            for (int p : props) {
                auto& prop = tree_.props[p];
                if (prop.menu != c) continue;
                prop.visible = tree_.make_and(basedep, rewrite_m(prop.visible));
                if (prop.kind == PropKind::select || prop.kind == PropKind::imply) {
                    auto& es = tree_.symbols[prop.target];
                    int term = tree_.make_and(tree_.make_symbol(csym), prop.visible);
                    if (prop.kind == PropKind::select) {
                        es.rev_dep = tree_.make_or(es.rev_dep, term);
                        es.selectors.push_back({csym, p});
                    } else {
                        es.implied = tree_.make_or(es.implied, term);
                        es.impliers.push_back({csym, p});
                    }
                }
            }
        }
        // Recursively, in list order; an entry with a symbol and no entries of its own takes
        // the entries after it that depend on it (automatic submenus).
        std::vector<int> list = children;
        for (std::size_t i = 0; i < list.size(); ++i)
            finalize_entry(list, i, parent_is_choice);
        tree_.menus[parent].children = list;
    } else if (!inside_choice && psym != none) {
        auto& s = tree_.symbols[psym];
        s.dir_dep = tree_.make_or(s.dir_dep, tree_.menus[parent].dep);
    }
    // The entries of the (possibly new) list: symbols of a choice become its values; the
    // entries of an `if` block or of a symbol without a prompt move up into this list, right
    // after it (and are looked at in turn).
    auto& list = tree_.menus[parent].children;
    for (std::size_t i = 0; i < list.size(); ++i) {
        int c = list[i];
        int s = tree_.menus[c].sym;
        if (parent_is_choice && s != none && !(tree_.symbols[s].flags & sym_choice_value)) {
            tree_.symbols[s].flags |= sym_choice_value;
            tree_.symbols[s].choice_menu = parent;
        }
        int prompt = tree_.menus[c].prompt;
        if (!tree_.menus[c].children.empty() &&
            (prompt == none || tree_.props[prompt].text.empty())) {
            std::vector<int> moved = std::move(tree_.menus[c].children);
            tree_.menus[c].children.clear();
            for (int m : moved)
                tree_.menus[m].parent = parent;
            list.insert(list.begin() + static_cast<std::ptrdiff_t>(i) + 1, moved.begin(),
                        moved.end());
        }
    }
    if (parent_is_choice) {
        if (old_choices && !tree_.menus[parent].optional && tree_.menus[parent].prompt != none) {
            // 6.1: a visible non-optional choice cannot be n ('<visibility> && m' reverse dep).
            auto& cs = tree_.symbols[psym];
            cs.rev_dep = tree_.make_or(
                cs.rev_dep, tree_.make_and(tree_.props[tree_.menus[parent].prompt].visible,
                                           tree_.make_symbol(tree_.sym_mod)));
        }
    }
}

bool Parser::run() {
    tree_.symbols.clear();
    tree_.sym_yes = tree_.lookup("__yes__", true);
    tree_.sym_mod = tree_.lookup("__mod__", true);
    tree_.sym_no = tree_.lookup("__no__", true);
    tree_.symbols[tree_.sym_yes].name = "y";
    tree_.symbols[tree_.sym_mod].name = "m";
    tree_.symbols[tree_.sym_no].name = "n";
    for (int s : {tree_.sym_yes, tree_.sym_mod, tree_.sym_no})
        tree_.symbols[s].type = Type::tristate;
    tree_.menus.assign(1, Menu{});
    tree_.menus[0].where = {"Kconfig", 0, 0};
    try {
        const std::string top = in_.tree + "/Kconfig";
        parse_file("Kconfig", top, *read_kconfig(top, true));
        if (tree_.modules_sym == none) {
            // 6.12 falls back to a MODULES symbol that never becomes y.
            tree_.modules_sym = tree_.lookup("MODULES", false);
        }
        finalize(0, false);
    } catch (const ParseAbort&) {
        return false;
    }
    return !diags_.has_errors();
}

} // namespace cmalign::kconfig::model::parser
