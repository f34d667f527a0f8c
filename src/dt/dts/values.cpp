// DTS property values: strings, <cells> with references and expressions, [bytes],
// /incbin/, and /include/ switching the text being lexed.
#include <algorithm>
#include <cstring>
#include <filesystem>

#include "cmalign/internal/dt/dts_parser.hpp"

namespace cmalign::dt::dts_parser {

// Labels inside a value ("a: <1>, b: [2] c:") become label items of it.
void Parser::push_labels_here(syntax::Property& prop) {
    for (auto& l : parse_labels_here()) {
        syntax::ValueItem item;
        item.kind = syntax::ValueItem::Kind::label;
        item.span = l.span;
        item.view = l.name;
        prop.has_value_labels = true;
        item_scratch_.push_back(std::move(item));
    }
}

// propdata: items separated by ',' with labels anywhere between them.
void Parser::property_value(syntax::Property& prop) {
    // Collected in a buffer the parser keeps, then moved once into the parse's pool.
    item_scratch_.clear();
    for (;;) {
        push_labels(prop);
        skip();
        if (p_ >= end_) fail(p_, unexpected("a property value"));
        const char* start = p_;
        // Built in place (nothing else is pushed to the buffer until it is complete).
        syntax::ValueItem& item = item_scratch_.emplace_back();
        if (*p_ == '"') {
            item.kind = syntax::ValueItem::Kind::string;
            const std::string_view token = quoted_token();
            const std::string_view inner = token.substr(1, token.size() - 2);
            if (inner.find('\\') == std::string_view::npos)
                item.view = inner; // most strings: no copy
            else
                item.own_data().bytes = decoded_literal(token.data(), token.size());
        } else if (*p_ == '<') {
            item.kind = syntax::ValueItem::Kind::cells;
            ++p_;
            cells(prop, item);
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
            cells(prop, item);
        } else if (*p_ == '[') {
            item.kind = syntax::ValueItem::Kind::bytes;
            ++p_;
            bytes(prop, item);
        } else if (*p_ == '&') {
            item.kind = syntax::ValueItem::Kind::reference;
            const syntax::Reference ref = reference(); // its span is the item's (set below)
            item.view = ref.target;
            item.braced = ref.braced;
            prop.has_references = true;
        } else if (keyword("/incbin/")) {
            item.kind = syntax::ValueItem::Kind::incbin;
            incbin(item, start);
        } else {
            fail(p_, unexpected("a property value (\"string\", <cells>, [bytes] or &ref)"));
        }
        item.span = span(start, p_);
        push_labels(prop);
        skip();
        if (p_ < end_ && *p_ == ',') {
            ++p_;
            continue;
        }
        prop.value = file_.values.store(item_scratch_);
        return;
    }
}

// The text of a string or character literal of `size` bytes at `start`, quotes removed and
// escapes decoded.
std::string Parser::decoded_literal(const char* start, std::size_t size) {
    std::string out;
    std::size_t bad = 0;
    if (!decode_escapes(std::string_view(start + 1, size - 2), out, bad))
        fail(start + 1 + bad, "\\x used with no following hex digits");
    return out;
}

// The STRING token at p_, quotes included.
std::string_view Parser::quoted_token() {
    const char* start = p_;
    boost::iterator_range<const char*> range;
    if (!match(p_, end_, string_token, range)) fail(start, "unterminated string");
    return {start, range.size()};
}

std::string Parser::string_literal() {
    const std::string_view token = quoted_token();
    return decoded_literal(token.data(), token.size());
}

// Inside '<' ... '>'.
void Parser::cells(syntax::Property& prop, syntax::ValueItem& item) {
    // Collected in a buffer the parser keeps, then copied once into the parse's pool.
    std::vector<syntax::Cell>& cells = cell_scratch_;
    cells.clear();
    for (;;) {
        skip();
        if (p_ >= end_) fail(p_, unexpected("'>'"));
        if (*p_ == '>') {
            ++p_;
            item.cells = file_.cells.store(cells);
            return;
        }
        const char* start = p_;
        syntax::Cell cell;
        if (*p_ == '&') {
            cell.kind = syntax::Cell::Kind::reference;
            prop.has_references = true;
            const syntax::Reference ref = reference(); // its span is the cell's (set below)
            cell.name = ref.target;
            cell.braced = ref.braced;
            if (const auto label = syntax::reference_label(ref.target); !label.empty())
                cell.label_hash = syntax::label_hash(label);
            if (item.bits != 32)
                error(start, "references are only allowed in arrays with 32-bit elements");
        } else if (*p_ >= '0' && *p_ <= '9') {
            // Most cells: a number (no label starts with a digit), skipped to already.
            cell.value = integer_prim(0, &cell.plain_literal);
        } else {
            auto labels = parse_labels();
            if (!labels.empty()) {
                prop.has_value_labels = true;
                for (auto& l : labels) {
                    syntax::Cell lc;
                    lc.kind = syntax::Cell::Kind::label;
                    lc.span = l.span;
                    lc.name = l.name;
                    lc.label_hash = l.hash;
                    cells.push_back(std::move(lc));
                }
                continue;
            }
            cell.value = integer_prim(0, &cell.plain_literal);
        }
        if (cell.kind == syntax::Cell::Kind::integer && item.bits < 64) {
            const std::uint64_t mask = (std::uint64_t{1} << item.bits) - 1;
            if (cell.value > mask && (cell.value | mask) != ~std::uint64_t{0})
                warning(start, fmt::format("value 0x{:x} truncated to 0x{:x} ({}-bit cell)",
                                           cell.value, cell.value & mask, item.bits));
        }
        cell.span = span(start, p_);
        cells.push_back(std::move(cell));
    }
}

void Parser::bytes(syntax::Property& prop, syntax::ValueItem& item) {
    for (;;) {
        skip();
        if (p_ >= end_) fail(p_, unexpected("']'"));
        if (*p_ == ']') {
            ++p_;
            return;
        }
        auto labels = parse_labels();
        if (!labels.empty()) {
            prop.has_value_labels = true;
            for (auto& l : labels)
                item.own_data().inner_labels.push_back(std::move(l));
            continue;
        }
        if (p_ + 1 < end_ && hex_value(p_[0]) >= 0 && hex_value(p_[1]) >= 0) {
            item.own_data().bytes += static_cast<char>(hex_value(p_[0]) * 16 + hex_value(p_[1]));
            p_ += 2;
            continue;
        }
        if (hex_value(*p_) >= 0) fail(p_, "byte strings need two hex digits per byte");
        fail(p_, unexpected("hex bytes or ']'"));
    }
}

void Parser::incbin(syntax::ValueItem& item, const char* start) {
    if (shared_chunk_) not_shared(); // the file is found from the input's directories
    file_.read_files = true;
    expect('(', "after /incbin/");
    skip();
    if (p_ >= end_ || *p_ != '"') fail(p_, unexpected("a file name"));
    const std::string file = string_literal();
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
    auto path = find_file(file, start);
    std::string err;
    auto src = path.empty() ? nullptr : cache_.load(path, &err, options_.limits);
    if (!src && !err.empty()) fail(start, fmt::format("/incbin/ \"{}\": {}", file, err));
    if (!src) fail(start, fmt::format("/incbin/: cannot open \"{}\"", file));
    file_.read_paths.push_back(src->path);
    if (offset_in > src->text.size())
        fail(start, fmt::format("/incbin/: offset {} is past the end of \"{}\" ({} bytes)",
                                offset_in, file, src->text.size()));
    item.own_data().bytes = src->text.substr(
        static_cast<std::size_t>(offset_in),
        static_cast<std::size_t>(std::min<std::uint64_t>(length, src->text.size() - offset_in)));
}

// dtc's srcfile_relative_open: absolute, else the including file's directory, else -i dirs.
std::string Parser::find_file(const std::string& name_in, const char* at) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!name_in.empty() && name_in.front() == '/') return fs::exists(name_in, ec) ? name_in : "";
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

// At "/include/": read the file name and continue lexing in that file.
void Parser::push_include() {
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
    file_.read_paths.push_back(src->path);
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
    if (file_.texts.size() >= kMaxTexts) // TextSpan::text has 24 bits
        fail(start, fmt::format("more than {} /include/d files in one input", kMaxTexts - 1));
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

void Parser::pop_text() {
    const Frame& f = stack_.back();
    text_id_ = f.text;
    begin_ = f.begin;
    p_ = f.p;
    end_ = f.end;
    stack_.pop_back();
}

} // namespace cmalign::dt::dts_parser
