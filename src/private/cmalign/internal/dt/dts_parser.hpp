// The DTS parser's tokens (Boost.Spirit X3) and its recursive-descent state (class Parser),
// shared by dts/parse.cpp, dts/values.cpp and dts/expr.cpp. Not part of the public interface.
#pragma once

#include <algorithm>
#include <cstring>

#include <boost/fusion/include/std_pair.hpp> // IWYU pragma: keep (X3 parses into std::pair)
#include <boost/spirit/home/x3.hpp>
#include <fmt/format.h>

#include "cmalign/internal/dt/dts.hpp"

namespace cmalign::dt {

// The statements of an include memo's output parsed on their own, to be shared by the inputs
// that include that output between two statements (ParsedChunk); null when the output is not
// whole statements that parse without a diagnostic and without reading anything else.
std::shared_ptr<const ParsedChunk>
parse_shared_chunk(const std::shared_ptr<const FileCache::IncludeMemo>& memo,
                   const ParseOptions& options, FileCache& cache);

namespace dts_parser {

namespace x3 = boost::spirit::x3;

// ---- tokens (dtc-lexer.l) ---------------------------------------------------------------------

// PATHCHAR is PROPNODECHAR or '/'.
const auto path_chars = x3::raw[*x3::char_("a-zA-Z0-9,._+*#?@/-")];
// ([0-9]+|0[xX][0-9a-fA-F]+) — the suffix is matched separately.
// Character sets spelled out rather than x3::digit/xdigit/blank: those classify a plain char,
// which is negative for bytes >= 0x80 (Boost asserts, and std::isxdigit of it is undefined).
const auto dec_digit = x3::char_("0-9");
const auto hex_digit = x3::char_("0-9a-fA-F");
const auto blank_char = x3::char_(" \t");
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

// Character classes by table: the parser's most frequent tests (blanks between all tokens, and
// every property and node name is first read as a possible label).
struct DtsCharClasses {
    bool label_start[256] = {}; // [a-zA-Z_]
    bool label[256] = {};       // [a-zA-Z0-9_]: LABEL is [a-zA-Z_][a-zA-Z0-9_]*
    bool propnode[256] = {};    // PROPNODECHAR [a-zA-Z0-9,._+*#?@-]
    bool space[256] = {};       // [ \t\n\r\f\v]
    constexpr DtsCharClasses() {
        for (int c = 0; c < 256; ++c) {
            const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
            const bool digit = c >= '0' && c <= '9';
            label_start[c] = alpha || c == '_';
            label[c] = label_start[c] || digit;
        }
        for (const char* p =
                 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,._+*#?@-";
             *p; ++p)
            propnode[static_cast<unsigned char>(*p)] = true;
        for (const char* p = " \t\n\r\f\v"; *p; ++p)
            space[static_cast<unsigned char>(*p)] = true;
    }
};
inline constexpr DtsCharClasses kDtsChars;

inline bool is_space(char c) {
    return kDtsChars.space[static_cast<unsigned char>(c)];
}
inline bool is_propnode_char(char c) {
    return kDtsChars.propnode[static_cast<unsigned char>(c)];
}
inline bool starts_label(char c) {
    return kDtsChars.label_start[static_cast<unsigned char>(c)];
}
inline bool is_label_char(char c) {
    return kDtsChars.label[static_cast<unsigned char>(c)];
}
inline int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// dtc's data_copy_escape_string/get_escape_char (util.c) on the text between the quotes.
// Returns false with `bad` set for "\x" without hex digits.
bool decode_escapes(std::string_view in, std::string& out, std::size_t& bad);

struct ParseAbort {}; // thrown inside the parser only, caught in parse()

class Parser {
public:
    // `shared_chunk`: the text is a shared chunk's (parse_shared_chunk): anything whose meaning
    // depends on the input around it (/include/ and /incbin/, found from the input's
    // directories, and line markers) ends the parse, which the chunk is then not shared for.
    Parser(syntax::File& file, std::uint32_t text_id, const ParseOptions& options, FileCache& cache,
           Diagnostics& diags, bool shared_chunk = false);

    bool had_errors() const { return errors_; }
    std::uint64_t nodes() const { return node_count_; }
    std::uint64_t properties() const { return property_count_; }
    int deepest() const { return deepest_; }
    // Where the last top-level statement ended.
    std::size_t statements_end() const { return offset(statement_end_); }

    void top_level();

private:
    void body_items(syntax::Node& node, int depth, std::size_t properties_base);
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
    const char* begin_ = nullptr;
    const char* p_ = nullptr;
    const char* end_ = nullptr;
    bool errors_ = false;
    std::uint64_t node_count_ = 0;
    std::uint64_t property_count_ = 0;
    const char* open_brace_ = nullptr; // innermost unterminated '{', for the error message
    const char* statement_end_ = nullptr;
    int deepest_ = 0; // the deepest node or expression nesting (node-depth bounds both)

    // Shared chunks (ParsedChunk): the main text's chunks and the next one not passed yet.
    bool shared_chunk_ = false; // this parse makes one
    std::uint32_t main_text_ = 0;
    const std::vector<Preprocessed::Chunk>* chunks_ = nullptr;
    std::size_t next_chunk_ = 0;
    // Between two top-level statements (blanks from `before` to p_): takes the statements of a
    // chunk that starts among those blanks from its shared parse, p_ then after the chunk.
    bool take_shared_chunk(const char* before);
    [[noreturn]] void not_shared() { throw ParseAbort{}; }

    std::size_t offset(const char* at) const { return static_cast<std::size_t>(at - begin_); }

    std::uint32_t text_of(const char* at) const;
    std::size_t offset_in(std::uint32_t id, const char* at) const {
        return static_cast<std::size_t>(at - file_.text(id).source->text.data());
    }
    // A span that starts in one text and ends in another is cut at the end of the first.
    TextSpan span(const char* b, const char* e) const {
        std::less_equal<const char*> le; // pointers of different texts: a total order
        if (le(begin_, b) && le(b, e) && le(e, end_)) return {text_id_, offset(b), offset(e)};
        auto tb = text_of(b);
        if (tb == text_id_ && text_of(e) == text_id_) return {text_id_, offset(b), offset(e)};
        return {tb, offset_in(tb, b), file_.text(tb).source->text.size()};
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

    std::string unexpected(const std::string& wanted) const;

    [[noreturn]] void throw_unterminated() {
        if (open_brace_) fail(open_brace_, "unterminated node: '{' has no matching '};'");
        fail(p_, "unexpected end of input");
    }

    // Past blanks, comments, line markers and /include/ (dtc's lexer-level skips). Blanks, most
    // of what lies between two tokens, are passed here; the rest (and a text's end) in
    // skip_slow().
    void skip() {
        while (p_ < end_ && is_space(*p_))
            ++p_;
        if (p_ < end_ && *p_ != '/' && *p_ != '#') return;
        skip_slow();
    }
    void skip_slow();

    bool try_line_marker();

    // Every keyword starts with '/': most calls stand on a name or a value and return at once.
    bool keyword(std::string_view kw) {
        skip();
        if (p_ >= end_ || *p_ != '/') return false;
        return keyword_here(kw);
    }
    bool keyword_here(std::string_view kw);
    bool keyword_ahead() const;

    void expect(char c, const char* context);

    // Most calls stand on a value or a ';': those return here, without a call.
    std::vector<syntax::Label> parse_labels() {
        skip();
        if (p_ >= end_ || !starts_label(*p_)) return {};
        return parse_labels_here();
    }
    std::vector<syntax::Label> parse_labels_here();

    // The end of the LABEL token at `p` (followed directly by ':' when it defines a label, by
    // nothing in particular after '&'); `p` itself when none starts there.
    const char* label_end(const char* p) const {
        if (p >= end_ || !starts_label(*p)) return p;
        ++p;
        while (p < end_ && is_label_char(*p))
            ++p;
        return p;
    }

    std::string_view name(const char* wanted);

    syntax::Reference reference();

    void node_body(syntax::Node& node, const char* start, int depth);
    // `/delete-property/ NAME;` or `/delete-node/ NAME;` (the keyword read from `start`): an
    // entry that only deletes.
    template <class Entry>
    Entry deletion(const char* start, const char* wanted, const char* after) {
        Entry e;
        e.deleted = true;
        skip();
        e.name_span = span(p_, p_);
        e.name = name(wanted);
        e.name_span.end = offset(p_);
        expect(';', after);
        e.span = span(start, p_);
        return e;
    }

    void property_value(syntax::Property& prop);

    std::string_view quoted_token();
    std::string string_literal();
    std::string decoded_literal(const char* start, std::size_t size);
    void push_labels(syntax::Property& prop) {
        skip();
        if (p_ < end_ && starts_label(*p_)) push_labels_here(prop);
    }
    void push_labels_here(syntax::Property& prop);

    void cells(syntax::Property& prop, syntax::ValueItem& item);
    std::vector<syntax::Cell> cell_scratch_;       // cells(): the value being read
    std::vector<syntax::ValueItem> item_scratch_;  // property_value(): the value being read
    std::vector<syntax::Property> property_stack_; // node_body(): of the nodes being read
    std::vector<syntax::Node> node_stack_;         // node_body(): children being read
    void store_properties(syntax::Node& node, std::size_t base);
    // Whether two live (not /delete-…/) entries of one body share a name.
    template <class Entry> bool names_repeat(std::span<Entry> entries) {
        if (entries.size() <= 16) {
            for (std::size_t i = 0; i < entries.size(); ++i)
                for (std::size_t j = i + 1; j < entries.size(); ++j)
                    if (!entries[i].deleted && !entries[j].deleted &&
                        entries[i].name == entries[j].name)
                        return true;
            return false;
        }
        name_scratch_.clear();
        for (const auto& e : entries)
            if (!e.deleted) name_scratch_.push_back(e.name);
        std::sort(name_scratch_.begin(), name_scratch_.end());
        return std::adjacent_find(name_scratch_.begin(), name_scratch_.end()) !=
               name_scratch_.end();
    }
    std::vector<std::string_view> name_scratch_;

    void bytes(syntax::Property& prop, syntax::ValueItem& item);

    void incbin(syntax::ValueItem& item, const char* start);

    std::string find_file(const std::string& name_in, const char* at);

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
        const auto& files = file_.text(text_id_).source->files;
        return files.empty() ? file_.locate(text_id_, 0).file : files.front()->path;
    }

    void push_include();

    void pop_text();

    bool literal(std::uint64_t& value, bool& plain);
    void literal_suffix(const char* start);

    std::uint64_t integer_prim(int depth, bool* plain_out = nullptr);

    bool op(char c);

    std::uint64_t expr(int depth);

    std::uint64_t binary(int min_level, int depth);

    std::uint64_t unary(int depth);
};

} // namespace dts_parser

} // namespace cmalign::dt
