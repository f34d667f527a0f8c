// The directives: #define/#undef, #if family, #include/#include_next, and the dispatch.
#include "cmalign/internal/dt/preprocess_engine.hpp"

namespace cmalign::dt::pp_engine {

using namespace detail;

// Tokens up to the end of the line; the lexer is left on the newline.
std::vector<Token> Engine::line_tokens(Lexer& lexer, const SourceFile& file) {
    std::vector<Token> tokens;
    tokens.reserve(8); // most lines: "#define NAME VALUE", "#include <...>": one allocation
    for (;;) {
        const std::size_t before = lexer.position();
        Token t = lexer.next();
        if (!check_lexer(lexer, file)) return tokens;
        if (t.kind == Kind::newline || t.kind == Kind::eof) {
            lexer.set_position(t.kind == Kind::newline ? t.end - 1 : before);
            return tokens;
        }
        tokens.push_back(t);
    }
}

std::string Engine::spell(const std::vector<Token>& tokens) {
    std::string s;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (i > 0 && (tokens[i].flags & pp::ws_before)) s += ' ';
        s.append(tokens[i].text);
    }
    return s;
}

// Expands a directive line (#if, computed #include). `defined X` / `defined(X)` are
// replaced by 1 or 0 when `handle_defined`.
std::vector<Token> Engine::expand_line(const std::vector<Token>& tokens, bool handle_defined) {
    Context c;
    c.tokens = take_vector();
    c.tokens.assign(tokens.begin(), tokens.end());
    c.barrier = true;
    contexts_.push_back(std::move(c));
    const std::size_t level = contexts_.size();
    Lexer* saved_base = base_;
    base_ = nullptr; // a directive line never reads past its end
    std::vector<Token> out;
    for (;;) {
        Token t = next_expanded(false);
        if (t.kind == Kind::eof || failed_) break;
        if (handle_defined && t.kind == Kind::identifier && t.text == "defined") {
            Token operand = next_raw(false);
            const bool paren = operand.is('(');
            if (paren) operand = next_raw(false);
            if (operand.kind != Kind::identifier) {
                error_at(operand.kind == Kind::eof ? t : operand,
                         "operator \"defined\" requires an identifier");
                break;
            }
            if (paren && !next_raw(false).is(')')) {
                error_at(operand, "missing ')' after \"defined\"");
                break;
            }
            Token v = t;
            v.kind = Kind::number;
            v.text = find_macro(operand.text) ? "1" : "0";
            out.push_back(v);
            continue;
        }
        out.push_back(t);
        if (++produced_ > token_cap_) {
            error_at(t, "macro expansion too large (runaway macro expansion?)");
            break;
        }
    }
    while (contexts_.size() >= level)
        pop_context();
    base_ = saved_base;
    return out;
}

bool Engine::evaluate_if(const Token& directive, const std::vector<Token>& line) {
    std::vector<Token> tokens = expand_line(line, true);
    if (failed_) return false;
    pp::ExprError err;
    auto value = pp::evaluate(tokens, err);
    if (!value) {
        if (err.at) {
            error_at(*err.at, err.message);
        } else {
            // At the end of the line, as gcc reports it.
            const Token& last = line.empty() ? directive : line.back();
            error_at(last.file, last.offset + last.text.size(), err.message);
        }
        return false;
    }
    return value->bits != 0;
}

std::optional<std::string_view> Engine::macro_name(const Token& directive,
                                                   const std::vector<Token>& line) {
    if (line.empty()) {
        error_at(directive,
                 "no macro name given in #" + std::string(directive.text) + " directive");
        return std::nullopt;
    }
    if (line[0].kind != Kind::identifier) {
        error_at(line[0], "macro names must be identifiers");
        return std::nullopt;
    }
    return line[0].text;
}

void Engine::define(Lexer& lexer, const SourceFile& file, const Token& directive) {
    const std::vector<Token> line = line_tokens(lexer, file);
    if (failed_) return;
    auto name = macro_name(directive, line);
    if (!name) return;
    if (*name == "defined") {
        error_at(line[0], "\"defined\" cannot be used as a macro name");
        return;
    }
    auto m = std::make_shared<Macro>();
    m->name = *name;
    m->file = &file;
    m->offset = line[0].offset;
    std::size_t i = 1;
    // Function-like only when '(' follows the name with no space.
    if (line.size() > 1 && line[1].is('(') && !(line[1].flags & pp::ws_before)) {
        m->function_like = true;
        i = 2;
        bool closed = false;
        while (i < line.size()) {
            const Token& t = line[i++];
            if (t.is(')') && m->params.empty()) {
                closed = true;
                break;
            }
            if (t.is("...")) {
                m->variadic = true;
                m->params.push_back("__VA_ARGS__");
            } else if (t.kind == Kind::identifier) {
                if (t.text == "__VA_ARGS__") {
                    error_at(t, "__VA_ARGS__ can not be used as a parameter name");
                    return;
                }
                if (std::find(m->params.begin(), m->params.end(), t.text) != m->params.end()) {
                    error_at(t, "duplicate macro parameter \"" + std::string(t.text) + "\"");
                    return;
                }
                m->params.push_back(t.text);
                if (i < line.size() && line[i].is("...")) {
                    m->variadic = true;
                    ++i;
                }
            } else {
                error_at(t, "expected parameter name, found \"" + std::string(t.text) + "\"");
                return;
            }
            if (i >= line.size()) break;
            const Token& sep = line[i++];
            if (sep.is(')')) {
                closed = true;
                break;
            }
            if (!sep.is(',') || m->variadic) {
                error_at(sep, m->variadic
                                  ? "expected ')' after \"...\""
                                  : "expected ',' or ')', found \"" + std::string(sep.text) + "\"");
                return;
            }
        }
        if (!closed) {
            error_at(line.size() > 1 ? line.back() : line[0],
                     "missing ')' in macro parameter list");
            return;
        }
    }
    for (; i < line.size(); ++i) {
        Token t = line[i];
        t.flags &= static_cast<std::uint8_t>(pp::ws_before);
        if (m->body.empty()) t.flags = 0;
        if (t.kind == Kind::identifier && m->function_like) {
            auto it = std::find(m->params.begin(), m->params.end(), t.text);
            if (it != m->params.end()) {
                t.kind = Kind::param;
                t.param = static_cast<std::uint16_t>(it - m->params.begin());
            }
        }
        if (t.is("##")) {
            if (m->body.empty() || i + 1 == line.size()) {
                error_at(t, "'##' cannot appear at either end of a macro expansion");
                return;
            }
            m->body.back().flags |= pp::paste_left;
            continue;
        }
        if (m->function_like && !m->body.empty() && m->body.back().is('#') &&
            !(m->body.back().flags & pp::paste_left) && t.kind == Kind::param) {
            // '#' param: stringify. (In assembler-with-cpp mode a '#' before anything else
            // stays as it is.)
            t.flags =
                static_cast<std::uint8_t>((m->body.back().flags & pp::ws_before) | pp::stringify);
            m->body.pop_back();
        }
        m->body.push_back(t);
    }
    if (m->params.size() > 60000) {
        error_at(line[0], "too many macro parameters");
        return;
    }
    if (const Macro* old = peek_macro(*name); old && !same_definition(*old, *m))
        warning_at(line[0], "\"" + std::string(*name) + "\" redefined");
    m->fingerprint = fingerprint(*m);
    set_macro(m->name, m.get());
    keep_.push_back(std::move(m));
}

bool Engine::same_definition(const Macro& a, const Macro& b) {
    if (a.builtin != b.builtin || a.function_like != b.function_like || a.variadic != b.variadic ||
        a.params != b.params || a.body.size() != b.body.size())
        return false;
    for (std::size_t i = 0; i < a.body.size(); ++i) {
        const Token& x = a.body[i];
        const Token& y = b.body[i];
        if (x.text != y.text || x.kind != y.kind || x.flags != y.flags || x.param != y.param)
            return false;
    }
    return true;
}

std::optional<std::string> Engine::resolve(const std::string& name, bool angled, bool next,
                                           const Frame& frame, int& found_in, std::string& why) {
    std::shared_ptr<const SourceFile> file;
    if (!name.empty() && name[0] == '/') {
        found_in = -1;
        if (cache_.load(name, &why, options_.limits)) return name;
        return std::nullopt;
    }
    std::size_t start = 0;
    if (next) {
        start = frame.found_in < 0 ? 0 : static_cast<std::size_t>(frame.found_in) + 1;
    } else if (!angled) {
        const std::string& path = frame.file->path;
        const std::size_t slash = path.rfind('/');
        std::string candidate =
            slash == std::string::npos ? name : path.substr(0, slash + 1) + name;
        Location refused;
        if (cache_.load(candidate, &why, options_.limits, &refused)) {
            found_in = -1;
            return candidate;
        }
        if (!refused.file.empty()) return std::nullopt; // found, but over a limit
    }
    for (std::size_t i = start; i < search_path_.size(); ++i) {
        std::string candidate = search_path_[i] + name;
        Location refused;
        if (cache_.load(candidate, &why, options_.limits, &refused)) {
            found_in = static_cast<int>(i);
            return candidate;
        }
        if (!refused.file.empty()) return std::nullopt;
    }
    why = "No such file or directory";
    return std::nullopt;
}

void Engine::include(Lexer& lexer, const SourceFile& file, const Token& directive, bool next) {
    // The header name is taken raw: <...> and "..." are not ordinary tokens here.
    const std::size_t start = lexer.position();
    Token first = lexer.next();
    std::string name;
    bool angled = false;
    Token where = first;
    if (first.is('<') || first.is("<<") || first.is("<=") || first.is("<<=")) {
        const std::size_t begin = first.end - first.text.size();
        lexer.set_position(begin);
        const std::string_view rest = lexer.rest_of_line();
        const std::size_t close = rest.find('>');
        if (close == std::string_view::npos) {
            error_at(first, "missing terminating > character");
            return;
        }
        name = std::string(rest.substr(1, close - 1));
        angled = true;
        lexer.set_position(begin + close + 1);
    } else if (first.kind == Kind::string && first.text.front() == '"') {
        name = std::string(first.text.substr(1, first.text.size() - 2));
    } else if (first.kind == Kind::newline || first.kind == Kind::eof) {
        lexer.set_position(start);
        error_at(directive, "#include expects \"FILENAME\" or <FILENAME>");
        return;
    } else {
        // Computed include: expand the line and take "..." or <...> from the result.
        lexer.set_position(start);
        std::vector<Token> line = expand_line(line_tokens(lexer, file), false);
        if (failed_) return;
        if (!line.empty() && line[0].kind == Kind::string && line[0].text.front() == '"') {
            name = std::string(line[0].text.substr(1, line[0].text.size() - 2));
        } else if (!line.empty() && line[0].is('<')) {
            std::size_t i = 1;
            for (; i < line.size() && !line[i].is('>'); ++i) {
                if (i > 1 && (line[i].flags & pp::ws_before)) name += ' ';
                name.append(line[i].text);
            }
            if (i == line.size()) {
                error_at(line[0], "missing terminating > character");
                return;
            }
            angled = true;
        } else {
            error_at(first, "#include expects \"FILENAME\" or <FILENAME>");
            return;
        }
    }
    line_tokens(lexer, file); // extra tokens are ignored (gcc warns)
    if (failed_) return;
    if (name.empty()) {
        error_at(where, "empty filename in #include");
        return;
    }
    int found_in = -1;
    std::string why;
    auto path = resolve(name, angled, next, frames_.back(), found_in, why);
    if (!path) {
        error_at(where, name + ": " + why);
        return;
    }
    if (!once_.empty()) impure(); // #pragma once state is not part of a memo
    if (once_.count(*path)) return;
    if (static_cast<int>(frames_.size()) > options_.limits.include_depth) {
        std::string message = "#include nested depth " + std::to_string(frames_.size()) +
                              " exceeds maximum of " +
                              std::to_string(options_.limits.include_depth);
        // The cycle once, from the last time this file was entered: "a.dtsi → b.dtsi →
        // a.dtsi", at the #include that closes it (not the whole chain of nested frames).
        std::size_t from = frames_.size();
        for (std::size_t k = frames_.size(); k-- > 0;)
            if (frames_[k].file->path == *path) {
                from = k;
                break;
            }
        if (from < frames_.size()) {
            std::string cycle;
            for (std::size_t k = from; k < frames_.size(); ++k)
                cycle += frames_[k].file->path + " \u2192 ";
            message = "include cycle: " + cycle + *path + " (" + message + ")";
        } else {
            message += " " + limit_hint("include-depth");
        }
        error_at(where, message);
        return;
    }
    auto included = cache_.load(*path, &why, options_.limits);
    if (!included) {
        error_at(where, name + ": " + why);
        return;
    }
    remember(included);
    const std::string key = memo_key_ + std::to_string(found_in);
    if (replay(*included, key)) return;
    record(included, found_in, key);
}

// #if, #ifdef, #ifndef: a conditional opened (not evaluated while skipping).
void Engine::open_conditional(Lexer& lexer, const SourceFile& file, const Token& name, bool skip) {
    const std::string_view d = name.text;
    Conditional c;
    c.file = &file;
    c.offset = name.offset;
    c.directive = d;
    c.outer_skipping = skip;
    if (skip) {
        lexer.skip_line();
    } else {
        const std::vector<Token> line = line_tokens(lexer, file);
        if (failed_) return;
        bool value = false;
        if (d == "if") {
            value = evaluate_if(name, line);
        } else {
            auto m = macro_name(name, line);
            if (!m) return;
            value = (find_macro(*m) != nullptr) == (d == "ifdef");
        }
        if (failed_) return;
        c.active = value;
        c.taken = value;
    }
    conditionals_.push_back(c);
}

// #elif, #else, #endif of the innermost conditional of this file.
void Engine::continue_conditional(Lexer& lexer, const SourceFile& file, const Token& name) {
    const std::string_view d = name.text;
    if (conditionals_.size() <= frames_.back().conditionals) {
        error_at(name, "#" + std::string(d) + " without #if");
        return;
    }
    Conditional& c = conditionals_.back();
    if (d == "endif") {
        conditionals_.pop_back();
        lexer.skip_line();
        return;
    }
    if (c.seen_else) {
        error_at(name, "#" + std::string(d) + " after #else");
        return;
    }
    if (d == "else") {
        c.seen_else = true;
        c.active = !c.outer_skipping && !c.taken;
        c.taken = true;
        lexer.skip_line();
        return;
    }
    // #elif: evaluated only when no earlier branch was taken.
    if (c.outer_skipping || c.taken) {
        c.active = false;
        lexer.skip_line();
        return;
    }
    lexer.report_errors = true;
    const std::vector<Token> line = line_tokens(lexer, file);
    if (failed_) return;
    const bool value = evaluate_if(name, line);
    c.active = value;
    c.taken = value;
    return;
}

// Handles the directive whose '#' was just read. False when it is not a directive (in
// assembler-with-cpp mode "#address-cells" at the start of a line is ordinary text).
bool Engine::directive(Lexer& lexer, const SourceFile& file) {
    const std::size_t after_hash = lexer.position();
    const bool skip = skipping();
    lexer.report_errors = !skip;
    Token name = lexer.next();
    if (!check_lexer(lexer, file)) return true;
    if (name.kind == Kind::newline) {
        lexer.set_position(name.end - 1); // the null directive
        return true;
    }
    if (name.kind == Kind::eof) return true;
    if (name.kind != Kind::identifier) {
        if (skip) {
            lexer.skip_line();
            return true;
        }
        lexer.set_position(after_hash);
        return false;
    }
    const std::string_view d = name.text;
    if (d == "if" || d == "ifdef" || d == "ifndef") {
        open_conditional(lexer, file, name, skip);
        return true;
    }
    if (d == "elif" || d == "else" || d == "endif") {
        continue_conditional(lexer, file, name);
        return true;
    }
    if (skip) {
        lexer.skip_line();
        return true;
    }
    if (d == "define") {
        define(lexer, file, name);
    } else if (d == "undef") {
        const std::vector<Token> line = line_tokens(lexer, file);
        if (auto m = macro_name(name, line)) undefine(*m);
    } else if (d == "include" || d == "import") {
        include(lexer, file, name, false);
        if (d == "import" && !failed_) {
            // #import: include once. Approximated by the include above being the only one.
        }
    } else if (d == "include_next") {
        include(lexer, file, name, true);
    } else if (d == "error" || d == "warning") {
        const std::vector<Token> line = line_tokens(lexer, file);
        std::string message = "#" + std::string(d);
        if (!line.empty()) message += " " + spell(line);
        if (d == "error")
            error_at(name, message);
        else
            warning_at(name, message);
    } else if (d == "pragma") {
        const std::vector<Token> line = line_tokens(lexer, file);
        if (line.size() == 1 && line[0].text == "once") {
            once_.insert(file.path);
            impure();
        }
    } else if (d == "line" || d == "ident" || d == "sccs" || d == "assert" || d == "unassert") {
        lexer.skip_line(); // tolerated; #line does not change our (real) source map
    } else {
        lexer.set_position(after_hash);
        return false;
    }
    return true;
}

} // namespace cmalign::dt::pp_engine
