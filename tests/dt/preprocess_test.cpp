// Unit tests of the built-in DTS preprocessor: directives, expansion, the source map and every
// located error. Expected outputs follow gcc's `cpp -x assembler-with-cpp` (checked by hand
// with gcc 12 while writing them).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <unistd.h>

#include "cmalign/internal/dt/preprocess.hpp"

namespace fs = std::filesystem;
using namespace cmalign;

namespace {

// A scratch directory with files written from strings.
struct Scratch {
    fs::path dir;
    Scratch() {
        static std::atomic<int> counter{0};
        dir = fs::temp_directory_path() /
              ("cmalign-pp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::create_directories(dir);
    }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    std::string write(const std::string& name, const std::string& text) const {
        const fs::path p = dir / name;
        fs::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
        return p.string();
    }
    std::string path(const std::string& name) const { return (dir / name).string(); }
};

// Tokens of a text, whitespace-insensitive (as the comparison with cpp does): strings, character
// literals, identifiers, numbers, and any other character alone.
std::vector<std::string> tokens_of(const std::string& text) {
    std::vector<std::string> out;
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        std::size_t j = i + 1;
        if (std::isspace(static_cast<unsigned char>(c))) {
            ++i;
            continue;
        }
        if (c == '"' || c == '\'') {
            while (j < text.size() && text[j] != c && text[j] != '\n')
                j += text[j] == '\\' ? 2 : 1;
            j = std::min(j + 1, text.size());
        } else if (word(c) || (c == '.' && i + 1 < text.size() &&
                               std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
            while (j < text.size() &&
                   (word(text[j]) ||
                    (text[j] == '.' && !std::isalpha(static_cast<unsigned char>(c)) && c != '_')))
                ++j;
        }
        out.push_back(text.substr(i, j - i));
        i = j;
    }
    return out;
}

std::string squeeze(const std::string& text) {
    std::string out;
    for (const auto& t : tokens_of(text)) {
        if (!out.empty()) out += ' ';
        out += t;
    }
    return out;
}

struct Run {
    std::optional<dt::Preprocessed> result;
    Diagnostics diags;
    std::string first_error() const {
        for (const auto& d : diags.items())
            if (d.severity == Severity::error) return format_gcc(d);
        return {};
    }
};

Run run_file(const std::string& path, const dt::PreprocessOptions& options = {}) {
    Run r;
    dt::FileCache cache;
    r.result = dt::preprocess(path, options, cache, r.diags);
    return r;
}

// Preprocesses `text` as <scratch>/t.dts and returns the squeezed output ("" on failure).
std::string pp(const std::string& text, const dt::PreprocessOptions& options = {}) {
    Scratch s;
    auto r = run_file(s.write("t.dts", text), options);
    if (!r.result) return "<failed: " + r.first_error() + ">";
    return squeeze(r.result->text);
}

// The error of preprocessing `text`, with the scratch directory replaced by "t.dts".
std::string error_of(const std::string& text, const dt::PreprocessOptions& options = {}) {
    Scratch s;
    const std::string path = s.write("t.dts", text);
    auto r = run_file(path, options);
    std::string e = r.first_error();
    for (std::size_t at; (at = e.find(s.dir.string() + "/")) != std::string::npos;)
        e.erase(at, s.dir.string().size() + 1);
    if (r.result && !e.empty()) return "<succeeded but reported: " + e + ">";
    return e;
}

} // namespace

TEST_CASE("object-like macros, #undef and redefinition") {
    CHECK(pp("#define A 1\n#define B A + A\nB\n#undef A\nB\n") == "1 + 1 A + A");
    CHECK(pp("#define E\n[E]\n") == "[ ]");
    // A macro naming itself is painted blue instead of looping.
    CHECK(pp("#define foo foo bar\n#define bar foo\nfoo\n") == "foo foo");
    // -D and the predefined macros of `cpp -undef -x assembler-with-cpp -D__DTS__`.
    dt::PreprocessOptions o;
    o.defines.emplace_back("X", "0x40");
    o.defines.emplace_back("Y", std::nullopt);
    CHECK(pp("X Y __DTS__ __ASSEMBLER__ __STDC__ __GNUC__ __linux__\n", o) ==
          "0x40 1 1 1 1 __GNUC__ __linux__");
}

TEST_CASE("function-like macros: nesting, calls spanning lines, not-a-call") {
    CHECK(pp("#define F(a, b) <a b>\nF(1, F(2, 3))\n") == "< 1 < 2 3 > >");
    CHECK(pp("#define F(a, b) (a)+(b)\nx = F(\n  1,\n  (2, 3)\n);\ny\n") ==
          "x = ( 1 ) + ( ( 2 , 3 ) ) ; y");
    CHECK(pp("#define F(x) [x]\nF F (1) F\n") == "F [ 1 ] F");
    CHECK(pp("#define F() z\nF() F( )\n") == "z z");
    // A function-like name produced by a macro takes its arguments from the file.
    CHECK(pp("#define F(x) <x>\n#define G F\nG(7)\n") == "< 7 >");
    // Arguments are expanded before substitution, with the enclosing macro disabled.
    CHECK(pp("#define f(x) x f\nf(1)(2)\n") == "1 f ( 2 )");
    CHECK(pp("#define SZ 0x100\n#define REG(b, s) <b s>\nREG(0x10, SZ)\n") == "< 0x10 0x100 >");
}

TEST_CASE("stringify, paste, and assembler-mode leniency") {
    CHECK(pp("#define S(x) #x\nS(\"a\\n\" 'b'  c   d)\n") == R"("\"a\\n\" 'b' c d")");
    CHECK(pp("#define P(a, b) a##b\nP(foo, bar) P(1, x) P(, y) P(z, )\n") == "foobar 1x y z");
    // Pasting into something that is not one token is no error in assembler-with-cpp mode.
    CHECK(pp("#define P(a, b) a##b\nP(+, -) P(foo, -)\n") == "+ - foo -");
    // '#' before a non-parameter stays.
    CHECK(pp("#define Q(x) # x #y\nQ(1)\n") == "\"1\" # y");
    CHECK(pp("#define LBL(n) lbl_##n: node_##n\nLBL(3)\n") == "lbl_3 : node_3");
    // A pasted name is rescanned.
    CHECK(pp("#define AB 42\n#define C(a, b) a##b\nC(A, B)\n") == "42");
}

TEST_CASE("variadic macros") {
    CHECK(pp("#define V(a, ...) f(a, ## __VA_ARGS__)\nV(1) V(1,2,3) V(1,)\n") ==
          "f ( 1 ) f ( 1 , 2 , 3 ) f ( 1 )");
    CHECK(pp("#define W(args...) g(args)\nW() W(1, 2)\n") == "g ( ) g ( 1 , 2 )");
    CHECK(pp("#define X(...) <__VA_ARGS__>\nX(1, (2, 3), 4)\n") == "< 1 , ( 2 , 3 ) , 4 >");
}

TEST_CASE("#if expressions") {
    auto eval = [](const std::string& expr) {
        return pp("#if " + expr + "\nyes\n#else\nno\n#endif\n");
    };
    CHECK(eval("1") == "yes");
    CHECK(eval("0") == "no");
    CHECK(eval("UNDEFINED") == "no");
    CHECK(eval("!UNDEFINED") == "yes");
    CHECK(eval("1 + 2 * 3 == 7") == "yes");
    CHECK(eval("(1 + 2) * 3 == 9") == "yes");
    CHECK(eval("10 / 3 == 3 && 10 % 3 == 1") == "yes");
    CHECK(eval("-7 / 2 == -3 && -7 % 2 == -1") == "yes");
    CHECK(eval("1 << 40 == 0x10000000000") == "yes");
    CHECK(eval("-16 >> 2 == -4") == "yes");
    CHECK(eval("(0x0f & 0x3c) == 0x0c && (0x0f | 0x30) == 0x3f && (0x0f ^ 0x05) == 0x0a") == "yes");
    CHECK(eval("~0 == -1") == "yes");
    CHECK(eval("-1 > 0") == "no");
    CHECK(eval("-1 > 0u") == "yes"); // unsigned wins
    CHECK(eval("0xffffffffffffffff == -1") == "yes");
    CHECK(eval("18446744073709551615 > 0") == "yes"); // too large for intmax_t: unsigned
    CHECK(eval("1 ? 2 : 0") == "yes");
    CHECK(eval("0 ? 1 : 0") == "no");
    CHECK(eval("0 ? 1 : 2 ? 3 : 0") == "yes");
    CHECK(eval("3 >= 3 && 3 <= 3 && 2 < 3 && 3 > 2 && 2 != 3") == "yes");
    CHECK(eval("0 || 0") == "no");
    CHECK(eval("0 && 1 / 0") == "no"); // not evaluated: no error
    CHECK(eval("1 || 1 / 0") == "yes");
    CHECK(eval("'A' == 65 && '\\n' == 10 && '\\377' < 0 && '\\x41' == 65") == "yes");
    CHECK(eval("0b101 == 5 && 010 == 8 && 0x10UL == 16 && 5ull == 5") == "yes");
    CHECK(eval("+3 == 3 && - -3 == 3") == "yes");
    CHECK(eval("(1, 0)") == "no");
}

TEST_CASE("conditional directives") {
    CHECK(pp("#define A\n#ifdef A\na\n#endif\n#ifndef A\nb\n#endif\n#ifdef "
             "B\nc\n#else\nd\n#endif\n") == "a d");
    CHECK(pp("#define V 2\n#if V == 1\none\n#elif V == 2\ntwo\n#elif V == "
             "2\nagain\n#else\nother\n#endif\n") == "two");
    CHECK(pp("#if defined(A) || defined B\nx\n#elif !defined A\ny\n#endif\n") == "y");
    CHECK(pp("#define D defined(Q)\n#define Q\n#if D\nq\n#endif\n") == "q");
    // Skipped blocks may hold anything, including unbalanced quotes and unknown directives.
    CHECK(pp("#if 0\ndon't \"care\n#foo bar\n#if 1/0\n#else\n#endif\n#elif 0\n#endif\nok\n") ==
          "ok");
    // Nested, with the outer one skipped: inner #else must not switch output on.
    CHECK(pp("#if 0\n#if 1\na\n#else\nb\n#endif\n#else\nc\n#endif\n") == "c");
    // A branch after a taken one is not evaluated.
    CHECK(pp("#if 1\na\n#elif 1/0\nb\n#endif\n") == "a");
}

TEST_CASE("assembler-with-cpp: # lines that are not directives") {
    CHECK(pp("#address-cells = <1>;\n  #size-cells = <2>;\n") ==
          "# address - cells = < 1 > ; # size - cells = < 2 > ;");
    // ... and they are ordinary text, so macros in them expand (as cpp does).
    CHECK(pp("#define cells CELLS\n#address-cells = <1>;\n") == "# address - CELLS = < 1 > ;");
    CHECK(pp("# 33 \"foo.h\"\n#\n#pragma anything\n#line 7\n#ident \"x\"\nend\n") ==
          "# 33 \"foo.h\" end");
}

TEST_CASE("comments, strings and line splicing") {
    Scratch s;
    const std::string text = "a /* one\ntwo */ b // three FOO\nc \"FOO /* not */ x\" 'F' FOO\n";
    dt::PreprocessOptions o;
    o.defines.emplace_back("FOO", "1");
    auto r = run_file(s.write("t.dts", text), o);
    REQUIRE(r.result);
    CHECK(squeeze(r.result->text) == "a b c \"FOO /* not */ x\" 'F' 1");
    // Lines stay aligned: the output has as many newlines as the source.
    CHECK(std::count(r.result->text.begin(), r.result->text.end(), '\n') == 3);
    CHECK(pp("#define LONG 1 + \\\n  2\nLONG\nab\\\ncd\n") == "1 + 2 abcd");
    CHECK(pp("/* a\n */ #define X 5\nX\n") == "5");
}

// Text that no macro, directive or comment touches is copied in runs (Engine::verbatim_run);
// each case below ends such a run in a way that the token-by-token loop must take over exactly.
TEST_CASE("verbatim runs end where tokens need the loop") {
    auto raw = [](const std::string& text) {
        Scratch s;
        auto r = run_file(s.write("t.dts", text));
        REQUIRE(r.result);
        return r.result->text;
    };
    // A directive after a comment at the start of a line is still a directive.
    CHECK(pp("a b\n  /* c */ #define X 1\nX\n") == "a b 1");
    CHECK(pp("a b\n\n  #define Y 2\nY c\n") == "a b 2 c");
    // The last token of a run still keeps a macro's expansion from pasting onto it.
    CHECK(raw("#define P +1\nx = a+P;\n").find("a+ +1;") != std::string::npos);
    CHECK(raw("#define Q -1\nx = a - -Q;\n").find("a - - -1;") != std::string::npos);
    // pp-numbers swallow what looks like an identifier; literal prefixes are not macros.
    CHECK(raw("#define E 5\nv = <1e+E 0x1E>;\n").find("v = <1e+E 0x1E>;") != std::string::npos);
    CHECK(raw("#define L 7\nx = L\"s\" L;\n").find("x = L\"s\" 7;") != std::string::npos);
    // '#' inside a line, '@' and a lone quote pass through as written.
    CHECK(raw("a # b ## c @d\n").find("a # b ## c @d") != std::string::npos);
    CHECK(raw("a 'b\n").find("a 'b") != std::string::npos);
    // A macro at the start of a line after a run, and one right after a string.
    CHECK(pp("#define M 2\na \"s\"\nM \"t\"M\n") == "a \"s\" 2 \"t\" 2");

    // The map: the white space from the end of a line to a comment is one piece that starts
    // right after the last token, as the token-by-token loop writes it.
    Scratch s;
    const std::string path = s.write("m.dts", "ranges;\n\n\t/* c */\nnext;\n");
    auto r = run_file(path);
    REQUIRE(r.result);
    const auto& out = *r.result;
    const std::size_t comment = out.text.find(' ');
    REQUIRE(comment != std::string::npos);
    bool found = false;
    for (std::size_t i = 0; i < out.segments.size(); ++i) {
        const auto& seg = out.segments[i];
        if (seg.out_begin <= comment && comment < out.segment_end(i)) {
            found = true;
            CHECK_FALSE(seg.verbatim);
            CHECK(seg.src_begin == 7); // the newline after "ranges;"
        }
    }
    CHECK(found);
    CHECK(out.locate(out.text.find("next")) == Location{path, 4, 1});

    // The same within a line: the blank before a comment belongs to the comment's piece.
    auto inline_comment = run_file(s.write("n.dts", "a /* c */ b;\n"));
    REQUIRE(inline_comment.result);
    const auto& segs = inline_comment.result->segments;
    REQUIRE(segs.size() >= 2);
    CHECK(inline_comment.result->segment_end(0) == 1); // "a"
    CHECK_FALSE(segs[1].verbatim);
    CHECK(segs[1].src_begin == 1);
}

TEST_CASE("includes: quoted, angled, -I, kernel tree, guards and #pragma once") {
    Scratch s;
    s.write("inc/dt-bindings/gpio.h",
            "#ifndef GPIO_H\n#define GPIO_H\n#define GPIO_ACTIVE_LOW 1\n#endif\n");
    s.write("board/soc.dtsi", "#include <dt-bindings/gpio.h>\n/ { soc; };\n");
    s.write("board/once.h", "#pragma once\nonce_text\n");
    const std::string main =
        s.write("board/b.dts", "#include <dt-bindings/gpio.h>\n#include \"soc.dtsi\"\n"
                               "#include \"once.h\"\n#include \"once.h\"\n"
                               "x = <GPIO_ACTIVE_LOW>;\n");
    dt::PreprocessOptions o;
    o.include_dirs.push_back(s.path("inc"));
    auto r = run_file(main, o);
    REQUIRE_MESSAGE(r.result, r.first_error());
    CHECK(squeeze(r.result->text) == "/ { soc ; } ; once_text x = < 1 > ;");
    REQUIRE(r.result->files.size() == 4);
    CHECK(r.result->files[0]->path == main);

    // --kernel-tree adds <tree>/scripts/dtc/include-prefixes.
    s.write("tree/scripts/dtc/include-prefixes/dt-bindings/x.h", "#define XV 9\n");
    const std::string k = s.write("k.dts", "#include <dt-bindings/x.h>\nXV\n");
    dt::PreprocessOptions ko;
    ko.kernel_tree = s.path("tree");
    auto kr = run_file(k, ko);
    REQUIRE(kr.result);
    CHECK(squeeze(kr.result->text) == "9");

    // Computed include.
    s.write("c/h.h", "computed\n");
    const std::string c = s.write("c/m.dts", "#define H \"h.h\"\n#include H\n");
    auto cr = run_file(c);
    REQUIRE(cr.result);
    CHECK(squeeze(cr.result->text) == "computed");
}

TEST_CASE("source map: locate and source_span through includes and macros") {
    Scratch s;
    const std::string inc = s.write("soc.dtsi", "// soc\nnode { reg = <0x1000>; };\n");
    const std::string main = s.write("b.dts", "#include \"soc.dtsi\"\n"
                                              "#define PHYS(x) ((x) - 0x40000000)\n"
                                              "#define SZ_4M 0x400000\n"
                                              "reg = <PHYS(0x40000000) 0x400000>;\n"
                                              "size = <SZ_4M>;\n");
    auto r = run_file(main);
    REQUIRE(r.result);
    const auto& out = *r.result;
    // Every segment's verbatim text equals the original bytes.
    for (std::size_t i = 0; i < out.segments.size(); ++i) {
        const auto& seg = out.segments[i];
        REQUIRE(seg.file != nullptr);
        // Segments cover the output in order: each runs to where the next begins.
        REQUIRE(seg.out_begin <= out.segment_end(i));
        const std::size_t size = out.segment_end(i) - seg.out_begin;
        if (seg.verbatim)
            CHECK(out.text.compare(seg.out_begin, size, seg.file->text, seg.src_begin, size) == 0);
    }
    CHECK(out.segments.front().out_begin == 0);

    // A token of the included file.
    const std::size_t reg_inc = out.text.find("0x1000");
    REQUIRE(reg_inc != std::string::npos);
    CHECK(out.locate(reg_inc) == Location{inc, 2, 15});
    auto span = out.source_span(reg_inc, reg_inc + 6);
    REQUIRE(span);
    CHECK(span->file == inc);
    CHECK(inc.size() > 0);
    CHECK(s.path("soc.dtsi") == inc);

    // The literal after a macro call stays verbatim and rewritable.
    const std::size_t after = out.text.find("0x400000>");
    REQUIRE(after != std::string::npos);
    CHECK(out.locate(after) == Location{main, 4, 25});
    span = out.source_span(after, after + 8);
    REQUIRE(span);
    CHECK(span->file == main);
    std::ifstream in(main);
    std::string main_text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(main_text.substr(span->begin, span->end - span->begin) == "0x400000");

    // The argument of the call passes through unchanged: it maps to where it was written.
    const std::size_t arg = out.text.find("(0x40000000)");
    REQUIRE(arg != std::string::npos);
    CHECK(out.locate(arg + 1) == Location{main, 4, 13});
    REQUIRE(out.source_span(arg + 1, arg + 11));
    // The macro body maps to the invocation site and is not rewritable.
    const std::size_t body = out.text.find("- 0x40000000");
    REQUIRE(body != std::string::npos);
    CHECK(out.locate(body + 2) == Location{main, 4, 8});
    CHECK_FALSE(out.source_span(body + 2, body + 12));
    // An object-like macro value: the invocation site.
    const std::size_t sz = out.text.find("0x400000", after + 8);
    REQUIRE(sz != std::string::npos);
    CHECK(out.locate(sz) == Location{main, 5, 9});
    CHECK_FALSE(out.source_span(sz, sz + 8));
    // A range crossing from verbatim text into an expansion is not rewritable.
    CHECK_FALSE(out.source_span(sz - 2, sz + 2));
}

TEST_CASE("source map: splices and identity") {
    Scratch s;
    const std::string main = s.write("b.dts", "a = <1 \\\n2>;\nb = <3>;\n");
    auto r = run_file(main);
    REQUIRE(r.result);
    const std::size_t three = r.result->text.find('3');
    REQUIRE(three != std::string::npos);
    CHECK(r.result->locate(three) == Location{main, 3, 6});
    auto span = r.result->source_span(three, three + 1);
    REQUIRE(span);
    CHECK(span->begin == std::string("a = <1 \\\n2>;\nb = <").size());

    auto file = dt::make_source("x.dts", "p = <1>;\nq;\n");
    auto id = dt::identity(file);
    CHECK(id.text == file->text);
    CHECK(id.locate(9) == Location{"x.dts", 2, 1});
    REQUIRE(id.source_span(5, 6));
    CHECK(id.source_span(5, 6)->begin == 5);
    CHECK(file->location(0) == Location{"x.dts", 1, 1});
}

TEST_CASE("errors are located") {
    CHECK(error_of("a\n#include \"missing.dtsi\"\n") ==
          "t.dts:2:10: error: missing.dtsi: No such file or directory");
    CHECK(error_of("#include <dt-bindings/none.h>\n") ==
          "t.dts:1:10: error: dt-bindings/none.h: No such file or directory");
    CHECK(error_of("#include\n") ==
          "t.dts:1:2: error: #include expects \"FILENAME\" or <FILENAME>");
    CHECK(error_of("ok\n  #error stop   /* c */ here\n") == "t.dts:2:4: error: #error stop here");
    CHECK(error_of("a\n  #if 1\nb\n") == "t.dts:2:4: error: unterminated #if");
    CHECK(error_of("#ifdef X\n#else\n#else\n#endif\n") == "t.dts:3:2: error: #else after #else");
    CHECK(error_of("#if 1\n#else\n#elif 1\n#endif\n") == "t.dts:3:2: error: #elif after #else");
    CHECK(error_of("x\n#endif\n") == "t.dts:2:2: error: #endif without #if");
    CHECK(error_of("#else\n") == "t.dts:1:2: error: #else without #if");
    CHECK(error_of("#elif 1\n") == "t.dts:1:2: error: #elif without #if");
    CHECK(error_of("x /* abc\n") == "t.dts:1:3: error: unterminated comment");
    CHECK(error_of("#if 0\n/* abc\n") == "t.dts:2:1: error: unterminated comment");
    CHECK(error_of("p = \"abc;\n") == "t.dts:1:5: error: missing terminating \" character");
    CHECK(error_of("#if 1/0\n#endif\n") == "t.dts:1:6: error: division by zero in #if");
    CHECK(error_of("#if 2 % (1 - 1)\n#endif\n") == "t.dts:1:7: error: division by zero in #if");
    CHECK(error_of("#if 1 +\n#endif\n") == "t.dts:1:8: error: operator '+' has no right operand");
    CHECK(error_of("#if\n#endif\n") == "t.dts:1:4: error: #if with no expression");
    CHECK(error_of("#if (1\n#endif\n") == "t.dts:1:5: error: missing ')' in expression");
    CHECK(error_of("#if 1 2\n#endif\n") ==
          "t.dts:1:7: error: missing binary operator before token \"2\"");
    CHECK(error_of("#if 1.5\n#endif\n") ==
          "t.dts:1:5: error: floating constant in preprocessor expression");
    CHECK(error_of("#if 12xyz\n#endif\n") ==
          "t.dts:1:5: error: invalid suffix \"xyz\" on integer constant");
    CHECK(error_of("#if \"s\"\n#endif\n") ==
          "t.dts:1:5: error: token \"\"s\"\" is not valid in preprocessor expressions");
    CHECK(error_of("#if defined\n#endif\n") ==
          "t.dts:1:5: error: operator \"defined\" requires an identifier");
    CHECK(error_of("#ifdef\n#endif\n") ==
          "t.dts:1:2: error: no macro name given in #ifdef directive");
    CHECK(error_of("#define 3 x\n") == "t.dts:1:9: error: macro names must be identifiers");
    CHECK(error_of("#define defined 1\n") ==
          "t.dts:1:9: error: \"defined\" cannot be used as a macro name");
    CHECK(error_of("#define G(x) x ##\n") ==
          "t.dts:1:16: error: '##' cannot appear at either end of a macro expansion");
    CHECK(error_of("#define G(x, x) x\n") == "t.dts:1:14: error: duplicate macro parameter \"x\"");
    CHECK(error_of("#define G(x\n") == "t.dts:1:11: error: missing ')' in macro parameter list");
    CHECK(error_of("#define F(a, b) a\nF(1)\n") ==
          "t.dts:2:1: error: macro \"F\" requires 2 arguments, but only 1 given");
    CHECK(error_of("#define F(a, b) a\n  F(1, 2, 3)\n") ==
          "t.dts:2:3: error: macro \"F\" passed 3 arguments, but takes just 2");
    CHECK(error_of("#define F() a\nF(1)\n") ==
          "t.dts:2:1: error: macro \"F\" passed 1 arguments, but takes just 0");
    CHECK(error_of("#define F(a) a\nx F(1,\n") ==
          "t.dts:2:3: error: unterminated argument list invoking macro \"F\"");
    CHECK(error_of("#define F(a) a\nF(1,\n#define X\n)\n") ==
          "t.dts:3:1: error: directives inside macro arguments are not supported (macro \"F\")");
}

TEST_CASE("include cycles and runaway macros are errors, not hangs") {
    Scratch s;
    const std::string a = s.write("a.dtsi", "#include \"b.dtsi\"\n");
    const std::string b = s.write("b.dtsi", "#include \"a.dtsi\"\n");
    const std::string main = s.write("m.dts", "#include \"a.dtsi\"\n");
    auto r = run_file(main);
    CHECK_FALSE(r.result);
    const std::string e = r.first_error();
    // The cycle once (not 200 levels of it), at the #include that closes it.
    CHECK(e == b + ":1:10: error: include cycle: " + a + " \u2192 " + b + " \u2192 " + a +
                   " (#include nested depth 201 exceeds maximum of 200)");
    CHECK(r.diags.count(Severity::error) == 1);

    // A guarded file including itself is fine.
    const std::string self =
        s.write("self.dts", "#ifndef SELF\n#define SELF\n#include \"self.dts\"\nonce\n#endif\n");
    auto sr = run_file(self);
    REQUIRE(sr.result);
    CHECK(squeeze(sr.result->text) == "once");

    // Exponential expansion hits the output cap.
    std::string bomb;
    for (int i = 0; i < 40; ++i)
        bomb += "#define M" + std::to_string(i) + " M" + std::to_string(i + 1) + " M" +
                std::to_string(i + 1) + "\n";
    bomb += "M0\n";
    dt::PreprocessOptions o;
    o.limits.expanded_bytes = 1 << 20;
    const std::string err = error_of(bomb, o);
    CHECK(err.find("t.dts:41:1: error: preprocessed output exceeds 1048576 bytes") == 0);

    // Exponential argument growth is capped too.
    std::string args = "#define D(x) x x x x\n";
    std::string call = "1";
    for (int i = 0; i < 30; ++i)
        call = "D(" + call + ")";
    CHECK(error_of(args + call + "\n", o).find("error:") != std::string::npos);
}

TEST_CASE("hostile input never crashes or hangs") {
    std::mt19937 rng(12345);
    const std::string alphabet =
        "#ifdefineelsendundef()\"'\\/*\n ,.<>!&|^~?:+-0x1aA_##__VA_ARGS__...";
    for (int round = 0; round < 300; ++round) {
        std::string text;
        const int n = static_cast<int>(rng() % 400);
        for (int i = 0; i < n; ++i) {
            if (rng() % 4 == 0)
                text += static_cast<char>(rng() % 256);
            else
                text += alphabet[rng() % alphabet.size()];
        }
        Scratch s;
        Diagnostics diags;
        dt::FileCache cache;
        dt::PreprocessOptions o;
        o.limits.expanded_bytes = 1 << 20;
        auto r = dt::preprocess(s.write("f.dts", text), o, cache, diags);
        if (!r) CHECK(diags.has_errors());
        if (r) {
            // The map stays consistent whatever the input.
            std::size_t at = 0;
            for (std::size_t i = 0; i < r->segments.size(); ++i) {
                const std::size_t begin = r->segments[i].out_begin; // (a bit-field)
                CHECK(begin == at);
                CHECK(begin <= r->segment_end(i));
                at = r->segment_end(i);
            }
            CHECK(at == r->text.size());
        }
    }
    // Deep nesting of conditionals and parentheses.
    std::string deep;
    for (int i = 0; i < 5000; ++i)
        deep += "#if 1\n";
    deep += "in\n";
    for (int i = 0; i < 5000; ++i)
        deep += "#endif\n";
    CHECK(pp(deep) == "in");
    CHECK(error_of("#if " + std::string(100000, '(') + "1\n#endif\n").find("nested too deeply") !=
          std::string::npos);
    CHECK(error_of("#if " + std::string(100000, '~') + "1\n#endif\n").find("nested too deeply") !=
          std::string::npos);
    std::string nested_calls = "#define F(x) x\n";
    for (int i = 0; i < 2000; ++i)
        nested_calls += "F(";
    nested_calls += "1" + std::string(2000, ')') + "\n";
    CHECK(error_of(nested_calls).find("nested too deeply") != std::string::npos);
    // A 10 MB line.
    std::string big(10u << 20, 'x');
    big[5000] = ' ';
    Scratch s;
    auto r = run_file(s.write("big.dts", "#define x y\n" + big + "\nx\n"));
    REQUIRE(r.result);
    CHECK(r.result->text.size() == big.size() + 4);
    CHECK(r.result->text.compare(1, 5000, big, 0, 5000) == 0);
}

TEST_CASE("a FileCache shared by threads gives the same result as a private one") {
    Scratch s;
    s.write("h.h", "#define V 3\n");
    std::vector<std::string> mains;
    for (int i = 0; i < 8; ++i)
        mains.push_back(s.write("m" + std::to_string(i) + ".dts",
                                "#include \"h.h\"\nv" + std::to_string(i) + " = <V>;\n"));
    dt::FileCache shared;
    std::vector<std::string> outs(mains.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < mains.size(); ++i)
        threads.emplace_back([&, i] {
            Diagnostics d;
            auto r = dt::preprocess(mains[i], {}, shared, d);
            if (r) outs[i] = squeeze(r->text);
        });
    for (auto& t : threads)
        t.join();
    for (std::size_t i = 0; i < mains.size(); ++i)
        CHECK(outs[i] == "v" + std::to_string(i) + " = < 3 > ;");
}

namespace {

// Each board, twice over, through `shared` and through a FileCache of its own: the same text,
// files and, for every byte of the text, the same place and verbatim flag in the source map (a
// replayed output may join two pieces the fresh run wrote apart: the same map, cut differently).
void check_reuse_matches_fresh(const std::vector<std::string>& boards,
                               const dt::PreprocessOptions& o, dt::FileCache& shared) {
    auto verbatim_at = [](const dt::Preprocessed& p, std::size_t offset) {
        auto it = std::upper_bound(p.segments.begin(), p.segments.end(), offset,
                                   [](std::size_t v, const auto& s) { return v < s.out_begin; });
        return it != p.segments.begin() && std::prev(it)->verbatim != 0;
    };
    for (int round = 0; round < 2; ++round) {
        for (const auto& board : boards) {
            CAPTURE(board);
            Diagnostics d1, d2;
            dt::FileCache fresh;
            auto expected = dt::preprocess(board, o, fresh, d1);
            auto got = dt::preprocess(board, o, shared, d2);
            REQUIRE(expected);
            REQUIRE(got);
            REQUIRE(got->text == expected->text);
            std::size_t same = 0;
            for (std::size_t k = 0; k < got->text.size(); ++k)
                same += got->locate(k) == expected->locate(k) &&
                                verbatim_at(*got, k) == verbatim_at(*expected, k)
                            ? 1
                            : 0;
            CHECK(same == got->text.size());
            REQUIRE(got->files.size() == expected->files.size());
            for (std::size_t i = 0; i < got->files.size(); ++i)
                CHECK(got->files[i]->path == expected->files[i]->path);
        }
    }
}

} // namespace

TEST_CASE("included files reused across inputs give the same output as a fresh run") {
    Scratch s;
    s.write("inc/dt-bindings/g.h",
            "#ifndef G_H\n#define G_H\n#define ACTIVE_LOW 1\n#define PIN(n) (n * 2)\n#endif\n");
    s.write("soc.dtsi", "#include <dt-bindings/g.h>\n"
                        "#ifdef FAST\nspeed = <FAST>;\n#else\nspeed = <0>;\n#endif\n"
                        "pin = <PIN(3) ACTIVE_LOW>; /* c */ size = <SIZE>;\n"
                        "#define FROM_SOC 77\n");
    s.write("counter.dtsi", "c = <__COUNTER__>;\n");
    std::vector<std::string> boards = {
        s.write("a.dts", "#define FAST 100\n#include \"soc.dtsi\"\nx = <FROM_SOC>;\n"),
        s.write("b.dts", "#include \"soc.dtsi\"\nx = <FROM_SOC ACTIVE_LOW>;\n"),
        s.write("c.dts",
                "#include <dt-bindings/g.h>\n#define SIZE 0x1000\n#include \"soc.dtsi\"\n"),
        s.write("d.dts", "#define ACTIVE_LOW 0\n#define G_H\n#include \"soc.dtsi\"\n"),
        s.write("e.dts", "#define FAST 100\n#include \"soc.dtsi\"\nx = <FROM_SOC>;\n"),
        s.write("f.dts", "a = <__COUNTER__ __COUNTER__>;\n#include \"counter.dtsi\"\n"),
        s.write("g.dts", "#include \"counter.dtsi\"\n"),
        s.write("h.dts", "#define SIZE 4\n#include \"soc.dtsi\"\n"),
    };
    dt::PreprocessOptions o;
    o.include_dirs.push_back(s.path("inc"));
    dt::FileCache shared;
    check_reuse_matches_fresh(boards, o, shared);
    // Spot checks of what the reuse must get right.
    Diagnostics d;
    auto a = dt::preprocess(boards[0], o, shared, d);
    auto b = dt::preprocess(boards[1], o, shared, d);
    auto h = dt::preprocess(boards[7], o, shared, d);
    auto f = dt::preprocess(boards[5], o, shared, d);
    REQUIRE((a && b && h && f));
    CHECK(squeeze(a->text) ==
          "speed = < 100 > ; pin = < ( 3 * 2 ) 1 > ; size = < SIZE > ; x = < 77 > ;");
    CHECK(squeeze(b->text) ==
          "speed = < 0 > ; pin = < ( 3 * 2 ) 1 > ; size = < SIZE > ; x = < 77 1 > ;");
    CHECK(squeeze(h->text) == "speed = < 0 > ; pin = < ( 3 * 2 ) 1 > ; size = < 4 > ;");
    CHECK(squeeze(f->text) == "a = < 0 1 > ; c = < 2 > ;");
    const std::size_t pin = b->text.find("(3");
    REQUIRE(pin != std::string::npos);
    CHECK(b->locate(pin) == Location{s.path("soc.dtsi"), 7, 8});
}

TEST_CASE("names looked up again inside included files still count for every memo") {
    // Names looked up before, between and after nested includes, #define and #undef: each is a
    // dependency of every file that looked it up first. A memo that missed one would be
    // replayed for a board that defines it (M, looked up by outer.dtsi before mid.dtsi). And a
    // memo names every file it read, also one its recording board had read before (b6 reads
    // n.h through mid.dtsi, then records outer.dtsi; b7 replays that memo and must list n.h).
    Scratch s;
    s.write("inc/n.h", "#ifndef N_H\n#define N_H\n#define INNER_ONLY 3\n#endif\n");
    s.write("mid.dtsi", "p = <K K L M>;\n#include <n.h>\nq = <K L>;\n#define K 9\nr = <K>;\n"
                        "#undef K\ns = <K L>;\n");
    s.write("outer.dtsi", "t = <M M>;\n#include \"mid.dtsi\"\nu = <M K L INNER_ONLY>;\n");
    std::vector<std::string> boards = {
        s.write("b1.dts", "#include \"outer.dtsi\"\n"),
        s.write("b2.dts", "#define M 3\n#include \"mid.dtsi\"\n"),
        s.write("b3.dts", "#define K 1\n#include \"outer.dtsi\"\n"),
        s.write("b4.dts", "#define L 2\n#include \"outer.dtsi\"\n"),
        s.write("b5.dts", "#define M 3\n#include \"outer.dtsi\"\n"),
        s.write("b6.dts", "#include \"mid.dtsi\"\n#include \"outer.dtsi\"\n"),
        s.write("b7.dts", "#define N_H\n#include \"outer.dtsi\"\n"),
        s.write("b8.dts", "#include \"outer.dtsi\"\n#define M 4\n#include \"mid.dtsi\"\n"),
    };
    dt::PreprocessOptions o;
    o.include_dirs.push_back(s.path("inc"));
    dt::FileCache shared;
    check_reuse_matches_fresh(boards, o, shared);
    Diagnostics d;
    auto b2 = dt::preprocess(boards[1], o, shared, d);
    REQUIRE(b2);
    CHECK(squeeze(b2->text) == "p = < K K L 3 > ; q = < K L > ; r = < 9 > ; s = < K L > ;");
}

TEST_CASE("many threads reusing the same included files agree with fresh runs") {
    Scratch s;
    s.write("inc/a.h", "#ifndef A_H\n#define A_H\n#define A 1\n#include \"b.h\"\n#endif\n");
    s.write("inc/b.h", "#ifndef B_H\n#define B_H\n#define B(x) (x + A)\n#endif\n");
    s.write("soc.dtsi", "#include <a.h>\nn { v = <B(2) MODE>; };\n#ifdef EXTRA\nextra;\n#endif\n");
    std::vector<std::string> boards;
    for (int i = 0; i < 24; ++i) {
        std::string text;
        if (i % 2) text += "#define MODE " + std::to_string(i % 4) + "\n";
        if (i % 3 == 0) text += "#define EXTRA\n";
        if (i % 5 == 0) text += "#include <b.h>\n";
        text += "#include \"soc.dtsi\"\nb" + std::to_string(i) + ";\n";
        boards.push_back(s.write("b" + std::to_string(i) + ".dts", text));
    }
    dt::PreprocessOptions o;
    o.include_dirs.push_back(s.path("inc"));
    std::vector<std::string> expected;
    for (const auto& b : boards) {
        dt::FileCache fresh;
        Diagnostics d;
        auto r = dt::preprocess(b, o, fresh, d);
        REQUIRE(r);
        expected.push_back(r->text);
    }
    dt::FileCache shared;
    std::vector<std::vector<std::string>> got(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int round = 0; round < 3; ++round)
                for (std::size_t i = 0; i < boards.size(); ++i) {
                    const std::size_t k = (i * 7 + static_cast<std::size_t>(t) * 5) % boards.size();
                    Diagnostics d;
                    auto r = dt::preprocess(boards[k], o, shared, d);
                    got[static_cast<std::size_t>(t)].push_back(r ? std::to_string(k) + ":" + r->text
                                                                 : "failed");
                }
        });
    for (auto& th : threads)
        th.join();
    for (const auto& list : got) {
        REQUIRE(list.size() == boards.size() * 3);
        for (const auto& entry : list) {
            const std::size_t colon = entry.find(':');
            REQUIRE(colon != std::string::npos);
            CHECK(entry.substr(colon + 1) == expected[std::stoul(entry.substr(0, colon))]);
        }
    }
}
