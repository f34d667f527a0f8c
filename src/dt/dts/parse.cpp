// DTS parser: dtc's source language (Linux 6.12 scripts/dtc/dtc-lexer.l and dtc-parser.y) into
// the lossless syntax tree of dt/dts.hpp.
//
// The tokens are Boost.Spirit X3 parsers (names, labels, literals, strings, line markers); the
// structure above them (nodes, values, C expressions) is recursive descent with an explicit
// depth bound, so that deeply nested input gives an error instead of exhausting the stack, and
// so every error names the exact place.
//
// This file: decode_escapes, the file and node structure, labels, names and references, the
// lexer's skipping and line markers; values are dts/values.cpp, integers and expressions
// dts/expr.cpp.
#include <algorithm>
#include <cstring>

#include "cmalign/internal/dt/dts_parser.hpp"
#include "cmalign/internal/dt/preprocess_engine.hpp"

namespace cmalign::dt {

namespace dts_parser {

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

Parser::Parser(syntax::File& file, std::uint32_t text_id, const ParseOptions& options,
               FileCache& cache, Diagnostics& diags, bool shared_chunk)
    : file_(file), text_id_(text_id), options_(options), cache_(cache), diags_(diags),
      shared_chunk_(shared_chunk) {
    const Preprocessed& source = *file.text(text_id).source;
    begin_ = source.text.data();
    p_ = begin_;
    end_ = begin_ + source.text.size();
    statement_end_ = begin_;
    main_text_ = text_id;
    if (!source.chunks.empty()) chunks_ = &source.chunks;
}

// sourcefile: headers memreserves devicetree — accepted in any order (see dts.hpp).
void Parser::top_level() {
    for (;;) {
        const char* before = p_;
        skip();
        if (chunks_ && take_shared_chunk(before)) continue;
        if (p_ >= end_) return;
        const char* start = p_;
        if (keyword("/dts-v1/")) {
            expect(';', "after /dts-v1/");
            file_.has_v1 = true;
            statement_end_ = p_;
            continue;
        }
        if (keyword("/plugin/")) {
            expect(';', "after /plugin/");
            file_.plugin = true;
            statement_end_ = p_;
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
            statement_end_ = p_;
            continue;
        }
        syntax::TopLevel item;
        item.labels = std::move(labels);
        bool del = false;
        if ((del = keyword("/delete-node/")) || keyword("/omit-if-no-ref/")) {
            item.kind =
                del ? syntax::TopLevel::Kind::delete_node : syntax::TopLevel::Kind::omit_if_no_ref;
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
        statement_end_ = p_;
    }
}

bool Parser::take_shared_chunk(const char* before) {
    if (text_id_ != main_text_ || !stack_.empty() || before < begin_ || before > p_) return false;
    const auto& chunks = *chunks_;
    const std::size_t from = offset(before), to = offset(p_);
    while (next_chunk_ < chunks.size() && chunks[next_chunk_].out_begin < from)
        ++next_chunk_; // began inside a statement: parsed as part of it
    while (next_chunk_ < chunks.size() && chunks[next_chunk_].out_begin <= to) {
        const auto& chunk = chunks[next_chunk_++];
        if (chunk.out_end <= to) continue; // blanks only (a header of #defines)
        // The first input that meets an output here parses it on its own (taking the parses
        // of the files it includes in turn) and keeps that for the next; the outermost chunk
        // that starts here is taken, so a board family's .dtsi is shared whole.
        bool found = false;
        auto parsed = cache_.parsed_chunk(chunk.memo.get(), found);
        if (!found) {
            parsed = parse_shared_chunk(chunk.memo, options_, cache_);
            cache_.add_parsed_chunk(chunk.memo.get(), parsed);
        }
        if (!parsed) continue; // not whole statements: one it includes may still be
        // Over a limit, the chunk is parsed here again, so that the error names the place.
        if (parsed->depth > options_.limits.node_depth ||
            node_count_ + parsed->nodes > options_.limits.nodes ||
            property_count_ + parsed->properties > options_.limits.properties)
            return false;
        node_count_ += parsed->nodes;
        property_count_ += parsed->properties;
        deepest_ = std::max(deepest_, parsed->depth);
        file_.has_v1 = file_.has_v1 || parsed->file.has_v1;
        file_.duplicate_names = file_.duplicate_names || parsed->file.duplicate_names;
        file_.name_or_phandle_properties =
            file_.name_or_phandle_properties || parsed->file.name_or_phandle_properties;
        file_.plugin = file_.plugin || parsed->file.plugin;
        file_.memreserves.insert(file_.memreserves.end(), parsed->file.memreserves.begin(),
                                 parsed->file.memreserves.end());
        file_.items.insert(file_.items.end(), parsed->file.items.begin(), parsed->file.items.end());
        // Its text and those of the chunks it took in turn.
        file_.shared_texts.insert(file_.shared_texts.end(), parsed->file.shared_texts.begin(),
                                  parsed->file.shared_texts.end());
        file_.chunks.push_back(std::move(parsed));
        p_ = begin_ + chunk.out_end;
        statement_end_ = p_;
        return true;
    }
    return false;
}

// Items of a node body until '}'; the node's properties are on property_stack_ from
// `properties_base`, its children pushed to node_stack_.
void Parser::body_items(syntax::Node& node, int depth, std::size_t properties_base) {
    bool seen_subnode = false;
    for (;;) {
        skip();
        if (p_ >= end_) throw_unterminated();
        if (*p_ == '}') return;
        const char* start = p_;
        if (keyword("/delete-property/")) {
            auto prop = deletion<syntax::Property>(start, "a property name after /delete-property/",
                                                   "after /delete-property/ name");
            if (seen_subnode) fail(prop.span, "properties must precede subnodes");
            count_property(start);
            property_stack_.push_back(std::move(prop));
            continue;
        }
        if (keyword("/delete-node/")) {
            auto child = deletion<syntax::Node>(start, "a node name after /delete-node/",
                                                "after /delete-node/ name");
            if (!seen_subnode) store_properties(node, properties_base);
            node_stack_.push_back(std::move(child));
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
            if (!seen_subnode) store_properties(node, properties_base);
            seen_subnode = true;
            node_body(child, start, depth + 1);
            child.span = span(start, p_);
            node_stack_.push_back(std::move(child));
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
        property_stack_.push_back(std::move(prop));
    }
}

// A node's properties, complete when its first child starts (or its body ends), move from
// the stack to the pool; its children's properties are then pushed above.
void Parser::store_properties(syntax::Node& node, std::size_t base) {
    if (property_stack_.size() == base) return;
    node.properties = file_.properties.store(std::span(property_stack_).subspan(base));
    property_stack_.erase(property_stack_.begin() + static_cast<std::ptrdiff_t>(base),
                          property_stack_.end());
}

// The text a pointer lies in: the current one, or (after an /include/ opened or closed
// between two tokens) another text of the file.
std::uint32_t Parser::text_of(const char* at) const {
    std::less_equal<const char*> le;
    if (le(begin_, at) && le(at, end_)) return text_id_;
    for (std::uint32_t id = 0; id < file_.texts.size(); ++id) {
        const std::string& t = file_.texts[id]->source->text;
        if (le(t.data(), at) && le(at, t.data() + t.size())) return id;
    }
    return text_id_;
}

std::string Parser::unexpected(const std::string& wanted) const {
    if (p_ >= end_) return "unexpected end of input, expected " + wanted;
    const char* e = p_;
    if (is_propnode_char(*e))
        while (e < end_ && e - p_ < 40 && is_propnode_char(*e))
            ++e;
    else
        ++e;
    return fmt::format("unexpected '{}', expected {}", std::string_view(p_, e - p_), wanted);
}

// Whitespace, comments and cpp line markers (recorded for locations).
void Parser::skip_slow() {
    for (;;) {
        if (p_ >= end_) {
            if (stack_.empty()) return;
            pop_text(); // the end of an /include/d file: back to the includer (dtc's EOF)
            continue;
        }
        char c = *p_;
        if (c == '/' && static_cast<std::size_t>(end_ - p_) >= 9 &&
            std::memcmp(p_, "/include/", 9) == 0) {
            if (shared_chunk_) not_shared();
            file_.read_files = true;
            push_include(); // lexer-level, as dtc: wherever a token may stand
            continue;
        }
        if (is_space(c)) {
            // Indentation and line ends come in runs: skip the run before looking again.
            do
                ++p_;
            while (p_ < end_ && is_space(*p_));
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
        } else if (c == '#' && (p_ == begin_ || p_[-1] == '\n') && !shared_chunk_ &&
                   try_line_marker()) {
            // consumed
        } else {
            return;
        }
    }
}

bool Parser::try_line_marker() {
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

bool Parser::keyword_here(std::string_view kw) {
    if (static_cast<std::size_t>(end_ - p_) >= kw.size() &&
        std::memcmp(p_, kw.data(), kw.size()) == 0) {
        p_ += kw.size();
        return true;
    }
    return false;
}

bool Parser::keyword_ahead() const {
    static constexpr std::string_view kws[] = {
        "/dts-v1/",         "/plugin/",  "/memreserve/", "/delete-node/", "/delete-property/",
        "/omit-if-no-ref/", "/include/", "/bits/",       "/incbin/"};
    for (auto kw : kws)
        if (static_cast<std::size_t>(end_ - p_) >= kw.size() &&
            std::memcmp(p_, kw.data(), kw.size()) == 0)
            return true;
    return false;
}

void Parser::expect(char c, const char* context) {
    skip();
    if (p_ < end_ && *p_ == c) {
        ++p_;
        return;
    }
    fail(p_, unexpected(fmt::format("'{}' {}", c, context)));
}

// Zero or more "name:" labels. Most calls stand on a property or node name, which reads like a
// label up to the missing ':'.
std::vector<syntax::Label> Parser::parse_labels_here() {
    std::vector<syntax::Label> labels;
    for (;;) {
        skip();
        const char* q = label_end(p_);
        if (q == p_ || q >= end_ || *q != ':') return labels;
        const std::string_view name(p_, static_cast<std::size_t>(q - p_));
        labels.push_back({name, span(p_, q + 1), syntax::label_hash(name)});
        p_ = q + 1;
    }
}

std::string_view Parser::name(const char* wanted) {
    skip();
    const char* q = p_;
    if (q < end_ && *q == '\\') ++q; // a leading backslash escapes a name that reads as a keyword
    const char* first = q;
    while (q < end_ && is_propnode_char(*q)) // PROPNODECHAR+
        ++q;
    if (q == first) fail(p_, unexpected(wanted));
    p_ = q;
    return std::string_view(first, static_cast<std::size_t>(q - first));
}

// &label, &{/path}, &{label/path}
syntax::Reference Parser::reference() {
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
        const char* name_end = label_end(p_);
        if (name_end == p_) fail(start, "expected a label name or '{' after '&'");
        ref.target = std::string_view(p_, static_cast<std::size_t>(name_end - p_));
        p_ = name_end;
    }
    ref.span = span(start, p_);
    return ref;
}

void Parser::node_body(syntax::Node& node, const char* start, int depth) {
    deepest_ = std::max(deepest_, depth);
    if (depth > options_.limits.node_depth)
        fail(start, fmt::format("nodes nested deeper than {} levels {}", options_.limits.node_depth,
                                limit_hint("node-depth")));
    if (++node_count_ > options_.limits.nodes)
        fail(start,
             fmt::format("more than {} nodes {}", options_.limits.nodes, limit_hint("nodes")));
    skip();
    if (p_ >= end_ || *p_ != '{') fail(p_, unexpected("'{'"));
    const char* saved_brace = open_brace_;
    open_brace_ = p_;
    ++p_;
    // The node's properties and children are collected on the parser's stacks (its children's
    // above them), then moved to the parse's pool at once.
    const std::size_t properties_base = property_stack_.size();
    const std::size_t nodes_base = node_stack_.size();
    body_items(node, depth, properties_base);
    if (!file_.duplicate_names)
        file_.duplicate_names = names_repeat(std::span(property_stack_).subspan(properties_base)) ||
                                names_repeat(std::span(node_stack_).subspan(nodes_base));
    if (!file_.name_or_phandle_properties)
        for (const auto& prop : std::span(property_stack_).subspan(properties_base))
            if (prop.name == "name" || prop.name == "phandle" || prop.name == "linux,phandle")
                file_.name_or_phandle_properties = true;
    store_properties(node, properties_base);
    if (node_stack_.size() > nodes_base) {
        node.children = file_.nodes.store(std::span(node_stack_).subspan(nodes_base));
        node_stack_.erase(node_stack_.begin() + static_cast<std::ptrdiff_t>(nodes_base),
                          node_stack_.end());
    }
    ++p_; // '}'
    expect(';', "after '}'");
    open_brace_ = saved_brace;
    node.span = span(start, p_);
}

} // namespace dts_parser

using dts_parser::ParseAbort;
using dts_parser::Parser;

std::string_view syntax::File::slice(TextSpan s) const {
    const std::string& t = text(s.text).source->text;
    if (s.begin > t.size() || s.end < s.begin) return {};
    return std::string_view(t).substr(s.begin, s.end - s.begin);
}

Location syntax::File::locate(TextSpan s) const {
    return locate(s.text, s.begin);
}

Location syntax::File::locate(std::uint32_t text_id, std::size_t off) const {
    const Text& t = text(text_id);
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
    const Text& t = text(s.text);
    if (!t.markers.empty() && s.begin >= t.markers.front().offset) return std::nullopt;
    return t.source->source_span(s.begin, s.end);
}

std::string syntax::File::original_text(TextSpan s) const {
    const std::string_view expanded = slice(s);
    const Text& t = text(s.text);
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

std::shared_ptr<const ParsedChunk>
parse_shared_chunk(const std::shared_ptr<const FileCache::IncludeMemo>& memo,
                   const ParseOptions& options, FileCache& cache) {
    const std::uint32_t id = cache.new_chunk_text();
    if (id == 0) return nullptr;
    auto chunk = std::make_shared<ParsedChunk>();
    chunk->memo = memo;
    chunk->id = id;
    chunk->text.source = &memo->out;
    chunk->file.shared_texts.emplace_back(id, &chunk->text);
    // An error or a warning is reported where the input that meets it parses the text itself.
    Diagnostics quiet;
    Parser parser(chunk->file, id, options, cache, quiet, true);
    try {
        parser.top_level();
    } catch (ParseAbort&) {
        return nullptr;
    }
    // What follows the last statement must be blanks, which no token of the next text can join.
    const std::string& text = memo->out.text;
    const bool blank_tail =
        std::all_of(text.begin() + static_cast<std::ptrdiff_t>(parser.statements_end()), text.end(),
                    [](char c) { return dts_parser::is_space(c); });
    if (parser.had_errors() || !quiet.items().empty() || !blank_tail) return nullptr;
    chunk->nodes = parser.nodes();
    chunk->properties = parser.properties();
    chunk->depth = parser.deepest();
    return chunk;
}

std::shared_ptr<const ParsedChunk> FileCache::parsed_chunk(const IncludeMemo* memo, bool& found) {
    if (memo->unparseable.load(std::memory_order_relaxed)) {
        found = true;
        return nullptr;
    }
    std::lock_guard lock(mutex_);
    auto it = parsed_.find(memo);
    found = it != parsed_.end();
    return found ? it->second : nullptr;
}

void FileCache::add_parsed_chunk(const IncludeMemo* memo,
                                 std::shared_ptr<const ParsedChunk> chunk) {
    // Enough for the .dtsi files of a few SoCs: inputs come sorted by path.
    constexpr std::size_t budget = std::size_t{4} << 20;
    if (!chunk) {
        // Kept in the memo, not here: a memo dropped from the cache may be freed and its
        // address reused by another.
        memo->unparseable.store(true, std::memory_order_relaxed);
        return;
    }
    std::lock_guard lock(mutex_);
    const std::size_t bytes = chunk->memo->out.text.size();
    if (!parsed_.emplace(memo, std::move(chunk)).second) return; // parsed twice: the first stays
    parsed_order_.emplace_back(memo, bytes);
    parsed_bytes_ += bytes;
    while (parsed_bytes_ > budget && parsed_order_.size() > 1) {
        parsed_bytes_ -= parsed_order_.front().second;
        parsed_.erase(parsed_order_.front().first);
        parsed_order_.pop_front();
    }
}

std::uint32_t FileCache::new_chunk_text() {
    std::lock_guard lock(mutex_);
    if (chunk_texts_ + kSharedText >= std::size_t{1} << 24) return 0; // TextSpan::text: 24 bits
    return static_cast<std::uint32_t>(kSharedText + chunk_texts_++);
}

std::optional<syntax::File> parse(const Preprocessed& text, const ParseOptions& options,
                                  FileCache& cache, Diagnostics& diags) {
    syntax::File file;
    auto main = std::make_unique<syntax::Text>();
    main->source = &text;
    file.texts.push_back(std::move(main));
    Parser parser(file, 0, options, cache, diags);
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
