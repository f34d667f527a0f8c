// The Kconfig parser's shared state (class Parser) and tokens, for kconfig_{parse,lexer,macro,
// finalize}.cpp. Not part of the public interface.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/internal/kconfig/model.hpp"

namespace cmalign::kconfig::model::parser {

// Thrown to abandon the parse after a located error (preprocess.c's pperror() exits too).
struct ParseAbort {};

constexpr int max_expr_depth = 500; // nested parentheses / `!` in one expression

// lexer.l's n: [A-Za-z0-9_-] (ASCII, as isalnum() in the "C" locale; no locale lookup per byte).
inline bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

enum class Tok {
    word,
    quoted,
    equal,
    unequal,
    less,
    less_equal,
    greater,
    greater_equal,
    not_,
    and_,
    or_,
    open_paren,
    close_paren,
    colon_equal,
    plus_equal,
    // keywords
    kw_bool,
    kw_choice,
    kw_comment,
    kw_config,
    kw_def_bool,
    kw_def_tristate,
    kw_default,
    kw_depends,
    kw_endchoice,
    kw_endif,
    kw_endmenu,
    kw_help,
    kw_hex,
    kw_if,
    kw_imply,
    kw_int,
    kw_mainmenu,
    kw_menu,
    kw_menuconfig,
    kw_modules,
    kw_on,
    kw_prompt,
    kw_range,
    kw_select,
    kw_source,
    kw_string,
    kw_tristate,
    kw_visible,
    kw_optional,
    kw_option,
    kw_transitional,
    kw_rsource,
    kw_osource,
    kw_orsource,
};

struct Token {
    Tok kind;
    std::string text;
    int line = 0;
    int column = 0;
};

struct Variable {
    std::string value;
    bool recursive = false;
};

struct SourceFile {
    std::string rel;  // as kconfig names it (relative to srctree)
    std::string full; // path we opened
    std::string text;
    std::size_t pos = 0;
    int line = 1;

    // The 1-based column of `pos`. The start of its line is found from where the last call left
    // off, so the tokens of one long line cost one scan of it, not one each (a line of 200,000
    // parentheses took seconds).
    int column() {
        if (pos < scanned_to) { // moved back: search from the start
            line_begin = 0;
            scanned_to = 0;
        }
        for (std::size_t i = pos; i > scanned_to; --i)
            if (text[i - 1] == '\n') {
                line_begin = i;
                break;
            }
        scanned_to = pos;
        return static_cast<int>(pos - line_begin) + 1;
    }

private:
    std::size_t line_begin = 0; // the start of the line of scanned_to
    std::size_t scanned_to = 0;
};

class Parser {
public:
    Parser(const ParseInput& input, Tree& tree, Diagnostics& diags)
        : in_(input), tree_(tree), diags_(diags) {}

    bool run();

private:
    const ParseInput& in_;
    Tree& tree_;
    Diagnostics& diags_;
    std::map<std::string, Variable, std::less<>> vars_;
    std::vector<SourceFile*> stack_;
    int macro_depth_ = 0;
    int expr_depth_ = 0;
    int stmt_line_ = 0;
    std::size_t assumptions_before_args_ = 0; // of the function call being evaluated

    // menu construction state (menu.c: current_menu, current_entry)
    int current_menu_ = 0;
    int current_entry_ = none;
    int current_choice_ = none;
    struct Block {
        Tok kind; // kw_menu, kw_if, kw_choice
        int menu;
        Location where;
    };
    std::vector<Block> blocks_;

    // ---- errors
    Location here(int column = 1) const {
        if (stack_.empty()) return {in_.tree + "/Kconfig", 0, 0};
        return {stack_.back()->full, stmt_line_, column};
    }
    [[noreturn]] void fail(const std::string& message, int column = 1) {
        diags_.error(here(column), message);
        throw ParseAbort{};
    }
    [[noreturn]] void fail_at(const Token& t, const std::string& message) {
        diags_.error({stack_.back()->full, t.line, t.column}, message);
        throw ParseAbort{};
    }

    // ---- macro language (preprocess.c)
    std::string expand(std::string_view text, const std::vector<std::string>* args);
    std::string expand_dollar(std::string_view text, std::size_t& pos,
                              const std::vector<std::string>* args);
    std::string eval_clause(std::string_view clause, const std::vector<std::string>* args);
    std::optional<std::string> call_function(const std::string& name,
                                             const std::vector<std::string>& args);
    std::optional<std::string> env(const std::string& name) const;
    std::string shell(const std::string& command);
    std::string assume_shell(const std::string& command);
    std::optional<std::string> probe_table_answer(const std::string& command);
    std::optional<std::string> if_success_answer(const std::string& command);
    bool assume_probe(const std::string& command);
    void assign(const std::string& name, Tok op, const std::string& raw);

    // ---- lexer
    bool next_statement(std::vector<Token>& out);
    void skip_help();
    std::string lex_quoted(SourceFile& f, char quote);
    std::string lex_word_with_dollar(SourceFile& f);

    // ---- parser
    // The Kconfig file at `full`, its stamp noted; nullopt when no regular file is there and
    // it is not `required`. One that is there but cannot be read is an error (ParseAbort).
    std::optional<std::string> read_kconfig(const std::string& full, bool required);
    // `text`, the content of the file at `full`, parsed.
    void parse_file(const std::string& rel, const std::string& full, std::string text);
    void statement(std::vector<Token>& toks);
    bool structure_statement(const std::vector<Token>& t);
    bool entry_attribute(const std::vector<Token>& t);
    bool dependency_attribute(const std::vector<Token>& t);
    void need_entry(const Token& at, std::initializer_list<int> kinds);
    void type_attribute(const std::vector<Token>& t, std::size_t& i, Type type);
    int parse_expr(const std::vector<Token>& t, std::size_t& i);
    int parse_and(const std::vector<Token>& t, std::size_t& i);
    int parse_unary(const std::vector<Token>& t, std::size_t& i);
    int parse_symbol(const std::vector<Token>& t, std::size_t& i);
    int parse_if_expr(const std::vector<Token>& t, std::size_t& i);
    int trans_compare(int e, Op type, int sym);
    void expect_end(const std::vector<Token>& t, std::size_t i);
    std::string expect_string(const std::vector<Token>& t, std::size_t& i, const char* what);
    void source(const std::string& name, Tok kind, const Token& at);

    // menu.c
    int add_entry(int sym);
    int add_prop(PropKind kind, int expr, int visible);
    void add_prompt(PropKind kind, const std::string& text, int visible);
    void set_type(Type type);
    void add_dep(int expr) {
        auto& m = tree_.menus[current_entry_];
        m.dep = tree_.make_and(m.dep, expr);
    }
    int entry_symbol() const {
        return current_entry_ == none ? none : tree_.menus[current_entry_].sym;
    }
    void finalize(int menu, bool inside_choice);
    void finalize_entry(std::vector<int>& list, std::size_t i, bool inside_choice);
    int rewrite_m(int e);
};

} // namespace cmalign::kconfig::model::parser
