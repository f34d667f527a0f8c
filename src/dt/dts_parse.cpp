// DTS parser: dtc's source language (Linux 6.12 scripts/dtc/dtc-lexer.l and dtc-parser.y) into
// the lossless syntax tree of dt/dts.hpp.
//
// The tokens are Boost.Spirit X3 parsers (names, labels, literals, strings, line markers); the
// structure above them (nodes, values, C expressions) is recursive descent with an explicit
// depth bound, so that deeply nested input gives an error instead of exhausting the stack, and
// so every error names the exact place.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <filesystem>

#include <boost/fusion/include/std_pair.hpp>
#include <boost/spirit/home/x3.hpp>
#include <fmt/format.h>

#include "cmalign/dt/dts.hpp"

namespace cmalign::dt {

namespace x3 = boost::spirit::x3;

namespace {

// ---- tokens (dtc-lexer.l) ---------------------------------------------------------------------

// LABEL [a-zA-Z_][a-zA-Z0-9_]*, followed directly by ':' when it defines a label.
const auto label_name = x3::raw[x3::char_("a-zA-Z_") >> *x3::char_("a-zA-Z0-9_")];
// PROPNODECHAR [a-zA-Z0-9,._+*#?@-]; a leading backslash escapes names that look like keywords.
const auto propnode_name = x3::raw[+x3::char_("a-zA-Z0-9,._+*#?@-")];
// PATHCHAR is PROPNODECHAR or '/'.
const auto path_chars = x3::raw[*x3::char_("a-zA-Z0-9,._+*#?@/-")];
// Character sets spelled out rather than x3::digit/xdigit/blank: those classify a plain char,
// which is negative for bytes >= 0x80 (Boost asserts, and std::isxdigit of it is undefined).
const auto dec_digit = x3::char_("0-9");
const auto hex_digit = x3::char_("0-9a-fA-F");
const auto blank_char = x3::char_(" \t");
// ([0-9]+|0[xX][0-9a-fA-F]+) — the suffix is matched separately.
const auto integer_digits =
    x3::raw[(x3::lit('0') >> (x3::lit('x') | 'X') >> +hex_digit) | +dec_digit];
const auto integer_suffix = x3::lit("ULL") | "UL" | "U" | "LL" | "L";
// STRING \"([^\\"]|\\.)*\"  (newlines included, as in dtc)
const auto string_token = x3::raw['"' >> *(('\\' >> x3::char_) | ~x3::char_("\\\"")) >> '"'];
// CHAR_LITERAL '([^']|\\')*'
const auto char_token = x3::raw['\'' >> *((x3::lit('\\') >> '\'') | ~x3::char_('\'')) >> '\''];
// ^"#"(line)?[ \t]+[0-9]+[ \t]+{STRING}([ \t]+[0-9]+)*   (cpp line markers)
const auto line_marker = x3::lit('#') >> -x3::lit("line") >> x3::omit[+blank_char] >> x3::uint_
                         >> x3::omit[+blank_char] >> string_token
                         >> x3::omit[*(+blank_char >> x3::uint_)];
const auto hex_byte = x3::raw[hex_digit >> hex_digit];

template <typename Rule> bool match(const char*& p, const char* end, const Rule& rule) {
    return x3::parse(p, end, rule);
}
template <typename Rule, typename Attr>
bool match(const char*& p, const char* end, const Rule& rule, Attr& attr) {
    return x3::parse(p, end, rule, attr);
}

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_propnode_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::strchr(",._+*#?@-", c) != nullptr;
}
int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// dtc's data_copy_escape_string/get_escape_char (util.c) on the text between the quotes.
// Returns false with `bad` set for "\x" without hex digits.
bool decode_escapes(std::string_view in, std::string& out, std::size_t& bad) {
    out.clear();
    out.reserve(in.size());
    for (std::size_t i = 0; i < in.size();) {
        char c = in[i++];
        if (c != '\\' || i >= in.size()) {
            out += c;
            continue;
        }
        char e = in[i++];
        switch (e) {
        case 'a':
            out += '\a';
            break;
        case 'b':
            out += '\b';
            break;
        case 't':
            out += '\t';
            break;
        case 'n':
            out += '\n';
            break;
        case 'v':
            out += '\v';
            break;
        case 'f':
            out += '\f';
            break;
        case 'r':
            out += '\r';
            break;
        case 'x': {
            unsigned v = 0;
            int n = 0;
            while (n < 2 && i < in.size() && hex_value(in[i]) >= 0)
                v = v * 16 + hex_value(in[i++]), ++n;
            if (n == 0) {
                bad = i - 2;
                return false;
            }
            out += static_cast<char>(v);
            break;
        }
        default:
            if (e >= '0' && e <= '7') {
                unsigned v = static_cast<unsigned>(e - '0');
                int n = 1;
                while (n < 3 && i < in.size() && in[i] >= '0' && in[i] <= '7')
                    v = v * 8 + static_cast<unsigned>(in[i++] - '0'), ++n;
                out += static_cast<char>(v & 0xff);
            } else {
                out += e;
            }
        }
    }
    return true;
}

struct ParseAbort {}; // thrown inside the parser only, caught in parse()

class Parser {
public:
    Parser(syntax::File& file, std::uint32_t text_id, const ParseOptions& options, FileCache& cache,
           Diagnostics& diags, int include_depth)
        : file_(file), text_id_(text_id), options_(options), cache_(cache), diags_(diags),
          include_depth_(include_depth) {
        const std::string& t = file.texts[text_id]->source->text;
        begin_ = t.data();
        p_ = begin_;
        end_ = begin_ + t.size();
    }

    bool had_errors() const { return errors_; }

    // sourcefile: headers memreserves devicetree — accepted in any order (see dts.hpp).
    void top_level() {
        for (;;) {
            skip();
            if (p_ >= end_) return;
            const char* start = p_;
            if (keyword("/dts-v1/")) {
                expect(';', "after /dts-v1/");
                file_.has_v1 = true;
                continue;
            }
            if (keyword("/plugin/")) {
                expect(';', "after /plugin/");
                file_.plugin = true;
                continue;
            }
            std::vector<syntax::Label> labels = parse_labels();
            if (keyword("/memreserve/")) {
                syntax::MemReserve mr;
                mr.labels = std::move(labels);
                mr.address = integer_prim(0);
                mr.size = integer_prim(0);
                expect(';', "after /memreserve/ entry");
                mr.span = span(start, p_);
                file_.memreserves.push_back(std::move(mr));
                continue;
            }
            syntax::TopLevel item;
            item.labels = std::move(labels);
            bool del = false;
            if ((del = keyword("/delete-node/")) || keyword("/omit-if-no-ref/")) {
                item.kind = del ? syntax::TopLevel::Kind::delete_node
                                : syntax::TopLevel::Kind::omit_if_no_ref;
                skip();
                if (p_ >= end_ || *p_ != '&')
                    fail(p_, fmt::format("expected a reference (&label or &{{/path}}) after {}",
                                         del ? "/delete-node/" : "/omit-if-no-ref/"));
                item.ref = reference();
                expect(';', "after the reference");
                if (!item.labels.empty())
                    fail(item.labels.front().span, "a label cannot be put on this statement");
            } else if (*p_ == '/' && !keyword_ahead()) {
                ++p_;
                item.kind = syntax::TopLevel::Kind::root;
                item.node.name_span = span(p_ - 1, p_);
                // dtc's grammar has no label on '/'; accept them as `lbl: &{/} { }` would.
                item.node.labels = std::move(item.labels);
                item.labels.clear();
                node_body(item.node, start, 1);
            } else if (*p_ == '&') {
                item.kind = syntax::TopLevel::Kind::reference;
                item.ref = reference();
                item.node.name_span = item.ref.span;
                node_body(item.node, start, 1);
            } else {
                fail(p_, unexpected("'/ {', '&label {', /delete-node/ or /memreserve/"));
            }
            item.span = span(start, p_);
            file_.items.push_back(std::move(item));
        }
    }

    // Items of a node body until '}' (or, for an /include/d file, the end of the text).
    void body_items(syntax::Node& node, int depth, bool& seen_subnode, bool to_end) {
        for (;;) {
            skip();
            if (p_ >= end_) {
                if (to_end) return;
                throw_unterminated();
            }
            if (*p_ == '}') return;
            const char* start = p_;
            if (keyword("/delete-property/")) {
                syntax::Property prop;
                prop.deleted = true;
                skip();
                prop.name_span = span(p_, p_);
                prop.name = name("a property name after /delete-property/");
                prop.name_span.end = offset(p_);
                expect(';', "after /delete-property/ name");
                prop.span = span(start, p_);
                if (seen_subnode) fail(prop.span, "properties must precede subnodes");
                count_property(start);
                node.properties.push_back(std::move(prop));
                continue;
            }
            if (keyword("/delete-node/")) {
                syntax::Node child;
                child.deleted = true;
                skip();
                child.name_span = span(p_, p_);
                child.name = name("a node name after /delete-node/");
                child.name_span.end = offset(p_);
                expect(';', "after /delete-node/ name");
                child.span = span(start, p_);
                node.children.push_back(std::move(child));
                seen_subnode = true;
                continue;
            }
            // [labels] [/omit-if-no-ref/] [labels] name ( '{' ... '};' | '=' value ';' | ';' )
            std::vector<syntax::Label> labels = parse_labels();
            bool omit = false;
            if (keyword("/omit-if-no-ref/")) {
                omit = true;
                auto more = parse_labels();
                labels.insert(labels.end(), more.begin(), more.end());
            }
            skip();
            const char* name_start = p_;
            std::string_view item_name = name("a property or node name");
            const char* name_end = p_;
            skip();
            if (p_ < end_ && *p_ == '{') {
                syntax::Node child;
                child.labels = std::move(labels);
                child.name = std::move(item_name);
                child.name_span = span(name_start, name_end);
                child.omit_if_no_ref = omit;
                node_body(child, start, depth + 1);
                child.span = span(start, p_);
                node.children.push_back(std::move(child));
                seen_subnode = true;
                continue;
            }
            if (omit) fail(start, "/omit-if-no-ref/ must be followed by a node");
            syntax::Property prop;
            prop.labels = std::move(labels);
            prop.name = std::move(item_name);
            prop.name_span = span(name_start, name_end);
            if (p_ < end_ && *p_ == '=') {
                ++p_;
                property_value(prop);
            } else if (p_ >= end_ || *p_ != ';') {
                fail(p_, unexpected(fmt::format("'=', ';' or '{{' after '{}'", prop.name)));
            }
            expect(';', "after the property");
            prop.span = span(start, p_);
            if (seen_subnode) fail(prop.span, "properties must precede subnodes");
            count_property(start);
            node.properties.push_back(std::move(prop));
        }
    }

private:
    void count_property(const char* at) {
        if (++property_count_ > options_.limits.properties)
            fail(at, fmt::format("more than {} properties {}", options_.limits.properties,
                                 limit_hint("properties")));
    }

    syntax::File& file_;
    std::uint32_t text_id_;
    const ParseOptions& options_;
    FileCache& cache_;
    Diagnostics& diags_;
    int include_depth_;
    const char* begin_ = nullptr;
    const char* p_ = nullptr;
    const char* end_ = nullptr;
    bool errors_ = false;
    std::uint64_t node_count_ = 0;
    std::uint64_t property_count_ = 0;
    const char* open_brace_ = nullptr; // innermost unterminated '{', for the error message

    std::size_t offset(const char* at) const { return static_cast<std::size_t>(at - begin_); }

    // The text a pointer lies in: the current one, or (after an /include/ opened or closed
    // between two tokens) another text of the file.
    std::uint32_t text_of(const char* at) const {
        std::less_equal<const char*> le;
        if (le(begin_, at) && le(at, end_)) return text_id_;
        for (std::uint32_t id = 0; id < file_.texts.size(); ++id) {
            const std::string& t = file_.texts[id]->source->text;
            if (le(t.data(), at) && le(at, t.data() + t.size())) return id;
        }
        return text_id_;
    }
    std::size_t offset_in(std::uint32_t id, const char* at) const {
        return static_cast<std::size_t>(at - file_.texts[id]->source->text.data());
    }
    // A span that starts in one text and ends in another is cut at the end of the first.
    TextSpan span(const char* b, const char* e) const {
        auto tb = text_of(b);
        if (tb == text_id_ && text_of(e) == text_id_) return {text_id_, offset(b), offset(e)};
        return {tb, offset_in(tb, b), file_.texts[tb]->source->text.size()};
    }

    Location where(const char* at) const {
        auto id = text_of(at);
        return file_.locate(id, offset_in(id, at));
    }

    // Errors that stop the parse.
    [[noreturn]] void fail(const char* at, std::string message) {
        diags_.error(where(at), std::move(message));
        errors_ = true;
        throw ParseAbort{};
    }
    [[noreturn]] void fail(TextSpan s, std::string message) {
        fail(begin_ + s.begin, std::move(message));
    }
    // Errors after which the tree is still well formed (dtc continues too).
    void error(const char* at, std::string message) {
        diags_.error(where(at), std::move(message));
        errors_ = true;
    }
    void warning(const char* at, std::string message) {
        diags_.warning(where(at), std::move(message));
    }

    std::string unexpected(const std::string& wanted) const {
        if (p_ >= end_) return "unexpected end of input, expected " + wanted;
        const char* e = p_;
        if (is_propnode_char(*e))
            while (e < end_ && e - p_ < 40 && is_propnode_char(*e))
                ++e;
        else
            ++e;
        return fmt::format("unexpected '{}', expected {}", std::string_view(p_, e - p_), wanted);
    }

    [[noreturn]] void throw_unterminated() {
        if (open_brace_) fail(open_brace_, "unterminated node: '{' has no matching '};'");
        fail(p_, "unexpected end of input");
    }

    // Whitespace, comments and cpp line markers (recorded for locations).
    void skip() {
        for (;;) {
            if (p_ >= end_) {
                if (stack_.empty()) return;
                pop_text(); // the end of an /include/d file: back to the includer (dtc's EOF)
                continue;
            }
            char c = *p_;
            if (c == '/' && static_cast<std::size_t>(end_ - p_) >= 9 &&
                std::memcmp(p_, "/include/", 9) == 0) {
                push_include(); // lexer-level, as dtc: wherever a token may stand
                continue;
            }
            if (is_space(c)) {
                ++p_;
            } else if (c == '/' && p_ + 1 < end_ && p_[1] == '*') {
                const char* close = nullptr;
                for (const char* q = p_ + 2; q + 1 < end_; ++q)
                    if (q[0] == '*' && q[1] == '/') {
                        close = q;
                        break;
                    }
                if (!close) fail(p_, "unterminated comment");
                p_ = close + 2;
            } else if (c == '/' && p_ + 1 < end_ && p_[1] == '/') {
                const void* nl = std::memchr(p_, '\n', static_cast<std::size_t>(end_ - p_));
                p_ = nl ? static_cast<const char*>(nl) + 1 : end_;
            } else if (c == '#' && (p_ == begin_ || p_[-1] == '\n') && try_line_marker()) {
                // consumed
            } else {
                return;
            }
        }
    }

    bool try_line_marker() {
        const char* q = p_;
        std::pair<unsigned, std::string> parts;
        if (!match(q, end_, line_marker, parts)) return false;
        const std::string& quoted = parts.second;
        std::string decoded;
        std::size_t bad = 0;
        decode_escapes(std::string_view(quoted).substr(1, quoted.size() - 2), decoded, bad);
        const void* nl = std::memchr(q, '\n', static_cast<std::size_t>(end_ - q));
        const char* next = nl ? static_cast<const char*>(nl) + 1 : end_;
        auto& text = *file_.texts[text_id_];
        if (text.line_starts.empty()) {
            text.line_starts.push_back(0);
            for (const char* s = begin_; (s = static_cast<const char*>(std::memchr(
                                              s, '\n', static_cast<std::size_t>(end_ - s))));)
                text.line_starts.push_back(offset(++s));
        }
        const std::size_t line_index = static_cast<std::size_t>(
            std::upper_bound(text.line_starts.begin(), text.line_starts.end(), offset(next)) -
            text.line_starts.begin() - 1);
        text.markers.push_back(
            {offset(next), std::move(decoded), static_cast<int>(parts.first), line_index});
        p_ = q; // the rest of the line is lexed normally (usually only blanks)
        return true;
    }

    bool keyword(std::string_view kw) {
        skip();
        if (static_cast<std::size_t>(end_ - p_) >= kw.size() &&
            std::memcmp(p_, kw.data(), kw.size()) == 0) {
            p_ += kw.size();
            return true;
        }
        return false;
    }
    bool keyword_ahead() const {
        static constexpr std::string_view kws[] = {
            "/dts-v1/",         "/plugin/",  "/memreserve/", "/delete-node/", "/delete-property/",
            "/omit-if-no-ref/", "/include/", "/bits/",       "/incbin/"};
        for (auto kw : kws)
            if (static_cast<std::size_t>(end_ - p_) >= kw.size() &&
                std::memcmp(p_, kw.data(), kw.size()) == 0)
                return true;
        return false;
    }

    void expect(char c, const char* context) {
        skip();
        if (p_ < end_ && *p_ == c) {
            ++p_;
            return;
        }
        fail(p_, unexpected(fmt::format("'{}' {}", c, context)));
    }

    // Zero or more "name:" labels.
    std::vector<syntax::Label> parse_labels() {
        std::vector<syntax::Label> labels;
        for (;;) {
            skip();
            const char* q = p_;
            boost::iterator_range<const char*> range;
            if (match(q, end_, label_name, range) && q < end_ && *q == ':') {
                labels.push_back({std::string_view(range.begin(), range.size()), span(p_, q + 1)});
                p_ = q + 1;
            } else {
                return labels;
            }
        }
    }

    std::string_view name(const char* wanted) {
        skip();
        const char* q = p_;
        if (q < end_ && *q == '\\') ++q;
        boost::iterator_range<const char*> range;
        if (!match(q, end_, propnode_name, range)) fail(p_, unexpected(wanted));
        p_ = q;
        return std::string_view(range.begin(), range.size());
    }

    // &label, &{/path}, &{label/path}
    syntax::Reference reference() {
        skip();
        syntax::Reference ref;
        const char* start = p_;
        ++p_; // '&'
        if (p_ < end_ && *p_ == '{') {
            ++p_;
            boost::iterator_range<const char*> range;
            match(p_, end_, path_chars, range);
            if (p_ >= end_ || *p_ != '}') fail(start, "unterminated path reference '&{'");
            ++p_;
            ref.target = std::string_view(range.begin(), range.size());
            ref.braced = true;
            if (ref.target.empty()) fail(start, "empty path reference '&{}'");
        } else {
            boost::iterator_range<const char*> range;
            if (!match(p_, end_, label_name, range))
                fail(start, "expected a label name or '{' after '&'");
            ref.target = std::string_view(range.begin(), range.size());
        }
        ref.span = span(start, p_);
        return ref;
    }

    void node_body(syntax::Node& node, const char* start, int depth) {
        if (depth > options_.limits.node_depth)
            fail(start, fmt::format("nodes nested deeper than {} levels {}",
                                    options_.limits.node_depth, limit_hint("node-depth")));
        if (++node_count_ > options_.limits.nodes)
            fail(start,
                 fmt::format("more than {} nodes {}", options_.limits.nodes, limit_hint("nodes")));
        skip();
        if (p_ >= end_ || *p_ != '{') fail(p_, unexpected("'{'"));
        const char* saved_brace = open_brace_;
        open_brace_ = p_;
        ++p_;
        bool seen_subnode = false;
        body_items(node, depth, seen_subnode, false);
        ++p_; // '}'
        expect(';', "after '}'");
        open_brace_ = saved_brace;
        node.span = span(start, p_);
    }

    // propdata: items separated by ',' with labels anywhere between them.
    void property_value(syntax::Property& prop) {
        for (;;) {
            for (auto& l : parse_labels()) {
                syntax::ValueItem item;
                item.kind = syntax::ValueItem::Kind::label;
                item.span = l.span;
                item.label = std::move(l);
                prop.value.push_back(std::move(item));
            }
            skip();
            if (p_ >= end_) fail(p_, unexpected("a property value"));
            const char* start = p_;
            syntax::ValueItem item;
            if (*p_ == '"') {
                item.kind = syntax::ValueItem::Kind::string;
                item.data = string_literal();
            } else if (*p_ == '<') {
                item.kind = syntax::ValueItem::Kind::cells;
                ++p_;
                cells(item);
            } else if (keyword("/bits/")) {
                item.kind = syntax::ValueItem::Kind::cells;
                skip();
                const char* bits_at = p_;
                std::uint64_t bits = 0;
                bool plain = false;
                if (!literal(bits, plain)) fail(p_, unexpected("8, 16, 32 or 64 after /bits/"));
                if (bits != 8 && bits != 16 && bits != 32 && bits != 64) {
                    error(bits_at, "array elements must be 8, 16, 32 or 64 bits");
                    bits = 32;
                }
                item.bits = static_cast<unsigned>(bits);
                skip();
                if (p_ >= end_ || *p_ != '<') fail(p_, unexpected("'<' after /bits/ size"));
                ++p_;
                cells(item);
            } else if (*p_ == '[') {
                item.kind = syntax::ValueItem::Kind::bytes;
                ++p_;
                bytes(item);
            } else if (*p_ == '&') {
                item.kind = syntax::ValueItem::Kind::reference;
                item.ref = reference();
            } else if (keyword("/incbin/")) {
                item.kind = syntax::ValueItem::Kind::incbin;
                incbin(item, start);
            } else {
                fail(p_, unexpected("a property value (\"string\", <cells>, [bytes] or &ref)"));
            }
            item.span = span(start, p_);
            prop.value.push_back(std::move(item));
            for (auto& l : parse_labels()) {
                syntax::ValueItem li;
                li.kind = syntax::ValueItem::Kind::label;
                li.span = l.span;
                li.label = std::move(l);
                prop.value.push_back(std::move(li));
            }
            skip();
            if (p_ < end_ && *p_ == ',') {
                ++p_;
                continue;
            }
            return;
        }
    }

    std::string string_literal() {
        const char* start = p_;
        boost::iterator_range<const char*> range;
        if (!match(p_, end_, string_token, range)) fail(start, "unterminated string");
        std::string out;
        std::size_t bad = 0;
        if (!decode_escapes(std::string_view(start + 1, range.size() - 2), out, bad))
            fail(start + 1 + bad, "\\x used with no following hex digits");
        return out;
    }

    // Inside '<' ... '>'.
    void cells(syntax::ValueItem& item) {
        for (;;) {
            skip();
            if (p_ >= end_) fail(p_, unexpected("'>'"));
            if (*p_ == '>') {
                ++p_;
                return;
            }
            const char* start = p_;
            syntax::Cell cell;
            if (*p_ == '&') {
                cell.kind = syntax::Cell::Kind::reference;
                cell.ref = reference();
                if (item.bits != 32)
                    error(start, "references are only allowed in arrays with 32-bit elements");
            } else {
                auto labels = parse_labels();
                if (!labels.empty()) {
                    for (auto& l : labels) {
                        syntax::Cell lc;
                        lc.kind = syntax::Cell::Kind::label;
                        lc.span = l.span;
                        lc.name = std::move(l.name);
                        item.cells.push_back(std::move(lc));
                    }
                    continue;
                }
                cell.value = integer_prim(0, &cell.plain_literal);
                if (item.bits < 64) {
                    const std::uint64_t mask = (std::uint64_t{1} << item.bits) - 1;
                    if (cell.value > mask && (cell.value | mask) != ~std::uint64_t{0})
                        warning(start, fmt::format("value 0x{:x} truncated to 0x{:x} ({}-bit cell)",
                                                   cell.value, cell.value & mask, item.bits));
                }
            }
            cell.span = span(start, p_);
            item.cells.push_back(std::move(cell));
        }
    }

    void bytes(syntax::ValueItem& item) {
        for (;;) {
            skip();
            if (p_ >= end_) fail(p_, unexpected("']'"));
            if (*p_ == ']') {
                ++p_;
                return;
            }
            auto labels = parse_labels();
            if (!labels.empty()) {
                for (auto& l : labels)
                    item.inner_labels.push_back(std::move(l));
                continue;
            }
            if (p_ + 1 < end_ && hex_value(p_[0]) >= 0 && hex_value(p_[1]) >= 0) {
                item.data += static_cast<char>(hex_value(p_[0]) * 16 + hex_value(p_[1]));
                p_ += 2;
                continue;
            }
            if (hex_value(*p_) >= 0) fail(p_, "byte strings need two hex digits per byte");
            fail(p_, unexpected("hex bytes or ']'"));
        }
    }

    void incbin(syntax::ValueItem& item, const char* start) {
        expect('(', "after /incbin/");
        skip();
        if (p_ >= end_ || *p_ != '"') fail(p_, unexpected("a file name"));
        item.incbin_file = string_literal();
        std::uint64_t offset_in = 0;
        std::uint64_t length = ~std::uint64_t{0};
        skip();
        if (p_ < end_ && *p_ == ',') {
            ++p_;
            offset_in = integer_prim(0);
            expect(',', "between /incbin/ offset and length");
            length = integer_prim(0);
        }
        expect(')', "after /incbin/ arguments");
        auto path = find_file(item.incbin_file, start);
        std::string err;
        auto src = path.empty() ? nullptr : cache_.load(path, &err, options_.limits);
        if (!src && !err.empty())
            fail(start, fmt::format("/incbin/ \"{}\": {}", item.incbin_file, err));
        if (!src) fail(start, fmt::format("/incbin/: cannot open \"{}\"", item.incbin_file));
        if (offset_in > src->text.size())
            fail(start, fmt::format("/incbin/: offset {} is past the end of \"{}\" ({} bytes)",
                                    offset_in, item.incbin_file, src->text.size()));
        item.data = src->text.substr(static_cast<std::size_t>(offset_in),
                                     static_cast<std::size_t>(std::min<std::uint64_t>(
                                         length, src->text.size() - offset_in)));
    }

    // dtc's srcfile_relative_open: absolute, else the including file's directory, else -i dirs.
    std::string find_file(const std::string& name_in, const char* at) {
        namespace fs = std::filesystem;
        std::error_code ec;
        if (!name_in.empty() && name_in.front() == '/')
            return fs::exists(name_in, ec) ? name_in : "";
        std::vector<std::string> dirs;
        Location here = where(at);
        dirs.push_back(fs::path(here.file).parent_path().string());
        for (auto& d : options_.include_dirs)
            dirs.push_back(d);
        for (auto& d : dirs) {
            fs::path candidate = d.empty() ? fs::path(name_in) : fs::path(d) / name_in;
            if (fs::is_regular_file(candidate, ec)) return candidate.string();
        }
        return {};
    }

    // One open /include/: the includer's position to return to.
    struct Frame {
        std::uint32_t text;
        const char* begin;
        const char* p;
        const char* end;
        std::string file; // the includer, for cycle messages
    };
    std::vector<Frame> stack_;

    std::string current_file() const {
        const auto& files = file_.texts[text_id_]->source->files;
        return files.empty() ? file_.locate(text_id_, 0).file : files.front()->path;
    }

    // At "/include/": read the file name and continue lexing in that file.
    void push_include() {
        const char* start = p_;
        p_ += 9;
        while (p_ < end_ && is_space(*p_))
            ++p_;
        if (p_ >= end_ || *p_ != '"') fail(p_, unexpected("a file name after /include/"));
        std::string inc = string_literal();
        if (static_cast<int>(stack_.size()) + 1 > options_.limits.include_depth)
            fail(start, fmt::format("/include/ nested deeper than {} levels {}",
                                    options_.limits.include_depth, limit_hint("include-depth")));
        auto path = find_file(inc, start);
        std::string err;
        auto src = path.empty() ? nullptr : cache_.load(path, &err, options_.limits);
        if (!src && !err.empty()) fail(start, fmt::format("/include/ \"{}\": {}", inc, err));
        if (!src) fail(start, fmt::format("/include/: cannot find \"{}\"", inc));
        // dtc has no include guards: a file already open would include itself forever.
        namespace fs = std::filesystem;
        std::error_code ec;
        auto same = [&](const std::string& a) {
            return fs::equivalent(fs::path(a), fs::path(src->path), ec);
        };
        std::vector<std::string> chain;
        for (const auto& f : stack_)
            chain.push_back(f.file);
        chain.push_back(current_file());
        for (std::size_t k = 0; k < chain.size(); ++k) {
            if (!same(chain[k])) continue;
            std::string cycle;
            for (std::size_t j = k; j < chain.size(); ++j)
                cycle += chain[j] + " \u2192 ";
            fail(start, fmt::format("include cycle: {}{}", cycle, src->path));
        }
        auto text = std::make_unique<syntax::Text>();
        text->owned = std::make_unique<Preprocessed>(identity(src));
        text->source = text->owned.get();
        file_.texts.push_back(std::move(text));
        stack_.push_back({text_id_, begin_, p_, end_, current_file()});
        text_id_ = static_cast<std::uint32_t>(file_.texts.size() - 1);
        const std::string& t = file_.texts[text_id_]->source->text;
        begin_ = t.data();
        p_ = begin_;
        end_ = begin_ + t.size();
    }

    void pop_text() {
        const Frame& f = stack_.back();
        text_id_ = f.text;
        begin_ = f.begin;
        p_ = f.p;
        end_ = f.end;
        stack_.pop_back();
    }

    // ---- integers -------------------------------------------------------------------------

    // DT_LITERAL with dtc's checks. False when there is no literal at p_.
    bool literal(std::uint64_t& value, bool& plain) {
        const char* start = p_;
        boost::iterator_range<const char*> digits;
        if (!match(p_, end_, integer_digits, digits)) return false;
        match(p_, end_, integer_suffix);
        if (p_ < end_ && (std::isalnum(static_cast<unsigned char>(*p_)) || *p_ == '_'))
            fail(start,
                 fmt::format("bad integer literal '{}'",
                             std::string_view(start, static_cast<std::size_t>(p_ + 1 - start))));
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
    std::uint64_t integer_prim(int depth, bool* plain_out = nullptr) {
        skip();
        if (plain_out) *plain_out = false;
        if (p_ >= end_) fail(p_, unexpected("a number"));
        if (*p_ == '(') {
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
            std::string out;
            std::size_t bad = 0;
            if (!decode_escapes(std::string_view(start + 1, range.size() - 2), out, bad))
                fail(start + 1 + bad, "\\x used with no following hex digits");
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

    // Operators, matched after skip(); longest first.
    bool op(std::string_view o) {
        skip();
        if (static_cast<std::size_t>(end_ - p_) < o.size() || std::memcmp(p_, o.data(), o.size()))
            return false;
        // '<' must not take "<<" or "<="; '>' not ">>" / ">="; '&' not "&&"; '|' not "||".
        if (o.size() == 1 && p_ + 1 < end_) {
            char n = p_[1];
            if ((o[0] == '<' && (n == '<' || n == '=')) ||
                (o[0] == '>' && (n == '>' || n == '=')) || (o[0] == '&' && n == '&') ||
                (o[0] == '|' && n == '|') || (o[0] == '=' && n == '=') || (o[0] == '!' && n == '='))
                return false;
        }
        p_ += o.size();
        return true;
    }

    // integer_trinary: integer_or | integer_or '?' integer_expr ':' integer_trinary
    std::uint64_t expr(int depth) {
        if (depth > options_.limits.node_depth)
            fail(p_, fmt::format("expression nested deeper than {} levels {}",
                                 options_.limits.node_depth, limit_hint("node-depth")));
        std::uint64_t c = binary(0, depth);
        if (op("?")) {
            std::uint64_t a = expr(depth + 1);
            expect(':', "in the conditional expression");
            std::uint64_t b = expr(depth + 1);
            return c ? a : b;
        }
        return c;
    }

    // Binary levels from || (0) to * / % (9), left-associative as in dtc-parser.y.
    std::uint64_t binary(int level, int depth) {
        if (level == 10) return unary(depth);
        std::uint64_t lhs = binary(level + 1, depth);
        for (;;) {
            skip();
            const char* at = p_;
            std::string_view o;
            switch (level) {
            case 0:
                o = op("||") ? "||" : "";
                break;
            case 1:
                o = op("&&") ? "&&" : "";
                break;
            case 2:
                o = op("|") ? "|" : "";
                break;
            case 3:
                o = op("^") ? "^" : "";
                break;
            case 4:
                o = op("&") ? "&" : "";
                break;
            case 5:
                o = op("==") ? "==" : op("!=") ? "!=" : "";
                break;
            case 6:
                o = op("<=") ? "<=" : op(">=") ? ">=" : op("<") ? "<" : op(">") ? ">" : "";
                break;
            case 7:
                o = op("<<") ? "<<" : op(">>") ? ">>" : "";
                break;
            case 8:
                o = op("+") ? "+" : op("-") ? "-" : "";
                break;
            case 9:
                o = op("*") ? "*" : op("/") ? "/" : op("%") ? "%" : "";
                break;
            }
            if (o.empty()) return lhs;
            std::uint64_t rhs = binary(level + 1, depth);
            if (o == "||")
                lhs = (lhs || rhs) ? 1 : 0;
            else if (o == "&&")
                lhs = (lhs && rhs) ? 1 : 0;
            else if (o == "|")
                lhs |= rhs;
            else if (o == "^")
                lhs ^= rhs;
            else if (o == "&")
                lhs &= rhs;
            else if (o == "==")
                lhs = lhs == rhs;
            else if (o == "!=")
                lhs = lhs != rhs;
            else if (o == "<")
                lhs = lhs < rhs;
            else if (o == ">")
                lhs = lhs > rhs;
            else if (o == "<=")
                lhs = lhs <= rhs;
            else if (o == ">=")
                lhs = lhs >= rhs;
            else if (o == "<<")
                lhs = rhs < 64 ? lhs << rhs : 0;
            else if (o == ">>")
                lhs = rhs < 64 ? lhs >> rhs : 0;
            else if (o == "+")
                lhs += rhs;
            else if (o == "-")
                lhs -= rhs;
            else if (o == "*")
                lhs *= rhs;
            else if (rhs == 0) {
                error(at, "division by zero");
                lhs = 0;
            } else if (o == "/")
                lhs /= rhs;
            else
                lhs %= rhs;
        }
    }

    std::uint64_t unary(int depth) {
        if (depth > options_.limits.node_depth)
            fail(p_, fmt::format("expression nested deeper than {} levels {}",
                                 options_.limits.node_depth, limit_hint("node-depth")));
        if (op("-")) return ~unary(depth + 1) + 1;
        if (op("~")) return ~unary(depth + 1);
        if (op("!")) return unary(depth + 1) == 0 ? 1 : 0;
        return integer_prim(depth);
    }
};

} // namespace

std::string_view syntax::File::slice(TextSpan s) const {
    const std::string& t = texts[s.text]->source->text;
    if (s.begin > t.size() || s.end < s.begin) return {};
    return std::string_view(t).substr(s.begin, s.end - s.begin);
}

Location syntax::File::locate(TextSpan s) const {
    return locate(s.text, s.begin);
}

Location syntax::File::locate(std::uint32_t text_id, std::size_t off) const {
    const Text& t = *texts[text_id];
    if (!t.markers.empty() && off >= t.markers.front().offset) {
        auto it =
            std::upper_bound(t.markers.begin(), t.markers.end(), off,
                             [](std::size_t o, const Text::LineMarker& m) { return o < m.offset; });
        --it;
        auto line_of = [&](std::size_t o) {
            return static_cast<std::size_t>(
                std::upper_bound(t.line_starts.begin(), t.line_starts.end(), o) -
                t.line_starts.begin() - 1);
        };
        const std::size_t line_idx = line_of(off);
        const std::size_t marker_idx = it->line_index;
        Location loc;
        loc.file = it->file;
        loc.line = it->line + static_cast<int>(line_idx - marker_idx);
        loc.column = static_cast<int>(off - t.line_starts[line_idx]) + 1;
        return loc;
    }
    return t.source->locate(off);
}

std::optional<SourceSpan> syntax::File::source_span(TextSpan s) const {
    const Text& t = *texts[s.text];
    if (!t.markers.empty() && s.begin >= t.markers.front().offset) return std::nullopt;
    return t.source->source_span(s.begin, s.end);
}

std::string syntax::File::original_text(TextSpan s) const {
    const std::string_view expanded = slice(s);
    const Text& t = *texts[s.text];
    const auto& segs = t.source->segments;
    if (s.end <= s.begin || segs.empty() ||
        (!t.markers.empty() && s.begin >= t.markers.front().offset))
        return std::string(expanded);
    auto segment_of = [&](std::size_t off) {
        auto it = std::upper_bound(
            segs.begin(), segs.end(), off,
            [](std::size_t o, const Preprocessed::Segment& g) { return o < g.out_begin; });
        return it == segs.begin() ? segs.size() : static_cast<std::size_t>(it - segs.begin() - 1);
    };
    const std::size_t first = segment_of(s.begin);
    const std::size_t last = segment_of(s.end - 1);
    if (first >= segs.size() || last >= segs.size()) return std::string(expanded);
    if (first == last && segs[first].verbatim) return std::string(expanded);
    const auto& f = segs[first];
    const std::size_t src_begin = f.verbatim ? f.src_begin + (s.begin - f.out_begin) : f.src_begin;
    std::size_t src_end = 0;
    const auto& l = segs[last];
    if (l.verbatim) {
        src_end = l.src_begin + (s.end - l.out_begin);
        if (l.file != f.file) return std::string(expanded);
    } else {
        // A macro invocation ends where the verbatim text after its expansion starts.
        std::size_t k = last + 1;
        while (k < segs.size() && !segs[k].verbatim)
            ++k;
        if (k >= segs.size() || segs[k].file != f.file) return std::string(expanded);
        src_end = segs[k].src_begin;
    }
    if (!f.file || src_end <= src_begin || src_end > f.file->text.size() ||
        src_end - src_begin > 4096)
        return std::string(expanded);
    std::string_view original(f.file->text.data() + src_begin, src_end - src_begin);
    while (!original.empty() && (original.back() == ' ' || original.back() == '\t' ||
                                 original.back() == '\n' || original.back() == '\r'))
        original.remove_suffix(1);
    if (original.empty() || original.find(';') != std::string_view::npos)
        return std::string(expanded);
    return std::string(original);
}

std::optional<syntax::File> parse(const Preprocessed& text, const ParseOptions& options,
                                  FileCache& cache, Diagnostics& diags) {
    syntax::File file;
    auto main = std::make_unique<syntax::Text>();
    main->source = &text;
    file.texts.push_back(std::move(main));
    Parser parser(file, 0, options, cache, diags, 0);
    try {
        parser.top_level();
    } catch (ParseAbort&) {
        return std::nullopt;
    }
    if (parser.had_errors()) return std::nullopt;
    if (!file.has_v1 && !file.plugin && file.items.empty() && file.memreserves.empty()) {
        // dtc: "syntax error" at the end of an empty source; say what is missing.
        diags.error({file.locate(0, 0).file, 0, 0},
                    "empty device tree source: no /dts-v1/, no /memreserve/ and no node "
                    "(dtc rejects it)");
        return std::nullopt;
    }
    return file;
}

} // namespace cmalign::dt
