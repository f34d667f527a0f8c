// The C preprocessor that DTS files go through (as the kernel's cpp -nostdinc -undef -D__DTS__
// -x assembler-with-cpp run does), built in so no external cpp is needed, with a map from every
// byte of the output back to the original file, line and column.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/limits.hpp"
#include "cmalign/dt/tree.hpp"

namespace cmalign::dt {

struct ParsedChunk; // dts.hpp

// An original file as read from disk, with its line index.
struct SourceFile {
    std::string path;
    std::string text;
    std::vector<std::size_t> line_starts; // byte offset of each line's first byte

    // 1-based line and column of a byte offset (column counts bytes, as gcc does).
    Location location(std::size_t offset) const;

    // The text after backslash-newline splicing (translation phase 2), filled by make_source
    // only when the file has splices; `splices` holds, for each removed splice, its offset in
    // `spliced` and the total number of bytes removed up to and including it.
    std::string spliced;
    std::vector<std::pair<std::size_t, std::size_t>> splices;
};

std::shared_ptr<const SourceFile> make_source(std::string path, std::string text);

// Files read once and shared by every input of a bulk run; safe to use from many threads.
class FileCache {
public:
    // The include memos below are kept up to about this many bytes (the files used least
    // recently are dropped first): enough for a dozen SoC families, a tenth of what a whole
    // arm64 tree's memos take.
    static constexpr std::size_t default_memo_budget = std::size_t{32} << 20;
    explicit FileCache(std::size_t memo_budget = default_memo_budget) : memo_budget_(memo_budget) {}

    // nullptr and `error` set when the file cannot be read.
    // A file over limits.file_bytes, or with a line over limits.line_bytes, is refused with an
    // error that names the file (and the line); `at` (when given) is set to where.
    std::shared_ptr<const SourceFile> load(const std::string& path, std::string* error = nullptr,
                                           const InputLimits& limits = {}, Location* at = nullptr);

    // Internal to the preprocessor: the outcome of preprocessing an included file (output and
    // macro changes), reused by later inputs when every macro it looked at has the same
    // definition again. This is what makes a bulk run cheap: a board's SoC .dtsi and headers
    // are preprocessed once, not once per board.
    struct IncludeMemo;
    std::vector<std::shared_ptr<const IncludeMemo>> include_memos(const SourceFile* file);
    void add_include_memo(const SourceFile* file, std::shared_ptr<const IncludeMemo> memo);

    // Internal to the DTS parser: its parse of a memo's output (dts.hpp), shared by the inputs
    // that include that output between two statements. `found` false: not parsed yet; a null
    // chunk: the output is not parsed on its own (it is not whole statements).
    std::shared_ptr<const ParsedChunk> parsed_chunk(const IncludeMemo* memo, bool& found);
    void add_parsed_chunk(const IncludeMemo* memo, std::shared_ptr<const ParsedChunk> chunk);
    // The text number of a new shared chunk (kSharedText and up), 0 when none is left.
    std::uint32_t new_chunk_text();

    // The files whose include memos are kept, and their bytes (tests).
    struct MemoUse {
        std::size_t files = 0;
        std::size_t bytes = 0;
    };
    MemoUse include_memo_use();

private:
    std::mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<const SourceFile>> files_;
    std::unordered_map<std::string, std::pair<std::string, Location>> refused_; // over a limit
    // The memos of the files used least recently are dropped past a budget of their bytes: a
    // bulk run takes boards in path order, so a SoC's boards come one after another, and a
    // whole tree's memos took two thirds of its memory, which this VM kind pays for twice
    // (clearing fresh pages was a fifth of the run's time). A dropped memo costs only a
    // preprocessing again, never a different output.
    struct MemoEntry {
        std::vector<std::shared_ptr<const IncludeMemo>> variants;
        std::size_t bytes = 0;
        std::list<const SourceFile*>::iterator recent; // in memo_recency_
    };
    std::unordered_map<const SourceFile*, MemoEntry> memos_;
    std::list<const SourceFile*> memo_recency_; // least recently used first
    std::size_t memo_bytes_ = 0;
    std::size_t memo_budget_;
    // Keyed by the memo, which the chunk keeps alive. The oldest chunks are dropped past
    // a budget of their texts' bytes (a parse takes about six times its text).
    std::unordered_map<const IncludeMemo*, std::shared_ptr<const ParsedChunk>> parsed_;
    std::deque<std::pair<const IncludeMemo*, std::size_t>> parsed_order_;
    std::size_t parsed_bytes_ = 0;
    std::uint32_t chunk_texts_ = 0;
};

struct PreprocessOptions {
    std::vector<std::string> include_dirs; // -I, searched in order after the including file's dir
    std::vector<std::pair<std::string, std::optional<std::string>>> defines; // -D NAME[=VALUE]
    // Adds <tree>/scripts/dtc/include-prefixes after include_dirs, as the kernel's
    // scripts/Makefile.dtbs (6.12; scripts/Makefile.lib before) dtc_cpp_flags do.
    std::optional<std::string> kernel_tree;
    // include_depth, macro_depth and expanded_bytes bound the preprocessor; file_bytes and
    // line_bytes every file it reads; the rest travel on to the DTS parser and the DTB reader.
    InputLimits limits;
};

// Preprocessed text. Segments cover the output in order, each up to where the next begins
// (segment_end); a verbatim segment's text equals file->text[src_begin, src_begin + its
// length]. Macro expansion output is a non-verbatim segment whose src_begin is where the macro
// was invoked.
struct Preprocessed {
    // 24 bytes: a whole tree's include memos hold about 1.7 million of them.
    struct Segment {
        std::uint64_t out_begin : 63 = 0;
        std::uint64_t verbatim : 1 = 1;
        const SourceFile* file = nullptr;
        std::size_t src_begin = 0;
    };

    std::string text;
    std::vector<Segment> segments;
    std::size_t segment_end(std::size_t i) const {
        return i + 1 < segments.size() ? std::size_t{segments[i + 1].out_begin} : text.size();
    }
    std::vector<std::shared_ptr<const SourceFile>> files; // every file read, first = main file

    // The output of each #included file that an include memo holds (recorded here or taken
    // from an earlier input), by position, the outermost first where they nest. The DTS parser
    // parses such an output once for all inputs that include it between two statements (a
    // SoC's .dtsi), instead of once per board.
    struct Chunk {
        std::size_t out_begin = 0;
        std::size_t out_end = 0;
        std::shared_ptr<const FileCache::IncludeMemo> memo;
    };
    std::vector<Chunk> chunks;

    // Original location of an output byte (for a macro expansion: the invocation site).
    Location locate(std::size_t out_offset) const;
    // The original bytes an output range was copied from, only when the whole range is one
    // verbatim piece of one file (so it is safe to rewrite there).
    std::optional<SourceSpan> source_span(std::size_t out_begin, std::size_t out_end) const;
};

// Orders chunks by position, the outermost first where they nest (a memo is recorded when its
// file ends, after the files it included).
void sort_chunks(std::vector<Preprocessed::Chunk>& chunks);

// Preprocesses `path`. nullopt (with a located error) on a missing include, an include cycle,
// a runaway macro, an unterminated conditional or #error.
std::optional<Preprocessed> preprocess(const std::string& path, const PreprocessOptions& options,
                                       FileCache& cache, Diagnostics& diags);

// A file taken as it is (dtc's /include/ reads files without cpp).
Preprocessed identity(std::shared_ptr<const SourceFile> file);

} // namespace cmalign::dt
