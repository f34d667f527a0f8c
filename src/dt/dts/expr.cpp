// DTS integers (DT_LITERAL, character literals) and the C expressions of dtc-parser.y.
#include <algorithm>
#include <charconv>
#include <cstring>

#include "cmalign/internal/dt/dts_parser.hpp"

namespace cmalign::dt::dts_parser {

// ---- integers -------------------------------------------------------------------------

// After a literal's digits: its U/L suffix, and nothing that would continue the word.
void Parser::literal_suffix(const char* start) {
    if (p_ < end_ && (*p_ == 'U' || *p_ == 'L')) match(p_, end_, integer_suffix);
    if (p_ < end_ && is_label_char(*p_)) // [a-zA-Z0-9_] right after: not a literal
        fail(start, fmt::format("bad integer literal '{}'",
                                std::string_view(start, static_cast<std::size_t>(p_ + 1 - start))));
}

// DT_LITERAL with dtc's checks. False when there is no literal at p_.
bool Parser::literal(std::uint64_t& value, bool& plain) {
    const char* start = p_;
    // Most literals: up to 16 hex or 19 decimal digits, which cannot overflow, read and converted
    // in one pass. Octal, longer and malformed ones take the general path below.
    static const x3::uint_parser<std::uint64_t, 16, 1, 16> hex16;
    static const x3::uint_parser<std::uint64_t, 10, 1, 19> dec19;
    if (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
        const char* q = p_;
        const bool hex = q + 2 < end_ && q[0] == '0' && (q[1] == 'x' || q[1] == 'X');
        const bool octal = !hex && q + 1 < end_ && q[0] == '0' && q[1] >= '0' && q[1] <= '9';
        bool read = false;
        if (hex) {
            q += 2;
            read = match(q, end_, hex16, value) && (q >= end_ || hex_value(*q) < 0);
        } else if (!octal) {
            read = match(q, end_, dec19, value) && (q >= end_ || *q < '0' || *q > '9');
        }
        if (read) {
            p_ = q;
            literal_suffix(start);
            plain = true;
            return true;
        }
    }
    boost::iterator_range<const char*> digits;
    if (!match(p_, end_, integer_digits, digits)) return false;
    literal_suffix(start);
    std::string_view d(digits.begin(), digits.size());
    int base = 10;
    if (d.size() > 2 && (d[1] == 'x' || d[1] == 'X')) {
        base = 16;
        d.remove_prefix(2);
    } else if (d.size() > 1 && d[0] == '0') {
        base = 8;
        d.remove_prefix(1);
    }
    auto [ptr, ec] = std::from_chars(d.data(), d.data() + d.size(), value, base);
    if (ec == std::errc::result_out_of_range)
        fail(start, fmt::format("integer literal '{}' out of 64-bit range",
                                std::string_view(start, static_cast<std::size_t>(p_ - start))));
    if (ec != std::errc() || ptr != d.data() + d.size())
        fail(start, fmt::format("bad integer literal '{}'",
                                std::string_view(start, static_cast<std::size_t>(p_ - start))));
    plain = true;
    return true;
}

// integer_prim: DT_LITERAL | DT_CHAR_LITERAL | '(' integer_expr ')'
std::uint64_t Parser::integer_prim(int depth, bool* plain_out) {
    skip();
    if (plain_out) *plain_out = false;
    if (p_ >= end_) fail(p_, unexpected("a number"));
    if (*p_ == '(') {
        deepest_ = std::max(deepest_, depth);
        if (depth > options_.limits.node_depth)
            fail(p_, fmt::format("expression nested deeper than {} levels {}",
                                 options_.limits.node_depth, limit_hint("node-depth")));
        ++p_;
        std::uint64_t v = expr(depth + 1);
        expect(')', "to close the expression");
        return v;
    }
    if (*p_ == '\'') {
        const char* start = p_;
        boost::iterator_range<const char*> range;
        if (!match(p_, end_, char_token, range)) fail(start, "unterminated character literal");
        std::string out = decoded_literal(start, range.size());
        if (out.empty()) {
            error(start, "empty character literal");
            return 0;
        }
        if (out.size() > 1)
            error(start,
                  fmt::format("character literal has {} characters instead of 1", out.size()));
        return static_cast<unsigned char>(out[0]);
    }
    std::uint64_t v = 0;
    bool plain = false;
    if (!literal(v, plain)) fail(p_, unexpected("a number, a character or '('"));
    if (plain_out) *plain_out = plain;
    return v;
}

// The single-character operator `c` at the next token ('!' not when it starts "!=").
bool Parser::op(char c) {
    skip();
    if (p_ >= end_ || *p_ != c) return false;
    if (c == '!' && p_ + 1 < end_ && p_[1] == '=') return false;
    ++p_;
    return true;
}

// integer_trinary: integer_or | integer_or '?' integer_expr ':' integer_trinary
std::uint64_t Parser::expr(int depth) {
    deepest_ = std::max(deepest_, depth);
    if (depth > options_.limits.node_depth)
        fail(p_, fmt::format("expression nested deeper than {} levels {}",
                             options_.limits.node_depth, limit_hint("node-depth")));
    std::uint64_t c = binary(0, depth);
    if (op('?')) {
        std::uint64_t a = expr(depth + 1);
        expect(':', "in the conditional expression");
        std::uint64_t b = expr(depth + 1);
        return c ? a : b;
    }
    return c;
}

namespace {

enum class Binary : std::uint8_t {
    none,
    lor,
    land,
    bor,
    bxor,
    band,
    eq,
    ne,
    lt,
    gt,
    le,
    ge,
    shl,
    shr,
    add,
    sub,
    mul,
    div,
    mod
};

struct BinaryOp {
    Binary kind = Binary::none;
    int size = 0;   // characters of its spelling
    int level = -1; // 0 (||) to 9 (* / %); -1: no binary operator here
};

// The binary operator that starts at `p` (longest spelling: "<<" and "<=" before "<"), with its
// level as in dtc-parser.y. A lone '=' or '!' is none (a '!' is unary).
BinaryOp binary_op_at(const char* p, const char* end) {
    if (p >= end) return {};
    const char n = p + 1 < end ? p[1] : '\0';
    switch (*p) {
    case '|':
        return n == '|' ? BinaryOp{Binary::lor, 2, 0} : BinaryOp{Binary::bor, 1, 2};
    case '&':
        return n == '&' ? BinaryOp{Binary::land, 2, 1} : BinaryOp{Binary::band, 1, 4};
    case '^':
        return {Binary::bxor, 1, 3};
    case '=':
        return n == '=' ? BinaryOp{Binary::eq, 2, 5} : BinaryOp{};
    case '!':
        return n == '=' ? BinaryOp{Binary::ne, 2, 5} : BinaryOp{};
    case '<':
        return n == '<'   ? BinaryOp{Binary::shl, 2, 7}
               : n == '=' ? BinaryOp{Binary::le, 2, 6}
                          : BinaryOp{Binary::lt, 1, 6};
    case '>':
        return n == '>'   ? BinaryOp{Binary::shr, 2, 7}
               : n == '=' ? BinaryOp{Binary::ge, 2, 6}
                          : BinaryOp{Binary::gt, 1, 6};
    case '+':
        return {Binary::add, 1, 8};
    case '-':
        return {Binary::sub, 1, 8};
    case '*':
        return {Binary::mul, 1, 9};
    case '/':
        return {Binary::div, 1, 9};
    case '%':
        return {Binary::mod, 1, 9};
    default:
        return {};
    }
}

} // namespace

// Binary levels from || (0) to * / % (9), left-associative as in dtc-parser.y: precedence
// climbing, one operator scan per operand (a level-per-call descent scanned ten levels for each
// number, most of a board's parse).
std::uint64_t Parser::binary(int min_level, int depth) {
    std::uint64_t lhs = unary(depth);
    for (;;) {
        skip();
        const char* at = p_;
        const BinaryOp o = binary_op_at(p_, end_);
        if (o.level < min_level || o.level < 0) return lhs;
        p_ += o.size;
        const std::uint64_t rhs = binary(o.level + 1, depth);
        switch (o.kind) {
        case Binary::lor:
            lhs = (lhs || rhs) ? 1 : 0;
            break;
        case Binary::land:
            lhs = (lhs && rhs) ? 1 : 0;
            break;
        case Binary::bor:
            lhs |= rhs;
            break;
        case Binary::bxor:
            lhs ^= rhs;
            break;
        case Binary::band:
            lhs &= rhs;
            break;
        case Binary::eq:
            lhs = lhs == rhs;
            break;
        case Binary::ne:
            lhs = lhs != rhs;
            break;
        case Binary::lt:
            lhs = lhs < rhs;
            break;
        case Binary::gt:
            lhs = lhs > rhs;
            break;
        case Binary::le:
            lhs = lhs <= rhs;
            break;
        case Binary::ge:
            lhs = lhs >= rhs;
            break;
        case Binary::shl:
            lhs = rhs < 64 ? lhs << rhs : 0;
            break;
        case Binary::shr:
            lhs = rhs < 64 ? lhs >> rhs : 0;
            break;
        case Binary::add:
            lhs += rhs;
            break;
        case Binary::sub:
            lhs -= rhs;
            break;
        case Binary::mul:
            lhs *= rhs;
            break;
        case Binary::div:
        case Binary::mod:
            if (rhs == 0) {
                error(at, "division by zero");
                lhs = 0;
            } else {
                lhs = o.kind == Binary::div ? lhs / rhs : lhs % rhs;
            }
            break;
        case Binary::none:
            break;
        }
    }
}

std::uint64_t Parser::unary(int depth) {
    deepest_ = std::max(deepest_, depth);
    if (depth > options_.limits.node_depth)
        fail(p_, fmt::format("expression nested deeper than {} levels {}",
                             options_.limits.node_depth, limit_hint("node-depth")));
    if (op('-')) return ~unary(depth + 1) + 1;
    if (op('~')) return ~unary(depth + 1);
    if (op('!')) return unary(depth + 1) == 0 ? 1 : 0;
    return integer_prim(depth);
}

} // namespace cmalign::dt::dts_parser
