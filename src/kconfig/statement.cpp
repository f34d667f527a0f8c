// Kconfig parser: the statements of parser.y, one line each (entries and blocks, an entry's
// attributes, its dependencies). The rest of the parser is parse.cpp.
#include <algorithm>
#include <initializer_list>

#include <fmt/format.h>

#include "cmalign/internal/kconfig/parser.hpp"

namespace cmalign::kconfig::model {

namespace parser {

void Parser::statement(std::vector<Token>& t) {
    const Token& first = t[0];
    // Assignments (the lexer made the value token raw).
    if (t.size() == 3 && first.kind == Tok::word &&
        (t[1].kind == Tok::equal || t[1].kind == Tok::colon_equal ||
         t[1].kind == Tok::plus_equal)) {
        assign(first.text, t[1].kind, t[2].text);
        current_entry_ = none;
        return;
    }
    if (structure_statement(t) || entry_attribute(t) || dependency_attribute(t)) return;
    if (first.kind == Tok::word)
        fail_at(first, fmt::format("unknown statement \"{}\"", first.text));
    fail_at(first, "invalid statement");
}

// kinds: 0 config/menuconfig, 1 choice, 2 menu, 3 comment
void Parser::need_entry(const Token& at, std::initializer_list<int> kinds) {
    if (current_entry_ == none)
        fail_at(at, fmt::format("syntax error: '{}' outside of an entry", at.text));
    const Menu& m = tree_.menus[current_entry_];
    int kind = m.is_choice                                                             ? 1
               : m.sym != none                                                         ? 0
               : (m.prompt != none && tree_.props[m.prompt].kind == PropKind::comment) ? 3
                                                                                       : 2;
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
        fail_at(at, fmt::format("syntax error: '{}' is not allowed here", at.text));
}

// `bool`, `tristate`, `int`, `hex`, `string`, with an optional prompt.
void Parser::type_attribute(const std::vector<Token>& t, std::size_t& i, Type type) {
    need_entry(t[0], {0, 1});
    set_type(type);
    if (i < t.size() && (t[i].kind == Tok::quoted || t[i].kind == Tok::word)) {
        std::string text = t[i++].text;
        int cond = parse_if_expr(t, i);
        add_prompt(PropKind::prompt, text, cond);
    }
    expect_end(t, i);
}

// Entries, blocks and their ends, comments, the main menu title and `source`.
bool Parser::structure_statement(const std::vector<Token>& t) {
    std::size_t i = 1;
    const Token& first = t[0];
    switch (first.kind) {
    case Tok::kw_config:
    case Tok::kw_menuconfig: {
        if (i >= t.size() || t[i].kind != Tok::word)
            fail_at(first, fmt::format("syntax error: '{}' needs a symbol name", first.text));
        int sym = tree_.lookup(t[i++].text, false);
        expect_end(t, i);
        add_entry(sym);
        if (first.kind == Tok::kw_menuconfig) tree_.menus[current_entry_].is_choice = false;
        if (current_choice_ != none) {
            auto& members = tree_.menus[current_choice_].choice_members;
            if (std::find(members.begin(), members.end(), sym) == members.end())
                members.push_back(sym);
        }
        return true;
    }
    case Tok::kw_choice: {
        int sym;
        if (i < t.size() && t[i].kind == Tok::word)
            sym = tree_.lookup(t[i++].text, false);
        else
            sym = tree_.lookup("", true); // anonymous
        expect_end(t, i);
        tree_.symbols[sym].flags |= sym_choice;
        tree_.symbols[sym].flags &= static_cast<std::uint16_t>(~sym_const);
        int m = add_entry(sym);
        tree_.menus[m].is_choice = true;
        set_type(Type::boolean);
        blocks_.push_back({Tok::kw_choice, m, here()});
        current_menu_ = m;
        current_choice_ = m;
        return true;
    }
    case Tok::kw_endchoice:
    case Tok::kw_endmenu:
    case Tok::kw_endif: {
        Tok want = first.kind == Tok::kw_endchoice ? Tok::kw_choice
                   : first.kind == Tok::kw_endmenu ? Tok::kw_menu
                                                   : Tok::kw_if;
        if (blocks_.empty() || blocks_.back().kind != want ||
            blocks_.back().where.file != stack_.back()->full)
            fail_at(first, fmt::format("unexpected '{}'", first.text));
        expect_end(t, i);
        blocks_.pop_back();
        current_menu_ = tree_.menus[current_menu_].parent;
        if (want == Tok::kw_choice) {
            current_choice_ = none;
            for (auto& b : blocks_)
                if (b.kind == Tok::kw_choice) current_choice_ = b.menu;
        }
        current_entry_ = none;
        return true;
    }
    case Tok::kw_menu: {
        std::string text = expect_string(t, i, "a menu title");
        expect_end(t, i);
        int m = add_entry(none);
        add_prompt(PropKind::menu, text, none);
        blocks_.push_back({Tok::kw_menu, m, here()});
        current_menu_ = m;
        return true;
    }
    case Tok::kw_if: {
        int cond = parse_expr(t, i);
        expect_end(t, i);
        int m = add_entry(none);
        add_dep(cond);
        blocks_.push_back({Tok::kw_if, m, here()});
        current_menu_ = m;
        current_entry_ = none;
        return true;
    }
    case Tok::kw_comment: {
        std::string text = expect_string(t, i, "a comment text");
        expect_end(t, i);
        add_entry(none);
        add_prompt(PropKind::comment, text, none);
        return true;
    }
    case Tok::kw_mainmenu: {
        std::string text = expect_string(t, i, "a title");
        expect_end(t, i);
        current_entry_ = 0;
        tree_.props.push_back({PropKind::menu, 0, none, none, none, none, text, here()});
        tree_.menus[0].prompt = static_cast<int>(tree_.props.size()) - 1;
        current_entry_ = none;
        return true;
    }
    case Tok::kw_source:
    case Tok::kw_rsource:
    case Tok::kw_osource:
    case Tok::kw_orsource: {
        std::string name = expect_string(t, i, "a file name");
        expect_end(t, i);
        current_entry_ = none;
        source(name, first.kind, first);
        current_entry_ = none;
        return true;
    }
    default:
        return false;
    }
}

// What an entry is: type, prompt, defaults, help and options.
bool Parser::entry_attribute(const std::vector<Token>& t) {
    std::size_t i = 1;
    const Token& first = t[0];
    switch (first.kind) {
    case Tok::kw_bool:
        type_attribute(t, i, Type::boolean);
        return true;
    case Tok::kw_tristate:
        type_attribute(t, i, Type::tristate);
        return true;
    case Tok::kw_int:
        type_attribute(t, i, Type::integer);
        return true;
    case Tok::kw_hex:
        type_attribute(t, i, Type::hex);
        return true;
    case Tok::kw_string:
        type_attribute(t, i, Type::string);
        return true;
    case Tok::kw_prompt: {
        need_entry(first, {0, 1});
        std::string text = expect_string(t, i, "a prompt");
        int cond = parse_if_expr(t, i);
        expect_end(t, i);
        add_prompt(PropKind::prompt, text, cond);
        return true;
    }
    case Tok::kw_default:
    case Tok::kw_def_bool:
    case Tok::kw_def_tristate: {
        need_entry(first, {0, 1});
        int value = parse_expr(t, i);
        int cond = parse_if_expr(t, i);
        expect_end(t, i);
        add_prop(PropKind::default_, value, cond);
        if (first.kind == Tok::kw_def_bool) set_type(Type::boolean);
        if (first.kind == Tok::kw_def_tristate) set_type(Type::tristate);
        return true;
    }
    case Tok::kw_help: {
        need_entry(first, {0, 1, 2, 3});
        expect_end(t, i);
        skip_help();
        return true;
    }
    case Tok::kw_modules: {
        need_entry(first, {0});
        expect_end(t, i);
        if (tree_.modules_sym != none && tree_.modules_sym != entry_symbol())
            fail_at(first,
                    fmt::format(
                        "symbol '{}' redefines option 'modules' already defined by symbol '{}'",
                        tree_.symbols[entry_symbol()].name, tree_.symbols[tree_.modules_sym].name));
        tree_.modules_sym = entry_symbol();
        return true;
    }
    case Tok::kw_optional: {
        need_entry(first, {1});
        expect_end(t, i);
        tree_.menus[current_entry_].optional = true;
        return true;
    }
    case Tok::kw_option: {
        // 5.10's parser.y: `option modules`, `option defconfig_list` (the symbol is never written:
        // SYMBOL_NO_WRITE), `option allnoconfig_y` (allnoconfig only). Later kernels dropped it.
        need_entry(first, {0, 1});
        if (i < t.size() && t[i].kind == Tok::kw_modules) tree_.modules_sym = entry_symbol();
        if (i < t.size() && t[i].text == "defconfig_list" && entry_symbol() != none)
            tree_.symbols[entry_symbol()].flags |= sym_no_write;
        return true;
    }
    case Tok::kw_transitional: {
        need_entry(first, {0});
        expect_end(t, i);
        tree_.symbols[entry_symbol()].flags |= sym_transitional;
        return true;
    }
    default:
        return false;
    }
}

// How an entry depends on others: depends on, visible if, select, imply, range.
bool Parser::dependency_attribute(const std::vector<Token>& t) {
    std::size_t i = 1;
    const Token& first = t[0];
    switch (first.kind) {
    case Tok::kw_depends: {
        need_entry(first, {0, 1, 2, 3});
        if (i >= t.size() || t[i].kind != Tok::kw_on)
            fail_at(first, "syntax error: expected 'depends on'");
        ++i;
        int e = parse_expr(t, i);
        if (i < t.size() && t[i].kind == Tok::kw_if) {
            // 7.0+ `depends on X if Y` (menu_add_dep(dep, cond)): X || (Y = n).
            if (!dialect_of(tree_.version_major, tree_.version_minor).depends_if)
                fail_at(t[i], "syntax error: unexpected 'if'");
            int cond = parse_if_expr(t, i);
            e = tree_.make_or(e, trans_compare(cond, Op::equal, tree_.sym_no));
        }
        expect_end(t, i);
        add_dep(e);
        return true;
    }
    case Tok::kw_visible: {
        need_entry(first, {2});
        if (i >= t.size() || t[i].kind != Tok::kw_if)
            fail_at(first, "syntax error: expected 'visible if'");
        ++i;
        int e = parse_expr(t, i);
        expect_end(t, i);
        auto& m = tree_.menus[current_entry_];
        m.visibility = tree_.make_and(m.visibility, e);
        return true;
    }
    case Tok::kw_select:
    case Tok::kw_imply: {
        need_entry(first, {0});
        if (i >= t.size() || t[i].kind != Tok::word)
            fail_at(first, fmt::format("syntax error: '{}' needs a symbol", first.text));
        int target = tree_.lookup(t[i++].text, false);
        int cond = parse_if_expr(t, i);
        expect_end(t, i);
        int p =
            add_prop(first.kind == Tok::kw_select ? PropKind::select : PropKind::imply, none, cond);
        tree_.props[p].target = target;
        return true;
    }
    case Tok::kw_range: {
        need_entry(first, {0});
        int lo = parse_symbol(t, i);
        int hi = parse_symbol(t, i);
        int cond = parse_if_expr(t, i);
        expect_end(t, i);
        int p = add_prop(PropKind::range, none, cond);
        tree_.props[p].target = lo;
        tree_.props[p].target2 = hi;
        return true;
    }
    default:
        return false;
    }
}

} // namespace parser

} // namespace cmalign::kconfig::model
