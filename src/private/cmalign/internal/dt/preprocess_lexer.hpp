// Internals of the built-in C preprocessor (dt/preprocess.hpp): tokens, the lexer and the #if
// evaluator. Not part of the public interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/internal/dt/preprocess.hpp"

namespace cmalign::dt::pp {

// Character classes by table: the lexer's inner loops.
struct CharClasses {
    bool ident_start[256] = {};
    bool ident[256] = {};
    bool punct[256] = {};
    constexpr CharClasses() {
        for (int c = 0; c < 256; ++c) {
            ident_start[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
            ident[c] = ident_start[c] || (c >= '0' && c <= '9');
        }
        for (const char* p = "!%&()*+,-./:;<=>?[]^{|}~#"; *p; ++p)
            punct[static_cast<unsigned char>(*p)] = true;
    }
};
inline constexpr CharClasses kClasses;

constexpr bool is_ident_start(unsigned char c) {
    return kClasses.ident_start[c];
}
constexpr bool is_ident_char(unsigned char c) {
    return kClasses.ident[c];
}
constexpr bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}
constexpr bool is_punct_char(unsigned char c) {
    return kClasses.punct[c];
}

enum class Kind : std::uint8_t {
    identifier,
    number,    // a pp-number
    string,    // "..." (with an optional L/u/U/u8 prefix)
    character, // '...'
    punct,     // an operator or punctuator
    other,     // any other single byte (@, $, \, a lone quote, ...)
    newline,
    eof,
    param,       // macro body only: a parameter reference
    placemarker, // macro expansion only: an empty argument next to ##
};

enum TokenFlags : std::uint8_t {
    ws_before = 1,   // whitespace, a comment or a newline came before it
    verbatim = 2,    // `text` is exactly file->text at `offset`
    no_expand = 4,   // an identifier that named a macro being expanded ("painted blue")
    stringify = 8,   // body param preceded by #
    paste_left = 16, // body token followed by ## (the ## itself is dropped from the body)
};

struct Token {
    std::string_view text;
    const SourceFile* file = nullptr; // where it was written or, for macro output, invoked
    std::uint32_t offset = 0;         // byte offset in file->text
    std::uint32_t end = 0;            // base tokens: end offset in the lexed (spliced) text
    Kind kind = Kind::eof;
    std::uint8_t flags = 0;
    std::uint16_t param = 0; // Kind::param: index of the parameter

    bool is(char c) const { return kind == Kind::punct && text.size() == 1 && text[0] == c; }
    bool is(std::string_view s) const { return kind == Kind::punct && text == s; }
};

// Lexes one file's text after backslash-newline splicing (translation phases 1-3 as gcc does in
// assembler-with-cpp mode: no digraphs, '$' is not an identifier character, a lone quote is an
// ordinary character).
class Lexer {
public:
    explicit Lexer(const SourceFile& file);

    // Next token; comments and blanks are skipped (they set ws_before). A newline is a token.
    // An unterminated block comment or string sets `error` and `error_offset`.
    Token next();
    // The raw text up to the end of the line (for #error, header names); stops before '\n'.
    std::string_view rest_of_line();
    // Skips everything up to (not including) the next newline token, honouring comments.
    void skip_line();

    std::size_t position() const { return pos_; }
    void set_position(std::size_t pos) { pos_ = pos; }
    std::string_view text() const { return text_; }
    // Offset in the original file text of an offset in the spliced text.
    std::size_t original(std::size_t spliced) const;
    // True when [begin, end) of the spliced text contains no splice (so it equals the original).
    bool clean(std::size_t begin, std::size_t end) const;

    // The pieces next() is made of, for a scanner that copies text without making tokens
    // (Engine::verbatim_run): where the piece that starts at `pos` ends.
    // (In line: they run for every byte verbatim_run copies.)
    static bool is_blank(char c) { // a blank other than a newline
        return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
    }
    static bool starts_identifier(char c) { return is_ident_start(static_cast<unsigned char>(c)); }
    bool starts_number(std::size_t pos) const {
        const auto c = static_cast<unsigned char>(text_[pos]);
        return is_digit(c) || (c == '.' && pos + 1 < text_.size() &&
                               is_digit(static_cast<unsigned char>(text_[pos + 1])));
    }
    std::size_t identifier_end(std::size_t pos) const {
        std::size_t i = pos + 1;
        while (i < text_.size() && is_ident_char(static_cast<unsigned char>(text_[i])))
            ++i;
        return i;
    }
    std::size_t number_end(std::size_t pos) const; // a pp-number: "0x1f", "1e+5", ".5UL"
    // End of the operator or punctuator (C's, without digraphs: "<<=", "##") or the other single
    // character at `pos`.
    std::size_t symbol_end(std::size_t pos) const {
        const char c = text_[pos];
        if (!is_punct_char(static_cast<unsigned char>(c))) return pos + 1;
        const char d = pos + 1 < text_.size() ? text_[pos + 1] : '\0';
        const char e = pos + 2 < text_.size() ? text_[pos + 2] : '\0';
        switch (c) {
        case '<':
        case '>':
            if (d == c) return pos + (e == '=' ? 3 : 2);
            return pos + (d == '=' ? 2 : 1);
        case '.':
            return pos + (d == '.' && e == '.' ? 3 : 1);
        case '-':
            return pos + (d == '>' || d == '-' || d == '=' ? 2 : 1);
        case '+':
        case '&':
        case '|':
            return pos + (d == c || d == '=' ? 2 : 1);
        case '#':
            return pos + (d == '#' ? 2 : 1);
        case '=':
        case '!':
        case '*':
        case '/':
        case '%':
        case '^':
            return pos + (d == '=' ? 2 : 1);
        default:
            return pos + 1;
        }
    }
    // End of a quoted literal starting at `begin` (the quote), or begin + 1 with ok = false if
    // it is not closed on its line.
    std::size_t quoted_end(std::size_t begin, char quote, bool& ok) const;

    bool report_errors = true;
    const char* error = nullptr;
    std::size_t error_offset = 0;

private:
    // In line for what stands before most tokens: nothing, or one blank.
    void skip_blank(bool& ws) {
        if (pos_ < text_.size() && !is_blank(text_[pos_]) && text_[pos_] != '/') return;
        skip_blank_slow(ws);
    }
    void skip_blank_slow(bool& ws);
    Token make(Kind kind, std::size_t begin, std::size_t end, bool ws) {
        Token t;
        t.text = std::string_view(text_.data() + begin, end - begin); // begin <= end <= size
        t.file = &file_;
        t.end = static_cast<std::uint32_t>(end);
        t.kind = kind;
        if (file_.splices.empty()) { // most files: the offsets are the original ones
            t.offset = static_cast<std::uint32_t>(begin);
            t.flags = static_cast<std::uint8_t>((ws ? ws_before : 0) | verbatim);
        } else {
            t.offset = static_cast<std::uint32_t>(original(begin));
            t.flags = static_cast<std::uint8_t>((ws ? ws_before : 0) |
                                                (clean(begin, end) ? verbatim : 0));
        }
        return t;
    }

    const SourceFile& file_;
    std::string_view text_;
    std::size_t pos_ = 0;
};

// Integer value of an #if expression, with C's signed/unsigned distinction (intmax_t/uintmax_t).
struct PPValue {
    std::uint64_t bits = 0;
    bool is_unsigned = false;
};

struct ExprError {
    std::string message;
    const Token* at = nullptr; // nullptr: at the end of the line
};

// Evaluates a fully macro-expanded #if line (`defined` already replaced by 0/1). Identifiers
// are 0. Returns nullopt and fills `error` on a malformed expression or division by zero.
std::optional<PPValue> evaluate(const std::vector<Token>& tokens, ExprError& error);

// True if `a` followed directly by `b` would lex differently from the two tokens apart (so a
// space must separate them in the output, as gcc's cpp_avoid_paste does).
bool avoid_paste(const Token& a, const Token& b);

// Lexes `text` fully; used for -D values and ## results.
std::vector<Token> lex_string(const SourceFile& file);

} // namespace cmalign::dt::pp
