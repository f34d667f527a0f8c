// Kconfig parser: the lexer of scripts/kconfig/lexer.l (including its second stage that turns
// "WORD =" into an assignment and its indentation-sensitive help text), the macro language of
// preprocess.c, the grammar of parser.y, and menu_finalize() of menu.c.
//
// Written by hand rather than with Spirit X3: the lexer's state depends on the previous tokens
// (assignments, help blocks) and macro expansion happens while tokenizing, which a grammar over
// the raw text cannot express; the statement grammar itself is small.
//
// This file: menu.c's entry building, expressions and files; the statements of parser.y are
// kconfig_statement.cpp, the lexer kconfig_lexer.cpp, the macro language kconfig_macro.cpp,
// menu_finalize() kconfig_finalize.cpp.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <glob.h>
#include <optional>

#include <fmt/format.h>

#include "cmalign/internal/core/disk_cache.hpp"
#include "cmalign/internal/core/name_hash.hpp"
#include "cmalign/internal/kconfig/parser.hpp"

namespace cmalign::kconfig::model {

int SymbolIndex::find(const std::vector<Symbol>& symbols, std::string_view name) const {
    if (slots_.empty()) return none;
    const auto h = static_cast<std::uint32_t>(name_hash(name));
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
        const Slot& s = slots_[i];
        if (s.index < 0) return none;
        if (s.hash == h && symbols[static_cast<std::size_t>(s.index)].name == name) return s.index;
    }
}

void SymbolIndex::add(const std::vector<Symbol>& symbols, int index) {
    auto place = [this](Slot slot) {
        const std::size_t mask = slots_.size() - 1;
        std::size_t i = slot.hash & mask;
        while (slots_[i].index >= 0)
            i = (i + 1) & mask;
        slots_[i] = slot;
    };
    if ((used_ + 1) * 4 > slots_.size() * 3) { // at most 3/4 full; arm64 has 20,000 symbols
        std::vector<Slot> old(slots_.empty() ? 16384 : slots_.size() * 2);
        old.swap(slots_);
        for (const Slot& s : old)
            if (s.index >= 0) place(s);
    }
    place({index,
           static_cast<std::uint32_t>(name_hash(symbols[static_cast<std::size_t>(index)].name))});
    ++used_;
}

int Tree::lookup(std::string_view name, bool is_const) {
    // sym_lookup(): one-letter y/m/n are the constant symbols whatever the quoting.
    if (name.size() == 1) {
        if (name[0] == 'y') return sym_yes;
        if (name[0] == 'm') return sym_mod;
        if (name[0] == 'n') return sym_no;
    }
    if (!is_const) {
        if (auto found = find(name); found != none) return found;
    }
    Symbol s;
    s.name = name;
    if (is_const) s.flags |= sym_const;
    symbols.push_back(std::move(s));
    int index = static_cast<int>(symbols.size()) - 1;
    if (!is_const) by_name.add(symbols, index);
    return index;
}

namespace parser {

namespace fs = std::filesystem;

// ------------------------------------------------------------------------------------------
// parser

int Parser::add_entry(int sym) {
    Menu m;
    m.sym = sym;
    m.parent = current_menu_;
    m.where = {stack_.back()->rel, stmt_line_, 0};
    tree_.menus.push_back(std::move(m));
    int index = static_cast<int>(tree_.menus.size()) - 1;
    tree_.menus[current_menu_].children.push_back(index);
    current_entry_ = index;
    if (sym != none) tree_.symbols[sym].menus.push_back(index);
    return index;
}

int Parser::add_prop(PropKind kind, int expr, int visible) {
    Property p;
    p.kind = kind;
    p.menu = current_entry_;
    p.expr = expr;
    p.visible = visible;
    p.where = {stack_.back()->rel, stmt_line_, 0};
    tree_.props.push_back(std::move(p));
    int index = static_cast<int>(tree_.props.size()) - 1;
    int sym = entry_symbol();
    if (sym != none) tree_.symbols[sym].props.push_back(index);
    return index;
}

void Parser::add_prompt(PropKind kind, const std::string& text, int visible) {
    int index = add_prop(kind, none, visible);
    // menu_add_prompt(): every enclosing menu's `visible if` applies to a P_PROMPT.
    if (kind == PropKind::prompt) {
        for (int m = tree_.menus[current_entry_].parent; m != none; m = tree_.menus[m].parent) {
            if (tree_.menus[m].visibility != none)
                tree_.props[index].visible =
                    tree_.make_and(tree_.props[index].visible, tree_.menus[m].visibility);
        }
    }
    std::string t = text;
    t.erase(0, t.find_first_not_of(" \t"));
    tree_.props[index].text = t;
    tree_.menus[current_entry_].prompt = index;
}

void Parser::set_type(Type type) {
    int sym = entry_symbol();
    if (sym == none) return;
    auto& s = tree_.symbols[sym];
    if (s.type == type || type == Type::unknown) return;
    if (s.type == Type::unknown) {
        s.type = type;
        return;
    }
    // menu_set_type(): "ignoring type redefinition" — the first type stays.
    diags_.warning(here(), fmt::format("ignoring type redefinition of '{}'", s.name));
}

int Parser::parse_symbol(const std::vector<Token>& t, std::size_t& i) {
    if (i >= t.size()) fail("syntax error: expected a symbol at the end of the line");
    const Token& tok = t[i];
    if (tok.kind == Tok::word) {
        ++i;
        return tree_.lookup(tok.text, false);
    }
    if (tok.kind == Tok::quoted) {
        ++i;
        return tree_.lookup(tok.text, true);
    }
    fail_at(tok, fmt::format("syntax error: expected a symbol, found '{}'",
                             tok.text.empty() ? "operator or keyword" : tok.text));
}

int Parser::parse_unary(const std::vector<Token>& t, std::size_t& i) {
    if (++expr_depth_ > max_expr_depth) fail("expression nested too deeply");
    struct DepthGuard {
        int& d;
        ~DepthGuard() { --d; }
    } guard{expr_depth_};
    if (i < t.size() && t[i].kind == Tok::not_) {
        ++i;
        int e = parse_unary(t, i);
        return tree_.add_expr(Op::not_, e, none);
    }
    if (i < t.size() && t[i].kind == Tok::open_paren) {
        ++i;
        int e = parse_expr(t, i);
        if (i >= t.size() || t[i].kind != Tok::close_paren) {
            if (i < t.size()) fail_at(t[i], "syntax error: expected ')'");
            fail("syntax error: expected ')' before the end of the line");
        }
        ++i;
        return e;
    }
    int left = parse_symbol(t, i);
    if (i < t.size()) {
        Op op;
        switch (t[i].kind) {
        case Tok::equal:
            op = Op::equal;
            break;
        case Tok::unequal:
            op = Op::unequal;
            break;
        case Tok::less:
            op = Op::less;
            break;
        case Tok::less_equal:
            op = Op::less_equal;
            break;
        case Tok::greater:
            op = Op::greater;
            break;
        case Tok::greater_equal:
            op = Op::greater_equal;
            break;
        default:
            return tree_.make_symbol(left);
        }
        ++i;
        int right = parse_symbol(t, i);
        return tree_.add_expr(op, left, right);
    }
    return tree_.make_symbol(left);
}

int Parser::parse_and(const std::vector<Token>& t, std::size_t& i) {
    int e = parse_unary(t, i);
    while (i < t.size() && t[i].kind == Tok::and_) {
        ++i;
        e = tree_.add_expr(Op::and_, e, parse_unary(t, i));
    }
    return e;
}

int Parser::parse_expr(const std::vector<Token>& t, std::size_t& i) {
    int e = parse_and(t, i);
    while (i < t.size() && t[i].kind == Tok::or_) {
        ++i;
        e = tree_.add_expr(Op::or_, e, parse_and(t, i));
    }
    return e;
}

// expr_trans_compare() of expr.c: `e type sym` (type equal/unequal, sym y/m/n) rewritten without
// comparing a sub-expression, as the kernel builds `depends on X if Y`.
int Parser::trans_compare(int e, Op type, int sym) {
    if (e == none) {
        int r = tree_.make_symbol(sym);
        return type == Op::unequal ? tree_.add_expr(Op::not_, r, none) : r;
    }
    Expr x = tree_.exprs[e];
    switch (x.op) {
    case Op::and_:
    case Op::or_: {
        int l = trans_compare(x.left, Op::equal, sym);
        int r = trans_compare(x.right, Op::equal, sym);
        bool as_and = (x.op == Op::and_) == (sym == tree_.sym_yes);
        int out = e;
        if (sym == tree_.sym_yes || sym == tree_.sym_no)
            out = tree_.add_expr(as_and ? Op::and_ : Op::or_, l, r);
        return type == Op::unequal ? tree_.add_expr(Op::not_, out, none) : out;
    }
    case Op::not_:
        return trans_compare(x.left, type == Op::equal ? Op::unequal : Op::equal, sym);
    case Op::symbol:
        return tree_.add_expr(type, x.left, sym);
    default: // a comparison
        if (type == Op::equal) {
            if (sym == tree_.sym_yes) return e;
            if (sym == tree_.sym_mod) return tree_.make_symbol(tree_.sym_no);
            return tree_.add_expr(Op::not_, e, none);
        }
        if (sym == tree_.sym_yes) return tree_.add_expr(Op::not_, e, none);
        if (sym == tree_.sym_mod) return tree_.make_symbol(tree_.sym_yes);
        return e;
    }
}

int Parser::parse_if_expr(const std::vector<Token>& t, std::size_t& i) {
    if (i < t.size() && t[i].kind == Tok::kw_if) {
        ++i;
        return parse_expr(t, i);
    }
    return none;
}

void Parser::expect_end(const std::vector<Token>& t, std::size_t i) {
    if (i < t.size())
        fail_at(t[i], fmt::format("syntax error: unexpected '{}'",
                                  t[i].text.empty() ? "token" : t[i].text));
}

std::string Parser::expect_string(const std::vector<Token>& t, std::size_t& i, const char* what) {
    if (i >= t.size() || (t[i].kind != Tok::quoted && t[i].kind != Tok::word)) {
        if (i < t.size()) fail_at(t[i], fmt::format("syntax error: expected {}", what));
        fail(fmt::format("syntax error: expected {}", what));
    }
    // parser.y's prompt is T_WORD_QUOTE; a bare word is accepted by kconfig for `source` only
    // through the lexer, so we take both and let the caller decide.
    return t[i++].text;
}

void Parser::source(const std::string& name, Tok kind, const Token& at) {
    if (stack_.size() >= static_cast<std::size_t>(in_.options.limits.kconfig_source_depth))
        fail_at(at, fmt::format("'source' nested deeper than {} levels {}",
                                in_.options.limits.kconfig_source_depth,
                                limit_hint("kconfig-source-depth")));
    bool relative = kind == Tok::kw_rsource || kind == Tok::kw_orsource;
    bool optional = kind == Tok::kw_osource || kind == Tok::kw_orsource;
    std::string rel = name;
    if (relative) {
        auto dir = fs::path(stack_.back()->rel).parent_path();
        rel = (dir / name).lexically_normal().string();
    }
    std::vector<std::string> files;
    if (rel.find_first_of("*?[") != std::string::npos) {
        glob_t g{};
        std::string pattern = rel.starts_with('/') ? rel : in_.tree + "/" + rel;
        if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
            for (std::size_t k = 0; k < g.gl_pathc; ++k) {
                std::string p = g.gl_pathv[k];
                files.push_back(rel.starts_with('/') ? p : p.substr(in_.tree.size() + 1));
            }
        }
        ::globfree(&g);
        if (files.empty() && !optional) fail_at(at, fmt::format("'{}': no file matches", name));
    } else {
        // No stat first: the file is opened once, below, and only a failed read asks what is
        // there (1,700 files: a stat each was a twentieth of a parse).
        files.push_back(rel);
    }
    for (const auto& file : files) {
        for (auto* open : stack_) {
            if (open->rel == file)
                fail_at(at,
                        fmt::format("recursive inclusion detected: \"{}\" sources itself", file));
        }
        std::string full = file.starts_with('/') ? file : in_.tree + "/" + file;
        auto text = read_kconfig(full, false);
        if (!text) {
            if (optional) continue;
            fail_at(at, fmt::format("can't open file \"{}\"", file));
        }
        int saved_line = stmt_line_;
        parse_file(file, full, std::move(*text));
        stmt_line_ = saved_line;
    }
}

std::optional<std::string> Parser::read_kconfig(const std::string& full, bool required) {
    // Its stamp is noted for this evaluation's cache entry, which names every Kconfig file.
    if (auto text = disk_cache::read_noted(full, true)) return text;
    std::error_code ec;
    if (!required && !fs::is_regular_file(full, ec)) return std::nullopt;
    diags_.error({full, 0, 0}, "cannot read the Kconfig file");
    throw ParseAbort{};
}

void Parser::parse_file(const std::string& rel, const std::string& full, std::string text) {
    SourceFile f;
    f.rel = rel;
    f.full = full;
    {
        f.text = std::move(text);
        const auto& limits = in_.options.limits;
        if (f.text.size() > limits.file_bytes) {
            diags_.error({full, 0, 0}, fmt::format("file is larger than {} bytes {}",
                                                   limits.file_bytes, limit_hint("file-bytes")));
            throw ParseAbort{};
        }
        if (auto long_line = first_line_over(f.text, limits.line_bytes)) {
            diags_.error(long_line_location(full, *long_line, limits),
                         long_line_message(*long_line, limits));
            throw ParseAbort{};
        }
    }
    tree_.files.push_back(full);
    stack_.push_back(&f);
    std::size_t blocks_at_start = blocks_.size();
    std::vector<Token> toks;
    try {
        while (next_statement(toks)) {
            statement(toks);
            if (tree_.symbols.size() > in_.options.limits.kconfig_symbols && !toks.empty())
                fail_at(toks.front(), fmt::format("more than {} Kconfig symbols {}",
                                                  in_.options.limits.kconfig_symbols,
                                                  limit_hint("kconfig-symbols")));
        }
    } catch (...) {
        stack_.pop_back();
        throw;
    }
    if (blocks_.size() > blocks_at_start) {
        const Block& b = blocks_.back();
        const char* kind = b.kind == Tok::kw_if ? "if" : b.kind == Tok::kw_menu ? "menu" : "choice";
        const char* end = b.kind == Tok::kw_if     ? "endif"
                          : b.kind == Tok::kw_menu ? "endmenu"
                                                   : "endchoice";
        diags_.error(b.where, fmt::format("'{}' without a matching '{}' before the end of the file",
                                          kind, end));
        stack_.pop_back();
        throw ParseAbort{};
    }
    stack_.pop_back();
    current_entry_ = none;
}

} // namespace parser

bool parse(const ParseInput& input, Tree& tree, Diagnostics& diags) {
    parser::Parser p(input, tree, diags);
    return p.run();
}

} // namespace cmalign::kconfig::model
