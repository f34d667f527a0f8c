// Kconfig evaluation: sym_calc_value() and friends of scripts/kconfig/symbol.c, the reading of a
// .config by confdata.c (conf_read_simple/conf_read) and the writing by conf_write(), for the
// versions whose rules differ (choices were reworked in 6.11; out-of-range values are kept and
// clamped since 6.8 while earlier kernels drop them).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "cmalign/kconfig/kconfig_tree.hpp"
#include "kconfig/kconfig_model.hpp"

namespace cmalign::kconfig {

using namespace model;

std::string srcarch_of(const std::string& arch) {
    // The top Makefile's SRCARCH mapping.
    if (arch == "i386" || arch == "x86_64") return "x86";
    if (arch == "sparc32" || arch == "sparc64") return "sparc";
    if (arch == "parisc64") return "parisc";
    if (arch == "sh64") return "sh";
    return arch;
}

namespace {

struct TreeVersion {
    int major = 0, minor = 0;
    std::string text; // KERNELVERSION
};

std::optional<TreeVersion> read_version(const std::string& tree, Diagnostics& diags) {
    std::ifstream in(tree + "/Makefile");
    if (!in) {
        diags.error({tree + "/Makefile", 0, 0}, "cannot read the kernel tree's Makefile");
        return std::nullopt;
    }
    std::map<std::string, std::string> v;
    std::string line;
    for (int n = 0; n < 30 && std::getline(in, line); ++n) {
        for (const char* key : {"VERSION", "PATCHLEVEL", "SUBLEVEL", "EXTRAVERSION"}) {
            std::string k = key;
            if (line.rfind(k, 0) != 0) continue;
            auto rest = line.substr(k.size());
            auto eq = rest.find('=');
            if (eq == std::string::npos || rest.find_first_not_of(" \t") != eq) continue;
            auto value = rest.substr(eq + 1);
            value.erase(0, value.find_first_not_of(" \t"));
            while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
                value.pop_back();
            v[k] = value;
        }
    }
    if (v["VERSION"].empty() || v["PATCHLEVEL"].empty()) {
        diags.error({tree + "/Makefile", 0, 0},
                    "no VERSION/PATCHLEVEL in the kernel tree's Makefile");
        return std::nullopt;
    }
    TreeVersion out;
    out.major = std::atoi(v["VERSION"].c_str());
    out.minor = std::atoi(v["PATCHLEVEL"].c_str());
    // KERNELVERSION = $(VERSION)$(if $(PATCHLEVEL),.$(PATCHLEVEL)$(if
    // $(SUBLEVEL),.$(SUBLEVEL)))$(EXTRAVERSION)
    out.text = v["VERSION"] + "." + v["PATCHLEVEL"];
    if (!v["SUBLEVEL"].empty()) out.text += "." + v["SUBLEVEL"];
    out.text += v["EXTRAVERSION"];
    return out;
}

// ------------------------------------------------------------------------------------------
// parse cache: one parsed tree per (tree, arch, environment, shell mode), kept while no file
// it read has changed.

struct CacheEntry {
    std::string key;
    std::shared_ptr<const Tree> tree;
    std::vector<std::pair<std::string, std::filesystem::file_time_type>> stamps;
};

std::mutex cache_mutex;
std::vector<CacheEntry> cache;

bool still_valid(const CacheEntry& e) {
    std::error_code ec;
    for (const auto& [file, stamp] : e.stamps) {
        auto now = std::filesystem::last_write_time(file, ec);
        if (ec || now != stamp) return false;
    }
    return true;
}

// ------------------------------------------------------------------------------------------

struct SymState {
    Tri tri = Tri::no;
    std::string val;
    bool valid = false;
    bool write = false;
    bool written = false;
    Tri visible = Tri::no, dir = Tri::yes, rev = Tri::no, implied = Tri::no;
    bool has_user = false;
    Tri user_tri = Tri::no;
    std::string user_val;
    const Entry* input = nullptr;
    int decided_prop = none;
    std::string decided_by;
    int user_choice = none; // 6.1 choices: the member the .config set to y
    int choice_sel = none;  // 6.1 choices: the member chosen
    // 6.1 SYMBOL_NEED_SET_CHOICE_VALUES: a choice value computes its choice first; a choice sets
    // its unset members to a user n once computed (conf_set_all_new_symbols(def_default)).
    bool need_set_choice = false;
};

bool string_valid(Type type, const std::string& s) {
    // sym_string_valid()
    const char* str = s.c_str();
    char ch;
    switch (type) {
    case Type::string:
        return true;
    case Type::integer:
        ch = *str++;
        if (ch == '-') ch = *str++;
        if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
        if (ch == '0' && *str != 0) return false;
        while ((ch = *str++))
            if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
        return true;
    case Type::hex:
        if (str[0] == '0' && (str[1] == 'x' || str[1] == 'X')) str += 2;
        ch = *str++;
        do {
            if (!std::isxdigit(static_cast<unsigned char>(ch))) return false;
        } while ((ch = *str++));
        return true;
    default:
        return false;
    }
}

class Evaluator {
public:
    Evaluator(const Tree& tree, bool old_choices, bool drop_out_of_range)
        : t_(tree), old_choices_(old_choices), drop_out_of_range_(drop_out_of_range),
          st_(tree.symbols.size()), prop_tri_(tree.props.size(), Tri::no),
          priority_(tree.menus.size()) {
        for (int s : {t_.sym_yes, t_.sym_mod, t_.sym_no}) {
            st_[s].valid = true;
            st_[s].val = t_.symbols[s].name;
        }
        st_[t_.sym_yes].tri = Tri::yes;
        st_[t_.sym_mod].tri = Tri::mod;
        for (std::size_t m = 0; m < t_.menus.size(); ++m)
            if (t_.menus[m].is_choice) priority_[m] = t_.menus[m].choice_members;
    }

    void read_inputs(const Config& inputs, const std::vector<std::string>& file_order,
                     Diagnostics& diags);
    void calc_all();
    std::string write(Config& out, const std::string& heading);

private:
    const Tree& t_;
    bool old_choices_;
    bool drop_out_of_range_;
    std::vector<SymState> st_;
    std::vector<Tri> prop_tri_;
    std::vector<std::vector<int>> priority_; // 6.12 choices: members in priority order
    Tri modules_val_ = Tri::no;

    Type get_type(int s) const {
        Type type = t_.symbols[s].type;
        if (type == Type::tristate) {
            if (old_choices_ && (t_.symbols[s].flags & sym_choice_value) &&
                st_[s].visible == Tri::yes)
                return Type::boolean;
            if (modules_val_ == Tri::no) return Type::boolean;
        }
        return type;
    }
    const std::string& string_value(int s) {
        static const std::string n = "n", m = "m", y = "y";
        Type type = t_.symbols[s].type;
        if (type == Type::boolean || type == Type::tristate) {
            Tri v = st_[s].tri;
            return v == Tri::no ? n : v == Tri::mod ? m : y;
        }
        return st_[s].val;
    }
    Tri eval(int e);
    Tri compare(const Expr& x);
    void calc(int s);
    void calc_visibility(int s);
    int default_prop(int s);
    int range_prop(int s);
    void validate_range(int s);
    bool within_range(int s, const std::string& v);
    int calc_choice(int choice_menu);
    int choice_default(int choice_menu);
    void sub_entries(int menu, std::vector<int>& syms) const;
    bool menu_visible(int m);
    void note_select(int s, Tri before);
};

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

int Evaluator::default_prop(int s) {
    for (int p : t_.symbols[s].props) {
        if (t_.props[p].kind != PropKind::default_) continue;
        prop_tri_[p] = eval(t_.props[p].visible);
        if (prop_tri_[p] != Tri::no) return p;
    }
    return none;
}

int Evaluator::range_prop(int s) {
    for (int p : t_.symbols[s].props) {
        if (t_.props[p].kind != PropKind::range) continue;
        prop_tri_[p] = eval(t_.props[p].visible);
        if (prop_tri_[p] != Tri::no) return p;
    }
    return none;
}

void Evaluator::validate_range(int s) {
    // sym_validate_range()
    Type type = t_.symbols[s].type;
    int base = type == Type::integer ? 10 : type == Type::hex ? 16 : 0;
    if (!base) return;
    int p = range_prop(s);
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
    int p = range_prop(s);
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
    std::vector<int> subs;
    sub_entries(choice_menu, subs);
    for (int s : subs)
        if (st_[s].visible != Tri::no) return s;
    return none;
}

int Evaluator::calc_choice(int choice_menu) {
    std::vector<int> subs;
    sub_entries(choice_menu, subs);
    int res = none;
    if (old_choices_) {
        // 6.1 sym_calc_choice(): the user's choice if visible, else the default.
        for (int s : subs)
            calc_visibility(s);
        int csym = t_.menus[choice_menu].sym;
        int user = st_[csym].user_choice;
        if (user != none && st_[user].visible != Tri::no) return user;
        return choice_default(choice_menu);
    }
    // 6.12 sym_calc_choice()
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

void Evaluator::calc(int s) {
    SymState& st = st_[s];
    if (st.valid) return;
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
        newval = "0";
        break;
    case Type::hex:
        newval = "0x0";
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
    bool is_choice_value = sym.flags & sym_choice_value;
    switch (get_type(s)) {
    case Type::boolean:
    case Type::tristate: {
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
                if (!is_choice) {
                    int p = default_prop(s);
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
                }
            }
            Tri before = newtri;
            newtri = tri_or(newtri, st.rev);
            if (newtri > before) {
                st.tri = newtri;
                note_select(s, before);
            }
        }
        if (newtri == Tri::mod && get_type(s) == Type::boolean) newtri = Tri::yes;
        break;
    }
    case Type::string:
    case Type::hex:
    case Type::integer: {
        if (st.visible != Tri::no && st.has_user) {
            newval = st.user_val;
            break;
        }
        int p = default_prop(s);
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
    st.tri = newtri;
    st.val = newval;
    if (is_choice && old_choices_) {
        st.choice_sel = newtri == Tri::yes ? calc_choice(sym.menus.front()) : none;
    }
    validate_range(s);
    if (is_choice && !old_choices_) st.write = false;
    if (is_choice && old_choices_ && st.need_set_choice) {
        // set_all_choice_values(): members without a value get a user n; the choice is
        // computed again when next asked.
        std::vector<int> members;
        sub_entries(sym.menus.front(), members);
        for (int m : members) {
            if (st_[m].has_user) continue;
            st_[m].has_user = true;
            st_[m].user_tri = Tri::no;
        }
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

void Evaluator::read_inputs(const Config& inputs, const std::vector<std::string>& file_order,
                            Diagnostics& diags) {
    // conf_read_simple() in the order the lines were read: files in order, lines in order,
    // --set last (the merged .config merge_config.sh would write has this order).
    std::vector<const Entry*> entries;
    for (const auto& [name, e] : inputs.entries())
        entries.push_back(&e);
    auto rank = [&](const Entry* e) {
        if (e->where.file == "--set") return static_cast<long>(file_order.size()) + 1;
        auto it = std::find(file_order.begin(), file_order.end(), e->where.file);
        return it == file_order.end() ? static_cast<long>(file_order.size())
                                      : static_cast<long>(it - file_order.begin());
    };
    std::stable_sort(entries.begin(), entries.end(), [&](const Entry* a, const Entry* b) {
        auto ra = rank(a), rb = rank(b);
        if (ra != rb) return ra < rb;
        if (a->where.file != b->where.file) return a->where.file < b->where.file;
        return a->where.line < b->where.line;
    });
    for (const Entry* e : entries) {
        int s = t_.find(e->name);
        if (s == none || t_.symbols[s].type == Type::unknown || (t_.symbols[s].flags & sym_choice))
            continue; // conf_read_simple(): "unknown symbol", ignored
        const Symbol& sym = t_.symbols[s];
        SymState& st = st_[s];
        const std::string& v = e->value;
        bool ok = false;
        switch (sym.type) {
        case Type::tristate:
        case Type::boolean: {
            char c = v.empty() ? 0 : v[0];
            if (e->quoted) c = 0;
            if (c == 'm' && sym.type == Type::tristate) {
                st.user_tri = Tri::mod;
                ok = true;
            } else if (c == 'y') {
                st.user_tri = Tri::yes;
                ok = true;
            } else if (c == 'n') {
                st.user_tri = Tri::no;
                ok = true;
            }
            break;
        }
        case Type::string:
            if (!e->quoted) break; // conf_set_sym_val() needs the quote
            st.user_val = v;
            ok = true;
            break;
        case Type::integer:
        case Type::hex:
            if (e->quoted || !string_valid(sym.type, v)) break;
            st.user_val = v;
            ok = true;
            break;
        default:
            break;
        }
        if (!ok) {
            diags.warning(
                e->where,
                fmt::format("symbol value '{}' invalid for {}; Kconfig ignores it", v, sym.name),
                "config-invalid-value");
            continue;
        }
        st.has_user = true;
        st.input = e;
        if ((sym.flags & sym_choice_value) && sym.choice_menu != none) {
            if (old_choices_) {
                if (st.user_tri == Tri::yes) st_[t_.menus[sym.choice_menu].sym].user_choice = s;
            } else {
                auto& pr = priority_[sym.choice_menu];
                pr.erase(std::remove(pr.begin(), pr.end(), s), pr.end());
                pr.insert(pr.begin(), s);
            }
        }
    }
}

void Evaluator::calc_all() {
    calc(t_.modules_sym);
    modules_val_ = st_[t_.modules_sym].tri;
    if (modules_val_ != Tri::no) {
        for (std::size_t s = 0; s < st_.size(); ++s)
            if (static_cast<int>(s) != t_.sym_yes && static_cast<int>(s) != t_.sym_mod &&
                static_cast<int>(s) != t_.sym_no)
                st_[s].valid = false;
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
        if (dropped)
            for (std::size_t s = 0; s < st_.size(); ++s)
                if (static_cast<int>(s) != t_.sym_yes && static_cast<int>(s) != t_.sym_mod &&
                    static_cast<int>(s) != t_.sym_no)
                    st_[s].valid = false;
    }
    if (old_choices_) {
        // `make <name>_defconfig` (6.1 conf.c conf_set_all_new_symbols(def_default)): after
        // conf_read(), the choices the inputs leave open are computed first, in the order of
        // the symbol hash table: the anonymous choice symbols share bucket 0, newest first.
        // What they pull in on the way (selects of the chosen System type, say) is computed
        // then, before anything that depends on the choice in menu order.
        for (std::size_t s = 0; s < st_.size(); ++s) {
            auto flags = t_.symbols[s].flags;
            if ((flags & sym_choice_value) || ((flags & sym_choice) && st_[s].user_choice == none))
                st_[s].need_set_choice = true;
        }
        for (std::size_t s = st_.size(); s-- > 0;) {
            if (!(t_.symbols[s].flags & sym_choice) || st_[s].user_choice != none) continue;
            calc(static_cast<int>(s));
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

std::string escape(const std::string& v) {
    std::string out = "\"";
    for (char c : v) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string Evaluator::write(Config& out, const std::string& heading) {
    // conf_write()
    std::string text = "#\n# Automatically generated file; DO NOT EDIT.\n# " + heading + "\n#\n";
    bool need_newline = false;
    auto emit = [&](int s) {
        const Symbol& sym = t_.symbols[s];
        SymState& st = st_[s];
        Entry e;
        e.name = sym.name;
        bool is_bool = sym.type == Type::boolean || sym.type == Type::tristate;
        e.value = is_bool ? string_value(s) : st.val;
        e.quoted = sym.type == Type::string;
        if (is_bool && e.value == "n")
            text += "# CONFIG_" + sym.name + " is not set\n";
        else if (sym.type == Type::string)
            text += "CONFIG_" + sym.name + "=" + escape(st.val) + "\n";
        else
            text += "CONFIG_" + sym.name + "=" + e.value + "\n";
        if (st.input && st.input->value == e.value) {
            e.where = st.input->where;
        } else if (st.decided_prop != none) {
            const Location& w = t_.props[st.decided_prop].where;
            e.where = w;
            out.decided_by[sym.name] = st.decided_by;
        } else {
            // No property gave a value: the type's default (n, 0, "") or a user value kconfig
            // could not keep; name the symbol's definition.
            e.where = t_.menus[sym.menus.front()].where;
            out.decided_by[sym.name] = st.input ? "dependencies not met" : "no default";
        }
        out.set(std::move(e));
    };
    int m = t_.menus[0].children.empty() ? none : 0;
    // Iterative depth-first walk over menus[0]'s descendants.
    struct Frame {
        int menu;
        std::size_t next;
    };
    std::vector<Frame> stack{{0, 0}};
    (void)m;
    auto end_check = [&](int menu) {
        const Menu& mm = t_.menus[menu];
        if (mm.sym == none && menu != 0 && mm.prompt != none &&
            t_.props[mm.prompt].kind == PropKind::menu && menu_visible(menu)) {
            text += "# end of " + t_.props[mm.prompt].text + "\n";
            need_newline = true;
        }
    };
    while (!stack.empty()) {
        Frame& f = stack.back();
        const Menu& parent = t_.menus[f.menu];
        if (f.next >= parent.children.size()) {
            int done = f.menu;
            stack.pop_back();
            if (done != 0) end_check(done);
            continue;
        }
        int c = parent.children[f.next++];
        const Menu& menu = t_.menus[c];
        if (menu.sym == none) {
            if (menu_visible(c)) {
                text += "\n#\n# " + t_.props[menu.prompt].text + "\n#\n";
                need_newline = false;
            }
        } else if (!(t_.symbols[menu.sym].flags & sym_choice) && !st_[menu.sym].written &&
                   !(t_.symbols[menu.sym].flags & sym_transitional)) {
            calc(menu.sym);
            if (st_[menu.sym].write) {
                if (need_newline) {
                    text += "\n";
                    need_newline = false;
                }
                st_[menu.sym].written = true;
                if (t_.symbols[menu.sym].type != Type::unknown) emit(menu.sym);
            }
        }
        stack.push_back({c, 0});
    }
    return text;
}

} // namespace

std::optional<Evaluation> evaluate(const std::string& tree_dir, const std::string& arch,
                                   const Config& inputs, const EvalOptions& options,
                                   Diagnostics& diags) {
    std::string tree = tree_dir;
    while (tree.size() > 1 && tree.back() == '/')
        tree.pop_back();
    auto version = read_version(tree, diags);
    if (!version) return std::nullopt;
    ParseInput in;
    in.tree = tree;
    in.arch = arch;
    in.srcarch = srcarch_of(arch);
    in.kernel_version = version->text;
    in.options = options;
    {
        std::error_code ec;
        if (!std::filesystem::is_directory(tree + "/arch/" + in.srcarch, ec)) {
            diags.error({}, fmt::format("the kernel tree {} has no arch/{} (from ARCH={})", tree,
                                        in.srcarch, arch));
            return std::nullopt;
        }
    }
    std::string key = tree + '\0' + arch + '\0' + (options.run_shell ? "1" : "0");
    for (const auto& [k, v] : options.env)
        key += '\0' + k + '=' + v;
    for (const auto& row : limit_table()) // a tree parsed under larger limits is not reused
        key += fmt::format("\0{}={}", row.name, *limit_value(options.limits, row.name));

    std::shared_ptr<const Tree> parsed;
    {
        std::lock_guard lock(cache_mutex);
        for (auto it = cache.begin(); it != cache.end(); ++it) {
            if (it->key != key) continue;
            if (still_valid(*it))
                parsed = it->tree;
            else
                cache.erase(it);
            break;
        }
    }
    if (!parsed) {
        auto fresh = std::make_shared<Tree>();
        fresh->version_major = version->major;
        fresh->version_minor = version->minor;
        if (!parse(in, *fresh, diags)) return std::nullopt;
        CacheEntry entry;
        entry.key = key;
        std::error_code ec;
        for (const auto& f : fresh->files)
            entry.stamps.emplace_back(f, std::filesystem::last_write_time(f, ec));
        entry.stamps.emplace_back(tree + "/Makefile",
                                  std::filesystem::last_write_time(tree + "/Makefile", ec));
        entry.tree = fresh;
        parsed = fresh;
        std::lock_guard lock(cache_mutex);
        cache.push_back(std::move(entry));
    }

    bool old_choices = version->major < 6 || (version->major == 6 && version->minor < 11);
    bool drop_out_of_range = version->major < 6 || (version->major == 6 && version->minor < 8);
    Evaluator ev(*parsed, old_choices, drop_out_of_range);
    std::vector<std::string> order = options.input_order;
    ev.read_inputs(inputs, order, diags);
    ev.calc_all();

    Evaluation out;
    out.arch = arch;
    out.srcarch = in.srcarch;
    out.kernel_version = version->text;
    out.assumptions = parsed->assumptions;
    const auto& root = parsed->menus[0];
    std::string heading =
        root.prompt != none ? parsed->props[root.prompt].text : "Linux Kernel Configuration";
    out.config.header_arch = arch;
    out.config.header_version = version->text;
    out.dotconfig = ev.write(out.config, heading);
    return out;
}

std::optional<Config> olddefconfig(const std::string& tree, const std::string& arch,
                                   const Config& inputs, const EvalOptions& options,
                                   Diagnostics& diags) {
    auto r = evaluate(tree, arch, inputs, options, diags);
    if (!r) return std::nullopt;
    for (const auto& a : r->assumptions)
        diags.note(a.where,
                   fmt::format("assumed toolchain probe: '{}' → '{}' (--kconfig-shell runs it)",
                               a.command, a.result),
                   "kconfig-assumption");
    return std::move(r->config);
}

} // namespace cmalign::kconfig
