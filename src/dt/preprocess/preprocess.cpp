// The built-in C preprocessor for DTS: what `cpp -nostdinc -undef -D__DTS__ -x
// assembler-with-cpp` does to a kernel .dts, plus a byte-exact source map.
//
// Implementation chosen by measurement (2026-11-30, linux-source-6.12, gcc 12, -O2, CPU time on
// a shared 2-core machine):
// * Boost.Wave 1.74, minimal driver (/usr/lib libboost_wave), rk3399-rockpro64.dts: 49-53 ms
//   per run in-process, against 14 ms for a whole `cpp` process. Out of the box it rejects
//   `#address-cells` as an ill-formed directive (no assembler-with-cpp mode; needs a
//   found_unknown_directive hook), and it positions tokens by line/column, macro output at the
//   definition, so the byte-exact map (verbatim pieces, invocation sites) would have to be
//   rebuilt on top of it. Rejected: slower than cpp, and no map.
// * This one: all 3,047 boards of arch/*/boot/dts give the same tokens as cpp
//   (tests/differential/compare-preprocessor.py); arm64's 1,118 boards take 0.41-0.49 ms CPU each
//   with a shared FileCache (cpp: 7.6-9.4 ms per board process, so 17-21x), whole tree 0.35
//   ms/board (21.6x); a single board with a cold cache 3.5 ms (cpp 9.3 ms).
// The bulk speed comes from FileCache::IncludeMemo: an included file's output and macro
// changes are reused when every macro it looked up has the same definition again.
//
// Structure: a lexer per file (preprocess/lex.cpp), gcc's context-stack macro expander
// with "painted blue" identifiers (preprocess/expand.cpp; directives in
// preprocess/directives.cpp, the include memo in preprocess/memo.cpp), the #if evaluator
// (preprocess/expr.cpp). Output text is the source with comments blanked and directives removed;
// lines of a file keep their newlines so the text lines up with the source as far as possible.
//
// Known differences from gcc: directives inside macro arguments are an error (gcc accepts
// them; no kernel DTS uses them); #line does not change __LINE__/__FILE__; no
// __has_include; an unterminated "string" is an error (gcc's assembler mode passes it on).
#include <string>
#include <utility>

#include "cmalign/internal/dt/preprocess_engine.hpp"

namespace cmalign::dt {

namespace {

// What a memo holds, roughly: what FileCache's memo budget counts.
std::size_t memo_bytes(const FileCache::IncludeMemo& memo) {
    std::size_t names = 0;
    for (const auto& dep : memo.deps)
        names += dep.name.size();
    for (const auto& effect : memo.effects)
        names += effect.name.size();
    return sizeof memo + memo.key.size() + names + memo.out.text.size() +
           memo.deps.size() * sizeof(FileCache::IncludeMemo::Dep) +
           memo.effects.size() * sizeof(FileCache::IncludeMemo::Effect) +
           memo.out.segments.size() * sizeof(Preprocessed::Segment) +
           memo.out.files.size() * sizeof(memo.out.files[0]) +
           memo.out.chunks.size() * sizeof(Preprocessed::Chunk);
}

} // namespace

std::vector<std::shared_ptr<const FileCache::IncludeMemo>>
FileCache::include_memos(const SourceFile* file) {
    std::lock_guard lock(mutex_);
    auto it = memos_.find(file);
    if (it == memos_.end()) return {};
    memo_recency_.splice(memo_recency_.end(), memo_recency_, it->second.recent);
    return it->second.variants;
}

void FileCache::add_include_memo(const SourceFile* file, std::shared_ptr<const IncludeMemo> memo) {
    std::lock_guard lock(mutex_);
    auto [it, added] = memos_.try_emplace(file);
    MemoEntry& entry = it->second;
    if (added) {
        entry.recent = memo_recency_.insert(memo_recency_.end(), file);
    } else {
        memo_recency_.splice(memo_recency_.end(), memo_recency_, entry.recent);
    }
    if (entry.variants.size() >= 32) return; // a few variants per file are normal
    const std::size_t bytes = memo_bytes(*memo);
    entry.variants.push_back(std::move(memo));
    entry.bytes += bytes;
    memo_bytes_ += bytes;
    while (memo_bytes_ > memo_budget_ && memo_recency_.front() != file) {
        auto oldest = memos_.find(memo_recency_.front());
        memo_bytes_ -= oldest->second.bytes;
        memo_recency_.pop_front();
        memos_.erase(oldest);
    }
}

FileCache::MemoUse FileCache::include_memo_use() {
    std::lock_guard lock(mutex_);
    return {memos_.size(), memo_bytes_};
}

namespace pp_engine {

Engine::Engine(const PreprocessOptions& options, FileCache& cache, Diagnostics& diags)
    : options_(options), cache_(cache), diags_(diags) {
    search_path_ = options.include_dirs;
    if (options.kernel_tree)
        search_path_.push_back(*options.kernel_tree + "/scripts/dtc/include-prefixes");
    for (auto& dir : search_path_)
        if (!dir.empty() && dir.back() != '/') dir += '/';
    token_cap_ = std::max<std::size_t>(std::size_t{1} << 20, options.limits.expanded_bytes / 16);
    for (const auto& dir : search_path_)
        memo_key_ += dir + '\n';
    memo_key_ += std::to_string(options.limits.expanded_bytes) + ' ' +
                 std::to_string(options.limits.macro_depth) + ' ';
}

std::optional<Preprocessed> Engine::run(const std::string& path) {
    define_builtins();
    if (failed_) return std::nullopt;
    std::string why;
    Location refused;
    auto main = cache_.load(path, &why, options_.limits, &refused);
    if (!main) {
        if (!refused.file.empty())
            diags_.error(refused, why);
        else
            diags_.error(Location{path, 0, 0}, path + ": " + why);
        return std::nullopt;
    }
    main_path_ = main->path;
    remember(main);
    out_.text.reserve(std::size_t{1} << 20);
    process_file(*main, -1);
    if (failed_) return std::nullopt;
    sort_chunks(out_.chunks);
    return std::move(out_);
}

bool Engine::check_lexer(Lexer& lexer, const SourceFile& file) {
    if (lexer.error && !failed_) {
        error_at(&file, lexer.original(lexer.error_offset), lexer.error);
        lexer.error = nullptr;
    }
    return !failed_;
}

// ---------------------------------------------------------------- output

// Appends `text` and its segment of the source map. A piece that continues the last segment
// extends it: verbatim text that follows on in the same file, synthetic text (a macro's
// expansion) from the same invocation site.
void Engine::out_piece(const SourceFile* file, std::size_t src, std::string_view text,
                       bool verbatim) {
    if (!emitting_ || text.empty()) return;
    auto& segs = out_.segments;
    const std::size_t at = out_.text.size();
    out_.text.append(text);
    if (!segs.empty() && !std::exchange(merge_barrier_, false)) {
        // The last segment runs to `at` (segments cover the output).
        const auto& last = segs.back();
        const bool continues =
            verbatim ? last.src_begin + (at - last.out_begin) == src : last.src_begin == src;
        if ((last.verbatim != 0) == verbatim && last.file == file && continues) {
            check_size();
            return;
        }
    }
    segs.push_back({at, verbatim, file, src});
    check_size();
}

void Engine::check_size() {
    if (out_.text.size() > options_.limits.expanded_bytes && !failed_) {
        const auto& s = out_.segments.back();
        error_at(s.file, s.src_begin,
                 "preprocessed output exceeds " + std::to_string(options_.limits.expanded_bytes) +
                     " bytes (runaway macro expansion?) " + limit_hint("expanded-bytes"));
    }
}

// Whitespace and comments between two tokens of a file; comments become one space, and
// the newlines inside block comments are kept so lines stay aligned.
void Engine::out_gap(Lexer& lexer, const SourceFile& file, std::size_t begin, std::size_t end) {
    if (begin >= end || !emitting_) return;
    const std::string_view gap = lexer.text().substr(begin, end - begin);
    if (gap.find('/') == std::string_view::npos && lexer.clean(begin, end)) {
        out_verbatim(&file, lexer.original(begin), gap);
        have_last_ = false;
        return;
    }
    std::string text;
    for (std::size_t i = 0; i < gap.size();) {
        if (gap[i] == '/' && i + 1 < gap.size() && gap[i + 1] == '*') {
            const std::size_t close = gap.find("*/", i + 2);
            const std::size_t stop = close == std::string_view::npos ? gap.size() : close + 2;
            text += ' ';
            text.append(static_cast<std::size_t>(
                            std::count(gap.begin() + static_cast<std::ptrdiff_t>(i),
                                       gap.begin() + static_cast<std::ptrdiff_t>(stop), '\n')),
                        '\n');
            i = stop;
        } else if (gap[i] == '/' && i + 1 < gap.size() && gap[i + 1] == '/') {
            const std::size_t nl = gap.find('\n', i);
            text += ' ';
            i = nl == std::string_view::npos ? gap.size() : nl;
        } else {
            text += gap[i++];
        }
    }
    out_synthetic(&file, lexer.original(begin), text);
    have_last_ = false;
}

void Engine::out_token(const Token& t, bool expanded) {
    if (t.flags & pp::verbatim)
        out_verbatim(t.file, t.offset, t.text);
    else
        out_synthetic(t.file, t.offset, t.text);
    last_ = t;
    have_last_ = true;
    last_expanded_ = expanded;
}

// The same output as the loop of process_file() would write token by token (Lexer::next's
// rules: identifiers, pp-numbers, quoted literals closed on their line, punctuators and other
// characters), every identifier looked up as that loop does, so a memo records the same
// dependencies. Whatever needs more than a copy stops the run: a macro name, a '/' (comments),
// a newline before a line that may hold a directive, an identifier that prefixes a literal, an
// unclosed quote.
std::size_t Engine::verbatim_run(Lexer& lexer, const SourceFile& file, std::size_t cursor,
                                 bool& line_start) {
    if (!emitting_ || !file.splices.empty()) return cursor;
    const std::string_view text = lexer.text();
    const std::size_t n = text.size();
    std::size_t i = cursor;
    std::size_t last_token = cursor;  // where the run's last token begins
    std::size_t after_token = cursor; // the end of that token
    bool newline_seen = false;
    while (i < n) {
        const char c = text[i];
        if (Lexer::is_blank(c)) {
            ++i;
            continue;
        }
        if (c == '\n') {
            // The whole stretch of white space to the next token, or none of it: the loop
            // writes a stretch with a comment as one piece, whose map starts at its first byte.
            std::size_t j = i + 1;
            while (j < n && (Lexer::is_blank(text[j]) || text[j] == '\n'))
                ++j;
            if (j < n && (text[j] == '#' || text[j] == '/')) break;
            i = j;
            newline_seen = true;
            continue;
        }
        const std::size_t begin = i;
        if (Lexer::starts_identifier(c)) {
            const std::size_t k = lexer.identifier_end(i);
            if (k < n && (text[k] == '"' || text[k] == '\'')) break;
            const std::string_view word = text.substr(i, k - i);
            if (peek_macro(word)) break;
            // Not a macro: the look-up is still a dependency of the file (as find_macro records).
            if (frames_.size() > 1) events_.push_back({word, 0, 0, Event::Kind::lookup});
            i = k;
        } else if (lexer.starts_number(i)) {
            i = lexer.number_end(i);
        } else if (c == '"' || c == '\'') {
            bool closed = false;
            const std::size_t k = lexer.quoted_end(i, c, closed);
            if (!closed) break;
            i = k;
        } else if (c == '/' || c == '\\') {
            break;
        } else {
            // A punctuator ("<<=", "##") or another character, as the lexer splits them.
            i = lexer.symbol_end(i);
        }
        last_token = begin;
        after_token = i;
        newline_seen = false;
    }
    // White space that holds a newline was checked to the next token and is written with the
    // run; blanks after the last token of a line stay for the loop, which writes them in one gap
    // with what follows (a comment), as it always has.
    const std::size_t stop = newline_seen ? i : after_token;
    if (stop == cursor) {
        lexer.set_position(cursor);
        return cursor;
    }
    out_verbatim(&file, cursor, text.substr(cursor, stop - cursor));
    line_start = newline_seen;
    if (newline_seen) {
        have_last_ = false;
    } else {
        // It ends on a token: the one before the next, for avoid_paste() after an expansion.
        lexer.set_position(last_token);
        last_ = lexer.next();
        have_last_ = true;
        last_expanded_ = false;
    }
    lexer.set_position(stop);
    return stop;
}

// ---------------------------------------------------------------- files

void Engine::process_file(const SourceFile& file, int found_in) {
    Lexer lexer(file);
    Frame frame;
    frame.file = &file;
    frame.lexer = &lexer;
    frame.conditionals = conditionals_.size();
    frame.found_in = found_in;
    frames_.push_back(frame);
    deepest_ = std::max(deepest_, frames_.size());
    Lexer* saved_base = base_;
    const SourceFile* saved_file = base_file_;
    base_ = &lexer;
    base_file_ = &file;

    std::size_t cursor = 0; // how far the output has covered this file (spliced offsets)
    bool line_start = true;
    while (!failed_) {
        lexer.report_errors = !skipping();
        Token t = lexer.next();
        if (!check_lexer(lexer, file)) break;
        if (t.kind == Kind::eof) break;
        if (t.kind == Kind::newline) {
            line_start = true;
            continue;
        }
        const std::size_t t_begin = t.end - t.text.size();
        if (line_start && t.is('#')) {
            out_gap(lexer, file, cursor, t_begin);
            cursor = t_begin;
            if (directive(lexer, file)) {
                base_ = &lexer; // an #include switched it
                base_file_ = &file;
                cursor = lexer.position();
                continue;
            }
        }
        line_start = false;
        if (skipping()) {
            out_gap(lexer, file, cursor, t_begin);
            lexer.skip_line();
            cursor = lexer.position();
            continue;
        }
        if (t.kind == Kind::identifier) {
            if (const Macro* m = find_macro(t.text)) {
                out_gap(lexer, file, cursor, t_begin);
                expand_top(t, *m);
                cursor = base_consumed_end_;
                continue;
            }
        }
        out_gap(lexer, file, cursor, t_begin);
        if (have_last_ && last_expanded_ && pp::avoid_paste(last_, t))
            out_synthetic(&file, t.offset, " ");
        out_token(t, false);
        cursor = t.end;
        cursor = verbatim_run(lexer, file, cursor, line_start);
    }
    if (!failed_) {
        out_gap(lexer, file, cursor, lexer.text().size());
        if (conditionals_.size() > frame.conditionals) {
            const Conditional& c = conditionals_[frame.conditionals];
            error_at(c.file, c.offset, "unterminated #" + std::string(c.directive));
        }
    }
    conditionals_.resize(std::min(conditionals_.size(), frame.conditionals));
    frames_.pop_back();
    base_ = saved_base;
    base_file_ = saved_file;
}

} // namespace pp_engine

std::optional<Preprocessed> preprocess(const std::string& path, const PreprocessOptions& options,
                                       FileCache& cache, Diagnostics& diags) {
    pp_engine::Engine engine(options, cache, diags);
    return engine.run(path);
}

} // namespace cmalign::dt
