// #if expression evaluation: the C integer constant-expression grammar on intmax_t/uintmax_t,
// with gcc's rules (identifiers are 0, unsigned wins in mixed operands, division by zero is an
// error only where it is evaluated).
#include <cctype>
#include <limits>

#include "cmalign/internal/dt/preprocess_lexer.hpp"

namespace cmalign::dt::pp {

namespace {

constexpr int kMaxDepth =
    128; // parentheses / unary nesting; deeper input is rejected, not a stack overflow

class Parser {
public:
    Parser(const std::vector<Token>& tokens, ExprError& error) : tokens_(tokens), error_(error) {}

    std::optional<PPValue> parse() {
        if (tokens_.empty()) return fail("#if with no expression", nullptr);
        auto v = comma(true);
        if (!v) return std::nullopt;
        if (pos_ < tokens_.size()) {
            const Token& t = tokens_[pos_];
            if (t.is(')')) return fail("missing '(' in expression", &t);
            if (t.is(':')) return fail("':' without preceding '?'", &t);
            return fail("missing binary operator before token \"" + std::string(t.text) + "\"", &t);
        }
        return v;
    }

private:
    std::optional<PPValue> fail(std::string message, const Token* at) {
        if (error_.message.empty()) {
            error_.message = std::move(message);
            error_.at = at;
        }
        return std::nullopt;
    }

    const Token* peek() const { return pos_ < tokens_.size() ? &tokens_[pos_] : nullptr; }
    bool accept(std::string_view op) {
        if (pos_ < tokens_.size() && tokens_[pos_].is(op)) {
            ++pos_;
            return true;
        }
        return false;
    }

    static PPValue make(std::uint64_t bits, bool is_unsigned) { return {bits, is_unsigned}; }
    static bool truth(const PPValue& v) { return v.bits != 0; }
    static std::int64_t sval(const PPValue& v) { return static_cast<std::int64_t>(v.bits); }

    std::optional<PPValue> comma(bool eval) {
        auto v = conditional(eval);
        while (v && accept(","))
            v = conditional(eval);
        return v;
    }

    std::optional<PPValue> conditional(bool eval) {
        const std::size_t cond_pos = pos_;
        auto c = binary(0, eval);
        if (!c || !peek() || !peek()->is('?')) return c;
        const Token* question = peek();
        ++pos_;
        (void)cond_pos;
        const bool which = truth(*c);
        auto a = comma(eval && which);
        if (!a) return a;
        if (!accept(":")) return fail("'?' without following ':'", question);
        auto b = conditional(eval && !which);
        if (!b) return b;
        const bool u = a->is_unsigned || b->is_unsigned;
        return make(which ? a->bits : b->bits, u);
    }

    // Binary operators by precedence level, lowest first.
    static int precedence(const Token& t) {
        if (t.kind != Kind::punct) return -1;
        const std::string_view s = t.text;
        if (s == "||") return 0;
        if (s == "&&") return 1;
        if (s == "|") return 2;
        if (s == "^") return 3;
        if (s == "&") return 4;
        if (s == "==" || s == "!=") return 5;
        if (s == "<" || s == ">" || s == "<=" || s == ">=") return 6;
        if (s == "<<" || s == ">>") return 7;
        if (s == "+" || s == "-") return 8;
        if (s == "*" || s == "/" || s == "%") return 9;
        return -1;
    }

    // Precedence climbing: one frame per operator level actually used, so nesting stays shallow.
    std::optional<PPValue> binary(int min_level, bool eval) {
        auto lhs = unary(eval, 0);
        while (lhs) {
            const Token* op = peek();
            const int level = op ? precedence(*op) : -1;
            if (level < min_level) break;
            ++pos_;
            const bool short_circuit = (level == 0 && truth(*lhs)) || (level == 1 && !truth(*lhs));
            if (!peek())
                return fail("operator '" + std::string(op->text) + "' has no right operand",
                            nullptr);
            auto rhs = binary(level + 1, eval && !short_circuit);
            if (!rhs) return rhs;
            lhs = apply(*op, *lhs, *rhs, eval);
        }
        return lhs;
    }

    std::optional<PPValue> apply(const Token& op, PPValue a, PPValue b, bool eval) {
        const std::string_view s = op.text;
        if (s == "||") return make(truth(a) || truth(b), false);
        if (s == "&&") return make(truth(a) && truth(b), false);
        if (s == "<<" || s == ">>") {
            // The result has the left operand's type; gcc shifts the other way for a negative
            // count.
            bool left = s == "<<";
            std::uint64_t count = b.bits;
            if (!b.is_unsigned && sval(b) < 0) {
                left = !left;
                count = 0 - b.bits;
            }
            PPValue r = a;
            if (left) {
                r.bits = count >= 64 ? 0 : a.bits << count;
            } else if (a.is_unsigned || sval(a) >= 0) {
                r.bits = count >= 64 ? 0 : a.bits >> count;
            } else {
                r.bits = count >= 64 ? ~std::uint64_t{0} : ~(~a.bits >> count);
            }
            return r;
        }
        const bool u = a.is_unsigned || b.is_unsigned;
        if (s == "==") return make(a.bits == b.bits, false);
        if (s == "!=") return make(a.bits != b.bits, false);
        if (s == "<" || s == ">" || s == "<=" || s == ">=") {
            const int cmp = u ? (a.bits < b.bits ? -1 : a.bits > b.bits)
                              : (sval(a) < sval(b) ? -1 : sval(a) > sval(b));
            if (s == "<") return make(cmp < 0, false);
            if (s == ">") return make(cmp > 0, false);
            if (s == "<=") return make(cmp <= 0, false);
            return make(cmp >= 0, false);
        }
        if (s == "|") return make(a.bits | b.bits, u);
        if (s == "^") return make(a.bits ^ b.bits, u);
        if (s == "&") return make(a.bits & b.bits, u);
        if (s == "+") return make(a.bits + b.bits, u);
        if (s == "-") return make(a.bits - b.bits, u);
        if (s == "*") return make(a.bits * b.bits, u);
        // '/' and '%'
        if (b.bits == 0) {
            if (!eval) return make(0, u);
            return fail("division by zero in #if", &op);
        }
        if (u) return make(s == "/" ? a.bits / b.bits : a.bits % b.bits, true);
        if (sval(b) == -1) // avoids INT64_MIN / -1; the quotient wraps as in gcc
            return make(s == "/" ? 0 - a.bits : 0, false);
        return make(static_cast<std::uint64_t>(s == "/" ? sval(a) / sval(b) : sval(a) % sval(b)),
                    false);
    }

    std::optional<PPValue> unary(bool eval, int depth) {
        if (depth > kMaxDepth) return fail("#if expression nested too deeply", peek());
        const Token* t = peek();
        if (!t) return fail("#if with no expression", nullptr);
        if (t->kind == Kind::punct) {
            const std::string_view s = t->text;
            if (s == "!" || s == "~" || s == "-" || s == "+") {
                ++pos_;
                if (!peek())
                    return fail("operator '" + std::string(s) + "' has no right operand", nullptr);
                auto v = unary(eval, depth + 1);
                if (!v) return v;
                if (s == "!") return make(!truth(*v), false);
                if (s == "~") return make(~v->bits, v->is_unsigned);
                if (s == "-") return make(0 - v->bits, v->is_unsigned);
                return v;
            }
            if (s == "(") {
                ++pos_;
                if (peek() && peek()->is(')'))
                    return fail("missing expression between '(' and ')'", peek());
                ++depth_;
                if (depth_ > kMaxDepth) return fail("#if expression nested too deeply", t);
                auto v = comma(eval);
                --depth_;
                if (!v) return v;
                if (!accept(")")) return fail("missing ')' in expression", peek() ? peek() : t);
                return v;
            }
            if (s == ")") return fail("missing expression between '(' and ')'", t);
            return fail("operator '" + std::string(s) + "' has no left operand", t);
        }
        ++pos_;
        switch (t->kind) {
        case Kind::number:
            return number(*t);
        case Kind::character:
            return character(*t);
        case Kind::identifier:
            return make(0, false); // undefined identifiers are 0
        case Kind::string:
            return fail("token \"" + std::string(t->text) +
                            "\" is not valid in preprocessor expressions",
                        t);
        default:
            return fail("token \"" + std::string(t->text) +
                            "\" is not valid in preprocessor expressions",
                        t);
        }
    }

    std::optional<PPValue> number(const Token& t) {
        std::string_view s = t.text;
        int base = 10;
        std::size_t i = 0;
        if (s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
            base = 16;
            i = 2;
        } else if (s.size() > 1 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
            base = 2;
            i = 2;
        } else if (s[0] == '0') {
            base = 8;
        }
        const std::size_t digits_begin = i;
        std::uint64_t value = 0;
        bool overflow = false;
        for (; i < s.size(); ++i) {
            const char c = s[i];
            int d = -1;
            if (c >= '0' && c <= '9')
                d = c - '0';
            else if (c >= 'a' && c <= 'f')
                d = c - 'a' + 10;
            else if (c >= 'A' && c <= 'F')
                d = c - 'A' + 10;
            if (d < 0 || d >= base) break;
            if (value > (std::numeric_limits<std::uint64_t>::max() - static_cast<unsigned>(d)) /
                            static_cast<unsigned>(base))
                overflow = true;
            value = value * static_cast<unsigned>(base) + static_cast<unsigned>(d);
        }
        if ((base == 16 || base == 2) && i == digits_begin)
            return fail("invalid suffix \"" + std::string(s.substr(1)) + "\" on integer constant",
                        &t);
        // A decimal digit in an octal constant, a '.', or an exponent: floating or invalid.
        if (i < s.size() && (s[i] == '.' || ((s[i] == 'e' || s[i] == 'E') && base != 16) ||
                             ((s[i] == 'p' || s[i] == 'P') && base == 16)))
            return fail("floating constant in preprocessor expression", &t);
        if (base == 8 && i < s.size() && s[i] >= '8' && s[i] <= '9')
            return fail("invalid digit \"" + std::string(1, s[i]) + "\" in octal constant", &t);
        const std::string_view suffix = s.substr(i);
        bool is_unsigned = false;
        {
            int u = 0, l = 0;
            std::size_t j = 0;
            bool ok = true;
            while (j < suffix.size()) {
                const char c = suffix[j];
                if ((c == 'u' || c == 'U') && u == 0) {
                    u = 1;
                    ++j;
                } else if ((c == 'l' || c == 'L') && l == 0) {
                    l = 1;
                    ++j;
                    if (j < suffix.size() && suffix[j] == c) ++j; // ll / LL, same case
                } else {
                    ok = false;
                    break;
                }
            }
            if (!ok)
                return fail("invalid suffix \"" + std::string(suffix) + "\" on integer constant",
                            &t);
            is_unsigned = u != 0;
        }
        (void)overflow; // gcc only warns ("integer constant is too large for its type")
        if (!is_unsigned &&
            value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            is_unsigned = true; // "so large that it is unsigned"
        return make(value, is_unsigned);
    }

    std::optional<PPValue> character(const Token& t) {
        std::string_view s = t.text;
        bool wide = false;
        if (!s.empty() && s[0] != '\'') {
            wide = true;
            s.remove_prefix(s.find('\''));
        }
        s = s.substr(1, s.size() - 2);
        if (s.empty()) return fail("empty character constant", &t);
        std::uint64_t value = 0;
        int count = 0;
        std::int64_t last = 0;
        for (std::size_t i = 0; i < s.size();) {
            unsigned c = static_cast<unsigned char>(s[i++]);
            if (c == '\\' && i < s.size()) {
                const char e = s[i++];
                switch (e) {
                case 'n':
                    c = '\n';
                    break;
                case 't':
                    c = '\t';
                    break;
                case 'r':
                    c = '\r';
                    break;
                case 'a':
                    c = 7;
                    break;
                case 'b':
                    c = 8;
                    break;
                case 'f':
                    c = 12;
                    break;
                case 'v':
                    c = 11;
                    break;
                case 'e':
                case 'E':
                    c = 27;
                    break;
                case 'x': {
                    c = 0;
                    while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i]))) {
                        const char h = s[i++];
                        c = c * 16 +
                            static_cast<unsigned>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
                    }
                    break;
                }
                default:
                    if (e >= '0' && e <= '7') {
                        c = static_cast<unsigned>(e - '0');
                        for (int k = 0; k < 2 && i < s.size() && s[i] >= '0' && s[i] <= '7'; ++k)
                            c = c * 8 + static_cast<unsigned>(s[i++] - '0');
                    } else {
                        c = static_cast<unsigned char>(e);
                    }
                }
            }
            c &= 0xff;
            value = (value << 8) | c;
            last = static_cast<signed char>(c);
            ++count;
        }
        if (wide) return make(value, false);
        if (count == 1) return make(static_cast<std::uint64_t>(last), false); // char is signed
        return make(
            static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(value))),
            false);
    }

    const std::vector<Token>& tokens_;
    ExprError& error_;
    std::size_t pos_ = 0;
    int depth_ = 0;
};

} // namespace

std::optional<PPValue> evaluate(const std::vector<Token>& tokens, ExprError& error) {
    Parser parser(tokens, error);
    return parser.parse();
}

} // namespace cmalign::dt::pp
