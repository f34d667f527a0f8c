// Kconfig parser: the lexer of scripts/kconfig/lexer.l (including its second stage that turns
// "WORD =" into an assignment and its indentation-sensitive help text), the macro language of
// preprocess.c, the grammar of parser.y, and menu_finalize() of menu.c.
//
// Written by hand rather than with Spirit X3: the lexer's state depends on the previous tokens
// (assignments, help blocks) and macro expansion happens while tokenizing, which a grammar over
// the raw text cannot express; the statement grammar itself is small.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <glob.h>
#include <optional>
#include <sstream>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <fmt/format.h>

#include "kconfig/kconfig_model.hpp"

namespace cmalign::kconfig::model {

int Tree::lookup(const std::string& name, bool is_const) {
    // sym_lookup(): one-letter y/m/n are the constant symbols whatever the quoting.
    if (name.size() == 1) {
        if (name[0] == 'y') return sym_yes;
        if (name[0] == 'm') return sym_mod;
        if (name[0] == 'n') return sym_no;
    }
    if (!is_const) {
        if (auto found = find(name); found != none) return found;
    }
    Symbol s;
    s.name = name;
    if (is_const) s.flags |= sym_const;
    symbols.push_back(std::move(s));
    int index = static_cast<int>(symbols.size()) - 1;
    if (!is_const) by_name.emplace(name, index);
    return index;
}

namespace {

namespace fs = std::filesystem;

// Thrown to abandon the parse after a located error (preprocess.c's pperror() exits too).
struct ParseAbort {};

constexpr int max_expr_depth = 500; // nested parentheses / `!` in one expression

bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

enum class Tok {
    word,
    quoted,
    equal,
    unequal,
    less,
    less_equal,
    greater,
    greater_equal,
    not_,
    and_,
    or_,
    open_paren,
    close_paren,
    colon_equal,
    plus_equal,
    // keywords
    kw_bool,
    kw_choice,
    kw_comment,
    kw_config,
    kw_def_bool,
    kw_def_tristate,
    kw_default,
    kw_depends,
    kw_endchoice,
    kw_endif,
    kw_endmenu,
    kw_help,
    kw_hex,
    kw_if,
    kw_imply,
    kw_int,
    kw_mainmenu,
    kw_menu,
    kw_menuconfig,
    kw_modules,
    kw_on,
    kw_prompt,
    kw_range,
    kw_select,
    kw_source,
    kw_string,
    kw_tristate,
    kw_visible,
    kw_optional,
    kw_option,
    kw_transitional,
    kw_rsource,
    kw_osource,
    kw_orsource,
};

const std::unordered_map<std::string_view, Tok>& keywords() {
    static const std::unordered_map<std::string_view, Tok> table = {
        {"bool", Tok::kw_bool},
        {"boolean", Tok::kw_bool},
        {"choice", Tok::kw_choice},
        {"comment", Tok::kw_comment},
        {"config", Tok::kw_config},
        {"def_bool", Tok::kw_def_bool},
        {"def_tristate", Tok::kw_def_tristate},
        {"default", Tok::kw_default},
        {"depends", Tok::kw_depends},
        {"endchoice", Tok::kw_endchoice},
        {"endif", Tok::kw_endif},
        {"endmenu", Tok::kw_endmenu},
        {"help", Tok::kw_help},
        {"---help---", Tok::kw_help},
        {"hex", Tok::kw_hex},
        {"if", Tok::kw_if},
        {"imply", Tok::kw_imply},
        {"int", Tok::kw_int},
        {"mainmenu", Tok::kw_mainmenu},
        {"menu", Tok::kw_menu},
        {"menuconfig", Tok::kw_menuconfig},
        {"modules", Tok::kw_modules},
        {"on", Tok::kw_on},
        {"prompt", Tok::kw_prompt},
        {"range", Tok::kw_range},
        {"select", Tok::kw_select},
        {"source", Tok::kw_source},
        {"string", Tok::kw_string},
        {"tristate", Tok::kw_tristate},
        {"visible", Tok::kw_visible},
        {"optional", Tok::kw_optional},
        {"option", Tok::kw_option},
        {"transitional", Tok::kw_transitional},
        {"rsource", Tok::kw_rsource},
        {"osource", Tok::kw_osource},
        {"orsource", Tok::kw_orsource},
    };
    return table;
}

// Probes (commands run for their exit status) that fail with Debian's gcc 12 / binutils 2.40
// cross toolchains: Rust is not part of such a build, and these flags are newer or clang-only.
const std::vector<std::string>& assumed_failing_probes() {
    static const std::vector<std::string> list = {
        "rustc",
        "RUSTC",
        "rust_is_available",
        "bindgen",
    };
    return list;
}

// Shell words of a `test` command: quotes removed (no expansions: Kconfig already expanded).
std::vector<std::string> shell_words(const std::string& text) {
    std::vector<std::string> words;
    std::string cur;
    bool in_word = false;
    char quote = 0;
    for (char c : text) {
        if (quote) {
            if (c == quote)
                quote = 0;
            else
                cur += c;
            continue;
        }
        if (c == '"' || c == '\'') {
            quote = c;
            in_word = true;
        } else if (c == ' ' || c == '\t') {
            if (in_word) words.push_back(cur);
            cur.clear();
            in_word = false;
        } else {
            cur += c;
            in_word = true;
        }
    }
    if (in_word) words.push_back(cur);
    return words;
}

// `test ...` on plain strings and numbers is no toolchain probe: answer it exactly. Returns
// nullopt for anything else (files, other commands).
std::optional<bool> evaluate_test(const std::string& command) {
    if (command.rfind("test ", 0) != 0) return std::nullopt;
    if (command.find_first_of(";|&<>`$") != std::string::npos) return std::nullopt;
    auto w = shell_words(command.substr(5));
    if (w.size() == 1) return !w[0].empty();
    if (w.size() == 2 && w[0] == "-z") return w[1].empty();
    if (w.size() == 2 && w[0] == "-n") return !w[1].empty();
    if (w.size() == 3) {
        if (w[1] == "=" || w[1] == "==") return w[0] == w[2];
        if (w[1] == "!=") return w[0] != w[2];
        static const char* const numeric[] = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"};
        for (const char* op : numeric) {
            if (w[1] != op) continue;
            char* e1 = nullptr;
            char* e2 = nullptr;
            long long a = std::strtoll(w[0].c_str(), &e1, 10),
                      b = std::strtoll(w[2].c_str(), &e2, 10);
            if (*e1 || *e2 || w[0].empty() || w[2].empty()) return false; // test prints an error
            std::string o = op;
            return o == "-eq"   ? a == b
                   : o == "-ne" ? a != b
                   : o == "-lt" ? a < b
                   : o == "-le" ? a <= b
                   : o == "-gt" ? a > b
                                : a >= b;
        }
    }
    return std::nullopt;
}

struct Token {
    Tok kind;
    std::string text;
    int line = 0;
    int column = 0;
};

struct ProbeAnswer {
    const char* version; // "6.12"
    const char* srcarch;
    const char* command;
    const char* output;
};

// What Debian 12's cross toolchains answer (scripts/kconfig-probe-table.sh made it).
const ProbeAnswer probe_table[] = {
#include "kconfig/kconfig_probe_table.inc"
};

struct Variable {
    std::string value;
    bool recursive = false;
};

struct SourceFile {
    std::string rel;  // as kconfig names it (relative to srctree)
    std::string full; // path we opened
    std::string text;
    std::size_t pos = 0;
    int line = 1;
};

class Parser {
public:
    Parser(const ParseInput& input, Tree& tree, Diagnostics& diags)
        : in_(input), tree_(tree), diags_(diags) {}

    bool run();

private:
    const ParseInput& in_;
    Tree& tree_;
    Diagnostics& diags_;
    std::map<std::string, Variable, std::less<>> vars_;
    std::vector<SourceFile*> stack_;
    int macro_depth_ = 0;
    int expr_depth_ = 0;
    int stmt_line_ = 0;

    // menu construction state (menu.c: current_menu, current_entry)
    int current_menu_ = 0;
    int current_entry_ = none;
    int current_choice_ = none;
    struct Block {
        Tok kind; // kw_menu, kw_if, kw_choice
        int menu;
        Location where;
    };
    std::vector<Block> blocks_;

    // ---- errors
    Location here(int column = 1) const {
        if (stack_.empty()) return {in_.tree + "/Kconfig", 0, 0};
        return {stack_.back()->full, stmt_line_, column};
    }
    [[noreturn]] void fail(const std::string& message, int column = 1) {
        diags_.error(here(column), message);
        throw ParseAbort{};
    }
    [[noreturn]] void fail_at(const Token& t, const std::string& message) {
        diags_.error({stack_.back()->full, t.line, t.column}, message);
        throw ParseAbort{};
    }

    // ---- macro language (preprocess.c)
    std::string expand(std::string_view text, const std::vector<std::string>* args);
    std::string expand_dollar(std::string_view text, std::size_t& pos,
                              const std::vector<std::string>* args);
    std::string eval_clause(std::string_view clause, const std::vector<std::string>* args);
    std::optional<std::string> call_function(const std::string& name,
                                             const std::vector<std::string>& args);
    std::optional<std::string> env(const std::string& name) const;
    std::string shell(const std::string& command);
    std::string assume_shell(const std::string& command);
    bool assume_probe(const std::string& command);
    void assign(const std::string& name, Tok op, const std::string& raw);

    // ---- lexer
    bool next_statement(std::vector<Token>& out);
    void skip_help();
    std::string lex_quoted(SourceFile& f, char quote);
    std::string lex_word_with_dollar(SourceFile& f);

    // ---- parser
    void parse_file(const std::string& rel, const std::string& full);
    void statement(std::vector<Token>& toks);
    int parse_expr(const std::vector<Token>& t, std::size_t& i);
    int parse_and(const std::vector<Token>& t, std::size_t& i);
    int parse_unary(const std::vector<Token>& t, std::size_t& i);
    int parse_symbol(const std::vector<Token>& t, std::size_t& i);
    int parse_if_expr(const std::vector<Token>& t, std::size_t& i);
    void expect_end(const std::vector<Token>& t, std::size_t i);
    std::string expect_string(const std::vector<Token>& t, std::size_t& i, const char* what);
    void source(const std::string& name, Tok kind, const Token& at);

    // menu.c
    int add_entry(int sym);
    int add_prop(PropKind kind, int expr, int visible);
    void add_prompt(PropKind kind, const std::string& text, int visible);
    void set_type(Type type);
    void add_dep(int expr) {
        auto& m = tree_.menus[current_entry_];
        m.dep = tree_.make_and(m.dep, expr);
    }
    int entry_symbol() const {
        return current_entry_ == none ? none : tree_.menus[current_entry_].sym;
    }
    void finalize(int menu, bool inside_choice);
    int rewrite_m(int e);
};

// ------------------------------------------------------------------------------------------
// macro language

std::optional<std::string> Parser::env(const std::string& name) const {
    if (auto it = in_.options.env.find(name); it != in_.options.env.end()) return it->second;
    auto opt = [&](const char* key) -> std::string {
        auto it = in_.options.env.find(key);
        return it == in_.options.env.end() ? std::string{} : it->second;
    };
    // What the top Makefile exports to scripts/kconfig/conf.
    std::string cross = opt("CROSS_COMPILE");
    std::string llvm = opt("LLVM");
    std::string llvm_prefix, llvm_suffix;
    if (!llvm.empty() && llvm != "0") {
        if (llvm.back() == '/')
            llvm_prefix = llvm;
        else if (llvm[0] == '-')
            llvm_suffix = llvm;
    }
    bool use_llvm = !llvm.empty() && llvm != "0";
    if (name == "srctree") return in_.tree;
    if (name == "SRCARCH") return in_.srcarch;
    if (name == "ARCH") return in_.arch;
    if (name == "KERNELVERSION") return in_.kernel_version;
    if (name == "CC") return use_llvm ? llvm_prefix + "clang" + llvm_suffix : cross + "gcc";
    if (name == "LD") return use_llvm ? llvm_prefix + "ld.lld" + llvm_suffix : cross + "ld";
    if (name == "HOSTCC") return use_llvm ? llvm_prefix + "clang" + llvm_suffix : "gcc";
    if (name == "HOSTCXX") return use_llvm ? llvm_prefix + "clang++" + llvm_suffix : "g++";
    if (name == "RUSTC") return "rustc";
    if (name == "BINDGEN") return "bindgen";
    if (name == "PAHOLE") return "pahole";
    if (name == "NM") return use_llvm ? llvm_prefix + "llvm-nm" + llvm_suffix : cross + "nm";
    if (name == "AR") return use_llvm ? llvm_prefix + "llvm-ar" + llvm_suffix : cross + "ar";
    if (name == "SUBARCH") {
        // The top Makefile: uname -m mapped to an arch directory.
        struct utsname u {};
        std::string m = ::uname(&u) == 0 ? u.machine : "x86_64";
        if (m == "x86_64" || (m.size() == 4 && m[0] == 'i' && m.substr(2) == "86")) return "x86";
        if (m.rfind("aarch64", 0) == 0) return "arm64";
        if (m.rfind("arm", 0) == 0) return "arm";
        if (m.rfind("riscv", 0) == 0) return "riscv";
        if (m.rfind("ppc", 0) == 0) return "powerpc";
        if (m.rfind("mips", 0) == 0) return "mips";
        if (m.rfind("loongarch", 0) == 0) return "loongarch";
        if (m == "s390x") return "s390";
        return m;
    }
    if (name == "OBJCOPY")
        return use_llvm ? llvm_prefix + "llvm-objcopy" + llvm_suffix : cross + "objcopy";
    if (name == "CC_VERSION_TEXT") {
        std::string cc = *env("CC");
        if (in_.options.run_shell) {
            std::string text = const_cast<Parser*>(this)->shell(
                "LC_ALL=C " + cc + " --version 2>/dev/null | head -n 1");
            return text;
        }
        // Without CROSS_COMPILE, the Debian cross compiler for the arch (native gcc for x86).
        std::string prefix = cross;
        if (in_.options.env.find("CROSS_COMPILE") == in_.options.env.end()) {
            static const std::map<std::string, std::string, std::less<>> debian = {
                {"arm64", "aarch64-linux-gnu-"}, {"arm", "arm-linux-gnueabihf-"},
                {"riscv", "riscv64-linux-gnu-"}, {"powerpc", "powerpc64-linux-gnu-"},
                {"mips", "mips-linux-gnu-"},     {"loongarch", "loongarch64-linux-gnu-"},
            };
            auto it = debian.find(in_.srcarch);
            prefix = it == debian.end() ? std::string{} : it->second;
        }
        std::string assumed =
            use_llvm ? "Debian clang version 14.0.6" : prefix + "gcc (Debian 12.2.0-14) 12.2.0";
        for (const auto& answer : probe_table) { // the Debian cross gcc's own banner
            if (!use_llvm && in_.srcarch == answer.srcarch &&
                std::string_view(answer.command) ==
                    "LC_ALL=C gcc --version 2>/dev/null | head -n 1")
                assumed = prefix + answer.output;
        }
        tree_.assumptions.push_back({"$(CC) --version | head -n 1", assumed, here()});
        return assumed;
    }
    return std::nullopt;
}

void Parser::assign(const std::string& name, Tok op, const std::string& raw) {
    if (name.empty()) fail("variable name is empty");
    auto it = vars_.find(name);
    if (op == Tok::plus_equal && it != vars_.end()) {
        // `+=` keeps the flavor: a recursive variable appends unexpanded text.
        std::string add = it->second.recursive ? raw : expand(raw, nullptr);
        if (!it->second.value.empty()) it->second.value += ' ';
        it->second.value += add;
        return;
    }
    Variable v;
    v.recursive = op == Tok::equal;
    v.value = v.recursive ? raw : expand(raw, nullptr);
    vars_[name] = std::move(v);
}

std::string Parser::expand(std::string_view text, const std::vector<std::string>* args) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '$') {
            ++i;
            out += expand_dollar(text, i, args);
            continue;
        }
        out += text[i++];
    }
    return out;
}

// `pos` is just after '$'; leaves it after the matching ')'.
std::string Parser::expand_dollar(std::string_view text, std::size_t& pos,
                                  const std::vector<std::string>* args) {
    if (pos >= text.size() || text[pos] != '(') return "$";
    std::size_t start = pos + 1, q = start;
    int nest = 0;
    for (; q < text.size(); ++q) {
        if (text[q] == '(')
            ++nest;
        else if (text[q] == ')' && nest-- == 0)
            break;
    }
    if (q >= text.size())
        fail(fmt::format("unterminated reference to '{}': missing ')'", text.substr(start)));
    pos = q + 1;
    return eval_clause(text.substr(start, q - start), args);
}

std::string Parser::eval_clause(std::string_view clause, const std::vector<std::string>* args) {
    if (++macro_depth_ > in_.options.limits.macro_depth)
        fail(fmt::format("macro expansion nested deeper than {} levels: a recursive variable "
                         "references itself (eventually) {}",
                         in_.options.limits.macro_depth, limit_hint("macro-depth")));
    struct DepthGuard {
        int& d;
        ~DepthGuard() { --d; }
    } guard{macro_depth_};

    // $(1), $(2): arguments of the user function being expanded.
    if (args && !clause.empty() && std::all_of(clause.begin(), clause.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        })) {
        unsigned long n = std::stoul(std::string(clause));
        if (n > 0 && n <= args->size()) return (*args)[n - 1];
    }
    std::vector<std::string_view> parts;
    int nest = 0;
    std::size_t prev = 0;
    for (std::size_t p = 0; p < clause.size(); ++p) {
        char c = clause[p];
        if (nest == 0 && c == ',') {
            parts.push_back(clause.substr(prev, p - prev));
            prev = p + 1;
        } else if (c == '(') {
            ++nest;
        } else if (c == ')') {
            --nest;
        }
    }
    parts.push_back(clause.substr(prev));
    if (parts.size() > 16) fail("too many function arguments");
    std::string name = expand(parts[0], args);
    std::vector<std::string> call_args;
    for (std::size_t k = 1; k < parts.size(); ++k)
        call_args.push_back(expand(parts[k], args));

    if (auto it = vars_.find(name); it != vars_.end()) {
        if (!it->second.recursive) return it->second.value;
        std::string body = it->second.value; // the map may change during expansion
        return expand(body, &call_args);
    }
    if (auto r = call_function(name, call_args)) return *r;
    if (call_args.empty()) {
        if (auto e = env(name)) return *e;
    }
    return "";
}

std::optional<std::string> Parser::call_function(const std::string& name,
                                                 const std::vector<std::string>& args) {
    auto arity = [&](std::size_t lo, std::size_t hi) {
        if (args.size() < lo) fail(fmt::format("too few function arguments passed to '{}'", name));
        if (args.size() > hi) fail(fmt::format("too many function arguments passed to '{}'", name));
    };
    if (name == "shell") {
        arity(1, 1);
        return in_.options.run_shell ? shell(args[0]) : assume_shell(args[0]);
    }
    if (name == "info") {
        arity(0, 1);
        return std::string{};
    }
    if (name == "warning-if") {
        arity(2, 2);
        if (args[0] == "y") diags_.warning(here(), args[1]);
        return std::string{};
    }
    if (name == "error-if") {
        arity(2, 2);
        if (args[0] == "y") fail(args[1]);
        return std::string{};
    }
    if (name == "filename") {
        arity(0, 0);
        return stack_.back()->rel;
    }
    if (name == "lineno") {
        arity(0, 0);
        return std::to_string(stmt_line_);
    }
    return std::nullopt;
}

std::string Parser::shell(const std::string& command) {
    // do_shell(): run with /bin/sh, the output's newlines become spaces, the trailing one goes.
    std::string full = "cd " + in_.tree + " 2>/dev/null; ";
    // conf runs with the variables the top Makefile exports (some probes use $CC directly).
    std::map<std::string, std::string> exported(in_.options.env.begin(), in_.options.env.end());
    for (const char* name : {"CC", "LD", "AR", "NM", "OBJCOPY", "srctree", "ARCH", "SRCARCH",
                             "KERNELVERSION", "HOSTCC", "HOSTCXX"})
        if (!exported.count(name)) exported[name] = env(name).value_or("");
    for (const auto& [key, value] : exported) {
        std::string quoted = "'";
        for (char c : value)
            quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        quoted += "'";
        full += "export " + key + "=" + quoted + "; ";
    }
    full += command;
    FILE* p = ::popen(full.c_str(), "r");
    if (!p) fail(fmt::format("cannot run shell command '{}'", command));
    std::string out;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    ::pclose(p);
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    std::replace(out.begin(), out.end(), '\n', ' ');
    if (std::getenv("CMALIGN_KCONFIG_TRACE"))
        std::fprintf(stderr, "shell: %s => %s\n", command.c_str(), out.c_str());
    return out;
}

// A probe's success as a build with Debian's gcc 12 (binutils 2.40) would see it.
bool Parser::assume_probe(const std::string& command) {
    if (auto exact = evaluate_test(command)) return *exact;
    for (const auto& f : assumed_failing_probes()) {
        if (command.find(f) != std::string::npos) return false;
    }
    return true;
}

std::string Parser::assume_shell(const std::string& command) {
    {
        std::string norm = command;
        auto replace_all = [&](const std::string& from, const std::string& to) {
            if (from.empty()) return;
            for (std::size_t p = norm.find(from); p != std::string::npos;
                 p = norm.find(from, p + to.size()))
                norm.replace(p, from.size(), to);
        };
        replace_all(in_.tree, "$(srctree)");
        if (auto it = in_.options.env.find("CROSS_COMPILE"); it != in_.options.env.end())
            replace_all(it->second, "");
        const ProbeAnswer* found = nullptr;
        std::string version = fmt::format("{}.{}", tree_.version_major, tree_.version_minor);
        for (const auto& answer : probe_table) {
            if (in_.srcarch != answer.srcarch || norm != answer.command) continue;
            if (!found || version == answer.version) found = &answer;
        }
        if (found) {
            const auto& answer = *found;
            if (norm.rfind("{ command -v ", 0) != 0) // the compiler exists: no news
                tree_.assumptions.push_back({command, answer.output, here()});
            return answer.output;
        }
    }
    // if-success: "{ CMD; } >/dev/null 2>&1 && echo "A" || echo "B""
    static const std::string open = "{ ";
    static const std::string mid = "; } >/dev/null 2>&1 && echo \"";
    std::string result;
    bool known = false;
    if (command.rfind(open, 0) == 0) {
        auto m = command.find(mid);
        auto alt = command.rfind("\" || echo \"");
        if (m != std::string::npos && alt != std::string::npos && alt > m && command.size() >= 1 &&
            command.back() == '"') {
            std::string probe = command.substr(2, m - 2);
            std::string yes = command.substr(m + mid.size(), alt - (m + mid.size()));
            std::string no = command.substr(alt + 11, command.size() - 1 - (alt + 11));
            bool ok = assume_probe(probe);
            if (std::getenv("CMALIGN_KCONFIG_TRACE"))
                std::fprintf(stderr, "probe: %s => %d\n", probe.c_str(), ok);
            result = ok ? yes : no;
            // Probes of plain text (test -z ...) are exact; only tool runs are assumptions.
            if (!evaluate_test(probe) && probe.rfind("command -v", 0) != 0)
                tree_.assumptions.push_back({probe, ok ? "succeeds" : "fails", here()});
            return result;
        }
    }
    // "set -- WORDS && echo $N": pure shell word splitting, exact.
    if (command.rfind("set -- ", 0) == 0) {
        auto amp = command.find(" && echo $");
        if (amp != std::string::npos) {
            std::istringstream words(command.substr(7, amp - 7));
            std::vector<std::string> w;
            for (std::string s; words >> s;)
                w.push_back(s);
            std::size_t n = std::strtoul(command.c_str() + amp + 10, nullptr, 10);
            return n >= 1 && n <= w.size() ? w[n - 1] : std::string{};
        }
    }
    auto contains = [&](const char* s) { return command.find(s) != std::string::npos; };
    bool llvm = false;
    if (auto it = in_.options.env.find("LLVM"); it != in_.options.env.end())
        llvm = !it->second.empty() && it->second != "0";
    if (contains("scripts/cc-version.sh")) {
        result = llvm ? "Clang 140006" : "GCC 120200";
        known = true;
    } else if (contains("scripts/as-version.sh")) {
        result = llvm ? "LLVM 140006" : "GNU 24000";
        known = true;
    } else if (contains("scripts/ld-version.sh")) {
        result = llvm ? "LLD 140006" : "BFD 24000";
        known = true;
    } else if (contains("scripts/rustc-version.sh") || contains("scripts/rustc-llvm-version.sh")) {
        result = "0";
        known = true;
    } else if (contains("scripts/pahole-version.sh")) {
        result = "0";
        known = true;
    }
    (void)known;
    tree_.assumptions.push_back({command, result, here()});
    if (std::getenv("CMALIGN_KCONFIG_TRACE"))
        std::fprintf(stderr, "assumed: %s => %s\n", command.c_str(), result.c_str());
    return result;
}

// ------------------------------------------------------------------------------------------
// lexer

std::string Parser::lex_quoted(SourceFile& f, char quote) {
    // STRING state: "$..." expands, "\x" is x, a newline ends the string (with a warning).
    std::string out;
    const std::string& s = f.text;
    while (f.pos < s.size()) {
        char c = s[f.pos];
        if (c == quote) {
            ++f.pos;
            return out;
        }
        if (c == '\n') return out;
        if (c == '$') {
            // append_expanded_string(): expand from here on the rest of the line.
            auto eol = s.find('\n', f.pos);
            if (eol == std::string::npos) eol = s.size();
            std::string_view rest(s.data() + f.pos + 1, eol - f.pos - 1);
            std::size_t p = 0;
            out += expand_dollar(rest, p, nullptr);
            f.pos += 1 + p;
            continue;
        }
        if (c == '\\') {
            ++f.pos;
            if (f.pos < s.size() && s[f.pos] != '\n') out += s[f.pos++];
            continue;
        }
        out += c;
        ++f.pos;
    }
    return out;
}

std::string Parser::lex_word_with_dollar(SourceFile& f) {
    // expand_one_token(): name characters and $(...) references, expanded.
    const std::string& s = f.text;
    auto eol = s.find('\n', f.pos);
    if (eol == std::string::npos) eol = s.size();
    std::string_view line(s.data() + f.pos, eol - f.pos);
    std::string out;
    std::size_t p = 0;
    while (p < line.size()) {
        if (line[p] == '$') {
            ++p;
            out += expand_dollar(line, p, nullptr);
        } else if (is_name_char(line[p])) {
            out += line[p++];
        } else {
            break;
        }
    }
    f.pos += p;
    return out;
}

void Parser::skip_help() {
    // HELP state: the block is the following lines indented at least as much as its first
    // non-blank line; blank lines belong to it; it ends at a less indented non-blank line.
    SourceFile& f = *stack_.back();
    const std::string& s = f.text;
    int first_ts = 0;
    while (f.pos < s.size()) {
        std::size_t eol = s.find('\n', f.pos);
        if (eol == std::string::npos) eol = s.size();
        int ts = 0;
        std::size_t p = f.pos;
        for (; p < eol && (s[p] == ' ' || s[p] == '\t'); ++p)
            ts = s[p] == '\t' ? (ts & ~7) + 8 : ts + 1;
        bool blank = p == eol;
        if (!blank) {
            if (ts == 0) return;
            if (first_ts && ts < first_ts) return;
            if (!first_ts) first_ts = ts;
        }
        f.pos = eol < s.size() ? eol + 1 : eol;
        ++f.line;
    }
}

// Reads the tokens of the next statement (one logical line) of the current file.
// Returns false at the end of the file.
bool Parser::next_statement(std::vector<Token>& out) {
    out.clear();
    SourceFile& f = *stack_.back();
    const std::string& s = f.text;
    for (;;) {
        if (f.pos >= s.size()) return !out.empty();
        char c = s[f.pos];
        if (c == '\n') {
            ++f.pos;
            ++f.line;
            if (!out.empty()) return true;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            ++f.pos;
            continue;
        }
        if (c == '#') {
            while (f.pos < s.size() && s[f.pos] != '\n')
                ++f.pos;
            continue;
        }
        if (c == '\\' && f.pos + 1 < s.size() && s[f.pos + 1] == '\n') {
            f.pos += 2;
            ++f.line;
            continue;
        }
        if (c == '\\' && f.pos + 2 < s.size() && s[f.pos + 1] == '\r' && s[f.pos + 2] == '\n') {
            f.pos += 3;
            ++f.line;
            continue;
        }
        if (out.empty()) stmt_line_ = f.line;
        auto line_start = s.rfind('\n', f.pos == 0 ? 0 : f.pos - 1);
        int column =
            static_cast<int>(f.pos - (line_start == std::string::npos ? 0 : line_start + 1)) + 1;
        if (f.pos == 0) column = 1;
        Token t{Tok::word, {}, f.line, column};
        auto two = [&](char a, char b) {
            return c == a && f.pos + 1 < s.size() && s[f.pos + 1] == b;
        };
        if (two('|', '|')) {
            t.kind = Tok::or_;
            f.pos += 2;
        } else if (two('&', '&')) {
            t.kind = Tok::and_;
            f.pos += 2;
        } else if (two('!', '=')) {
            t.kind = Tok::unequal;
            f.pos += 2;
        } else if (two('<', '=')) {
            t.kind = Tok::less_equal;
            f.pos += 2;
        } else if (two('>', '=')) {
            t.kind = Tok::greater_equal;
            f.pos += 2;
        } else if (two(':', '=')) {
            t.kind = Tok::colon_equal;
            f.pos += 2;
        } else if (two('+', '=')) {
            t.kind = Tok::plus_equal;
            f.pos += 2;
        } else if (c == '=') {
            t.kind = Tok::equal;
            ++f.pos;
        } else if (c == '<') {
            t.kind = Tok::less;
            ++f.pos;
        } else if (c == '>') {
            t.kind = Tok::greater;
            ++f.pos;
        } else if (c == '!') {
            t.kind = Tok::not_;
            ++f.pos;
        } else if (c == '(') {
            t.kind = Tok::open_paren;
            ++f.pos;
        } else if (c == ')') {
            t.kind = Tok::close_paren;
            ++f.pos;
        } else if (c == '"' || c == '\'') {
            ++f.pos;
            t.kind = Tok::quoted;
            t.text = lex_quoted(f, c);
        } else if (is_name_char(c) || c == '$') {
            std::size_t e = f.pos;
            bool dollar = false;
            while (e < s.size() && (is_name_char(s[e]) || s[e] == '$')) {
                if (s[e] == '$') dollar = true;
                ++e;
            }
            if (dollar) {
                t.text = lex_word_with_dollar(f);
                if (t.text.empty()) continue; // an empty expansion is no token
            } else {
                t.text = s.substr(f.pos, e - f.pos);
                f.pos = e;
                if (auto k = keywords().find(t.text); k != keywords().end()) t.kind = k->second;
            }
        } else {
            // lexer.l warns about and ignores any other character.
            ++f.pos;
            continue;
        }
        out.push_back(std::move(t));
        // The second stage of the lexer: "WORD =", "WORD :=", "WORD +=" at the start of a
        // statement make the rest of the line the raw value.
        if (out.size() == 2 && out[0].kind == Tok::word &&
            (out[1].kind == Tok::equal || out[1].kind == Tok::colon_equal ||
             out[1].kind == Tok::plus_equal)) {
            while (f.pos < s.size() && (s[f.pos] == ' ' || s[f.pos] == '\t'))
                ++f.pos;
            auto eol = s.find('\n', f.pos);
            if (eol == std::string::npos) eol = s.size();
            std::string value = s.substr(f.pos, eol - f.pos);
            if (!value.empty() && value.back() == '\r') value.pop_back();
            f.pos = eol;
            out.push_back({Tok::word, value, f.line, 0});
            return true;
        }
    }
}

// ------------------------------------------------------------------------------------------
// parser

int Parser::add_entry(int sym) {
    Menu m;
    m.sym = sym;
    m.parent = current_menu_;
    m.where = {stack_.back()->rel, stmt_line_, 0};
    tree_.menus.push_back(std::move(m));
    int index = static_cast<int>(tree_.menus.size()) - 1;
    tree_.menus[current_menu_].children.push_back(index);
    current_entry_ = index;
    if (sym != none) tree_.symbols[sym].menus.push_back(index);
    return index;
}

int Parser::add_prop(PropKind kind, int expr, int visible) {
    Property p;
    p.kind = kind;
    p.menu = current_entry_;
    p.expr = expr;
    p.visible = visible;
    p.where = {stack_.back()->rel, stmt_line_, 0};
    tree_.props.push_back(std::move(p));
    int index = static_cast<int>(tree_.props.size()) - 1;
    int sym = entry_symbol();
    if (sym != none) tree_.symbols[sym].props.push_back(index);
    return index;
}

void Parser::add_prompt(PropKind kind, const std::string& text, int visible) {
    int index = add_prop(kind, none, visible);
    // menu_add_prompt(): every enclosing menu's `visible if` applies to a P_PROMPT.
    if (kind == PropKind::prompt) {
        for (int m = tree_.menus[current_entry_].parent; m != none; m = tree_.menus[m].parent) {
            if (tree_.menus[m].visibility != none)
                tree_.props[index].visible =
                    tree_.make_and(tree_.props[index].visible, tree_.menus[m].visibility);
        }
    }
    std::string t = text;
    t.erase(0, t.find_first_not_of(" \t"));
    tree_.props[index].text = t;
    tree_.menus[current_entry_].prompt = index;
}

void Parser::set_type(Type type) {
    int sym = entry_symbol();
    if (sym == none) return;
    auto& s = tree_.symbols[sym];
    if (s.type == type || type == Type::unknown) return;
    if (s.type == Type::unknown) {
        s.type = type;
        return;
    }
    // menu_set_type(): "ignoring type redefinition" — the first type stays.
    diags_.warning(here(), fmt::format("ignoring type redefinition of '{}'", s.name));
}

int Parser::parse_symbol(const std::vector<Token>& t, std::size_t& i) {
    if (i >= t.size()) fail("syntax error: expected a symbol at the end of the line");
    const Token& tok = t[i];
    if (tok.kind == Tok::word) {
        ++i;
        return tree_.lookup(tok.text, false);
    }
    if (tok.kind == Tok::quoted) {
        ++i;
        return tree_.lookup(tok.text, true);
    }
    fail_at(tok, fmt::format("syntax error: expected a symbol, found '{}'",
                             tok.text.empty() ? "operator or keyword" : tok.text));
}

int Parser::parse_unary(const std::vector<Token>& t, std::size_t& i) {
    if (++expr_depth_ > max_expr_depth) fail("expression nested too deeply");
    struct DepthGuard {
        int& d;
        ~DepthGuard() { --d; }
    } guard{expr_depth_};
    if (i < t.size() && t[i].kind == Tok::not_) {
        ++i;
        int e = parse_unary(t, i);
        return tree_.add_expr(Op::not_, e, none);
    }
    if (i < t.size() && t[i].kind == Tok::open_paren) {
        ++i;
        int e = parse_expr(t, i);
        if (i >= t.size() || t[i].kind != Tok::close_paren) {
            if (i < t.size()) fail_at(t[i], "syntax error: expected ')'");
            fail("syntax error: expected ')' before the end of the line");
        }
        ++i;
        return e;
    }
    int left = parse_symbol(t, i);
    if (i < t.size()) {
        Op op;
        switch (t[i].kind) {
        case Tok::equal:
            op = Op::equal;
            break;
        case Tok::unequal:
            op = Op::unequal;
            break;
        case Tok::less:
            op = Op::less;
            break;
        case Tok::less_equal:
            op = Op::less_equal;
            break;
        case Tok::greater:
            op = Op::greater;
            break;
        case Tok::greater_equal:
            op = Op::greater_equal;
            break;
        default:
            return tree_.make_symbol(left);
        }
        ++i;
        int right = parse_symbol(t, i);
        return tree_.add_expr(op, left, right);
    }
    return tree_.make_symbol(left);
}

int Parser::parse_and(const std::vector<Token>& t, std::size_t& i) {
    int e = parse_unary(t, i);
    while (i < t.size() && t[i].kind == Tok::and_) {
        ++i;
        e = tree_.add_expr(Op::and_, e, parse_unary(t, i));
    }
    return e;
}

int Parser::parse_expr(const std::vector<Token>& t, std::size_t& i) {
    int e = parse_and(t, i);
    while (i < t.size() && t[i].kind == Tok::or_) {
        ++i;
        e = tree_.add_expr(Op::or_, e, parse_and(t, i));
    }
    return e;
}

int Parser::parse_if_expr(const std::vector<Token>& t, std::size_t& i) {
    if (i < t.size() && t[i].kind == Tok::kw_if) {
        ++i;
        return parse_expr(t, i);
    }
    return none;
}

void Parser::expect_end(const std::vector<Token>& t, std::size_t i) {
    if (i < t.size())
        fail_at(t[i], fmt::format("syntax error: unexpected '{}'",
                                  t[i].text.empty() ? "token" : t[i].text));
}

std::string Parser::expect_string(const std::vector<Token>& t, std::size_t& i, const char* what) {
    if (i >= t.size() || (t[i].kind != Tok::quoted && t[i].kind != Tok::word)) {
        if (i < t.size()) fail_at(t[i], fmt::format("syntax error: expected {}", what));
        fail(fmt::format("syntax error: expected {}", what));
    }
    // parser.y's prompt is T_WORD_QUOTE; a bare word is accepted by kconfig for `source` only
    // through the lexer, so we take both and let the caller decide.
    return t[i++].text;
}

void Parser::source(const std::string& name, Tok kind, const Token& at) {
    if (stack_.size() >= static_cast<std::size_t>(in_.options.limits.kconfig_source_depth))
        fail_at(at, fmt::format("'source' nested deeper than {} levels {}",
                                in_.options.limits.kconfig_source_depth,
                                limit_hint("kconfig-source-depth")));
    bool relative = kind == Tok::kw_rsource || kind == Tok::kw_orsource;
    bool optional = kind == Tok::kw_osource || kind == Tok::kw_orsource;
    std::string rel = name;
    if (relative) {
        auto dir = fs::path(stack_.back()->rel).parent_path();
        rel = (dir / name).lexically_normal().string();
    }
    std::vector<std::string> files;
    if (rel.find_first_of("*?[") != std::string::npos) {
        glob_t g{};
        std::string pattern = rel.starts_with('/') ? rel : in_.tree + "/" + rel;
        if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
            for (std::size_t k = 0; k < g.gl_pathc; ++k) {
                std::string p = g.gl_pathv[k];
                files.push_back(rel.starts_with('/') ? p : p.substr(in_.tree.size() + 1));
            }
        }
        ::globfree(&g);
        if (files.empty() && !optional) fail_at(at, fmt::format("'{}': no file matches", name));
    } else {
        std::string full = rel.starts_with('/') ? rel : in_.tree + "/" + rel;
        std::error_code ec;
        if (!fs::is_regular_file(full, ec)) {
            if (optional) return;
            fail_at(at, fmt::format("can't open file \"{}\"", rel));
        }
        files.push_back(rel);
    }
    for (const auto& file : files) {
        for (auto* open : stack_) {
            if (open->rel == file)
                fail_at(at,
                        fmt::format("recursive inclusion detected: \"{}\" sources itself", file));
        }
        std::string full = file.starts_with('/') ? file : in_.tree + "/" + file;
        int saved_line = stmt_line_;
        parse_file(file, full);
        stmt_line_ = saved_line;
    }
}

void Parser::statement(std::vector<Token>& t) {
    std::size_t i = 1;
    const Token& first = t[0];
    // Assignments (the lexer made the value token raw).
    if (t.size() == 3 && first.kind == Tok::word &&
        (t[1].kind == Tok::equal || t[1].kind == Tok::colon_equal ||
         t[1].kind == Tok::plus_equal)) {
        assign(first.text, t[1].kind, t[2].text);
        current_entry_ = none;
        return;
    }
    auto need_entry = [&](std::initializer_list<int> kinds) {
        // kinds: 0 config/menuconfig, 1 choice, 2 menu, 3 comment
        if (current_entry_ == none)
            fail_at(first, fmt::format("syntax error: '{}' outside of an entry", first.text));
        const Menu& m = tree_.menus[current_entry_];
        int kind = m.is_choice                                                             ? 1
                   : m.sym != none                                                         ? 0
                   : (m.prompt != none && tree_.props[m.prompt].kind == PropKind::comment) ? 3
                                                                                           : 2;
        if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
            fail_at(first, fmt::format("syntax error: '{}' is not allowed here", first.text));
    };
    auto type_option = [&](Type type) {
        need_entry({0, 1});
        set_type(type);
        if (i < t.size() && (t[i].kind == Tok::quoted || t[i].kind == Tok::word)) {
            std::string text = t[i++].text;
            int cond = parse_if_expr(t, i);
            add_prompt(PropKind::prompt, text, cond);
        }
        expect_end(t, i);
    };
    switch (first.kind) {
    case Tok::kw_config:
    case Tok::kw_menuconfig: {
        if (i >= t.size() || t[i].kind != Tok::word)
            fail_at(first, fmt::format("syntax error: '{}' needs a symbol name", first.text));
        int sym = tree_.lookup(t[i++].text, false);
        expect_end(t, i);
        add_entry(sym);
        if (first.kind == Tok::kw_menuconfig) tree_.menus[current_entry_].is_choice = false;
        if (current_choice_ != none) {
            auto& members = tree_.menus[current_choice_].choice_members;
            if (std::find(members.begin(), members.end(), sym) == members.end())
                members.push_back(sym);
        }
        return;
    }
    case Tok::kw_choice: {
        int sym;
        if (i < t.size() && t[i].kind == Tok::word)
            sym = tree_.lookup(t[i++].text, false);
        else
            sym = tree_.lookup("", true); // anonymous
        expect_end(t, i);
        tree_.symbols[sym].flags |= sym_choice;
        tree_.symbols[sym].flags &= static_cast<std::uint16_t>(~sym_const);
        int m = add_entry(sym);
        tree_.menus[m].is_choice = true;
        set_type(Type::boolean);
        blocks_.push_back({Tok::kw_choice, m, here()});
        current_menu_ = m;
        current_choice_ = m;
        return;
    }
    case Tok::kw_endchoice:
    case Tok::kw_endmenu:
    case Tok::kw_endif: {
        Tok want = first.kind == Tok::kw_endchoice ? Tok::kw_choice
                   : first.kind == Tok::kw_endmenu ? Tok::kw_menu
                                                   : Tok::kw_if;
        if (blocks_.empty() || blocks_.back().kind != want ||
            blocks_.back().where.file != stack_.back()->full)
            fail_at(first, fmt::format("unexpected '{}'", first.text));
        expect_end(t, i);
        blocks_.pop_back();
        current_menu_ = tree_.menus[current_menu_].parent;
        if (want == Tok::kw_choice) {
            current_choice_ = none;
            for (auto& b : blocks_)
                if (b.kind == Tok::kw_choice) current_choice_ = b.menu;
        }
        current_entry_ = none;
        return;
    }
    case Tok::kw_menu: {
        std::string text = expect_string(t, i, "a menu title");
        expect_end(t, i);
        int m = add_entry(none);
        add_prompt(PropKind::menu, text, none);
        blocks_.push_back({Tok::kw_menu, m, here()});
        current_menu_ = m;
        return;
    }
    case Tok::kw_if: {
        int cond = parse_expr(t, i);
        expect_end(t, i);
        int m = add_entry(none);
        add_dep(cond);
        blocks_.push_back({Tok::kw_if, m, here()});
        current_menu_ = m;
        current_entry_ = none;
        return;
    }
    case Tok::kw_comment: {
        std::string text = expect_string(t, i, "a comment text");
        expect_end(t, i);
        add_entry(none);
        add_prompt(PropKind::comment, text, none);
        return;
    }
    case Tok::kw_mainmenu: {
        std::string text = expect_string(t, i, "a title");
        expect_end(t, i);
        current_entry_ = 0;
        tree_.props.push_back({PropKind::menu, 0, none, none, none, none, text, here()});
        tree_.menus[0].prompt = static_cast<int>(tree_.props.size()) - 1;
        current_entry_ = none;
        return;
    }
    case Tok::kw_source:
    case Tok::kw_rsource:
    case Tok::kw_osource:
    case Tok::kw_orsource: {
        std::string name = expect_string(t, i, "a file name");
        expect_end(t, i);
        current_entry_ = none;
        source(name, first.kind, first);
        current_entry_ = none;
        return;
    }
    case Tok::kw_bool:
        type_option(Type::boolean);
        return;
    case Tok::kw_tristate:
        type_option(Type::tristate);
        return;
    case Tok::kw_int:
        type_option(Type::integer);
        return;
    case Tok::kw_hex:
        type_option(Type::hex);
        return;
    case Tok::kw_string:
        type_option(Type::string);
        return;
    case Tok::kw_prompt: {
        need_entry({0, 1});
        std::string text = expect_string(t, i, "a prompt");
        int cond = parse_if_expr(t, i);
        expect_end(t, i);
        add_prompt(PropKind::prompt, text, cond);
        return;
    }
    case Tok::kw_default:
    case Tok::kw_def_bool:
    case Tok::kw_def_tristate: {
        need_entry({0, 1});
        int value = parse_expr(t, i);
        int cond = parse_if_expr(t, i);
        expect_end(t, i);
        add_prop(PropKind::default_, value, cond);
        if (first.kind == Tok::kw_def_bool) set_type(Type::boolean);
        if (first.kind == Tok::kw_def_tristate) set_type(Type::tristate);
        return;
    }
    case Tok::kw_depends: {
        need_entry({0, 1, 2, 3});
        if (i >= t.size() || t[i].kind != Tok::kw_on)
            fail_at(first, "syntax error: expected 'depends on'");
        ++i;
        int e = parse_expr(t, i);
        expect_end(t, i);
        add_dep(e);
        return;
    }
    case Tok::kw_visible: {
        need_entry({2});
        if (i >= t.size() || t[i].kind != Tok::kw_if)
            fail_at(first, "syntax error: expected 'visible if'");
        ++i;
        int e = parse_expr(t, i);
        expect_end(t, i);
        auto& m = tree_.menus[current_entry_];
        m.visibility = tree_.make_and(m.visibility, e);
        return;
    }
    case Tok::kw_select:
    case Tok::kw_imply: {
        need_entry({0});
        if (i >= t.size() || t[i].kind != Tok::word)
            fail_at(first, fmt::format("syntax error: '{}' needs a symbol", first.text));
        int target = tree_.lookup(t[i++].text, false);
        int cond = parse_if_expr(t, i);
        expect_end(t, i);
        int p =
            add_prop(first.kind == Tok::kw_select ? PropKind::select : PropKind::imply, none, cond);
        tree_.props[p].target = target;
        return;
    }
    case Tok::kw_range: {
        need_entry({0});
        int lo = parse_symbol(t, i);
        int hi = parse_symbol(t, i);
        int cond = parse_if_expr(t, i);
        expect_end(t, i);
        int p = add_prop(PropKind::range, none, cond);
        tree_.props[p].target = lo;
        tree_.props[p].target2 = hi;
        return;
    }
    case Tok::kw_help: {
        need_entry({0, 1, 2, 3});
        expect_end(t, i);
        skip_help();
        return;
    }
    case Tok::kw_modules: {
        need_entry({0});
        expect_end(t, i);
        if (tree_.modules_sym != none && tree_.modules_sym != entry_symbol())
            fail_at(first,
                    fmt::format(
                        "symbol '{}' redefines option 'modules' already defined by symbol '{}'",
                        tree_.symbols[entry_symbol()].name, tree_.symbols[tree_.modules_sym].name));
        tree_.modules_sym = entry_symbol();
        return;
    }
    case Tok::kw_optional: {
        need_entry({1});
        expect_end(t, i);
        tree_.menus[current_entry_].optional = true;
        return;
    }
    case Tok::kw_option: {
        // Kernels before 5.15: `option modules`, `option env=...`, `option defconfig_list`, ...
        need_entry({0, 1});
        if (i < t.size() && t[i].kind == Tok::kw_modules) tree_.modules_sym = entry_symbol();
        return;
    }
    case Tok::kw_transitional: {
        need_entry({0});
        expect_end(t, i);
        tree_.symbols[entry_symbol()].flags |= sym_transitional;
        return;
    }
    default:
        break;
    }
    if (first.kind == Tok::word)
        fail_at(first, fmt::format("unknown statement \"{}\"", first.text));
    fail_at(first, "invalid statement");
}

void Parser::parse_file(const std::string& rel, const std::string& full) {
    SourceFile f;
    f.rel = rel;
    f.full = full;
    {
        std::ifstream in(full, std::ios::binary);
        if (!in) {
            diags_.error({full, 0, 0}, "cannot read the Kconfig file");
            throw ParseAbort{};
        }
        std::ostringstream ss;
        ss << in.rdbuf();
        f.text = ss.str();
        const auto& limits = in_.options.limits;
        if (f.text.size() > limits.file_bytes) {
            diags_.error({full, 0, 0}, fmt::format("file is larger than {} bytes {}",
                                                   limits.file_bytes, limit_hint("file-bytes")));
            throw ParseAbort{};
        }
        if (auto long_line = first_line_over(f.text, limits.line_bytes)) {
            diags_.error(long_line_location(full, *long_line, limits),
                         long_line_message(*long_line, limits));
            throw ParseAbort{};
        }
    }
    tree_.files.push_back(full);
    stack_.push_back(&f);
    std::size_t blocks_at_start = blocks_.size();
    std::vector<Token> toks;
    try {
        while (next_statement(toks)) {
            statement(toks);
            if (tree_.symbols.size() > in_.options.limits.kconfig_symbols && !toks.empty())
                fail_at(toks.front(), fmt::format("more than {} Kconfig symbols {}",
                                                  in_.options.limits.kconfig_symbols,
                                                  limit_hint("kconfig-symbols")));
        }
    } catch (...) {
        stack_.pop_back();
        throw;
    }
    if (blocks_.size() > blocks_at_start) {
        const Block& b = blocks_.back();
        const char* kind = b.kind == Tok::kw_if ? "if" : b.kind == Tok::kw_menu ? "menu" : "choice";
        const char* end = b.kind == Tok::kw_if     ? "endif"
                          : b.kind == Tok::kw_menu ? "endmenu"
                                                   : "endchoice";
        diags_.error(b.where, fmt::format("'{}' without a matching '{}' before the end of the file",
                                          kind, end));
        stack_.pop_back();
        throw ParseAbort{};
    }
    stack_.pop_back();
    current_entry_ = none;
}

// ------------------------------------------------------------------------------------------
// menu_finalize()

int Parser::rewrite_m(int e) {
    // 'm' in a dependency means 'm && MODULES'.
    if (e == none) return e;
    Expr x = tree_.exprs[e];
    switch (x.op) {
    case Op::not_: {
        int l = rewrite_m(x.left);
        return l == x.left ? e : tree_.add_expr(Op::not_, l, none);
    }
    case Op::and_:
    case Op::or_: {
        int l = rewrite_m(x.left), r = rewrite_m(x.right);
        return l == x.left && r == x.right ? e : tree_.add_expr(x.op, l, r);
    }
    case Op::symbol:
        if (x.left == tree_.sym_mod && tree_.modules_sym != none)
            return tree_.add_expr(Op::and_, e, tree_.make_symbol(tree_.modules_sym));
        return e;
    default:
        return e;
    }
}

void Parser::finalize(int parent, bool inside_choice) {
    int psym = tree_.menus[parent].sym;
    bool parent_is_choice = tree_.menus[parent].is_choice;
    bool old_choices =
        tree_.version_major < 6 || (tree_.version_major == 6 && tree_.version_minor < 11);
    auto children = tree_.menus[parent].children;
    if (!children.empty()) {
        if (parent_is_choice && old_choices) {
            // 6.1: a choice's type comes from its first typed member; members get the choice's.
            auto& cs = tree_.symbols[psym];
            for (int c : children) {
                int s = tree_.menus[c].sym;
                if (s != none && tree_.symbols[s].type == Type::unknown)
                    tree_.symbols[s].type = cs.type;
            }
        }
        // Before 6.11 the members of a choice depend on the choice symbol itself.
        int parentdep =
            parent_is_choice && old_choices ? tree_.make_symbol(psym) : tree_.menus[parent].dep;
        for (int c : children) {
            int basedep = tree_.make_and(parentdep, rewrite_m(tree_.menus[c].dep));
            tree_.menus[c].dep = basedep;
            int csym = tree_.menus[c].sym;
            std::vector<int> props;
            if (csym != none)
                props = tree_.symbols[csym].props;
            else if (tree_.menus[c].prompt != none)
                props.push_back(tree_.menus[c].prompt);
            for (int p : props) {
                auto& prop = tree_.props[p];
                if (prop.menu != c) continue;
                prop.visible = tree_.make_and(basedep, rewrite_m(prop.visible));
                if (prop.kind == PropKind::select || prop.kind == PropKind::imply) {
                    auto& es = tree_.symbols[prop.target];
                    int term = tree_.make_and(tree_.make_symbol(csym), prop.visible);
                    if (prop.kind == PropKind::select) {
                        es.rev_dep = tree_.make_or(es.rev_dep, term);
                        es.selectors.push_back({csym, p});
                    } else {
                        es.implied = tree_.make_or(es.implied, term);
                        es.impliers.push_back({csym, p});
                    }
                }
            }
        }
        for (int c : children)
            finalize(c, parent_is_choice);
    } else if (!inside_choice && psym != none) {
        auto& s = tree_.symbols[psym];
        s.dir_dep = tree_.make_or(s.dir_dep, tree_.menus[parent].dep);
    }
    if (parent_is_choice) {
        for (int c : children) {
            int s = tree_.menus[c].sym;
            if (s == none) continue;
            tree_.symbols[s].flags |= sym_choice_value;
            if (tree_.symbols[s].choice_menu == none) tree_.symbols[s].choice_menu = parent;
        }
        if (old_choices && !tree_.menus[parent].optional && tree_.menus[parent].prompt != none) {
            // 6.1: a visible non-optional choice cannot be n ('<visibility> && m' reverse dep).
            auto& cs = tree_.symbols[psym];
            cs.rev_dep = tree_.make_or(
                cs.rev_dep, tree_.make_and(tree_.props[tree_.menus[parent].prompt].visible,
                                           tree_.make_symbol(tree_.sym_mod)));
        }
    }
}

bool Parser::run() {
    tree_.symbols.clear();
    tree_.sym_yes = tree_.lookup("__yes__", true);
    tree_.sym_mod = tree_.lookup("__mod__", true);
    tree_.sym_no = tree_.lookup("__no__", true);
    tree_.symbols[tree_.sym_yes].name = "y";
    tree_.symbols[tree_.sym_mod].name = "m";
    tree_.symbols[tree_.sym_no].name = "n";
    for (int s : {tree_.sym_yes, tree_.sym_mod, tree_.sym_no})
        tree_.symbols[s].type = Type::tristate;
    tree_.menus.assign(1, Menu{});
    tree_.menus[0].where = {"Kconfig", 0, 0};
    try {
        parse_file("Kconfig", in_.tree + "/Kconfig");
        if (tree_.modules_sym == none) {
            // 6.12 falls back to a MODULES symbol that never becomes y.
            tree_.modules_sym = tree_.lookup("MODULES", false);
        }
        finalize(0, false);
    } catch (const ParseAbort&) {
        return false;
    }
    return !diags_.has_errors();
}

} // namespace

bool parse(const ParseInput& input, Tree& tree, Diagnostics& diags) {
    Parser p(input, tree, diags);
    return p.run();
}

} // namespace cmalign::kconfig::model
