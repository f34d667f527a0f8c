// The parsed Kconfig tree: menus, symbols, properties and expressions, as scripts/kconfig keeps
// them (lkc.h, expr.h), with indices instead of pointers so that a parsed tree can be copied
// for each evaluation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/internal/kconfig/version.hpp"
#include "cmalign/kconfig/kconfig_tree.hpp"

namespace cmalign::kconfig::model {

enum class Tri : std::uint8_t { no = 0, mod = 1, yes = 2 };
inline Tri tri_and(Tri a, Tri b) {
    return a < b ? a : b;
}
inline Tri tri_or(Tri a, Tri b) {
    return a > b ? a : b;
}
inline Tri tri_not(Tri a) {
    return static_cast<Tri>(2 - static_cast<int>(a));
}

enum class Type : std::uint8_t { unknown, boolean, tristate, integer, hex, string };

enum class Op : std::uint8_t {
    symbol,
    not_,
    and_,
    or_,
    equal,
    unequal,
    less,
    less_equal,
    greater,
    greater_equal
};

constexpr int none = -1;

struct Expr {
    Op op = Op::symbol;
    int left = none;  // sub-expression (not/and/or) or symbol (symbol, comparisons)
    int right = none; // sub-expression (and/or) or symbol (comparisons)
};

enum class PropKind : std::uint8_t { prompt, menu, comment, default_, select, imply, range };

struct Property {
    PropKind kind = PropKind::default_;
    int menu = none;    // the menu entry that holds it
    int expr = none;    // default value; for range: none (see lo/hi)
    int target = none;  // select/imply: the symbol; range: lo symbol
    int target2 = none; // range: hi symbol
    int visible = none; // its condition, with the entry's dependencies once finalized
    std::string text;   // prompt text
    Location where;
};

enum SymFlag : std::uint16_t {
    sym_const = 1,
    sym_choice = 2,
    sym_choice_value = 4,
    sym_transitional = 8,
    sym_no_write = 16, // 5.10 `option defconfig_list`
};

struct Symbol {
    std::string name;
    Type type = Type::unknown;
    std::uint16_t flags = 0;
    std::vector<int> props; // in definition order (menu_add_prop appends)
    std::vector<int> menus;
    int dir_dep = none, rev_dep = none, implied = none;
    int choice_menu = none; // for choice values: the choice's menu
    // select/imply terms, for provenance: (selecting symbol, property)
    std::vector<std::pair<int, int>> selectors, impliers;
};

struct Menu {
    int sym = none;
    int prompt = none; // property
    int dep = none;
    int visibility = none;
    int parent = none;
    std::vector<int> children;
    bool is_choice = false;
    bool optional = false;           // 6.1 `optional` choices
    std::vector<int> choice_members; // choice menus: member symbols in parse order
    Location where;
};

// What scripts/kconfig of a release does differently, as far as the evaluator models it: the
// only place the Kconfig layer looks at the version (it sits below the kernel layer, so the rule
// is kept here, in one row per change). Before v6.11 a choice is a symbol of its own (its type
// from its first member, its value the chosen member); before v6.8 conf_read() forgets an
// int/hex value outside its range, later releases clamp it (sym_validate_range()); before v6.9
// an int/hex symbol without a default is empty, later "0"/"0x0" (sym_calc_value()); from v7.0
// `depends on X if Y` means `depends on X || Y = n`. Syntax that only some releases have and
// that needs no version check (5.10's `option ...`, 6.18's `transitional`) is accepted anywhere:
// a tree that uses it is of that release.
// The rows are kconfig::dialect_rows() (cmalign/internal/kconfig/version.hpp).
using kconfig::Dialect;
using kconfig::dialect_of;

// Symbol names to their index in Tree::symbols: open addressing over the indexes, a name
// compared against the symbol itself (std::unordered_map<std::string, int> hashed and allocated
// a node per name: a seventh of an arm64 tree's parse).
class SymbolIndex {
public:
    int find(const std::vector<Symbol>& symbols, std::string_view name) const;
    void add(const std::vector<Symbol>& symbols, int index);

private:
    struct Slot {
        std::int32_t index = -1; // -1: empty
        std::uint32_t hash = 0;
    };
    std::vector<Slot> slots_;
    std::size_t used_ = 0;
};

// One parsed tree; immutable after parse().
struct Tree {
    std::vector<Symbol> symbols;
    SymbolIndex by_name; // the non-constant symbols
    std::vector<Expr> exprs;
    std::vector<Property> props;
    std::vector<Menu> menus; // menus[0] is the root (mainmenu)
    int sym_yes = none, sym_mod = none, sym_no = none, modules_sym = none;
    int version_major = 0, version_minor = 0;
    std::vector<Assumption> assumptions;
    std::vector<std::string> files; // every file read, for cache invalidation

    int lookup(std::string_view name, bool is_const);
    int find(std::string_view name) const { return by_name.find(symbols, name); }
    int add_expr(Op op, int l, int r) {
        exprs.push_back({op, l, r});
        return static_cast<int>(exprs.size()) - 1;
    }
    int make_and(int a, int b) { return a == none ? b : b == none ? a : add_expr(Op::and_, a, b); }
    int make_or(int a, int b) { return a == none ? b : b == none ? a : add_expr(Op::or_, a, b); }
    int make_symbol(int s) { return add_expr(Op::symbol, s, none); }
};

struct ParseInput {
    std::string tree;    // srctree
    std::string arch;    // make ARCH
    std::string srcarch; // SRCARCH
    std::string kernel_version;
    EvalOptions options;
};

// Reads <tree>/Kconfig and every file it sources, then finalizes the menus as menu_finalize()
// does. Errors (located) go to diags; returns false on any error.
bool parse(const ParseInput& input, Tree& tree, Diagnostics& diags);

} // namespace cmalign::kconfig::model
