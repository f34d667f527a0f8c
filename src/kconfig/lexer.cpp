// The Kconfig lexer (scripts/kconfig/lexer.l): statements, quoted words, "WORD =" assignments,
// indentation-sensitive help text.
#include <unordered_map>

#include <cstdio>
#include <optional>

#include "cmalign/internal/kconfig/parser.hpp"

namespace cmalign::kconfig::model::parser {

namespace {

const std::unordered_map<std::string_view, Tok>& keywords() {
    static const std::unordered_map<std::string_view, Tok> table = {
        {"bool", Tok::kw_bool},
        {"boolean", Tok::kw_bool},
        {"choice", Tok::kw_choice},
        {"comment", Tok::kw_comment},
        {"config", Tok::kw_config},
        {"def_bool", Tok::kw_def_bool},
        {"def_tristate", Tok::kw_def_tristate},
        {"default", Tok::kw_default},
        {"depends", Tok::kw_depends},
        {"endchoice", Tok::kw_endchoice},
        {"endif", Tok::kw_endif},
        {"endmenu", Tok::kw_endmenu},
        {"help", Tok::kw_help},
        {"---help---", Tok::kw_help},
        {"hex", Tok::kw_hex},
        {"if", Tok::kw_if},
        {"imply", Tok::kw_imply},
        {"int", Tok::kw_int},
        {"mainmenu", Tok::kw_mainmenu},
        {"menu", Tok::kw_menu},
        {"menuconfig", Tok::kw_menuconfig},
        {"modules", Tok::kw_modules},
        {"on", Tok::kw_on},
        {"prompt", Tok::kw_prompt},
        {"range", Tok::kw_range},
        {"select", Tok::kw_select},
        {"source", Tok::kw_source},
        {"string", Tok::kw_string},
        {"tristate", Tok::kw_tristate},
        {"visible", Tok::kw_visible},
        {"optional", Tok::kw_optional},
        {"option", Tok::kw_option},
        {"transitional", Tok::kw_transitional},
        {"rsource", Tok::kw_rsource},
        {"osource", Tok::kw_osource},
        {"orsource", Tok::kw_orsource},
    };
    return table;
}

} // namespace

// ------------------------------------------------------------------------------------------
// lexer

std::string Parser::lex_quoted(SourceFile& f, char quote) {
    // STRING state: "$..." expands, "\x" is x, a newline ends the string (with a warning).
    std::string out;
    const std::string& s = f.text;
    while (f.pos < s.size()) {
        char c = s[f.pos];
        if (c == quote) {
            ++f.pos;
            return out;
        }
        if (c == '\n') return out;
        if (c == '$') {
            // append_expanded_string(): expand from here on the rest of the line.
            auto eol = s.find('\n', f.pos);
            if (eol == std::string::npos) eol = s.size();
            std::string_view rest(s.data() + f.pos + 1, eol - f.pos - 1);
            std::size_t p = 0;
            out += expand_dollar(rest, p, nullptr);
            f.pos += 1 + p;
            continue;
        }
        if (c == '\\') {
            ++f.pos;
            if (f.pos < s.size() && s[f.pos] != '\n') out += s[f.pos++];
            continue;
        }
        out += c;
        ++f.pos;
    }
    return out;
}

std::string Parser::lex_word_with_dollar(SourceFile& f) {
    // expand_one_token(): name characters and $(...) references, expanded.
    const std::string& s = f.text;
    auto eol = s.find('\n', f.pos);
    if (eol == std::string::npos) eol = s.size();
    std::string_view line(s.data() + f.pos, eol - f.pos);
    std::string out;
    std::size_t p = 0;
    while (p < line.size()) {
        if (line[p] == '$') {
            ++p;
            out += expand_dollar(line, p, nullptr);
        } else if (is_name_char(line[p])) {
            out += line[p++];
        } else {
            break;
        }
    }
    f.pos += p;
    return out;
}

void Parser::skip_help() {
    // HELP state: the block is the following lines indented at least as much as its first
    // non-blank line; blank lines belong to it; it ends at a less indented non-blank line.
    SourceFile& f = *stack_.back();
    const std::string& s = f.text;
    int first_ts = 0;
    while (f.pos < s.size()) {
        std::size_t eol = s.find('\n', f.pos);
        if (eol == std::string::npos) eol = s.size();
        int ts = 0;
        std::size_t p = f.pos;
        for (; p < eol && (s[p] == ' ' || s[p] == '\t'); ++p)
            ts = s[p] == '\t' ? (ts & ~7) + 8 : ts + 1;
        bool blank = p == eol;
        if (!blank) {
            if (ts == 0) return;
            if (first_ts && ts < first_ts) return;
            if (!first_ts) first_ts = ts;
        }
        f.pos = eol < s.size() ? eol + 1 : eol;
        ++f.line;
    }
}

namespace {

// The rest of the line after "WORD =" as one raw token (blanks before it and a CR after it
// dropped).
Token raw_value(SourceFile& f) {
    const std::string& s = f.text;
    while (f.pos < s.size() && (s[f.pos] == ' ' || s[f.pos] == '\t'))
        ++f.pos;
    auto eol = s.find('\n', f.pos);
    if (eol == std::string::npos) eol = s.size();
    std::string value = s.substr(f.pos, eol - f.pos);
    if (!value.empty() && value.back() == '\r') value.pop_back();
    f.pos = eol;
    return {Tok::word, value, f.line, 0};
}

// The operator at `pos` and its length; nullopt when none starts there. Two-character operators
// first.
std::optional<std::pair<Tok, std::size_t>> operator_at(const std::string& s, std::size_t pos) {
    static constexpr std::pair<std::string_view, Tok> operators[] = {
        {"||", Tok::or_},        {"&&", Tok::and_},          {"!=", Tok::unequal},
        {"<=", Tok::less_equal}, {">=", Tok::greater_equal}, {":=", Tok::colon_equal},
        {"+=", Tok::plus_equal}, {"=", Tok::equal},          {"<", Tok::less},
        {">", Tok::greater},     {"!", Tok::not_},           {"(", Tok::open_paren},
        {")", Tok::close_paren}};
    // Most tokens are words: only these characters can start an operator.
    if (pos >= s.size() || std::string_view("|&!<>:+=()").find(s[pos]) == std::string_view::npos)
        return std::nullopt;
    for (const auto& [text, kind] : operators)
        if (s.compare(pos, text.size(), text) == 0) return std::pair{kind, text.size()};
    return std::nullopt;
}

} // namespace

// Reads the tokens of the next statement (one logical line) of the current file.
// Returns false at the end of the file.
bool Parser::next_statement(std::vector<Token>& out) {
    out.clear();
    SourceFile& f = *stack_.back();
    const std::string& s = f.text;
    for (;;) {
        if (f.pos >= s.size()) return !out.empty();
        char c = s[f.pos];
        if (c == '\n') {
            ++f.pos;
            ++f.line;
            if (!out.empty()) return true;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            ++f.pos;
            continue;
        }
        if (c == '#') {
            while (f.pos < s.size() && s[f.pos] != '\n')
                ++f.pos;
            continue;
        }
        if (c == '\\' && f.pos + 1 < s.size() && s[f.pos + 1] == '\n') {
            f.pos += 2;
            ++f.line;
            continue;
        }
        if (c == '\\' && f.pos + 2 < s.size() && s[f.pos + 1] == '\r' && s[f.pos + 2] == '\n') {
            f.pos += 3;
            ++f.line;
            continue;
        }
        if (out.empty()) stmt_line_ = f.line;
        Token t{Tok::word, {}, f.line, f.column()};
        if (auto op = operator_at(s, f.pos)) {
            t.kind = op->first;
            f.pos += op->second;
        } else if (c == '"' || c == '\'') {
            ++f.pos;
            t.kind = Tok::quoted;
            t.text = lex_quoted(f, c);
        } else if (is_name_char(c) || c == '$') {
            std::size_t e = f.pos;
            bool dollar = false;
            while (e < s.size() && (is_name_char(s[e]) || s[e] == '$')) {
                if (s[e] == '$') dollar = true;
                ++e;
            }
            if (dollar) {
                t.text = lex_word_with_dollar(f);
                if (t.text.empty()) continue; // an empty expansion is no token
            } else {
                const std::string_view word(s.data() + f.pos, e - f.pos);
                f.pos = e;
                // Keywords are lower case (or "---help---"); symbol names mostly are not, so
                // most words skip the hash.
                if ((word[0] >= 'a' && word[0] <= 'z') || word[0] == '-')
                    if (auto k = keywords().find(word); k != keywords().end()) t.kind = k->second;
                t.text.assign(word);
            }
        } else {
            // lexer.l warns about and ignores any other character.
            ++f.pos;
            continue;
        }
        out.push_back(std::move(t));
        // The second stage of the lexer: "WORD =", "WORD :=", "WORD +=" at the start of a
        // statement make the rest of the line the raw value.
        if (out.size() == 2 && out[0].kind == Tok::word &&
            (out[1].kind == Tok::equal || out[1].kind == Tok::colon_equal ||
             out[1].kind == Tok::plus_equal)) {
            out.push_back(raw_value(f));
            return true;
        }
    }
}

} // namespace cmalign::kconfig::model::parser
