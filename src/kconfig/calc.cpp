// sym_calc_value() and friends of scripts/kconfig/symbol.c: expressions, visibility, defaults,
// ranges, selects and choices, for the versions whose rules differ (choices reworked in 6.11).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "cmalign/internal/kconfig/evaluator.hpp"

namespace cmalign::kconfig::evaluator {

using namespace model;

Tri Evaluator::eval(int e) {
    if (e == none) return Tri::yes;
    const Expr& x = t_.exprs[e];
    switch (x.op) {
    case Op::symbol:
        calc(x.left);
        return st_[x.left].tri;
    case Op::not_:
        return tri_not(eval(x.left));
    case Op::and_: {
        Tri l = eval(x.left);
        return tri_and(l, eval(x.right));
    }
    case Op::or_: {
        Tri l = eval(x.left);
        return tri_or(l, eval(x.right));
    }
    default:
        return compare(x);
    }
}

Tri Evaluator::compare(const Expr& x) {
    // expr_calc_value() for =, !=, <, <=, >, >=
    calc(x.left);
    calc(x.right);
    const std::string s1 = string_value(x.left);
    const std::string s2 = string_value(x.right);
    enum Kind { k_string, k_signed, k_unsigned };
    struct Val {
        long long s = 0;
        unsigned long long u = 0;
    };
    auto parse = [](const std::string& str, Type type, Val& v) -> Kind {
        const char* p = str.c_str();
        char* tail = nullptr;
        Kind kind;
        errno = 0;
        switch (type) {
        case Type::boolean:
        case Type::tristate:
            v.s = str == "n" ? 0 : str == "m" ? 1 : str == "y" ? 2 : -1;
            return k_signed;
        case Type::integer:
            v.s = std::strtoll(p, &tail, 10);
            kind = k_signed;
            break;
        case Type::hex:
            v.u = std::strtoull(p, &tail, 16);
            kind = k_unsigned;
            break;
        default:
            v.s = std::strtoll(p, &tail, 0);
            kind = k_signed;
            break;
        }
        // expr.c keeps both in one union: a number parsed signed is compared by its bits
        // when the other side is unsigned (PAGE_OFFSET=0x80000000 on arm).
        if (kind == k_signed)
            v.u = static_cast<unsigned long long>(v.s);
        else
            v.s = static_cast<long long>(v.u);
        return !errno && !*tail && tail > p && std::isxdigit(static_cast<unsigned char>(tail[-1]))
                   ? kind
                   : k_string;
    };
    Type t1 = t_.symbols[x.left].type, t2 = t_.symbols[x.right].type;
    Val l, r;
    Kind k1 = k_string, k2 = k_string;
    if (t1 != Type::string || t2 != Type::string) {
        k1 = parse(s1, t1, l);
        k2 = parse(s2, t2, r);
    }
    int res;
    if (k1 == k_string || k2 == k_string) {
        int c = s1.compare(s2);
        res = (c > 0) - (c < 0);
    } else if (k1 == k_unsigned || k2 == k_unsigned) {
        res = (l.u > r.u) - (l.u < r.u);
    } else {
        res = (l.s > r.s) - (l.s < r.s);
    }
    bool b = false;
    switch (x.op) {
    case Op::equal:
        b = res == 0;
        break;
    case Op::unequal:
        b = res != 0;
        break;
    case Op::less:
        b = res < 0;
        break;
    case Op::less_equal:
        b = res <= 0;
        break;
    case Op::greater:
        b = res > 0;
        break;
    case Op::greater_equal:
        b = res >= 0;
        break;
    default:
        break;
    }
    return b ? Tri::yes : Tri::no;
}

void Evaluator::calc_visibility(int s) {
    const Symbol& sym = t_.symbols[s];
    SymState& st = st_[s];
    if (sym.flags & sym_transitional) { // 6.18+ sym_calc_visibility(): always visible
        st.visible = Tri::yes;
        return;
    }
    Tri tri = Tri::no;
    for (int p : sym.props) {
        if (t_.props[p].kind != PropKind::prompt) continue;
        prop_tri_[p] = eval(t_.props[p].visible);
        tri = tri_or(tri, prop_tri_[p]);
    }
    if (tri == Tri::mod && (sym.type != Type::tristate || modules_val_ == Tri::no)) tri = Tri::yes;
    st.visible = tri;
    if (sym.flags & sym_choice_value) return;
    auto bool_fix = [&](Tri v) {
        return v == Tri::mod && get_type(s) == Type::boolean ? Tri::yes : v;
    };
    st.dir = sym.dir_dep == none ? Tri::yes : bool_fix(eval(sym.dir_dep));
    st.rev = sym.rev_dep == none ? Tri::no : bool_fix(eval(sym.rev_dep));
    st.implied = sym.implied == none ? Tri::no : bool_fix(eval(sym.implied));
}

int Evaluator::first_visible_prop(int s, PropKind kind) {
    // sym_get_default_prop() / sym_get_range_prop(): the first one whose condition holds.
    for (int p : t_.symbols[s].props) {
        if (t_.props[p].kind != kind) continue;
        prop_tri_[p] = eval(t_.props[p].visible);
        if (prop_tri_[p] != Tri::no) return p;
    }
    return none;
}

void Evaluator::validate_range(int s) {
    // sym_validate_range(). strtoll() here and below on purpose (not parse_integer()): conf's
    // own parse, saturating and stopping at the first non-digit, so the result is the kernel's.
    Type type = t_.symbols[s].type;
    int base = type == Type::integer ? 10 : type == Type::hex ? 16 : 0;
    if (!base) return;
    int p = first_visible_prop(s, PropKind::range);
    if (p == none) return;
    long long val = std::strtoll(st_[s].val.c_str(), nullptr, base);
    int range_sym = t_.props[p].target;
    calc(range_sym);
    long long val2 = std::strtoll(st_[range_sym].val.c_str(), nullptr, base);
    if (val >= val2) {
        range_sym = t_.props[p].target2;
        calc(range_sym);
        val2 = std::strtoll(st_[range_sym].val.c_str(), nullptr, base);
        if (val <= val2) return;
    }
    st_[s].val = st_[range_sym].val;
    st_[s].decided_prop = p;
    st_[s].decided_by = "range";
}

bool Evaluator::within_range(int s, const std::string& v) {
    // sym_string_within_range() (kernels before 6.8 drop a user value outside its range)
    Type type = t_.symbols[s].type;
    if (type == Type::string) return true;
    if (!string_valid(type, v)) return false;
    int p = first_visible_prop(s, PropKind::range);
    if (p == none) return true;
    int base = type == Type::integer ? 10 : 16;
    auto range_val = [&](int r) {
        calc(r);
        Type rt = t_.symbols[r].type;
        int b = rt == Type::integer ? 10 : rt == Type::hex ? 16 : base;
        return std::strtoll(st_[r].val.c_str(), nullptr, b);
    };
    long long val = std::strtoll(v.c_str(), nullptr, base);
    return val >= range_val(t_.props[p].target) && val <= range_val(t_.props[p].target2);
}

void Evaluator::sub_entries(int menu, std::vector<int>& syms) const {
    for (int c : t_.menus[menu].children) {
        if (t_.menus[c].sym != none) syms.push_back(t_.menus[c].sym);
        sub_entries(c, syms);
    }
}

void Evaluator::choice_values(int choice_menu, std::vector<int>& syms) const {
    for (int c : t_.menus[choice_menu].children)
        if (t_.menus[c].sym != none) syms.push_back(t_.menus[c].sym);
}

int Evaluator::choice_default(int choice_menu) {
    int csym = t_.menus[choice_menu].sym;
    for (int p : t_.symbols[csym].props) {
        if (t_.props[p].kind != PropKind::default_) continue;
        prop_tri_[p] = eval(t_.props[p].visible);
        if (prop_tri_[p] == Tri::no) continue;
        const Expr& x = t_.exprs[t_.props[p].expr];
        if (x.op != Op::symbol) continue;
        if (old_choices_) calc_visibility(x.left);
        if (st_[x.left].visible != Tri::no) {
            st_[x.left].decided_prop = p;
            return x.left;
        }
    }
    // 6.1: the first visible value of the P_CHOICE list (the choice's own entries); 6.12: the
    // first visible sub-entry.
    std::vector<int> subs;
    if (old_choices_)
        choice_values(choice_menu, subs);
    else
        sub_entries(choice_menu, subs);
    for (int s : subs)
        if (st_[s].visible != Tri::no) return s;
    return none;
}

int Evaluator::calc_choice(int choice_menu) {
    std::vector<int> subs;
    int res = none;
    if (old_choices_) {
        // 6.1 sym_calc_choice(): the user's choice if visible, else the default. Only the
        // choice's values count, not the entries nested under them by their dependencies.
        int csym = t_.menus[choice_menu].sym;
        choice_values(choice_menu, subs);
        for (int s : subs) {
            calc_visibility(s);
            if (st_[s].visible != Tri::no && !st_[s].has_user) st_[csym].choice_has_value = false;
        }
        int user = st_[csym].user_choice;
        if (user != none && st_[user].visible != Tri::no) return user;
        return choice_default(choice_menu);
    }
    // 6.12 sym_calc_choice()
    sub_entries(choice_menu, subs);
    for (int s : priority_[choice_menu]) {
        calc_visibility(s);
        if (st_[s].visible == Tri::no) continue;
        if (st_[s].has_user && st_[s].user_tri == Tri::yes) {
            res = s;
            break;
        }
    }
    if (res == none) {
        res = choice_default(choice_menu);
        if (res != none && st_[res].has_user && st_[res].user_tri == Tri::no) res = none;
    }
    if (res == none) {
        for (int s : subs) {
            if (st_[s].visible == Tri::no || st_[s].has_user) continue;
            res = s;
            break;
        }
    }
    if (res == none) {
        for (auto it = priority_[choice_menu].rbegin(); it != priority_[choice_menu].rend(); ++it) {
            if (st_[*it].visible == Tri::no) continue;
            res = *it;
            break;
        }
    }
    for (int s : subs) {
        if (st_[s].visible == Tri::no) continue;
        st_[s].tri = s == res ? Tri::yes : Tri::no;
        st_[s].valid = true;
        st_[s].write = true;
        if (!(st_[s].has_user && st_[s].user_tri == st_[s].tri)) {
            st_[s].decided_by = "choice";
            if (st_[s].decided_prop == none) st_[s].decided_prop = t_.menus[choice_menu].prompt;
        }
    }
    return res;
}

void Evaluator::note_select(int s, Tri before) {
    // Which select (or imply) made the value: the first term that has the value now.
    SymState& st = st_[s];
    const Symbol& sym = t_.symbols[s];
    if (st.rev != Tri::no && st.rev > before) {
        for (auto [by, p] : sym.selectors) {
            Tri term = tri_and(st_[by].tri, prop_tri_[p] = eval(t_.props[p].visible));
            if (term == st.rev || (term != Tri::no && get_type(s) == Type::boolean)) {
                st.decided_prop = p;
                st.decided_by = "selected by " + t_.symbols[by].name;
                return;
            }
        }
    }
}

// CMALIGN_KCONFIG_TRACE_CALC=1 prints every sym_calc_value() entry and exit, nested, to
// stderr: the order in which symbols are computed decides values in dependency cycles, and a
// trace lines up with one from a conf built with the same two printf()s.
namespace {
thread_local int trace_depth = 0; // boards are checked on several threads
const bool trace_calc = std::getenv("CMALIGN_KCONFIG_TRACE_CALC") != nullptr;
} // namespace

std::string Evaluator::trace_name(int s) const {
    const Symbol& sym = t_.symbols[s];
    if (!(sym.flags & sym_choice) || sym.menus.empty()) return sym.name;
    const auto& where = t_.menus[sym.menus.front()].where;
    return fmt::format("<choice {}:{}>", where.file, where.line);
}

void Evaluator::calc(int s) {
    if (st_[s].valid) return;
    if (trace_calc) fmt::print(stderr, "{:{}}> {}\n", "", trace_depth++, trace_name(s));
    calc_inner(s);
    if (trace_calc)
        fmt::print(stderr, "{:{}}< {} {}\n", "", --trace_depth, trace_name(s),
                   static_cast<int>(st_[s].tri));
}

// No user value: the first visible default, raised by `imply` (within the direct dependencies).
Tri Evaluator::tristate_default(int s, int& default_prop) {
    SymState& st = st_[s];
    const Symbol& sym = t_.symbols[s];
    Tri newtri = Tri::no;
    int p = first_visible_prop(s, PropKind::default_);
    default_prop = p;
    if (p != none) {
        newtri = tri_and(eval(t_.props[p].expr), prop_tri_[p]);
        if (newtri != Tri::no) {
            st.write = true;
            st.decided_prop = p;
            st.decided_by = "default";
        }
    }
    if (st.implied != Tri::no) {
        st.write = true;
        Tri before = newtri;
        newtri = tri_and(tri_or(newtri, st.implied), st.dir);
        if (newtri > before) {
            for (auto [by, ip] : sym.impliers) {
                if (tri_and(st_[by].tri, eval(t_.props[ip].visible)) != Tri::no) {
                    st.decided_prop = ip;
                    st.decided_by = "implied by " + t_.symbols[by].name;
                    break;
                }
            }
        }
    }
    return newtri;
}

// A bool or tristate's value (sym_calc_value()'s S_BOOLEAN/S_TRISTATE case): the choice's pick,
// else the user's value within the visibility, else the default; selects on top.
Tri Evaluator::calc_tristate(int s, int& default_prop) {
    SymState& st = st_[s];
    const Symbol& sym = t_.symbols[s];
    const bool is_choice = sym.flags & sym_choice;
    const bool is_choice_value = sym.flags & sym_choice_value;
    Tri newtri = Tri::no;
    if (is_choice_value && !old_choices_ && sym.choice_menu != none) {
        calc_choice(sym.choice_menu);
        newtri = st.tri;
    } else if (is_choice_value && old_choices_ && st.visible == Tri::yes &&
               sym.choice_menu != none) {
        int csym = t_.menus[sym.choice_menu].sym;
        calc(csym);
        int sel = st_[csym].tri == Tri::yes ? st_[csym].choice_sel : none;
        newtri = sel == s ? Tri::yes : Tri::no;
        if (!(st.has_user && st.user_tri == newtri)) {
            st.decided_by = "choice";
            st.decided_prop =
                st.decided_prop == none ? t_.menus[sym.choice_menu].prompt : st.decided_prop;
        }
    } else {
        bool user = false;
        if (st.visible != Tri::no && st.has_user) {
            newtri = tri_and(st.user_tri, st.visible);
            user = true;
        }
        if (!user) {
            if (st.rev != Tri::no) st.write = true;
            if (!is_choice) newtri = tristate_default(s, default_prop);
        }
        Tri before = newtri;
        newtri = tri_or(newtri, st.rev);
        if (newtri > before) {
            st.tri = newtri;
            note_select(s, before);
        }
    }
    if (newtri == Tri::mod && get_type(s) == Type::boolean) newtri = Tri::yes;
    return newtri;
}

void Evaluator::calc_inner(int s) {
    SymState& st = st_[s];
    const Symbol& sym = t_.symbols[s];
    if (st.need_set_choice && (sym.flags & sym_choice_value) && sym.choice_menu != none) {
        st.need_set_choice = false;
        calc(t_.menus[sym.choice_menu].sym);
    }
    st.valid = true;
    Tri newtri = Tri::no;
    std::string newval;
    switch (sym.type) {
    case Type::integer:
        newval = empty_number_default_ ? "" : "0";
        break;
    case Type::hex:
        newval = empty_number_default_ ? "" : "0x0";
        break;
    case Type::string:
        newval = "";
        break;
    case Type::boolean:
    case Type::tristate:
        newval = "n";
        break;
    default:
        st.val = sym.name;
        st.tri = Tri::no;
        return;
    }
    st.write = false;
    calc_visibility(s);
    if (st.visible != Tri::no) st.write = true;
    st.tri = newtri;
    st.val = newval;
    st.decided_prop = none;
    st.decided_by.clear();

    bool is_choice = sym.flags & sym_choice;
    int default_prop = none; // the default property the value came from, if any
    switch (get_type(s)) {
    case Type::boolean:
    case Type::tristate:
        newtri = calc_tristate(s, default_prop);
        break;
    case Type::string:
    case Type::hex:
    case Type::integer: {
        if (st.visible != Tri::no && st.has_user) {
            newval = st.user_val;
            break;
        }
        int p = first_visible_prop(s, PropKind::default_);
        default_prop = p;
        if (p != none) {
            const Expr& x = t_.exprs[t_.props[p].expr];
            if (x.op == Op::symbol) {
                st.write = true;
                calc(x.left);
                newval = st_[x.left].val;
                st.decided_prop = p;
                st.decided_by = "default";
            }
        }
        break;
    }
    default:
        break;
    }
    if (default_prop != none && !st.has_user) {
        // 6.18+: a value whose default is a single transitional symbol the user set counts as
        // set by the user (SYMBOL_DEF_USER), so later passes keep it.
        const Expr& x = t_.exprs[t_.props[default_prop].expr];
        if (x.op == Op::symbol && (t_.symbols[x.left].flags & sym_transitional) &&
            st_[x.left].has_user) {
            st.has_user = true;
            st.user_tri = newtri;
            st.user_val = newval;
        }
    }
    st.tri = newtri;
    st.val = newval;
    if (is_choice && old_choices_) {
        st.choice_sel = newtri == Tri::yes ? calc_choice(sym.menus.front()) : none;
    }
    validate_range(s);
    if ((is_choice && !old_choices_) || (sym.flags & sym_transitional)) st.write = false;
    if (is_choice && old_choices_ && st.need_set_choice) {
        // set_all_choice_values(): the choice counts as set (its members' user n carries no
        // SYMBOL_DEF_USER, so it changes nothing here); computed again when next asked.
        st.choice_has_value = true;
        st.need_set_choice = false;
        st.valid = false;
    }
}

bool Evaluator::menu_visible(int m) {
    const Menu& menu = t_.menus[m];
    if (menu.prompt == none) return false;
    if (menu.visibility != none && eval(menu.visibility) == Tri::no) return false;
    Tri visible;
    if (menu.sym != none) {
        calc(menu.sym);
        visible = prop_tri_[menu.prompt];
    } else {
        visible = prop_tri_[menu.prompt] = eval(t_.props[menu.prompt].visible);
    }
    if (visible != Tri::no) return true;
    if (menu.sym == none || st_[menu.sym].tri == Tri::no) return false;
    for (int c : menu.children)
        if (menu_visible(c)) return true;
    return false;
}

void Evaluator::invalidate_all() {
    for (std::size_t s = 0; s < st_.size(); ++s)
        if (static_cast<int>(s) != t_.sym_yes && static_cast<int>(s) != t_.sym_mod &&
            static_cast<int>(s) != t_.sym_no)
            st_[s].valid = false;
}

void Evaluator::calc_all() {
    calc(t_.modules_sym);
    modules_val_ = st_[t_.modules_sym].tri;
    if (modules_val_ != Tri::no) {
        invalidate_all();
        calc(t_.modules_sym);
    }
    if (drop_out_of_range_) {
        // Before 6.8 conf_read() forgets a user value outside the symbol's range.
        bool dropped = false;
        for (std::size_t s = 0; s < st_.size(); ++s) {
            auto type = t_.symbols[s].type;
            if (!st_[s].has_user || (type != Type::integer && type != Type::hex)) continue;
            if (!within_range(static_cast<int>(s), st_[s].user_val)) {
                st_[s].has_user = false;
                dropped = true;
            }
        }
        if (dropped) invalidate_all();
    }
    if (old_choices_) {
        // 6.1 `make <name>_defconfig`. conf_read() computes every symbol once: that decides
        // which choices keep the value conf_read_simple() gave them (all visible members set
        // by the inputs). Then conf_set_all_new_symbols(def_default): sym_clear_all_valid()
        // forgets what was computed (MODULES first), and the choices left without a value are
        // computed first, in the order of the symbol hash table (the anonymous choice symbols
        // share bucket 0, newest first). What they pull in on the way (selects of the chosen
        // System type, say) is computed then, before anything that depends on the choice in
        // menu order.
        for (std::size_t s = 0; s < st_.size(); ++s)
            calc(static_cast<int>(s));
        invalidate_all();
        calc(t_.modules_sym);
        for (std::size_t s = 0; s < st_.size(); ++s) {
            auto flags = t_.symbols[s].flags;
            if ((flags & sym_choice_value) || ((flags & sym_choice) && !st_[s].choice_has_value))
                st_[s].need_set_choice = true;
        }
        for (std::size_t s = st_.size(); s-- > 0;) {
            if (!(t_.symbols[s].flags & sym_choice) || st_[s].choice_has_value) continue;
            calc(static_cast<int>(s));
            // set_all_choice_values() also for a choice that lost its value after the flags
            // were set (it has no SYMBOL_NEED_SET_CHOICE_VALUES of its own).
            st_[s].choice_has_value = true;
            st_[s].need_set_choice = false;
            st_[s].valid = false;
        }
        // Then conf_write() computes the rest as it walks the menus, in menu order.
        std::vector<int> order;
        sub_entries(0, order);
        for (int s : order)
            calc(s);
    }
    for (std::size_t s = 0; s < st_.size(); ++s)
        calc(static_cast<int>(s));
}

} // namespace cmalign::kconfig::evaluator
