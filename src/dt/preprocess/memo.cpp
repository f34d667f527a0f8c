// Reuse of an included file's output when the macros it looked up are unchanged
// (FileCache::IncludeMemo: macro fingerprints, replay, record), and the builtin macros.
#include <cstring>

#include "cmalign/internal/dt/preprocess_engine.hpp"

namespace cmalign::dt::pp_engine {

using namespace detail;

std::uint64_t Engine::fingerprint(const Macro& m) {
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&h](std::string_view s) {
        for (char c : s)
            h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
        h = (h ^ 0xffu) * 1099511628211ull;
    };
    mix(m.name);
    mix(m.function_like ? "F" : "O");
    mix(m.variadic ? "V" : "-");
    mix(std::to_string(static_cast<int>(m.builtin)));
    for (auto p : m.params)
        mix(p);
    for (const Token& t : m.body) {
        mix(t.text);
        mix(std::string{static_cast<char>(t.kind), static_cast<char>(t.flags),
                        static_cast<char>(t.param & 0xff), static_cast<char>(t.param >> 8)});
    }
    return h | 1; // never 0, which means "undefined"
}

void Engine::define_builtins() {
    auto builtin = [&](std::string_view name, Macro::Builtin kind) {
        auto m = std::make_shared<Macro>();
        m->name = name;
        m->builtin = kind;
        m->fingerprint = fingerprint(*m);
        set_macro(name, m.get());
        keep_.push_back(std::move(m));
    };
    builtin("__LINE__", Macro::Builtin::line);
    builtin("__FILE__", Macro::Builtin::file);
    builtin("__COUNTER__", Macro::Builtin::counter);
    builtin("__INCLUDE_LEVEL__", Macro::Builtin::include_level);
    builtin("__BASE_FILE__", Macro::Builtin::base_file);
    // What `cpp -undef -x assembler-with-cpp` still predefines, then -D__DTS__ and -D options.
    std::string text = "#define __STDC__ 1\n#define __STDC_HOSTED__ 1\n#define __ASSEMBLER__ 1\n";
    auto predefined = make_source("<built-in>", text);
    owned_.push_back(predefined);
    std::string command_line = "#define __DTS__ 1\n";
    for (const auto& [name, value] : options_.defines) {
        command_line += "#define " + name + ' ';
        command_line += value ? *value : "1";
        command_line += '\n';
    }
    auto cmd = make_source("<command-line>", command_line);
    owned_.push_back(cmd);
    emitting_ = false;
    process_file(*predefined, -1);
    process_file(*cmd, -1);
    emitting_ = true;
}

// Reuses a memo of `file` whose dependencies all hold now.
bool Engine::replay(const SourceFile& file, const std::string& key) {
    for (const auto& memo : cache_.include_memos(&file)) {
        if (memo->key != key ||
            static_cast<int>(frames_.size()) + memo->nesting > options_.limits.include_depth ||
            !emitting_)
            continue;
        bool match = true;
        for (const auto& dep : memo->deps) {
            const Macro* m = peek_macro(dep.name, dep.hash);
            if ((m ? m->fingerprint : 0) != dep.fingerprint) {
                match = false;
                break;
            }
        }
        if (!match) continue;
        if (frames_.size() > 1)
            for (const auto& dep : memo->deps)
                events_.push_back({dep.name, dep.fingerprint, dep.hash, Event::Kind::lookup});
        for (const auto& e : memo->effects)
            set_macro(e.name, e.hash, e.macro.get());
        const std::size_t base = out_.text.size();
        out_.text.append(memo->out.text);
        auto& segments = out_.segments; // copied at once, then moved to where the text went
        const std::size_t first = segments.size();
        segments.insert(segments.end(), memo->out.segments.begin(), memo->out.segments.end());
        for (std::size_t i = first; i < segments.size(); ++i)
            segments[i].out_begin += base;
        for (const auto& f : memo->out.files)
            remember(f);
        out_.chunks.push_back({base, out_.text.size(), memo});
        for (auto inner : memo->out.chunks) { // outermost first, as sort_chunks leaves them
            inner.out_begin += base;
            inner.out_end += base;
            out_.chunks.push_back(std::move(inner));
        }
        deepest_ = std::max(deepest_, frames_.size() + static_cast<std::size_t>(memo->nesting));
        used_memos_.push_back(memo);
        have_last_ = false;
        merge_barrier_ = true;
        check_size();
        return true;
    }
    return false;
}

// Preprocesses an included file and, when its outcome depends only on macro definitions,
// keeps that outcome in the cache for the next input.
void Engine::record(const std::shared_ptr<const SourceFile>& file, int found_in,
                    const std::string& key) {
    const std::size_t events0 = events_.size();
    const std::size_t text0 = out_.text.size();
    const std::size_t segments0 = out_.segments.size();
    const std::size_t log0 = read_log_.size();
    const std::size_t chunks0 = out_.chunks.size();
    const std::size_t diags0 = diags_.items().size();
    const std::size_t level = frames_.size();
    const std::size_t deepest0 = deepest_;
    deepest_ = level + 1;
    merge_barrier_ = true;
    process_file(*file, found_in);
    merge_barrier_ = true;
    const std::size_t nesting = deepest_ - (level + 1);
    deepest_ = std::max(deepest0, deepest_);
    if (failed_ || !emitting_ || diags_.items().size() != diags0) return;

    auto memo = std::make_shared<FileCache::IncludeMemo>();
    memo->key = key;
    memo->nesting = static_cast<int>(nesting);
    // Per name: looked up first (a dependency) or changed first (an effect). A MacroTable
    // with two marker values, as std::unordered_set showed in profiles.
    static const Macro looked_up, changed;
    // Sized for the events at once (at most one entry each, at most 3/4 full): the table does
    // not regrow while a large .dtsi's thousands of names are entered.
    std::size_t slots = 256;
    while (slots * 3 <= (events_.size() - events0) * 4)
        slots *= 2;
    MacroTable state(slots);
    std::vector<std::pair<std::string_view, std::uint32_t>> touched;
    for (std::size_t i = events0; i < events_.size(); ++i) {
        const Event& e = events_[i];
        if (e.kind == Event::Kind::impure) return;
        const std::uint32_t h = e.hash ? e.hash : MacroTable::hash(e.name);
        const Macro* st = state.find(e.name, h);
        if (e.kind == Event::Kind::lookup) {
            if (!st) {
                state.set(e.name, h, &looked_up);
                memo->deps.push_back({e.name, h, e.fingerprint}); // copied to names below
            }
        } else if (st != &changed) {
            state.set(e.name, h, &changed);
            touched.emplace_back(e.name, h);
        }
    }
    // Exact sizes: a whole tree keeps thousands of memos (their deps and effects were a fifth
    // of its memory when they grew by doubling).
    memo->deps.shrink_to_fit();
    memo->effects.reserve(touched.size());
    for (const auto& [name, h] : touched) {
        const Macro* m = macros_.find(name, h);
        memo->effects.push_back({name, h, m ? m->shared_from_this() : nullptr});
    }
    // The names still view the engine's text and tokens, which go with this input: copy them.
    std::size_t bytes = 0;
    for (const auto& dep : memo->deps)
        bytes += dep.name.size();
    for (const auto& effect : memo->effects)
        bytes += effect.name.size();
    memo->names = std::make_unique_for_overwrite<char[]>(std::max<std::size_t>(bytes, 1));
    char* at = memo->names.get();
    auto keep = [&at](std::string_view& name) {
        std::memcpy(at, name.data(), name.size());
        name = std::string_view(at, name.size());
        at += name.size();
    };
    for (auto& dep : memo->deps)
        keep(dep.name);
    for (auto& effect : memo->effects)
        keep(effect.name);
    memo->out.text = out_.text.substr(text0);
    memo->out.segments.assign(out_.segments.begin() + static_cast<std::ptrdiff_t>(segments0),
                              out_.segments.end());
    for (auto& seg : memo->out.segments)
        seg.out_begin -= text0;
    // Every file it read, once each in the order first read: a replay must name them all even
    // where this input had read some of them before it (a guarded header included twice).
    std::unordered_set<const SourceFile*> listed;
    for (std::size_t i = log0; i < read_log_.size(); ++i)
        if (listed.insert(read_log_[i].get()).second) memo->out.files.push_back(read_log_[i]);
    // The files it included, for a parse of its output to reuse the parses of theirs.
    for (std::size_t i = chunks0; i < out_.chunks.size(); ++i) {
        auto inner = out_.chunks[i];
        inner.out_begin -= text0;
        inner.out_end -= text0;
        memo->out.chunks.push_back(std::move(inner));
    }
    sort_chunks(memo->out.chunks);
    out_.chunks.push_back({text0, out_.text.size(), memo});
    if (level == 1) {
        events_.clear(); // nothing encloses it: the events are not needed again
        read_log_.clear();
    } else {
        // For the enclosing files, the file's summary stands for its events (fewer to scan).
        events_.resize(events0);
        for (const auto& dep : memo->deps)
            events_.push_back({dep.name, dep.fingerprint, dep.hash, Event::Kind::lookup});
        for (const auto& e : memo->effects)
            events_.push_back(
                {e.name, 0, e.hash, e.macro ? Event::Kind::define : Event::Kind::undefine});
        used_memos_.push_back(memo); // the names above live in it
    }
    cache_.add_include_memo(file.get(), std::move(memo));
}

} // namespace cmalign::dt::pp_engine
