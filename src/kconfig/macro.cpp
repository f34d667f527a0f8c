// The Kconfig macro language (scripts/kconfig/preprocess.c): variables, $(...) expansion,
// built-in functions, and $(shell ...) answered from the toolchain probe table.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <sys/utsname.h>

#include <fmt/format.h>

#include "cmalign/internal/kconfig/integer.hpp" // the project's one integer reader (core/integer.hpp)
#include "cmalign/internal/kconfig/parser.hpp"

namespace cmalign::kconfig::model::parser {

namespace {

// Probes (commands run for their exit status) that fail with Debian's gcc 12 / binutils 2.40
// cross toolchains: Rust is not part of such a build, and these flags are newer or clang-only.
const std::vector<std::string>& assumed_failing_probes() {
    static const std::vector<std::string> list = {
        "rustc", "RUSTC", "rust_is_available", "bindgen",
        // the tool is another implementation than GNU's (5.10's `$(LD) -v | grep -q gold`)
        "grep -q gold", "grep -qi llvm",
        "-mllvm", // clang-only flags
    };
    return list;
}

// `expr A OP B` on integers (7.x init/Kconfig: $(shell,expr $(cc-version) / 10000)) is
// arithmetic, not a probe: answer it as expr(1) does. nullopt for anything else.
std::optional<std::string> evaluate_expr_command(const std::string& command) {
    if (command.rfind("expr ", 0) != 0) return std::nullopt;
    if (command.find_first_of(";|&<>`$\"'") != std::string::npos) return std::nullopt;
    std::istringstream in(command.substr(5));
    std::vector<std::string> w;
    for (std::string word; in >> word;)
        w.push_back(word);
    if (w.size() != 3) return std::nullopt;
    auto number = [](const std::string& text) -> std::optional<long long> {
        std::size_t k = !text.empty() && text[0] == '-' ? 1 : 0;
        if (k == text.size()) return std::nullopt;
        for (std::size_t j = k; j < text.size(); ++j) // decimal only, as expr reads it
            if (!std::isdigit(static_cast<unsigned char>(text[j]))) return std::nullopt;
        return parse_integer(text, IntegerSyntax::decimal_or_hex);
    };
    auto a = number(w[0]), b = number(w[2]);
    if (!a || !b) return std::nullopt;
    const std::string& op = w[1];
    long long r = 0;
    bool overflow = false;
    if (op == "+")
        overflow = __builtin_add_overflow(*a, *b, &r);
    else if (op == "-")
        overflow = __builtin_sub_overflow(*a, *b, &r);
    else if (op == "*")
        overflow = __builtin_mul_overflow(*a, *b, &r);
    else if ((op == "/" || op == "%") && *b != 0 && !(*a == LLONG_MIN && *b == -1))
        r = op == "/" ? *a / *b : *a % *b;
    else
        return std::nullopt;
    if (overflow) return std::nullopt;
    return std::to_string(r);
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
            auto parsed_a = parse_integer(w[0], IntegerSyntax::decimal);
            auto parsed_b = parse_integer(w[2], IntegerSyntax::decimal);
            if (!parsed_a || !parsed_b) return false; // test prints an error
            long long a = *parsed_a, b = *parsed_b;
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

struct ProbeAnswer {
    const char* version; // "6.12"
    const char* srcarch;
    const char* command;
    const char* output;
};

// What Debian 12's cross toolchains answer (scripts/kconfig-probe-table.sh made it).
const ProbeAnswer probe_table[] = {
#include "kconfig/probe_table.inc" // IWYU pragma: keep (the table itself, not declarations)
};

} // namespace

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
        // The top Makefile (scripts/subarch.include): the host's uname -m mapped to an arch
        // directory. Host names, not the arch names users give (those are kernel::make_arch()'s).
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
    if (name == "PAHOLE_VERSION") {
        // 7.x: the top Makefile computes it and exports it to Kconfig (`default
        // "$(PAHOLE_VERSION)"`).
        std::string command = in_.tree + "/scripts/pahole-version.sh " + *env("PAHOLE");
        auto* self = const_cast<Parser*>(this);
        return in_.options.run_shell ? self->shell(command) : self->assume_shell(command);
    }
    if (name == "CC_VERSION_TEXT") {
        std::string cc = *env("CC");
        if (in_.options.run_shell) {
            std::string text = const_cast<Parser*>(this)->shell(
                "LC_ALL=C " + cc + " --version 2>/dev/null | head -n 1");
            return text;
        }
        // Without CROSS_COMPILE, the Debian cross compiler for the arch (native gcc for x86), as
        // the probe table was made with (scripts/kconfig-probe-table.sh), keyed like it by SRCARCH.
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
    if (q >= text.size()) {
        // The reference as written, cut short: a hostile line would make the message as long.
        constexpr std::size_t shown = 40;
        auto ref = text.substr(start);
        fail(fmt::format("unterminated reference to '{}{}': missing ')'", ref.substr(0, shown),
                         ref.size() > shown ? "..." : ""));
    }
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
        // preprocess.c eval_clause(): strtoul() saturates, so a number too large for any
        // argument is no argument and is looked up as a variable, like any other name.
        auto n = parse_integer(clause, IntegerSyntax::decimal);
        if (n && *n > 0 && static_cast<std::size_t>(*n) <= args->size())
            return (*args)[static_cast<std::size_t>(*n - 1)];
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
    std::size_t assumptions_before = tree_.assumptions.size();
    std::vector<std::string> call_args;
    for (std::size_t k = 1; k < parts.size(); ++k)
        call_args.push_back(expand(parts[k], args));

    if (auto it = vars_.find(name); it != vars_.end()) {
        if (!it->second.recursive) return it->second.value;
        std::string body = it->second.value; // the map may change during expansion
        return expand(body, &call_args);
    }
    assumptions_before_args_ = assumptions_before;
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
        if (args[0] != "y") return std::string{};
        // Every $(error-if) of the trees read tests the toolchain: one that fires on an assumed
        // probe answer must not stop what `make` would finish.
        if (!in_.options.run_shell && tree_.assumptions.size() > assumptions_before_args_) {
            diags_.warning(here(),
                           fmt::format("{} (from an assumed toolchain probe; the evaluation "
                                       "goes on: --kconfig-shell asks the real toolchain)",
                                       args[1]));
            return std::string{};
        }
        fail(args[1]);
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

namespace {

// "set -- WORDS && echo $N": pure shell word splitting, exact.
std::optional<std::string> word_answer(const std::string& command) {
    if (command.rfind("set -- ", 0) == 0) {
        auto amp = command.find(" && echo $");
        if (amp != std::string::npos) {
            std::istringstream words(command.substr(7, amp - 7));
            std::vector<std::string> w;
            for (std::string s; words >> s;)
                w.push_back(s);
            auto n =
                parse_integer(std::string_view(command).substr(amp + 10), IntegerSyntax::decimal);
            return n && *n >= 1 && static_cast<std::size_t>(*n) <= w.size()
                       ? w[static_cast<std::size_t>(*n - 1)]
                       : std::string{};
        }
    }
    return std::nullopt;
}

// The version a toolchain script prints for Debian's gcc 12 (binutils 2.40) or, with LLVM=1,
// clang 14; "" for any other command.
std::string tool_version_answer(const std::string& command, bool llvm) {
    std::string result;
    auto contains = [&](const char* s) { return command.find(s) != std::string::npos; };
    if (contains("scripts/cc-version.sh")) {
        result = llvm ? "Clang 140006" : "GCC 120200";
    } else if (contains("scripts/gcc-version.sh")) { // 5.10
        result = llvm ? "0" : "120200";
    } else if (contains("scripts/clang-version.sh") || contains("scripts/lld-version.sh")) {
        result = llvm ? "140006" : "0";
    } else if (contains("scripts/as-version.sh")) {
        result = llvm ? "LLVM 140006" : "GNU 24000";
    } else if (contains("| $(srctree)/scripts/ld-version.sh") ||
               (contains("/scripts/ld-version.sh") && contains("--version |"))) {
        result = llvm ? "0" : "240000000"; // 5.10's awk script: 2.40 as one number
    } else if (contains("scripts/ld-version.sh")) {
        result = llvm ? "LLD 140006" : "BFD 24000";
    } else if (contains("scripts/rustc-version.sh") || contains("scripts/rustc-llvm-version.sh")) {
        result = "0";
    } else if (contains("scripts/pahole-version.sh")) {
        result = "0";
    }
    return result;
}

} // namespace

// The answer of the probe table (probe_table.inc) to `command`, with the tree's path
// and CROSS_COMPILE taken out of it.
std::optional<std::string> Parser::probe_table_answer(const std::string& command) {
    std::string norm = command;
    auto replace_all = [&](const std::string& from, const std::string& to) {
        if (from.empty()) return;
        for (std::size_t p = norm.find(from); p != std::string::npos;
             p = norm.find(from, p + to.size()))
            norm.replace(p, from.size(), to);
    };
    // The tree's path as $(srctree) expanded it: only where a word starts with it (the
    // tree may be ".", whose every other dot is part of the command).
    const std::string tree_prefix = in_.tree + "/";
    for (std::size_t p = norm.find(tree_prefix); p != std::string::npos;
         p = norm.find(tree_prefix, p + 1)) {
        if (p > 0 && std::string_view(" \t'\"=(").find(norm[p - 1]) == std::string_view::npos)
            continue;
        norm.replace(p, in_.tree.size(), "$(srctree)");
    }
    if (auto it = in_.options.env.find("CROSS_COMPILE"); it != in_.options.env.end())
        replace_all(it->second, "");
    // A row is keyed by what the probe asks; only commands whose answer changed between
    // the trees read carry a version: then the tree's own, else the newest older one.
    const ProbeAnswer* found = nullptr;
    auto version_of = [](const ProbeAnswer& a) {
        std::pair<int, int> v{0, 0};
        if (std::sscanf(a.version, "%d.%d", &v.first, &v.second) != 2) v = {0, 0};
        return v;
    };
    const std::pair<int, int> tree_version{tree_.version_major, tree_.version_minor};
    auto rank = [&](const ProbeAnswer& a) {
        if (*a.version == 0 || version_of(a) == tree_version) return 3;
        return version_of(a) < tree_version ? 2 : 1;
    };
    for (const auto& answer : probe_table) {
        if (in_.srcarch != answer.srcarch || norm != answer.command) continue;
        if (!found || rank(answer) > rank(*found) ||
            (rank(answer) == 2 && rank(*found) == 2 && version_of(answer) > version_of(*found)))
            found = &answer;
    }
    if (found) {
        const auto& answer = *found;
        if (norm.rfind("{ command -v ", 0) != 0) // the compiler exists: no news
            tree_.assumptions.push_back({command, answer.output, here()});
        return answer.output;
    }
    return std::nullopt;
}

// if-success: "{ CMD; } >/dev/null 2>&1 && echo "A" || echo "B"", the probe assumed.
std::optional<std::string> Parser::if_success_answer(const std::string& command) {
    static const std::string open = "{ ";
    static const std::string mid = "; } >/dev/null 2>&1 && echo \"";
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
            // Probes of plain text (test -z ...) are exact; only tool runs are assumptions.
            if (!evaluate_test(probe) && probe.rfind("command -v", 0) != 0)
                tree_.assumptions.push_back({probe, ok ? "succeeds" : "fails", here()});
            return ok ? yes : no;
        }
    }
    return std::nullopt;
}

std::string Parser::assume_shell(const std::string& command) {
    if (auto exact = evaluate_expr_command(command)) return *exact;
    if (auto answer = probe_table_answer(command)) return *answer;
    if (auto answer = if_success_answer(command)) return *answer;
    if (auto answer = word_answer(command)) return *answer;
    bool llvm = false;
    if (auto it = in_.options.env.find("LLVM"); it != in_.options.env.end())
        llvm = !it->second.empty() && it->second != "0";
    std::string result = tool_version_answer(command, llvm);
    tree_.assumptions.push_back({command, result, here()});
    if (std::getenv("CMALIGN_KCONFIG_TRACE"))
        std::fprintf(stderr, "assumed: %s => %s\n", command.c_str(), result.c_str());
    return result;
}

} // namespace cmalign::kconfig::model::parser
