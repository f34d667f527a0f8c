// DTS front end: dtc's source language parsed into a lossless syntax tree (every element keeps
// its byte span in the preprocessed text), then resolved into a dt::Tree exactly as dtc builds
// it (merges, deletions, labels, references, phandles, /omit-if-no-ref/).
//
//   load_dts(path)                = preprocess + parse + resolve
//   parse(Preprocessed)           -> syntax::File      (also accepts gcc cpp output: it follows
//                                                       `# 12 "file.dtsi"` line markers as dtc
//                                                       does)
//   resolve(syntax::File)         -> Tree
//
// Language: dtc 1.6/1.7 (scripts/dtc/dtc-lexer.l, dtc-parser.y of Linux 6.12). /include/ is
// lexer-level as in dtc: wherever a token may stand (in a value, between cells, a node opened in
// one file and closed in another); a file that includes itself, directly or not, is an error
// ("include cycle: a.dtsi → b.dtsi → a.dtsi") at the /include/ that closes the cycle. An input
// with no /dts-v1/, no /memreserve/ and no node is an error, as in dtc. Difference: /dts-v1/ may
// be missing (a lone .dtsi is accepted).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/limits.hpp"
#include "cmalign/dt/tree.hpp"
#include "cmalign/internal/core/name_hash.hpp"
#include "cmalign/internal/dt/preprocess.hpp"

namespace cmalign::dt {

// Bytes [begin, end) of one parsed text: `text` 0 is the text given to parse(), later numbers
// are files pulled in with /include/, numbers from kSharedText on the texts of shared chunks
// (ParsedChunk). 16 bytes, as every node, property, value part, cell and label has one: `begin`
// fits 40 bits because no text may pass the file-bytes and expanded-bytes ceilings (a test
// checks them), `text` 24 bits because the parser refuses more /include/d texts (kMaxTexts)
// and makes fewer shared chunks.
struct TextSpan {
    std::uint64_t text : 24 = 0;
    std::uint64_t begin : 40 = 0;
    std::uint64_t end = 0;
};
inline constexpr std::size_t kSharedText = std::size_t{1} << 23;
inline constexpr std::size_t kMaxTexts = kSharedText;

struct ParsedChunk;

// Names, labels and reference targets are views into the parsed text (which must outlive the
// syntax tree): parsing a board allocates no string for them.
namespace syntax {

// The resolver finds labels by this hash. The parser computes it once per label and
// reference: a shared chunk's labels are then hashed once for every board that includes it.
inline std::uint32_t label_hash(std::string_view name) {
    return static_cast<std::uint32_t>(name_hash(name));
}

struct Label {
    std::string_view name;
    TextSpan span;          // "name:" including the colon
    std::uint32_t hash = 0; // label_hash(name); 0: not computed
};

// The label a reference target starts with: "uart0" of "uart0" and "uart0/child"; empty for a
// path ("/soc/serial@0").
inline std::string_view reference_label(std::string_view target) {
    if (target.empty() || target.front() == '/') return {};
    return target.substr(0, target.find('/'));
}

// &label, &{/path} or &{label/path}
struct Reference {
    std::string_view target; // "uart0", "/soc/serial@0", "uart0/child"
    bool braced = false;     // written as &{...}
    TextSpan span;
};

// One element between < and >. Kept small: a board has thousands, and what the parser costs
// is mostly the memory it writes.
struct Cell {
    enum class Kind : std::uint8_t { integer, reference, label };
    Kind kind = Kind::integer;
    // A single integer literal token ("0x400000", "4096U"); false for expressions and 'c'.
    bool plain_literal = false;
    bool braced = false; // reference: written as &{...}
    // label: label_hash(name); reference: that of the label it starts with ("uart0" of
    // "uart0/child"), 0 for a path or when not computed.
    std::uint32_t label_hash = 0;
    std::uint64_t value = 0; // integer: the evaluated value (before truncation to `bits`)
    TextSpan span;           // the whole element: "0x10", "&uart0", "&{/path}", "label:"
    std::string_view name;   // label: its name; reference: its target

    Reference ref() const { return {name, braced, span}; }
};

// Storage for the nodes, properties, value parts and cells of a parse: contiguous chunks, so
// that a node's properties or children, a value's parts and cells are one move into memory
// written in order instead of an allocation each (and a vector grown item by item). Items keep
// their addresses until the pool is destroyed; moving the pool keeps them too.
template <class T> class Pool {
public:
    Pool() = default;
    Pool(Pool&& other) noexcept = default;
    Pool& operator=(Pool&& other) noexcept {
        if (this != &other) {
            destroy();
            chunks_ = std::move(other.chunks_);
            capacity_ = std::exchange(other.capacity_, 0);
        }
        return *this;
    }
    ~Pool() { destroy(); }

    // Moves `items` to the end of the pool.
    std::span<T> store(std::span<T> items) {
        if (items.empty()) return {};
        if (chunks_.empty() || capacity_ - chunks_.back().used < items.size()) {
            // Chunks grow with the parse (a small file allocates little), then stay at 4,096.
            capacity_ = std::max(items.size(), std::clamp<std::size_t>(capacity_ * 2, 64, 4096));
            chunks_.push_back(
                {std::make_unique_for_overwrite<std::byte[]>(capacity_ * sizeof(T)), 0});
        }
        Chunk& chunk = chunks_.back();
        T* at = reinterpret_cast<T*>(chunk.bytes.get()) + chunk.used;
        std::uninitialized_move(items.begin(), items.end(), at);
        chunk.used += items.size();
        return {at, items.size()};
    }

private:
    struct Chunk {
        std::unique_ptr<std::byte[]> bytes; // raw storage, alignment of operator new[]
        std::size_t used = 0;               // items constructed in it
    };
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    void destroy() {
        if constexpr (!std::is_trivially_destructible_v<T>)
            for (auto& chunk : chunks_)
                std::destroy_n(reinterpret_cast<T*>(chunk.bytes.get()), chunk.used);
        chunks_.clear();
    }
    std::vector<Chunk> chunks_;
    std::size_t capacity_ = 0; // items in the last chunk
};

// One comma-separated part of a property value, or a label between parts.
struct ValueItem {
    enum class Kind : std::uint8_t { cells, string, bytes, reference, incbin, label };
    Kind kind = Kind::cells;
    bool braced = false;         // reference: written as &{...}
    unsigned bits = 32;          // cells: /bits/ width
    TextSpan span;               // the whole part; for a reference or a label, that token
    std::span<const Cell> cells; // cells, in the parse's pool
    // string: the text between the quotes when it has no escape (a view into the parsed text,
    // as names are; else the bytes are in `data`); reference: its target; label: its name.
    std::string_view view;
    // Bytes that are not a view of the text, apart because most parts have none: a string with
    // escapes (decoded), [bytes] with the labels written between them, /incbin/ data.
    struct Data {
        std::string bytes;
        std::vector<Label> inner_labels;
    };
    std::unique_ptr<Data> data;

    Data& own_data() {
        if (!data) data = std::make_unique<Data>();
        return *data;
    }
    // string: its bytes without the NUL; bytes, incbin: its bytes.
    std::string_view contents() const { return data ? std::string_view(data->bytes) : view; }
    Reference ref() const { return {view, braced, span}; }
};

struct Property {
    std::vector<Label> labels;
    std::string_view name;
    TextSpan name_span;
    TextSpan span;        // name to ';'
    bool deleted = false; // /delete-property/ name;
    // What the value holds, so that the resolver's walks for references and labels (every
    // property of a board) skip the values without them instead of reading each cell.
    bool has_references = false;      // a reference cell or a path reference
    bool has_value_labels = false;    // a label between parts, between cells or between bytes
    std::span<const ValueItem> value; // empty for a boolean property; in the parse's pool
};

struct Node {
    std::vector<Label> labels;
    std::string_view name; // "" for the root
    TextSpan name_span;
    TextSpan span;                        // name (or /delete-node/) to '};'
    bool deleted = false;                 // /delete-node/ name;
    bool omit_if_no_ref = false;          // /omit-if-no-ref/
    std::span<const Property> properties; // in the parse's pool
    std::span<const Node> children;       // in the parse's pool
};

struct TopLevel {
    enum class Kind : std::uint8_t { root, reference, delete_node, omit_if_no_ref };
    Kind kind = Kind::root;
    std::vector<Label> labels; // labels before &ref { }
    Reference ref;             // reference, delete_node, omit_if_no_ref
    Node node;                 // root, reference
    TextSpan span;
};

struct MemReserve {
    std::vector<Label> labels;
    std::uint64_t address = 0;
    std::uint64_t size = 0;
    TextSpan span;
};

// One parsed text and how its offsets map back to original files.
struct Text {
    const Preprocessed* source = nullptr;
    std::unique_ptr<Preprocessed> owned; // for /include/d files
    struct LineMarker {
        std::size_t offset; // first byte after the marker line
        std::string file;
        int line;               // line number of that byte
        std::size_t line_index; // index of that line in line_starts
    };
    std::vector<LineMarker> markers;      // cpp `# N "file"` lines, in order
    std::vector<std::size_t> line_starts; // of `source->text`, built only when markers exist
};

struct File {
    bool has_v1 = false;
    bool plugin = false;
    bool read_files = false; // dtc's /include/ or /incbin/ read a file (the preprocessor did not)
    // The files dtc's /include/ and /incbin/ read, as found on the search path, in reading order
    // (the preprocessor's own reads are in Preprocessed::files).
    std::vector<std::string> read_paths;
    // Some node body names two live properties or two live children alike. Only such a body
    // can leave duplicates in the built tree (merging replaces by name), so without one the
    // resolver's duplicate-name check has nothing to find.
    bool duplicate_names = false;
    // Some property is called "name", "phandle" or "linux,phandle": the resolver's checks of
    // those (dtc's name_properties and explicit_phandles) have nothing to look at otherwise.
    bool name_or_phandle_properties = false;
    std::vector<MemReserve> memreserves;
    std::vector<TopLevel> items;
    std::vector<std::unique_ptr<Text>> texts; // [0] = the text given to parse()
    Pool<Cell> cells;                         // of every ValueItem
    Pool<ValueItem> values;                   // of every Property
    Pool<Property> properties;                // of every Node
    Pool<Node> nodes;                         // every Node but the top-level ones
    // The shared chunks whose statements `items` holds (their nodes stay in their pools), and
    // their texts by number (kSharedText and up).
    std::vector<std::shared_ptr<const ParsedChunk>> chunks;
    std::vector<std::pair<std::uint32_t, const Text*>> shared_texts;

    const Text& text(std::uint32_t id) const {
        if (id < texts.size()) return *texts[id];
        for (const auto& [number, text] : shared_texts)
            if (number == id) return *text;
        return *texts.front(); // not reached: every span names a text of its file
    }

    std::string_view slice(TextSpan span) const;
    // Original file:line:col of the first byte of `span` (through line markers, includes and
    // macro expansions).
    Location locate(TextSpan span) const;
    Location locate(std::uint32_t text, std::size_t offset) const;
    // The original bytes of `span` when they were copied verbatim from one file.
    std::optional<SourceSpan> source_span(TextSpan span) const;
    // What the user wrote for `span`: the original text when it came (partly) from macro
    // expansions ("SZ_4M" rather than "0x00400000"), else the text itself.
    std::string original_text(TextSpan span) const;
};

} // namespace syntax

// The parse of the output of a file that inputs #include between two statements (a SoC's
// .dtsi), made once and shared, read-only, by every input whose preprocessing gave the same
// output there (the same include memo): a SoC's boards parse its .dtsi once, not once each.
// Its spans are in its own text (number `id`, the memo's output), its names view that text.
struct ParsedChunk {
    std::shared_ptr<const FileCache::IncludeMemo> memo; // keeps the text alive
    std::uint32_t id = 0;
    syntax::Text text; // source: the memo's output
    syntax::File file; // the statements (items) and their pools
    std::uint64_t nodes = 0;
    std::uint64_t properties = 0;
    int depth = 0; // the deepest node or expression (limits.node_depth, checked on each use)
};

struct ParseOptions {
    std::vector<std::string> include_dirs; // for /include/ and /incbin/ after the file's own dir
    // node_depth (node and expression nesting), include_depth (/include/), nodes, properties;
    // file_bytes and line_bytes for /include/d and /incbin/ files.
    InputLimits limits;
};

// nullopt (and located errors) on a syntax error. `text` must outlive the result.
std::optional<syntax::File> parse(const Preprocessed& text, const ParseOptions& options,
                                  FileCache& cache, Diagnostics& diags);

struct ResolveOptions {
    std::string input;        // Tree::input; default: the first file of the text
    bool value_chunks = true; // fill Property::chunks
    // When not empty, chunks are filled only for nodes at or below these paths, a unit address
    // allowed ("/memory" covers "/memory@40000000"); e.g. {"/reserved-memory", "/memory",
    // "/chosen"} for `check`. Locations for every cell cost about 40% of resolve().
    std::vector<std::string> chunk_paths;
    // false: Node::where and Property::where are filled only for the root, the memory nodes
    // among its children (device_type = "memory") and the nodes under chunk_paths (every node
    // when chunk_paths is empty); the rest stay unknown.
    bool all_locations = true;
    // false: the Tree holds only the root, its children and the nodes under chunk_paths; deeper
    // nodes elsewhere are checked as dtc does but left out, and a root child elsewhere keeps its
    // properties only when it has a device_type (a memory node), a target or a target-path (an
    // overlay fragment), or the file is a plugin: /soc, /cpus, /aliases keep just their names.
    // Converting the rest is most of resolve() and `check` reads nothing else.
    bool whole_tree = true;
    // dtc -@: add /__symbols__ (and a phandle on every labelled node). Plugins (/plugin/) always
    // get /__fixups__ and /__local_fixups__, as dtc makes them.
    bool symbols = false;
};

// Builds the tree as dtc does. nullopt (and located errors) for what dtc rejects: unknown
// labels or paths, duplicate labels, duplicate node or property names, bad phandles.
std::optional<Tree> resolve(const syntax::File& file, Diagnostics& diags,
                            const ResolveOptions& options = {});

// The parser's options for a file preprocessed with `options`: dtc's -i directories are the
// preprocessor's -I directories and, with a kernel tree, the kernel's dtc_cpp_flags directories.
ParseOptions parse_options_for(const PreprocessOptions& options);

// preprocess + parse + resolve. ParseOptions::include_dirs are taken from `options` (and the
// kernel tree's include dirs). `resolve_options.input` defaults to `path`.
std::optional<Tree> load_dts(const std::string& path, const PreprocessOptions& options,
                             FileCache& cache, Diagnostics& diags,
                             const ResolveOptions& resolve_options = {});

} // namespace cmalign::dt
