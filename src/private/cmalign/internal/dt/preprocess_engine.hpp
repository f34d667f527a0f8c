// The preprocessor engine shared by dt/preprocess/*.cpp: macro definitions, the include memo,
// the state of one run (class Engine). Not part of the public interface.
#pragma once

#include <algorithm>
#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>

#include "cmalign/internal/core/name_hash.hpp"
#include "cmalign/internal/core/thread_spares.hpp"
#include "cmalign/internal/dt/preprocess_lexer.hpp"

namespace cmalign::dt {

namespace detail {

using pp::Kind;
using pp::Lexer;
using pp::Token;

struct Macro : std::enable_shared_from_this<Macro> {
    std::string_view name;
    std::vector<std::string_view> params;
    std::vector<Token> body;
    const SourceFile* file = nullptr; // definition
    std::uint32_t offset = 0;
    bool function_like = false;
    bool variadic = false;
    enum class Builtin : std::uint8_t { none, line, file, counter, include_level, base_file };
    Builtin builtin = Builtin::none;
    std::uint64_t fingerprint = 0; // of the whole definition: equal definitions, equal prints
};

} // namespace detail

// What an included file did, for reuse (see FileCache::IncludeMemo in the header).
struct FileCache::IncludeMemo {
    std::string key; // search path, limits and where the file was found
    int nesting = 0; // include levels below the file
    // Every macro name the file looked up before changing it, with the fingerprint of the
    // definition it saw (0: undefined). The memo applies when all of them match again.
    struct Dep {
        std::string_view name; // in `names`
        std::uint32_t hash;    // MacroTable::hash(name)
        std::uint64_t fingerprint;
    };
    std::vector<Dep> deps;
    // The definitions the file left behind for the names it defined or undefined (null: undefined).
    struct Effect {
        std::string_view name; // in `names`
        std::uint32_t hash;
        std::shared_ptr<const detail::Macro> macro;
    };
    std::vector<Effect> effects;
    // The bytes of every name above in one block (a large .dtsi looks up thousands of names:
    // one allocation, read in order when the memo is tried, freed at once).
    std::unique_ptr<char[]> names;
    // The output: text, segments (offsets relative to it) and every file read. A file the
    // main file includes between two statements is parsed from it once for every input that
    // includes the same output (ParsedChunk, in dts.hpp).
    Preprocessed out;
    // Set once the DTS parser found the output is not whole statements (ParsedChunk).
    mutable std::atomic<bool> unparseable{false};
};

namespace pp_engine {

using namespace detail;

struct Context {
    std::vector<Token> tokens;
    std::size_t pos = 0;
    const Macro* macro = nullptr; // painted blue while this context is on the stack
    bool barrier = false; // an argument being pre-expanded or a directive line: reading stops
};

struct Conditional {
    const SourceFile* file = nullptr;
    std::uint32_t offset = 0; // of the directive name, for "unterminated #if"
    std::string_view directive;
    bool outer_skipping = false;
    bool active = false; // the current branch is being output
    bool taken = false;  // some branch was taken
    bool seen_else = false;
};

struct Frame {
    const SourceFile* file = nullptr;
    Lexer* lexer = nullptr;
    std::size_t conditionals = 0; // conditional stack size when the file was entered
    int found_in = -1;            // index in the search path the file was found in (#include_next)
};

// Name -> definition, open addressing with linear probing: defining a header's macros for every
// board was dominated by node allocation in std::unordered_map.
class MacroTable {
public:
    explicit MacroTable(std::size_t slots = 4096) // a power of two
        : slots_(ThreadSpares<Slot>::take(slots)) {
        slots_.resize(slots);
    }
    ~MacroTable() { ThreadSpares<Slot>::give(std::move(slots_)); }
    MacroTable(const MacroTable&) = delete;
    MacroTable& operator=(const MacroTable&) = delete;

    static std::uint32_t hash(std::string_view s) {
        return static_cast<std::uint32_t>(name_hash(s));
    }

    const Macro* find(std::string_view name) const { return find(name, hash(name)); }
    const Macro* find(std::string_view name, std::uint32_t h) const {
        for (std::size_t i = h & mask();; i = (i + 1) & mask()) {
            const Slot& s = slots_[i];
            if (!s.name.data()) return nullptr;
            if (s.hash == h && s.name == name) return s.macro; // null: erased
        }
    }

    void set(std::string_view name, const Macro* macro) { set(name, hash(name), macro); }
    void set(std::string_view name, std::uint32_t h, const Macro* macro) {
        if ((used_ + 1) * 4 >= slots_.size() * 3) grow();
        for (std::size_t i = h & mask();; i = (i + 1) & mask()) {
            Slot& s = slots_[i];
            if (!s.name.data()) {
                if (!macro) return;
                s = {name, macro, h};
                ++used_;
                return;
            }
            if (s.hash == h && s.name == name) {
                s.macro = macro; // an erased slot keeps its name as a tombstone
                return;
            }
        }
    }

private:
    struct Slot {
        std::string_view name; // data() == nullptr: never used
        const Macro* macro = nullptr;
        std::uint32_t hash = 0;
    };
    std::size_t mask() const { return slots_.size() - 1; }
    void grow() {
        std::vector<Slot> old = ThreadSpares<Slot>::take(slots_.size() * 2);
        old.resize(slots_.size() * 2);
        old.swap(slots_);
        used_ = 0;
        for (const Slot& s : old)
            if (s.name.data() && s.macro) set(s.name, s.hash, s.macro);
        ThreadSpares<Slot>::give(std::move(old));
    }
    std::vector<Slot> slots_;
    std::size_t used_ = 0;
};

class Engine {
public:
    Engine(const PreprocessOptions& options, FileCache& cache, Diagnostics& diags);
    ~Engine() { ThreadSpares<Event>::give(std::move(events_)); }
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    std::optional<Preprocessed> run(const std::string& path);

private:
    // ---------------------------------------------------------------- diagnostics

    void error_at(const SourceFile* file, std::size_t offset, std::string message) {
        if (failed_) return;
        failed_ = true;
        diags_.error(file ? file->location(offset) : Location{}, std::move(message));
    }
    void error_at(const Token& t, std::string message) {
        error_at(t.file, t.offset, std::move(message));
    }
    void warning_at(const Token& t, std::string message) {
        impure();
        diags_.warning(t.file ? t.file->location(t.offset) : Location{}, std::move(message));
    }

    bool check_lexer(Lexer& lexer, const SourceFile& file);

    void out_piece(const SourceFile* file, std::size_t src, std::string_view text, bool verbatim);
    void out_verbatim(const SourceFile* file, std::size_t src, std::string_view text) {
        out_piece(file, src, text, true);
    }

    void out_synthetic(const SourceFile* file, std::size_t site, std::string_view text) {
        out_piece(file, site, text, false);
    }

    void check_size();

    void out_gap(Lexer& lexer, const SourceFile& file, std::size_t begin, std::size_t end);

    void out_token(const Token& t, bool expanded);
    // After a plain token at `cursor`: copies the text that follows in one piece as long as no
    // macro, directive, comment or line splice can change it (the common case of a .dtsi);
    // returns where the token-by-token loop goes on. `line_start` says whether only blanks
    // follow a newline there.
    std::size_t verbatim_run(Lexer& lexer, const SourceFile& file, std::size_t cursor,
                             bool& line_start);

    // ---------------------------------------------------------------- macro table

    // Most identifiers in a DTS are not macros: a bit set of name hashes answers those without
    // touching the table (bits are never cleared; a stale bit only costs a lookup).
    static std::size_t bloom_bit(std::string_view name) {
        return (name.size() * 0x9e3779b1u + static_cast<unsigned char>(name.front()) * 131u +
                static_cast<unsigned char>(name.back()) * 7u +
                static_cast<unsigned char>(name[name.size() / 2])) &
               (kBloomBits - 1);
    }
    void bloom_add(std::string_view name) {
        const std::size_t b = bloom_bit(name);
        bloom_[b / 64] |= std::uint64_t{1} << (b % 64);
    }

    // The definition of `name`, without recording the look-up.
    const Macro* peek_macro(std::string_view name) const {
        const std::size_t b = bloom_bit(name);
        if (!(bloom_[b / 64] & (std::uint64_t{1} << (b % 64)))) return nullptr;
        return macros_.find(name);
    }
    const Macro* peek_macro(std::string_view name, std::uint32_t hash) const {
        const std::size_t b = bloom_bit(name);
        if (!(bloom_[b / 64] & (std::uint64_t{1} << (b % 64)))) return nullptr;
        return macros_.find(name, hash);
    }

    // The definition of `name`; inside an included file the look-up is recorded, since the
    // file's output depends on it (IncludeMemo::deps).
    const Macro* find_macro(std::string_view name) {
        const Macro* m = peek_macro(name);
        if (frames_.size() > 1)
            events_.push_back({name, m ? m->fingerprint : 0, 0, Event::Kind::lookup});
        return m;
    }

    // `m` must outlive the run (kept in keep_ or in a used memo).
    void set_macro(std::string_view name, const Macro* m) {
        set_macro(name, MacroTable::hash(name), m);
    }
    void set_macro(std::string_view name, std::uint32_t hash, const Macro* m) {
        if (frames_.size() > 1)
            events_.push_back({name, 0, hash, m ? Event::Kind::define : Event::Kind::undefine});
        if (m) bloom_add(name);
        macros_.set(name, hash, m);
    }

    bool is_disabled(const Macro* m) const {
        for (const Context& c : contexts_)
            if (c.macro == m) return true;
        return false;
    }

    void impure() {
        if (frames_.size() > 1) events_.push_back({{}, 0, 0, Event::Kind::impure});
    }

    static std::uint64_t fingerprint(const Macro& m);

    void define_builtins();

    // ---------------------------------------------------------------- token sources

    Token eof_token() const {
        Token t;
        t.kind = Kind::eof;
        return t;
    }

    void pop_context() {
        Context& c = contexts_.back();
        c.tokens.clear();
        spare_.push_back(std::move(c.tokens));
        contexts_.pop_back();
    }

    std::vector<Token> take_vector() {
        if (spare_.empty()) return {};
        auto v = std::move(spare_.back());
        spare_.pop_back();
        return v;
    }

    Token next_raw(bool may_read_base);

    bool next_is_lparen(bool may_read_base);

    Token next_expanded(bool may_read_base);

    Token builtin_token(const Macro& m, const Token& site);

    bool collect_args(const Macro& m, const Token& name, std::vector<std::vector<Token>>& args);

    std::vector<Token> expand_arg(const std::vector<Token>& raw, const Token& site);

    Token stringify(const std::vector<Token>& arg, const Token& site);

    bool paste(Token& lhs, const Token& rhs);

    bool enter_macro(const Macro& m, const Token& site, std::vector<std::vector<Token>>& args);

    void expand_top(const Token& name, const Macro& macro);
    static bool plain_object_like(const Macro& m);

    // ---------------------------------------------------------------- directives

    bool skipping() const { return !conditionals_.empty() && !conditionals_.back().active; }

    std::vector<Token> line_tokens(Lexer& lexer, const SourceFile& file);

    static std::string spell(const std::vector<Token>& tokens);

    std::vector<Token> expand_line(const std::vector<Token>& tokens, bool handle_defined);

    bool evaluate_if(const Token& directive, const std::vector<Token>& line);

    std::optional<std::string_view> macro_name(const Token& directive,
                                               const std::vector<Token>& line);

    void define(Lexer& lexer, const SourceFile& file, const Token& directive);

    static bool same_definition(const Macro& a, const Macro& b);

    void undefine(std::string_view name) {
        if (!macros_.find(name)) return;
        set_macro(name, nullptr); // the definition stays alive in keep_ for running contexts
    }

    std::optional<std::string> resolve(const std::string& name, bool angled, bool next,
                                       const Frame& frame, int& found_in, std::string& why);

    void include(Lexer& lexer, const SourceFile& file, const Token& directive, bool next);

    bool replay(const SourceFile& file, const std::string& key);

    void record(const std::shared_ptr<const SourceFile>& file, int found_in,
                const std::string& key);

    void remember(const std::shared_ptr<const SourceFile>& file) {
        read_log_.push_back(file);
        if (seen_files_.insert(file.get()).second) out_.files.push_back(file);
    }

    bool directive(Lexer& lexer, const SourceFile& file);
    void open_conditional(Lexer& lexer, const SourceFile& file, const Token& name, bool skip);
    void continue_conditional(Lexer& lexer, const SourceFile& file, const Token& name);

    void process_file(const SourceFile& file, int found_in);

    const PreprocessOptions& options_;
    FileCache& cache_;
    Diagnostics& diags_;
    std::vector<std::string> search_path_;
    std::size_t token_cap_ = 0;

    Preprocessed out_;
    bool emitting_ = true;
    bool merge_barrier_ = false; // the next segment starts afresh (an included file's output)
    bool failed_ = false;
    Token last_;             // the last token written out
    bool have_last_ = false; // ... and nothing (whitespace) was written after it
    bool last_expanded_ = false;

    static constexpr std::size_t kBloomBits = 1u << 16;
    std::vector<std::uint64_t> bloom_ = std::vector<std::uint64_t>(kBloomBits / 64);
    MacroTable macros_;
    std::vector<std::shared_ptr<const Macro>> keep_; // definitions made in this run

    // Macro look-ups and changes inside included files, in order (for IncludeMemo).
    struct Event {
        std::string_view name;
        std::uint64_t fingerprint = 0; // lookup: of what it found (0: undefined)
        std::uint32_t hash = 0;        // MacroTable::hash(name), 0 when not computed yet
        // Scoped: Engine has members named define/undefine/lookup.
        enum class Kind : std::uint8_t { lookup, define, undefine, impure } kind = Kind::lookup;
    };
    std::vector<Event> events_ = ThreadSpares<Event>::take(0);
    std::vector<std::shared_ptr<const FileCache::IncludeMemo>> used_memos_;
    std::string memo_key_;
    std::size_t deepest_ = 0;
    std::vector<Context> contexts_;
    std::vector<std::vector<Token>> spare_;
    std::deque<std::string> arena_;
    std::vector<std::shared_ptr<const SourceFile>> owned_;
    std::unordered_set<const SourceFile*> seen_files_;
    // Every file remember() was given, repeats included: what a recorded file read although the
    // input read it before (out_.files names each file once) belongs to its memo all the same.
    std::vector<std::shared_ptr<const SourceFile>> read_log_;
    std::unordered_set<std::string> once_;
    std::vector<Conditional> conditionals_;
    std::vector<Frame> frames_;

    Lexer* base_ = nullptr;
    const SourceFile* base_file_ = nullptr;
    std::size_t base_consumed_end_ = 0;
    std::size_t base_newlines_ = 0;
    bool hit_directive_ = false;
    Token hit_directive_at_;
    int arg_depth_ = 0;
    std::size_t produced_ = 0;
    unsigned counter_ = 0;
    std::string main_path_;
};

} // namespace pp_engine

} // namespace cmalign::dt
