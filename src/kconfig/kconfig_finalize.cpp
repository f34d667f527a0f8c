// menu_finalize() of scripts/kconfig/menu.c, and the parse's entry point.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <glob.h>
#include <optional>
#include <sstream>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <fmt/format.h>

#include "kconfig/kconfig_parser.hpp"

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
        for (int c : children)
            finalize(c, parent_is_choice);
    } else if (!inside_choice && psym != none) {
        auto& s = tree_.symbols[psym];
        s.dir_dep = tree_.make_or(s.dir_dep, tree_.menus[parent].dep);
    }
    if (parent_is_choice) {
        for (int c : children) {
            int s = tree_.menus[c].sym;
            if (s == none) continue;
            tree_.symbols[s].flags |= sym_choice_value;
            if (tree_.symbols[s].choice_menu == none) tree_.symbols[s].choice_menu = parent;
        }
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
        parse_file("Kconfig", in_.tree + "/Kconfig");
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
