// Macro expansion (gcc's context stack, "painted blue" names): token sources, arguments,
// # and ##, builtins.
#include "cmalign/internal/core/quote.hpp"
#include "cmalign/internal/dt/preprocess_engine.hpp"

namespace cmalign::dt::pp_engine {

using namespace detail;

// Next unexpanded token: from the innermost macro context, else (when allowed) from the
// file being read, skipping newlines. Never crosses a barrier.
Token Engine::next_raw(bool may_read_base) {
    while (!contexts_.empty()) {
        Context& c = contexts_.back();
        if (c.pos < c.tokens.size()) return c.tokens[c.pos++];
        if (c.barrier) return eof_token();
        pop_context();
    }
    if (!may_read_base || !base_) return eof_token();
    bool newline = false;
    for (;;) {
        Token t = base_->next();
        if (!check_lexer(*base_, *base_file_)) return eof_token();
        if (t.kind == Kind::newline) {
            newline = true;
            ++base_newlines_;
            continue;
        }
        if (newline && t.is('#')) { // a directive inside macro arguments
            hit_directive_ = true;
            hit_directive_at_ = t;
            return eof_token();
        }
        if (newline) t.flags |= pp::ws_before;
        if (t.kind != Kind::eof) base_consumed_end_ = t.end;
        return t;
    }
}

// Is the next token '(' ? Consumes it if so; otherwise nothing is consumed.
bool Engine::next_is_lparen(bool may_read_base) {
    for (std::size_t i = contexts_.size(); i-- > 0;) {
        Context& c = contexts_[i];
        if (c.pos < c.tokens.size()) {
            if (!c.tokens[c.pos].is('(')) return false;
            while (contexts_.size() > i + 1)
                pop_context();
            ++contexts_.back().pos;
            return true;
        }
        if (c.barrier) return false;
    }
    if (!may_read_base || !base_) return false;
    while (!contexts_.empty())
        pop_context(); // all exhausted
    const std::size_t pos = base_->position();
    const std::size_t consumed = base_consumed_end_;
    const std::size_t newlines = base_newlines_;
    Token t = next_raw(true);
    if (t.is('(')) return true;
    base_->set_position(pos);
    base_consumed_end_ = consumed;
    base_newlines_ = newlines;
    hit_directive_ = false;
    return false;
}

// ---------------------------------------------------------------- expansion

// Next token with macros expanded. In an #if line, `defined` is returned unexpanded.
Token Engine::next_expanded(bool may_read_base) {
    for (;;) {
        if (failed_) return eof_token();
        Token t = next_raw(may_read_base);
        if (t.kind != Kind::identifier || (t.flags & pp::no_expand)) return t;
        const Macro* m = find_macro(t.text);
        if (!m) return t;
        if (is_disabled(m)) {
            t.flags |= pp::no_expand;
            return t;
        }
        if (m->builtin != Macro::Builtin::none) return builtin_token(*m, t);
        std::vector<std::vector<Token>> args;
        if (m->function_like) {
            if (!next_is_lparen(true)) return t;
            if (!collect_args(*m, t, args)) return eof_token();
        }
        if (!enter_macro(*m, t, args)) return eof_token();
    }
}

Token Engine::builtin_token(const Macro& m, const Token& site) {
    if (m.builtin != Macro::Builtin::line && m.builtin != Macro::Builtin::file) impure();
    std::string text;
    Kind kind = Kind::number;
    switch (m.builtin) {
    case Macro::Builtin::line:
        text = std::to_string(site.file ? site.file->location(site.offset).line : 0);
        break;
    case Macro::Builtin::file:
        text = strings::quoted(frames_.empty() ? std::string() : frames_.back().file->path);
        kind = Kind::string;
        break;
    case Macro::Builtin::base_file:
        text = strings::quoted(main_path_);
        kind = Kind::string;
        break;
    case Macro::Builtin::counter:
        text = std::to_string(counter_++);
        break;
    case Macro::Builtin::include_level:
        text = std::to_string(frames_.empty() ? 0 : frames_.size() - 1);
        break;
    case Macro::Builtin::none:
        break;
    }
    Token t = site;
    t.text = arena_.emplace_back(std::move(text));
    t.kind = kind;
    t.flags = site.flags & pp::ws_before;
    return t;
}

bool Engine::collect_args(const Macro& m, const Token& name,
                          std::vector<std::vector<Token>>& args) {
    args.assign(1, {});
    int depth = 0;
    const std::size_t named = m.params.size() - (m.variadic ? 1 : 0);
    for (;;) {
        Token t = next_raw(true);
        if (failed_) return false;
        if (t.kind == Kind::eof) {
            if (hit_directive_) {
                hit_directive_ = false;
                error_at(hit_directive_at_,
                         "directives inside macro arguments are not supported (macro \"" +
                             std::string(m.name) + "\")");
            } else {
                error_at(name, "unterminated argument list invoking macro \"" +
                                   std::string(m.name) + "\"");
            }
            return false;
        }
        if (t.is('(')) {
            ++depth;
        } else if (t.is(')')) {
            if (depth == 0) break;
            --depth;
        } else if (t.is(',') && depth == 0 && !(m.variadic && args.size() > named)) {
            args.emplace_back();
            continue;
        }
        t.flags &= static_cast<std::uint8_t>(~(pp::paste_left | pp::stringify));
        args.back().push_back(t);
        if (++produced_ > token_cap_) {
            error_at(name, "macro arguments too large (runaway macro expansion?)");
            return false;
        }
    }
    const std::size_t want = m.params.size();
    std::size_t given = args.size();
    if (want == 0) {
        if (given == 1 && args[0].empty()) {
            args.clear();
            return true;
        }
        error_at(name, "macro \"" + std::string(m.name) + "\" passed " + std::to_string(given) +
                           " arguments, but takes just 0");
        return false;
    }
    if (given < want && m.variadic && given == want - 1) {
        args.emplace_back(); // the variable arguments may be left out entirely
        given = want;
    }
    if (given > want) {
        error_at(name, "macro \"" + std::string(m.name) + "\" passed " + std::to_string(given) +
                           " arguments, but takes just " + std::to_string(want));
        return false;
    }
    if (given < want) {
        error_at(name, "macro \"" + std::string(m.name) + "\" requires " + std::to_string(want) +
                           " arguments, but only " + std::to_string(given) + " given");
        return false;
    }
    return true;
}

// Fully macro-expands an argument on its own (C 6.10.3.1), with the enclosing macros still
// disabled.
std::vector<Token> Engine::expand_arg(const std::vector<Token>& raw, const Token& site) {
    bool any_macro = false;
    for (const Token& t : raw)
        if (t.kind == Kind::identifier && !(t.flags & pp::no_expand) && find_macro(t.text)) {
            any_macro = true;
            break;
        }
    if (!any_macro) return raw;
    if (++arg_depth_ > options_.limits.macro_depth) {
        error_at(site, "macro arguments nested too deeply (more than " +
                           std::to_string(options_.limits.macro_depth) + " levels) " +
                           limit_hint("macro-depth"));
        --arg_depth_;
        return {};
    }
    Context c;
    c.tokens = take_vector();
    c.tokens.assign(raw.begin(), raw.end());
    c.barrier = true;
    contexts_.push_back(std::move(c));
    const std::size_t level = contexts_.size();
    std::vector<Token> out;
    for (;;) {
        Token t = next_expanded(false);
        if (t.kind == Kind::eof || failed_) break;
        out.push_back(t);
        if (++produced_ > token_cap_) {
            error_at(site, "macro expansion too large (runaway macro expansion?)");
            break;
        }
    }
    while (contexts_.size() >= level)
        pop_context();
    --arg_depth_;
    return out;
}

Token Engine::stringify(const std::vector<Token>& arg, const Token& site) {
    std::string text = "\"";
    for (std::size_t i = 0; i < arg.size(); ++i) {
        const Token& t = arg[i];
        if (i > 0 && (t.flags & pp::ws_before)) text += ' ';
        if (t.kind == Kind::string || t.kind == Kind::character) {
            for (char c : t.text) {
                if (c == '"' || c == '\\') text += '\\';
                text += c;
            }
        } else {
            text.append(t.text);
        }
    }
    text += '"';
    Token out;
    out.text = arena_.emplace_back(std::move(text));
    out.kind = Kind::string;
    out.file = site.file;
    out.offset = site.offset;
    return out;
}

// a ## b. In assembler-with-cpp mode an invalid paste is no error: the two stay as they are.
bool Engine::paste(Token& lhs, const Token& rhs) {
    if (rhs.kind == Kind::placemarker) {
        lhs.flags =
            static_cast<std::uint8_t>((lhs.flags & ~pp::paste_left) | (rhs.flags & pp::paste_left));
        return true;
    }
    if (lhs.kind == Kind::placemarker) {
        const std::uint8_t keep = lhs.flags & pp::ws_before;
        lhs = rhs;
        lhs.flags = static_cast<std::uint8_t>((rhs.flags & ~pp::ws_before) | keep);
        lhs.flags &= static_cast<std::uint8_t>(~pp::verbatim);
        return true;
    }
    std::string joined;
    joined.reserve(lhs.text.size() + rhs.text.size());
    joined.append(lhs.text).append(rhs.text);
    SourceFile scratch;
    scratch.text = joined;
    Lexer lexer(scratch);
    lexer.report_errors = false;
    Token t = lexer.next();
    if (t.text.size() != joined.size() || t.kind == Kind::newline || t.kind == Kind::eof ||
        (t.flags & pp::ws_before))
        return false;
    lhs.text = arena_.emplace_back(std::move(joined));
    lhs.kind = t.kind;
    lhs.flags =
        static_cast<std::uint8_t>((lhs.flags & pp::ws_before) | (rhs.flags & pp::paste_left));
    return true;
}

// Builds the replacement of `m` invoked at `site` and pushes it as a context.
bool Engine::enter_macro(const Macro& m, const Token& site, std::vector<std::vector<Token>>& args) {
    if (static_cast<int>(contexts_.size()) >= options_.limits.macro_depth) {
        error_at(site, "macro expansion nested too deeply (more than " +
                           std::to_string(options_.limits.macro_depth) + " levels) " +
                           limit_hint("macro-depth"));
        return false;
    }
    std::vector<Token> out = take_vector();
    std::vector<std::optional<std::vector<Token>>> expanded(args.size());
    bool has_paste = false;
    const std::uint8_t site_ws = site.flags & pp::ws_before;
    for (std::size_t i = 0; i < m.body.size(); ++i) {
        const Token& b = m.body[i];
        const bool pasted_into = i > 0 && (m.body[i - 1].flags & pp::paste_left);
        if (b.flags & pp::paste_left) has_paste = true;
        if (b.kind != Kind::param) {
            Token t = b;
            t.file = site.file;
            t.offset = site.offset;
            t.flags = b.flags & (pp::ws_before | pp::paste_left);
            out.push_back(t);
            continue;
        }
        const std::size_t p = b.param;
        if (b.flags & pp::stringify) {
            Token t = stringify(args[p], site);
            t.flags = static_cast<std::uint8_t>(b.flags & (pp::ws_before | pp::paste_left));
            out.push_back(t);
            continue;
        }
        // GNU ", ## __VA_ARGS__": the comma goes when the variable arguments are empty.
        if (pasted_into && m.variadic && p + 1 == m.params.size() && !out.empty() &&
            out.back().is(',')) {
            out.back().flags &= static_cast<std::uint8_t>(~pp::paste_left);
            if (args[p].empty()) {
                out.pop_back();
                continue;
            }
        }
        const bool raw = pasted_into || (b.flags & pp::paste_left);
        const std::vector<Token>* tokens = &args[p];
        if (!raw) {
            if (!expanded[p]) expanded[p] = expand_arg(args[p], site);
            if (failed_) return false;
            tokens = &*expanded[p];
        }
        if (tokens->empty()) {
            if (raw) {
                Token t;
                t.kind = Kind::placemarker;
                t.file = site.file;
                t.offset = site.offset;
                t.flags = b.flags & (pp::ws_before | pp::paste_left);
                out.push_back(t);
            }
            continue;
        }
        const std::size_t first = out.size();
        out.insert(out.end(), tokens->begin(), tokens->end());
        out[first].flags = static_cast<std::uint8_t>((out[first].flags & ~pp::ws_before) |
                                                     (b.flags & pp::ws_before));
        if (b.flags & pp::paste_left) out.back().flags |= pp::paste_left;
    }
    if (has_paste) {
        std::size_t w = 0;
        for (std::size_t r = 0; r < out.size(); ++r) {
            Token t = out[r];
            while ((t.flags & pp::paste_left) && r + 1 < out.size()) {
                const Token rhs = out[r + 1];
                if (!paste(t, rhs)) {
                    t.flags &= static_cast<std::uint8_t>(~pp::paste_left);
                    out[r + 1].flags &= static_cast<std::uint8_t>(~pp::ws_before);
                    break;
                }
                t.file = site.file;
                t.offset = site.offset;
                t.flags &= static_cast<std::uint8_t>(~pp::verbatim);
                ++r;
            }
            t.flags &= static_cast<std::uint8_t>(~pp::paste_left);
            out[w++] = t;
        }
        out.resize(w);
    }
    std::erase_if(out, [](const Token& t) { return t.kind == Kind::placemarker; });
    if (!out.empty())
        out.front().flags =
            static_cast<std::uint8_t>((out.front().flags & ~pp::ws_before) | site_ws);
    produced_ += out.size();
    if (produced_ > token_cap_) {
        error_at(site, "macro expansion too large (runaway macro expansion?)");
        return false;
    }
    Context c;
    c.tokens = std::move(out);
    c.macro = &m;
    contexts_.push_back(std::move(c));
    return true;
}

// An object-like macro whose body has no name to look up and no ##: its expansion is its body.
bool Engine::plain_object_like(const Macro& m) {
    if (m.function_like || m.builtin != Macro::Builtin::none) return false;
    for (const Token& t : m.body)
        if (t.kind == Kind::identifier || (t.flags & pp::paste_left)) return false;
    return true;
}

// A macro name read from the file at top level: expand it and write the expansion out.
void Engine::expand_top(const Token& name, const Macro& macro) {
    base_consumed_end_ = name.end;
    base_newlines_ = 0;
    if (contexts_.empty() && options_.limits.macro_depth > 1 && plain_object_like(macro)) {
        // Most names in a .dtsi are such macros (GIC_SPI, IRQ_TYPE_LEVEL_HIGH, clock indices):
        // write the body as the general path below does, without its contexts and token copies.
        if (frames_.size() > 1) // the general path looks the name up a second time
            events_.push_back({name.text, macro.fingerprint, 0, Event::Kind::lookup});
        produced_ += macro.body.size();
        if (produced_ > token_cap_) {
            error_at(name, "macro expansion too large (runaway macro expansion?)");
            return;
        }
        for (std::size_t i = 0; i < macro.body.size(); ++i) {
            Token t = macro.body[i];
            t.file = name.file;
            t.offset = name.offset;
            t.flags = (i == 0 ? name.flags : t.flags) & pp::ws_before;
            if (i > 0 && (t.flags & pp::ws_before))
                out_synthetic(t.file, t.offset, " ");
            else if (have_last_ && pp::avoid_paste(last_, t))
                out_synthetic(t.file, t.offset, " ");
            out_token(t, true);
        }
        return;
    }
    // Re-read the name through the expander by pushing it as a one-token context.
    Context c;
    c.tokens = take_vector();
    c.tokens.push_back(name);
    contexts_.push_back(std::move(c));
    bool at_start = true;
    for (;;) {
        Token t = next_expanded(false);
        if (failed_) return;
        if (t.kind == Kind::eof) break;
        if (!at_start && (t.flags & pp::ws_before))
            out_synthetic(t.file, t.offset, " ");
        else if (have_last_ && pp::avoid_paste(last_, t))
            out_synthetic(t.file, t.offset, " ");
        at_start = false;
        out_token(t, true);
    }
    if (hit_directive_) {
        // next_is_lparen restores; a failed peek never leaves this set.
        hit_directive_ = false;
    }
    if (base_newlines_ > 0) {
        out_synthetic(name.file, name.offset, std::string(base_newlines_, '\n'));
        have_last_ = false;
    }
}

} // namespace cmalign::dt::pp_engine
