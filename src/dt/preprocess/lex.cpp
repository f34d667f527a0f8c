// Lexer of the built-in preprocessor: gcc's assembler-with-cpp lexical rules.
#include <algorithm>
#include <cstring>

#include "cmalign/internal/dt/preprocess_lexer.hpp"

namespace cmalign::dt::pp {

Lexer::Lexer(const SourceFile& file)
    : file_(file),
      text_(file.splices.empty() ? std::string_view(file.text) : std::string_view(file.spliced)) {}

std::size_t Lexer::original(std::size_t spliced) const {
    const auto& s = file_.splices;
    if (s.empty()) return spliced;
    auto it = std::upper_bound(s.begin(), s.end(), spliced,
                               [](std::size_t v, const auto& p) { return v < p.first; });
    if (it == s.begin()) return spliced;
    return spliced + std::prev(it)->second;
}

bool Lexer::clean(std::size_t begin, std::size_t end) const {
    const auto& s = file_.splices;
    if (s.empty()) return true;
    auto it = std::upper_bound(s.begin(), s.end(), begin,
                               [](std::size_t v, const auto& p) { return v < p.first; });
    return it == s.end() || it->first >= end;
}

void Lexer::skip_blank_slow(bool& ws) {
    const std::size_t n = text_.size();
    while (pos_ < n) {
        const char c = text_[pos_];
        if (is_blank(c)) {
            ++pos_;
            ws = true;
        } else if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '*') {
            const std::size_t close = text_.find("*/", pos_ + 2);
            if (close == std::string_view::npos) {
                if (!error) { // reported even in skipped blocks, as gcc does
                    error = "unterminated comment";
                    error_offset = pos_;
                }
                pos_ = n;
                return;
            }
            pos_ = close + 2;
            ws = true;
        } else if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '/') {
            const std::size_t nl = text_.find('\n', pos_);
            pos_ = nl == std::string_view::npos ? n : nl;
            ws = true;
        } else {
            return;
        }
    }
}

std::size_t Lexer::number_end(std::size_t pos) const {
    std::size_t i = pos + 1;
    while (i < text_.size()) {
        const auto d = static_cast<unsigned char>(text_[i]);
        if ((d == '+' || d == '-') && (text_[i - 1] == 'e' || text_[i - 1] == 'E' ||
                                       text_[i - 1] == 'p' || text_[i - 1] == 'P')) {
            ++i;
        } else if (is_ident_char(d) || d == '.') {
            ++i;
        } else {
            break;
        }
    }
    return i;
}

std::size_t Lexer::quoted_end(std::size_t begin, char quote, bool& ok) const {
    const std::size_t n = text_.size();
    std::size_t i = begin + 1;
    while (i < n) {
        const char c = text_[i];
        if (c == quote) {
            ok = true;
            return i + 1;
        }
        if (c == '\n') break;
        if (c == '\\' && i + 1 < n && text_[i + 1] != '\n') ++i;
        ++i;
    }
    ok = false;
    return begin + 1;
}

Token Lexer::next() {
    bool ws = false;
    skip_blank(ws);
    const std::size_t n = text_.size();
    const std::size_t begin = pos_;
    if (pos_ >= n) return make(Kind::eof, n, n, ws);
    const auto c = static_cast<unsigned char>(text_[pos_]);
    if (c == '\n') {
        ++pos_;
        return make(Kind::newline, begin, pos_, ws);
    }
    if (is_ident_start(c)) {
        const std::size_t i = identifier_end(pos_);
        // Encoding prefixes of string and character literals.
        const std::string_view word = text_.substr(pos_, i - pos_);
        if (i < n && (text_[i] == '"' || text_[i] == '\'') &&
            (word == "L" || word == "u" || word == "U" || word == "u8")) {
            bool ok = false;
            const std::size_t end = quoted_end(i, text_[i], ok);
            if (ok) {
                pos_ = end;
                return make(text_[i] == '"' ? Kind::string : Kind::character, begin, end, ws);
            }
        }
        pos_ = i;
        return make(Kind::identifier, begin, i, ws);
    }
    if (starts_number(pos_)) {
        const std::size_t i = number_end(pos_);
        pos_ = i;
        return make(Kind::number, begin, i, ws);
    }
    if (c == '"' || c == '\'') {
        bool ok = false;
        const std::size_t end = quoted_end(pos_, static_cast<char>(c), ok);
        if (!ok) {
            // gcc in assembler-with-cpp mode passes a lone quote through as an ordinary
            // character; an unterminated string is still an error for us (dtc would reject it).
            if (c == '"' && report_errors && !error) {
                error = "missing terminating \" character";
                error_offset = pos_;
            }
            ++pos_;
            return make(Kind::other, begin, pos_, ws);
        }
        pos_ = end;
        return make(c == '"' ? Kind::string : Kind::character, begin, end, ws);
    }
    pos_ = symbol_end(pos_);
    return make(is_punct_char(c) ? Kind::punct : Kind::other, begin, pos_, ws);
}

std::string_view Lexer::rest_of_line() {
    const std::size_t nl = text_.find('\n', pos_);
    const std::size_t end = nl == std::string_view::npos ? text_.size() : nl;
    return text_.substr(pos_, end - pos_);
}

void Lexer::skip_line() {
    const bool saved = report_errors;
    report_errors = false;
    for (;;) {
        const std::size_t before = pos_;
        Token t = next();
        if (t.kind == Kind::newline || t.kind == Kind::eof) {
            pos_ = before;
            // Re-lex the newline next time (skip_blank may have passed a comment; harmless).
            if (t.kind == Kind::newline) pos_ = t.end - 1;
            break;
        }
    }
    report_errors = saved;
}

std::vector<Token> lex_string(const SourceFile& file) {
    Lexer lexer(file);
    lexer.report_errors = false;
    std::vector<Token> tokens;
    for (Token t = lexer.next(); t.kind != Kind::eof; t = lexer.next())
        if (t.kind != Kind::newline) tokens.push_back(t);
    return tokens;
}

bool avoid_paste(const Token& a, const Token& b) {
    if (a.text.empty() || b.text.empty()) return false;
    const auto x = static_cast<unsigned char>(a.text.back());
    const auto y = static_cast<unsigned char>(b.text.front());
    const bool a_word = a.kind == Kind::identifier || a.kind == Kind::number;
    if (a_word && (is_ident_char(y) || ((b.kind == Kind::string || b.kind == Kind::character) &&
                                        a.kind == Kind::identifier)))
        return true;
    if (a.kind == Kind::number && (y == '.' || y == '+' || y == '-')) return true;
    if (a.kind == Kind::punct || a.kind == Kind::other) {
        if (x == '.' && (is_digit(y) || y == '.')) return true;
        if (b.kind != Kind::punct) return false;
        switch (x) {
        case '/':
            return y == '/' || y == '*' || y == '=';
        case '<':
            return y == '<' || y == '=';
        case '>':
            return y == '>' || y == '=';
        case '+':
            return y == '+' || y == '=';
        case '-':
            return y == '-' || y == '>' || y == '=';
        case '&':
            return y == '&' || y == '=';
        case '|':
            return y == '|' || y == '=';
        case '#':
            return y == '#';
        case '*':
        case '%':
        case '^':
        case '!':
        case '=':
            return y == '=';
        default:
            return false;
        }
    }
    return false;
}

} // namespace cmalign::dt::pp
