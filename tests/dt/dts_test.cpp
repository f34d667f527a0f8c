// DTS parser and resolver: every language feature and every error, with exact locations.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cmalign/internal/dt/dts.hpp"

using namespace cmalign;
using namespace cmalign::dt;

namespace {

struct Loaded {
    std::unique_ptr<Preprocessed> text;
    std::optional<syntax::File> file;
    std::optional<Tree> tree;
    Diagnostics diags;
    FileCache cache;

    std::string first_error() const {
        for (const auto& d : diags.items())
            if (d.severity == Severity::error) return format_gcc(d);
        return {};
    }
};

std::unique_ptr<Loaded> load(const std::string& source, const std::string& name = "t.dts",
                             ParseOptions options = {}) {
    auto out = std::make_unique<Loaded>();
    out->text = std::make_unique<Preprocessed>(identity(make_source(name, source)));
    out->file = parse(*out->text, options, out->cache, out->diags);
    if (out->file) out->tree = resolve(*out->file, out->diags);
    return out;
}

std::string hex(const std::vector<std::uint8_t>& bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (auto b : bytes) {
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}

std::string value_of(const Tree& tree, const std::string& path, const std::string& prop) {
    const Node* n = tree.find(path);
    if (!n) return "<no node " + path + ">";
    const Property* p = n->find_property(prop);
    if (!p) return "<no property " + prop + ">";
    return hex(p->value);
}

} // namespace

TEST_CASE("dts: a text span holds every offset the input limits allow") {
    // TextSpan keeps `begin` in 40 bits: no text (a file, or one input's preprocessed output)
    // may be allowed to grow past that, whatever --limit raises.
    for (const auto& limit : limit_table()) {
        if (limit.name != "file-bytes" && limit.name != "expanded-bytes") continue;
        CAPTURE(limit.name);
        CHECK(limit.ceiling < (std::uint64_t{1} << 40));
    }
    TextSpan span{kMaxTexts - 1, (std::uint64_t{1} << 34) + 5, (std::uint64_t{1} << 34) + 9};
    CHECK(std::uint64_t{span.text} == kMaxTexts - 1); // (bit-fields do not bind to references)
    CHECK(std::uint64_t{span.begin} == (std::uint64_t{1} << 34) + 5);
    CHECK(span.end - span.begin == 4);
}

TEST_CASE("dts: cells, strings, bytes and mixed values") {
    auto l = load(R"(/dts-v1/;
/ {
    a = <1 0x10 017 0xffffffff>;
    b = "hi", "there";
    c = [00 11 2233];
    d = "a", <1>, [ff];
    e;
    f = /bits/ 8 <1 2 0xff>, /bits/ 16 <0x1234>, /bits/ 64 <0x1122334455667788>;
    g = <'a' '\n' '\x12' '\012' '\''>;
    h = "tab\there\"q\\" ;
    i = <4096U 10L 10UL 10ULL 10LL>;
};
)");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    const Tree& t = *l->tree;
    CHECK(value_of(t, "/", "a") == "00000001000000100000000fffffffff");
    CHECK(value_of(t, "/", "b") == "6869007468657265"
                                   "00");
    CHECK(value_of(t, "/", "c") == "00112233");
    CHECK(value_of(t, "/", "d") == "6100"
                                   "00000001"
                                   "ff");
    CHECK(value_of(t, "/", "e") == "");
    CHECK(value_of(t, "/", "f") == "0102ff"
                                   "1234"
                                   "1122334455667788");
    CHECK(value_of(t, "/", "g") == "00000061"
                                   "0000000a"
                                   "00000012"
                                   "0000000a"
                                   "00000027");
    CHECK(value_of(t, "/", "h") == "746162096865726522715c00");
    CHECK(value_of(t, "/", "i") == "00001000"
                                   "0000000a"
                                   "0000000a"
                                   "0000000a"
                                   "0000000a");
}

TEST_CASE("dts: string values with and without escapes keep their bytes") {
    // Strings without a backslash are kept as views into the text, the others decoded: both
    // must give dtc's bytes.
    auto l = load(R"(/dts-v1/;
/ {
    plain = "qcom,sdm845-gcc-with-a-long-name";
    empty = "";
    escaped = "a\tb\x41\101\"\\";
    list = "one", "t\x77o", "", "three";
};
)");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    const Tree& t = *l->tree;
    CHECK(value_of(t, "/", "plain") == "71636f6d2c7364"
                                       "6d3834352d6763"
                                       "632d776974682d"
                                       "612d6c6f6e672d"
                                       "6e616d6500");
    CHECK(value_of(t, "/", "empty") == "00");
    CHECK(value_of(t, "/", "escaped") == "6109624141225c00");
    CHECK(value_of(t, "/", "list") == "6f6e650074776f00007468726565"
                                      "00");
}

TEST_CASE("dts: integer literals at the lengths where reading them changes") {
    // Up to 16 hex and 19 decimal digits are read in one pass; octal and longer ones otherwise.
    auto l = load(R"(/dts-v1/;
/ {
    a = /bits/ 64 <0xffffffffffffffff 0x0000000000000000001 9999999999999999999>;
    b = /bits/ 64 <18446744073709551615 00000000000000000000000000010 0777>;
    c = <0 0U 10UL 0x10ULL 7LL 0X1f>;
};
)");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    const Tree& t = *l->tree;
    CHECK(value_of(t, "/", "a") == "ffffffffffffffff"
                                   "0000000000000001"
                                   "8ac7230489e7ffff");
    CHECK(value_of(t, "/", "b") == "ffffffffffffffff"
                                   "0000000000000008"
                                   "00000000000001ff");
    CHECK(value_of(t, "/", "c") == "00000000"
                                   "00000000"
                                   "0000000a"
                                   "00000010"
                                   "00000007"
                                   "0000001f");
}

TEST_CASE("dts: C integer expressions with dtc's operators") {
    auto l = load(R"(/dts-v1/;
/ {
    a = <(1 + 2 * 3) (10 / 3) (10 % 3) (1 << 4) (256 >> 4) (-1) (~0) (!0) (!5)>;
    b = <(1 ? 2 : 3) (0 ? 2 : 3) (1 || 0) (0 && 1) (6 | 1) (6 ^ 3) (6 & 3)>;
    c = <(1 == 1) (1 != 1) (1 < 2) (2 > 1) (2 <= 2) (1 >= 2) ((1 + 2) * (3 + 4))>;
    d = /bits/ 64 <(0x100000000 * 4) (1 << 64) (-5 / 2)>;
    e = <(2 - 3 - 4) (64 / 4 / 2) (1 < 2 == 1)>;
    f = <(1 | 2 & 3) (2 * 3 + 4 * 5) (1 << 2 << 3) (10 / 3 % 2) (3 > 2 > 1) (0 || 0 && 1)>;
    g = <(7 ^ 2 | 8) (0x10 >> 2 + 1) (1 + 2 << 1) (1 | 0 ? 5 : 6) (2 & 3 == 3)>;
};
)");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    const Tree& t = *l->tree;
    CHECK(value_of(t, "/", "a") == "00000007"
                                   "00000003"
                                   "00000001"
                                   "00000010"
                                   "00000010"
                                   "ffffffff"
                                   "ffffffff"
                                   "00000001"
                                   "00000000");
    CHECK(value_of(t, "/", "b") == "00000002"
                                   "00000003"
                                   "00000001"
                                   "00000000"
                                   "00000007"
                                   "00000005"
                                   "00000002");
    CHECK(value_of(t, "/", "c") == "00000001"
                                   "00000000"
                                   "00000001"
                                   "00000001"
                                   "00000001"
                                   "00000000"
                                   "00000015");
    // unsigned 64-bit arithmetic as in dtc: -5 / 2 is (2^64 - 5) / 2
    CHECK(value_of(t, "/", "d") == "0000000400000000"
                                   "0000000000000000"
                                   "7ffffffffffffffd");
    CHECK(value_of(t, "/", "e") == "fffffffb"
                                   "00000008"
                                   "00000001");
    // Mixed levels, as dtc computes them (dtc -O dtb | fdtget -t x): & binds tighter than |,
    // * than +, + than <<, == than &; each level left to right.
    CHECK(value_of(t, "/", "f") == "00000003"
                                   "0000001a"
                                   "00000020"
                                   "00000001"
                                   "00000000"
                                   "00000000");
    CHECK(value_of(t, "/", "g") == "0000000d"
                                   "00000002"
                                   "00000006"
                                   "00000005"
                                   "00000000");
}

TEST_CASE("dts: merges, labels, references and phandles as dtc builds them") {
    auto l = load(R"(/dts-v1/;
/ {
    soc {
        uart0: serial@1000 { reg = <0x1000 0x100>; status = "disabled"; };
        intc: interrupt-controller { };
    };
    aliases { serial0 = &uart0; other = &{/soc/interrupt-controller}; };
    consumer { interrupt-parent = <&intc>; uart = <&uart0 &{/soc/serial@1000} 7>; };
};
&uart0 { status = "okay"; extra; };
&{/soc} { newchild { }; };
/ { soc { serial@1000 { reg = <0x2000 0x100>; }; }; };
)");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    const Tree& t = *l->tree;
    const Node* uart = t.find("/soc/serial@1000");
    REQUIRE(uart);
    CHECK(uart->labels == std::vector<std::string>{"uart0"});
    // merged properties keep their first position, new ones are appended, phandle last
    REQUIRE(uart->properties.size() == 4);
    CHECK(uart->properties[0].name == "reg");
    CHECK(hex(uart->properties[0].value) == "0000200000000100");
    CHECK(uart->properties[1].name == "status");
    CHECK(hex(uart->properties[1].value) == "6f6b617900");
    CHECK(uart->properties[2].name == "extra");
    CHECK(uart->properties[3].name == "phandle");
    CHECK(t.find("/soc/newchild"));
    // phandles are assigned in reference order, depth first: intc first, then uart0
    CHECK(value_of(t, "/soc/interrupt-controller", "phandle") == "00000001");
    CHECK(value_of(t, "/soc/serial@1000", "phandle") == "00000002");
    CHECK(value_of(t, "/consumer", "interrupt-parent") == "00000001");
    CHECK(value_of(t, "/consumer", "uart") == "00000002"
                                              "00000002"
                                              "00000007");
    // path references outside cells become path strings
    std::string path = "/soc/serial@1000";
    std::vector<std::uint8_t> bytes(path.begin(), path.end());
    bytes.push_back(0);
    CHECK(value_of(t, "/aliases", "serial0") == hex(bytes));
    CHECK(t.find("/aliases")->find_property("serial0")->has_refs);
    CHECK(t.find("/consumer")->find_property("uart")->has_refs);
    CHECK_FALSE(uart->properties[0].has_refs);
    // the referenced node gets no phandle unless referenced from cells
    CHECK(t.find("/soc")->find_property("phandle") == nullptr);
}

TEST_CASE("dts: a reference finds its label's node wherever the label is written") {
    // The parser hashes a reference's label once (syntax::Cell::label_hash): of "s" in
    // &{s/c}, not of the whole target; a label moved by a later body is found where it now is,
    // and one reference after another to the same label finds the same node.
    auto l = load(R"(/dts-v1/;
/ {
    s: soc { c { }; };
    old: a { };
    b { };
    user { p = <&{s/c} &m &m &{s/c}>; q = <&s>; };
    t: plain { };
};
/delete-node/ &old;
/ { b { m: inner { }; }; };
&t { r = <&m>; };
/ { plain { path = &s; }; };
)");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    const Tree& t = *l->tree;
    CHECK(value_of(t, "/soc/c", "phandle") == "00000001");
    CHECK(value_of(t, "/b/inner", "phandle") == "00000002");
    CHECK(value_of(t, "/soc", "phandle") == "00000003");
    CHECK(value_of(t, "/user", "p") == "00000001"
                                       "00000002"
                                       "00000002"
                                       "00000001");
    CHECK(value_of(t, "/user", "q") == "00000003");
    // references merged into a node that had none are resolved too
    CHECK(value_of(t, "/plain", "r") == "00000002");
    CHECK(value_of(t, "/plain", "path") == "2f736f6300"); // "/soc"
    // a deleted node's label is undefined, however often it was found before
    auto gone = load("/dts-v1/;\n/ { x: a { }; b { p = <&x>; }; };\n/delete-node/ &x;\n"
                     "/ { c { q = <&x>; }; };\n");
    CHECK_FALSE(gone->tree);
    CHECK(gone->first_error() == "t.dts:2:24: error: undefined label 'x'");
}

TEST_CASE("dts: deletions and /omit-if-no-ref/") {
    auto l = load(R"(/dts-v1/;
/ {
    a: node-a { p = <1>; q = <2>; child { }; };
    b: node-b { };
    /omit-if-no-ref/ c: node-c { };
    d: node-d { };
    e: node-e { };
    user { x = <&d>; };
};
&a { /delete-property/ p; /delete-node/ child; };
/delete-node/ &b;
/omit-if-no-ref/ &d;
/omit-if-no-ref/ &e;
/ { node-a { p = <3>; }; };
)");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    const Tree& t = *l->tree;
    const Node* a = t.find("/node-a");
    REQUIRE(a);
    // a deleted property brought back keeps its old position (dtc's merge_nodes)
    REQUIRE(a->properties.size() == 2);
    CHECK(a->properties[0].name == "p");
    CHECK(hex(a->properties[0].value) == "00000003");
    CHECK(a->properties[1].name == "q");
    CHECK(a->children.empty());
    CHECK_FALSE(t.find("/node-b"));
    CHECK_FALSE(t.find("/node-c")); // never referenced
    CHECK(t.find("/node-d"));       // referenced from /user
    CHECK_FALSE(t.find("/node-e"));
}

TEST_CASE("dts: /delete-node/ then redefinition, labels on deleted nodes are gone") {
    auto l = load(R"(/dts-v1/;
/ { x: n { a; }; };
/ { /delete-node/ n; };
/ { n { b; }; };
)");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    const Node* n = l->tree->find("/n");
    REQUIRE(n);
    REQUIRE(n->properties.size() == 1);
    CHECK(n->properties[0].name == "b");
    CHECK(n->labels.empty());
    auto bad = load("/dts-v1/;\n/ { x: n { }; };\n/delete-node/ &x;\n&x { };\n");
    CHECK_FALSE(bad->tree);
    CHECK(bad->first_error() == "t.dts:4:1: error: undefined label 'x'");
}

TEST_CASE("dts: labels inside values, memreserve, plugin header") {
    auto l = load(R"(/dts-v1/;
/memreserve/ 0x10000000 0x4000;
m2: /memreserve/ 0x20000000 (0x1000 * 2);
/ {
    reg = <lbl1: 1 lbl2: 2 lbl3:>;
    b = [lb: 00 11 le:];
    s = s1: "a", s2: "b" s3:;
    pl: p2: labelled;
};
)");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    const Tree& t = *l->tree;
    REQUIRE(t.memreserve.size() == 2);
    CHECK(t.memreserve[1].address == 0x20000000);
    CHECK(t.memreserve[1].size == 0x2000);
    CHECK(t.memreserve[1].where.line == 3);
    CHECK(value_of(t, "/", "reg") == "0000000100000002");
    CHECK(value_of(t, "/", "b") == "0011");
    CHECK(value_of(t, "/", "s") == "61006200");
    CHECK(t.root.find_property("labelled")->labels.size() == 2);
    CHECK(l->file->has_v1);
    CHECK_FALSE(l->file->plugin);
}

TEST_CASE("dts: value chunks carry locations, source text and literal spans") {
    auto l = load("/dts-v1/;\n/ {\n\tr {\n\t\treg = <0x0 0x400000>, <(1 << 22) 'a'>;\n\t};\n};\n");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    const Property* reg = l->tree->find("/r")->find_property("reg");
    REQUIRE(reg);
    CHECK(reg->where.line == 4);
    CHECK(reg->where.column == 3);
    REQUIRE(reg->chunks.size() == 4);
    CHECK(reg->chunks[1].offset == 4);
    CHECK(reg->chunks[1].size == 4);
    CHECK(reg->chunks[1].text == "0x400000");
    CHECK(reg->chunks[1].where == Location{"t.dts", 4, 14});
    REQUIRE(reg->chunks[1].literal);
    const std::string& src = l->text->text;
    CHECK(src.substr(reg->chunks[1].literal->begin,
                     reg->chunks[1].literal->end - reg->chunks[1].literal->begin) == "0x400000");
    CHECK(reg->chunks[2].text == "(1 << 22)");
    CHECK_FALSE(reg->chunks[2].literal);
    CHECK_FALSE(reg->chunks[3].literal);
    CHECK(reg->chunk_at(9) == &reg->chunks[2]);
    // the node's location is its name where first defined
    CHECK(l->tree->find("/r")->where == Location{"t.dts", 3, 2});
}

TEST_CASE("dts: cpp line markers map locations back to the original files") {
    auto l = load("# 1 \"board.dts\"\n# 1 \"<built-in>\" 1\n# 1 \"board.dts\"\n/dts-v1/;\n"
                  "# 1 \"soc.dtsi\" 1\n/ {\n  a = <1>;\n};\n# 5 \"board.dts\" 2\n/ {\n  b = <2>;\n"
                  "  c = <&nolabel>;\n};\n",
                  "board.i");
    CHECK_FALSE(l->tree);
    CHECK(l->first_error() == "board.dts:7:8: error: undefined label 'nolabel'");
    auto ok =
        load("# 1 \"board.dts\"\n/dts-v1/;\n# 1 \"soc.dtsi\" 1\n/ {\n  a = <1>;\n};\n", "board.i");
    REQUIRE(ok->tree);
    const Property* a = ok->tree->root.find_property("a");
    CHECK(a->where == Location{"soc.dtsi", 2, 3});
    CHECK(a->chunks.at(0).where == Location{"soc.dtsi", 2, 8});
    CHECK_FALSE(a->chunks.at(0).literal); // cpp output: not known to be verbatim
}

TEST_CASE("dts: /include/ and /incbin/") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / "cmalign-dts-include-test";
    fs::create_directories(dir);
    std::ofstream(dir / "inc.dtsi") << "/ { from-include = <1>; };\n";
    std::ofstream(dir / "props.dtsi") << "inner = \"x\";\n";
    std::ofstream(dir / "blob.bin", std::ios::binary) << "ABCDEFGH";
    auto main_path = (dir / "main.dts").string();
    auto l = load("/dts-v1/;\n/include/ \"inc.dtsi\"\n/ { bin = /incbin/(\"blob.bin\");\n"
                  "  part = /incbin/(\"blob.bin\", 2, 3); n { /include/ \"props.dtsi\" }; };\n",
                  main_path);
    REQUIRE_MESSAGE(l->tree, l->first_error());
    CHECK(value_of(*l->tree, "/", "from-include") == "00000001");
    CHECK(value_of(*l->tree, "/n", "inner") == "7800");
    CHECK(value_of(*l->tree, "/", "bin") == "4142434445464748");
    CHECK(value_of(*l->tree, "/", "part") == "434445");
    const Property* inner = l->tree->find("/n")->find_property("inner");
    CHECK(inner->where == Location{(dir / "props.dtsi").string(), 1, 1});

    auto missing = load("/dts-v1/;\n/include/ \"nope.dtsi\"\n", main_path);
    CHECK(missing->first_error() ==
          main_path + ":2:1: error: /include/: cannot find \"nope.dtsi\"");
    std::ofstream(dir / "self.dtsi") << "/include/ \"self.dtsi\"\n";
    auto cycle = load("/dts-v1/;\n/include/ \"self.dtsi\"\n", main_path);
    CHECK_FALSE(cycle->file);
    const auto self = (dir / "self.dtsi").string();
    CHECK(cycle->first_error() == self + ":1:1: error: include cycle: " + self + " \u2192 " + self);
    fs::remove_all(dir);
}

TEST_CASE("dts: /include/ is lexer-level, wherever a token may stand (as dtc)") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / "cmalign-dts-include-anywhere";
    fs::create_directories(dir);
    std::ofstream(dir / "addr.dtsi") << "0x10000000 0x1000";
    std::ofstream(dir / "val.dtsi") << "<1 2>";
    std::ofstream(dir / "four.dtsi") << "4";
    std::ofstream(dir / "open.dtsi") << "n {\n  x = <7>;\n"; // a node left open: dtc allows it
    auto main_path = (dir / "main.dts").string();
    auto l = load("/dts-v1/;\n/memreserve/ /include/ \"addr.dtsi\";\n"
                  "/ {\n  a = /include/ \"val.dtsi\";\n  b = < 3 /include/ \"four.dtsi\" 5 >;\n"
                  "  /include/ \"open.dtsi\" };\n};\n",
                  main_path);
    REQUIRE_MESSAGE(l->tree, l->first_error());
    REQUIRE(l->tree->memreserve.size() == 1);
    CHECK(l->tree->memreserve[0].address == 0x10000000);
    CHECK(l->tree->memreserve[0].size == 0x1000);
    CHECK(value_of(*l->tree, "/", "a") == "0000000100000002");
    CHECK(value_of(*l->tree, "/", "b") == "000000030000000400000005");
    CHECK(value_of(*l->tree, "/n", "x") == "00000007");
    // The cell from four.dtsi is located there.
    const Property* b = l->tree->root.find_property("b");
    REQUIRE(b->chunks.size() == 3);
    CHECK(b->chunks[1].where == Location{(dir / "four.dtsi").string(), 1, 1});
    CHECK(b->chunks[2].where == Location{main_path, 5, 33});
    fs::remove_all(dir);
}

TEST_CASE("dts: an include cycle is reported once, at the /include/ that closes it") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / "cmalign-dts-include-cycle";
    fs::create_directories(dir);
    std::ofstream(dir / "a.dtsi") << "/ { a; };\n/include/ \"b.dtsi\"\n";
    std::ofstream(dir / "b.dtsi") << "/ { b; };\n\n/include/ \"a.dtsi\"\n";
    auto main_path = (dir / "main.dts").string();
    auto l = load("/dts-v1/;\n/include/ \"a.dtsi\"\n", main_path);
    CHECK_FALSE(l->file);
    REQUIRE(l->diags.count(Severity::error) == 1);
    const auto a = (dir / "a.dtsi").string();
    const auto b = (dir / "b.dtsi").string();
    CHECK(l->first_error() ==
          b + ":3:1: error: include cycle: " + a + " \u2192 " + b + " \u2192 " + a);
    fs::remove_all(dir);
}

TEST_CASE("dts: an empty source is an error naming the file (dtc rejects it)") {
    for (const char* text : {"", "\n\n", "/* nothing */\n// at all\n"}) {
        auto l = load(text, "empty.dts");
        CHECK_FALSE(l->file);
        CHECK(l->first_error().rfind("empty.dts: error: empty device tree source", 0) == 0);
    }
}

TEST_CASE("dts: a hand-written __fixups__ gets the generated entries appended (dtc 1.7)") {
    // Both dtc 1.6.1 and the kernel's dtc 1.7.0 build exactly these bytes.
    auto l = load("/dts-v1/;\n/plugin/;\n/ {\n\t__fixups__ { foo = \"/x:y:0\"; };\n"
                  "\tfragment@0 { target = <&foo>; __overlay__ { p = <&bar>; }; };\n};\n",
                  "hw.dtso");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    using namespace std::string_literals;
    const std::string foo = "/x:y:0\0/fragment@0:target:0"s;
    std::vector<std::uint8_t> want(foo.begin(), foo.end());
    want.push_back(0);
    CHECK(value_of(*l->tree, "/__fixups__", "foo") == hex(want));
    const std::string bar = "/fragment@0/__overlay__:p:0";
    std::vector<std::uint8_t> want_bar(bar.begin(), bar.end());
    want_bar.push_back(0);
    CHECK(value_of(*l->tree, "/__fixups__", "bar") == hex(want_bar));
    // Order of the node's properties: the written one first, as dtc.
    const Node* fixups = l->tree->find("/__fixups__");
    REQUIRE(fixups->properties.size() == 2);
    CHECK(fixups->properties[0].name == "foo");
}

TEST_CASE("dts: syntax errors are located exactly") {
    struct Case {
        const char* source;
        const char* error;
    };
    const Case cases[] = {
        {"/dts-v1/;\n/ {\n  a = <1>\n};\n",
         "t.dts:4:1: error: unexpected '}', expected ';' after the property"},
        {"/dts-v1/;\n/ {\n  n {\n    a;\n",
         "t.dts:3:5: error: unterminated node: '{' has no matching '};'"},
        {"/dts-v1/;\n/ { }\n", "t.dts:3:1: error: unexpected end of input, expected ';' after '}'"},
        {"/dts-v1/;\n/ { a = <1 FOO>; };\n",
         "t.dts:2:12: error: unexpected 'FOO', expected a number, a character or '('"},
        {"/dts-v1/;\n/ { a = \"abc; };\n", "t.dts:2:9: error: unterminated string"},
        {"/dts-v1/;\n/ { a = [0 1]; };\n",
         "t.dts:2:10: error: byte strings need two hex digits per byte"},
        {"/dts-v1/;\n/ { a = <08>; };\n", "t.dts:2:10: error: bad integer literal '08'"},
        {"/dts-v1/;\n/ { a = <0x1ffffffffffffffff>; };\n",
         "t.dts:2:10: error: integer literal '0x1ffffffffffffffff' out of 64-bit range"},
        {"/dts-v1/;\n/ { a = <1u>; };\n", "t.dts:2:10: error: bad integer literal '1u'"},
        {"/dts-v1/;\n/ { a = <0x>; };\n", "t.dts:2:10: error: bad integer literal '0x'"},
        {"/dts-v1/;\n/ { a = <0xfg>; };\n", "t.dts:2:10: error: bad integer literal '0xfg'"},
        {"/dts-v1/;\n/ { a = /bits/ 64 <18446744073709551616>; };\n",
         "t.dts:2:20: error: integer literal '18446744073709551616' out of 64-bit range"},
        {"/dts-v1/;\n/ { a = <(1 / 0)>; };\n", "t.dts:2:13: error: division by zero"},
        {"/dts-v1/;\n/ { a = <(5 % 0)>; };\n", "t.dts:2:13: error: division by zero"},
        {"/dts-v1/;\n/ { a = /bits/ 7 <1>; };\n",
         "t.dts:2:16: error: array elements must be 8, 16, 32 or 64 bits"},
        {"/dts-v1/;\n/ { a = /bits/ 8 <&x>; x: n {}; };\n",
         "t.dts:2:19: error: references are only allowed in arrays with 32-bit elements"},
        {"/dts-v1/;\n/ { a = <''>; };\n", "t.dts:2:10: error: empty character literal"},
        {"/dts-v1/;\n/ { a = <'ab'>; };\n",
         "t.dts:2:10: error: character literal has 2 characters instead of 1"},
        {"/dts-v1/;\n/ { n { }; a = <1>; };\n",
         "t.dts:2:12: error: properties must precede subnodes"},
        {"/dts-v1/;\n/* open\n/ { };\n", "t.dts:2:1: error: unterminated comment"},
        {"/dts-v1/;\n/ { a = \"\\x\"; };\n",
         "t.dts:2:10: error: \\x used with no following hex digits"},
        {"/dts-v1/;\nfoo { };\n", "t.dts:2:1: error: unexpected 'foo', expected '/ {', '&label {', "
                                  "/delete-node/ or /memreserve/"},
        {"/dts-v1/;\n/ { a = ; };\n", "t.dts:2:9: error: unexpected ';', expected a property value "
                                      "(\"string\", <cells>, [bytes] or &ref)"},
        {"/dts-v1/;\n/ { a = <1 2; };\n",
         "t.dts:2:13: error: unexpected ';', expected a number, a character or '('"},
        {"/dts-v1/;\n/ { a = <(1 + 2>; };\n",
         "t.dts:2:17: error: unexpected ';', expected a number, a character or '('"},
        {"/dts-v1/;\n/ { a = &{/x; };\n", "t.dts:2:9: error: unterminated path reference '&{'"},
        {"/dts-v1/;\n/ { /omit-if-no-ref/ a; };\n",
         "t.dts:2:5: error: /omit-if-no-ref/ must be followed by a node"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.source);
        auto l = load(c.source);
        CHECK_FALSE(l->tree);
        CHECK(l->first_error() == c.error);
    }
}

TEST_CASE("dts: resolution errors are located exactly") {
    struct Case {
        const char* source;
        const char* error;
    };
    const Case cases[] = {
        {"/dts-v1/;\n/ { a = <&foo>; };\n", "t.dts:2:10: error: undefined label 'foo'"},
        {"/dts-v1/;\n/ { a = &foo; };\n", "t.dts:2:9: error: undefined label 'foo'"},
        {"/dts-v1/;\n/ { a = <&{/no/such}>; };\n",
         "t.dts:2:10: error: reference to non-existent node '/no/such'"},
        {"/dts-v1/;\n/ { };\n&foo { };\n", "t.dts:3:1: error: undefined label 'foo'"},
        {"/dts-v1/;\n/ { };\n/delete-node/ &{/x};\n",
         "t.dts:3:15: error: reference to non-existent node '/x'"},
        {"/dts-v1/;\n/ { x: a { }; x: b { }; };\n",
         "t.dts:2:15: error: duplicate label 'x' (also defined at t.dts:2:5)"},
        {"/dts-v1/;\n/ { a { }; a { }; };\n", "t.dts:2:12: error: duplicate node name 'a'"},
        {"/dts-v1/;\n/ { p; p; };\n", "t.dts:2:8: error: duplicate property name 'p'"},
        {"/dts-v1/;\n/ { n { name = \"m\"; }; };\n",
         "t.dts:2:9: error: \"name\" property is incorrect (not the base node name)"},
        {"/dts-v1/;\n/ { a { phandle = <1>; }; b { phandle = <1>; }; };\n",
         "t.dts:2:27: error: duplicated phandle 0x1 (seen before at /a)"},
        {"/dts-v1/;\n/ { a { phandle = <0>; }; };\n",
         "t.dts:2:9: error: bad value (0x0) in phandle property"},
        // Labels and references in every position of a value (dtc rejects each; the walks skip
        // the values the parser saw none in, so each must still be found).
        {"/dts-v1/;\n/ { a = <1 x: 2>; x: n { }; };\n",
         "t.dts:2:19: error: duplicate label 'x' (also defined at t.dts:2:12)"},
        {"/dts-v1/;\n/ { a = x: <1>; x: n { }; };\n",
         "t.dts:2:17: error: duplicate label 'x' (also defined at t.dts:2:9)"},
        {"/dts-v1/;\n/ { a = <1>, \"s\" x:; x: n { }; };\n",
         "t.dts:2:22: error: duplicate label 'x' (also defined at t.dts:2:18)"},
        {"/dts-v1/;\n/ { x: p = <1>; x: q = <2>; };\n",
         "t.dts:2:20: error: duplicate label 'x' (also defined at t.dts:2:8)"},
        {"/dts-v1/;\n/ { a = [00 x: 01]; x: n { }; };\n",
         "t.dts:2:21: error: duplicate label 'x' (also defined at t.dts:2:13)"},
        {"/dts-v1/;\n/ { a = \"s\", <1>, &foo; };\n", "t.dts:2:19: error: undefined label 'foo'"},
        // A value's or a property's label is no node's: a reference to it is undefined (the
        // duplicate-label check keeps these labels in the node-label index, without a node).
        {"/dts-v1/;\n/ { a = <1 x: 2>; b = <&x>; };\n", "t.dts:2:24: error: undefined label 'x'"},
        {"/dts-v1/;\n/ { y: a = <1>; b = &y; };\n", "t.dts:2:21: error: undefined label 'y'"},
        {"/dts-v1/;\n/ { a = /bits/ 32 <1 &foo>; };\n", "t.dts:2:22: error: undefined label 'foo'"},
        {"/dts-v1/;\n/ { a = <1>, <y: &foo>; };\n", "t.dts:2:18: error: undefined label 'foo'"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.source);
        auto l = load(c.source);
        CHECK_FALSE(l->tree);
        CHECK(l->first_error() == c.error);
    }
}

TEST_CASE("dts: duplicate names among many children and properties are found") {
    // Long lists are checked by sorting their names (short ones pairwise): the duplicate must
    // be reported at the same place either way, and a long list without one is accepted.
    for (const bool props : {false, true}) {
        for (const int count : {3, 17, 40}) {
            std::string body;
            for (int i = 0; i < count; ++i)
                body += props ? fmt::format(" p{};", i) : fmt::format(" c{} {{ }};", i);
            CAPTURE(props);
            CAPTURE(count);
            auto clean = load("/dts-v1/;\n/ {" + body + " };\n");
            CHECK_MESSAGE(clean->tree, clean->first_error());
            const std::string dup = props ? " p1;" : " c1 { };";
            const std::string source = "/dts-v1/;\n/ {" + body + dup + " };\n";
            auto l = load(source);
            CHECK_FALSE(l->tree);
            const std::size_t line2 = source.find('\n') + 1;
            const std::size_t column = source.rfind(dup) + 1 - line2 + 1;
            CHECK(l->first_error() == fmt::format("t.dts:2:{}: error: duplicate {} name '{}1'",
                                                  column, props ? "property" : "node",
                                                  props ? "p" : "c"));
        }
    }
}

TEST_CASE("dts: explicit and self phandles, correct name properties are dropped") {
    auto l = load(R"(/dts-v1/;
/ {
    user = <&a &b &c>;
    a: a { phandle = <5>; };
    b: b { phandle = <&b>; };
    c: c@1 { name = "c"; };
};
)");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    const Tree& t = *l->tree;
    CHECK(value_of(t, "/a", "phandle") == "00000005");
    CHECK(value_of(t, "/b", "phandle") == "00000001");
    CHECK(t.find("/b")->properties.size() == 1);
    CHECK(t.find("/c@1")->find_property("name") == nullptr);
    CHECK(value_of(t, "/c@1", "phandle") == "00000002");
    CHECK(value_of(t, "/", "user") == "00000005"
                                      "00000001"
                                      "00000002");
}

TEST_CASE("dts: label-relative path references and backslash names") {
    auto l = load(R"(/dts-v1/;
/ {
    r = <&{s/inner}>;
    s: soc { inner { }; };
    \node-with-backslash { };
};
&{s/inner} { merged; };
)");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    CHECK(l->tree->find("/soc/inner")->find_property("merged"));
    CHECK(l->tree->find("/node-with-backslash"));
    CHECK(value_of(*l->tree, "/", "r") == "00000001");
}

TEST_CASE("dts: plugin orphans become fragments") {
    auto l = load("/dts-v1/;\n/plugin/;\n&missing { status = \"okay\"; };\n&{/soc} { x; };\n");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    CHECK(l->file->plugin);
    const Node* f0 = l->tree->find("/fragment@0");
    REQUIRE(f0);
    CHECK(value_of(*l->tree, "/fragment@0", "target") == "ffffffff");
    CHECK(l->tree->find("/fragment@0/__overlay__")->find_property("status"));
    CHECK(value_of(*l->tree, "/fragment@1", "target-path") == "2f736f6300");
}

TEST_CASE("dts: nesting limits give errors, not crashes") {
    std::string deep = "/dts-v1/;\n/ {";
    for (int i = 0; i < 100000; ++i)
        deep += " n {";
    auto l = load(deep);
    CHECK_FALSE(l->file);
    CHECK(l->first_error().find("nested deeper than 256 levels") != std::string::npos);
    std::string expr = "/dts-v1/;\n/ { a = <";
    for (int i = 0; i < 100000; ++i)
        expr += "(";
    auto e = load(expr);
    CHECK_FALSE(e->file);
    CHECK(e->first_error().find("nested deeper than") != std::string::npos);
    std::string neg = "/dts-v1/;\n/ { a = <(";
    for (int i = 0; i < 100000; ++i)
        neg += "-";
    auto n = load(neg);
    CHECK_FALSE(n->file);
    CHECK(n->first_error().find("nested deeper than") != std::string::npos);
}

TEST_CASE("dts: a huge single line parses") {
    std::string big = "/dts-v1/;\n/ { a = <";
    for (int i = 0; i < 200000; ++i)
        big += "0x12345678 ";
    big += ">; };";
    auto l = load(big);
    REQUIRE(l->tree);
    CHECK(l->tree->root.find_property("a")->value.size() == 800000);
}

TEST_CASE("dts: random truncations of a valid file never crash") {
    const std::string src = R"(/dts-v1/;
/memreserve/ 0x1000 0x2000;
/ {
    a: n@1 { reg = <0x1 (2 + 3)>; s = "x\n", [00 11]; b = /bits/ 16 <lbl: 'c'>; };
    p = &a, <&{/n@1}>;
};
&a { /delete-property/ s; };
/delete-node/ &{/n@1};
)";
    for (std::size_t cut = 0; cut < src.size(); ++cut) {
        auto l = load(src.substr(0, cut));
        if (!l->tree) CHECK(l->diags.has_errors());
    }
}

TEST_CASE("dts: a label given in a body that is merged names the existing node") {
    auto l = load(R"(/dts-v1/;
/ { user = <&b>; path = &b; a: n { }; };
/ { b: n { }; };
)");
    REQUIRE_MESSAGE(l->tree, l->first_error());
    const Node* n = l->tree->find("/n");
    REQUIRE(n);
    CHECK(n->labels.size() == 2);
    CHECK(value_of(*l->tree, "/n", "phandle") == "00000001");
    CHECK(value_of(*l->tree, "/", "user") == "00000001");
    CHECK(value_of(*l->tree, "/", "path") == "2f6e00");
}

TEST_CASE("dts: chunks only where asked") {
    auto text = std::make_unique<Preprocessed>(identity(make_source(
        "t.dts", "/dts-v1/;\n/ { a = <1>; reserved-memory { r { reg = <2>; }; }; memory@0 { reg = "
                 "<3>; }; memoryx { reg = <4>; }; };\n")));
    FileCache cache;
    Diagnostics diags;
    auto file = parse(*text, {}, cache, diags);
    REQUIRE(file);
    ResolveOptions options;
    options.chunk_paths = {"/reserved-memory", "/memory"};
    auto tree = resolve(*file, diags, options);
    REQUIRE(tree);
    CHECK(tree->root.find_property("a")->chunks.empty());
    CHECK(tree->find("/reserved-memory/r")->find_property("reg")->chunks.size() == 1);
    CHECK(tree->find("/memory@0")->find_property("reg")->chunks.size() == 1);
    CHECK(tree->find("/memoryx")->find_property("reg")->chunks.empty());
    options.value_chunks = false;
    auto bare = resolve(*file, diags, options);
    REQUIRE(bare);
    CHECK(bare->find("/reserved-memory/r")->find_property("reg")->chunks.empty());
    CHECK(bare->find("/reserved-memory/r")->find_property("reg")->value.size() == 4);
}

TEST_CASE("dts: a partial tree keeps what reading the reservations needs") {
    auto text = std::make_unique<Preprocessed>(identity(make_source(
        "t.dts",
        "/dts-v1/;\n/ { #size-cells = <1>; soc { compatible = \"simple-bus\"; dev { x = <1>; }; "
        "};\n ram { device_type = \"memory\"; reg = <0 8>; };\n frag { target-path = \"/\"; };\n"
        " chosen { bootargs = \"cma=4M\"; };\n reserved-memory { pool { size = <4>; }; }; };\n")));
    FileCache cache;
    Diagnostics diags;
    auto file = parse(*text, {}, cache, diags);
    REQUIRE(file);
    ResolveOptions options;
    options.chunk_paths = {"/reserved-memory", "/memory", "/chosen"};
    options.whole_tree = false;
    auto tree = resolve(*file, diags, options);
    REQUIRE(tree);
    CHECK(tree->root.find_property("#size-cells"));
    // Every root child by name; /soc without its properties or children.
    const Node* soc = tree->find("/soc");
    REQUIRE(soc);
    CHECK(soc->properties.empty());
    CHECK(soc->children.empty());
    // A memory node (whatever its name), a fragment, /chosen and /reserved-memory whole.
    REQUIRE(tree->find("/ram"));
    CHECK(tree->find("/ram")->find_property("reg"));
    CHECK(tree->find("/ram")->where.line == 3);
    for (const auto& wanted : {std::pair{"/frag", "target-path"},
                               {"/chosen", "bootargs"},
                               {"/reserved-memory/pool", "size"}}) {
        const std::string path = wanted.first; // (a structured binding: no lambda may capture it)
        const Node* node = tree->find(path);
        REQUIRE(node);
        CHECK_MESSAGE(node->find_property(wanted.second), path);
    }
    // The whole tree has everything.
    options.whole_tree = true;
    auto whole = resolve(*file, diags, options);
    REQUIRE(whole);
    CHECK(whole->find("/soc")->find_property("compatible"));
    CHECK(whole->find("/soc/dev"));
}

TEST_CASE("dts: -@ symbols and plugin fixups as dtc generates them") {
    auto text = std::make_unique<Preprocessed>(identity(make_source(
        "t.dts",
        "/dts-v1/;\n/ { b: a: n { }; /omit-if-no-ref/ o: unused { }; x { p = <1>; }; };\n")));
    FileCache cache;
    Diagnostics diags;
    auto file = parse(*text, {}, cache, diags);
    REQUIRE(file);
    ResolveOptions options;
    options.symbols = true;
    auto tree = resolve(*file, diags, options);
    REQUIRE(tree);
    const Node* symbols = tree->find("/__symbols__");
    REQUIRE(symbols);
    // dtc puts labels in that order ("b: a: n" is b: (a: (n)), each label prepended)
    REQUIRE(symbols->properties.size() == 3);
    CHECK(symbols->properties[0].name == "b");
    CHECK(symbols->properties[1].name == "a");
    CHECK(hex(symbols->properties[0].value) == "2f6e00");
    CHECK(symbols->properties[2].name == "o");
    CHECK(tree->find("/unused")); // -@ keeps labelled /omit-if-no-ref/ nodes
    CHECK(value_of(*tree, "/n", "phandle") == "00000001");
    CHECK(value_of(*tree, "/unused", "phandle") == "00000002");

    auto overlay = load(R"(/dts-v1/;
/plugin/;
&{/soc} { local: dev { }; };
&uart { pinctrl-0 = <&pins &local>; dev2 = <1 &pins>; };
)");
    REQUIRE_MESSAGE(overlay->tree, overlay->first_error());
    const Tree& t = *overlay->tree;
    CHECK(value_of(t, "/fragment@0", "target-path") == "2f736f6300");
    CHECK(value_of(t, "/fragment@1", "target") == "ffffffff");
    CHECK(value_of(t, "/fragment@1/__overlay__", "pinctrl-0") == "ffffffff"
                                                                 "00000001");
    const Node* fixups = t.find("/__fixups__");
    REQUIRE(fixups);
    REQUIRE(fixups->properties.size() == 2);
    CHECK(fixups->properties[0].name == "uart");
    std::string entry = "/fragment@1:target:0";
    CHECK(fixups->properties[0].value ==
          std::vector<std::uint8_t>(entry.c_str(), entry.c_str() + entry.size() + 1));
    CHECK(fixups->properties[1].name == "pins");
    std::string pins = std::string("/fragment@1/__overlay__:pinctrl-0:0") + '\0' +
                       "/fragment@1/__overlay__:dev2:4";
    CHECK(fixups->properties[1].value ==
          std::vector<std::uint8_t>(pins.c_str(), pins.c_str() + pins.size() + 1));
    CHECK(value_of(t, "/__local_fixups__/fragment@1/__overlay__", "pinctrl-0") == "00000004");
}

TEST_CASE("dts: through the built-in preprocessor, chunks show what the user wrote") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / "cmalign-dts-macro-test";
    fs::create_directories(dir);
    const auto path = (dir / "m.dts").string();
    std::ofstream(path) << "/dts-v1/;\n#define SZ_4M 0x00400000\n#define F(x) ((x) << 2)\n"
                           "/ {\n\treg = <0x0 SZ_4M>, <F(0x10) 1>;\n\ta = <F(SZ_4M)>;\n};\n";
    FileCache cache;
    Diagnostics diags;
    auto tree = load_dts(path, {}, cache, diags);
    REQUIRE(tree);
    CHECK(tree->input == path);
    const Property* reg = tree->root.find_property("reg");
    REQUIRE(reg);
    REQUIRE(reg->chunks.size() == 4);
    CHECK(reg->chunks[0].text == "0x0");
    REQUIRE(reg->chunks[0].literal);
    CHECK(reg->chunks[0].literal->file == path);
    CHECK(reg->chunks[1].text == "SZ_4M");
    CHECK(reg->chunks[1].where == Location{path, 5, 13});
    CHECK_FALSE(reg->chunks[1].literal); // a macro: not rewritable in place
    CHECK(reg->chunks[2].text == "F(0x10)");
    CHECK(reg->chunks[3].text == "1");
    CHECK(hex(reg->value) == "00000000"
                             "00400000"
                             "00000040"
                             "00000001");
    CHECK(tree->root.find_property("a")->chunks.at(0).text == "F(SZ_4M)");
    fs::remove_all(dir);
}

TEST_CASE("dts: random mutations never crash or hang") {
    const std::string src = R"(/dts-v1/;
/plugin/;
/memreserve/ 0x1000 0x2000;
/ {
    a: n@1 { reg = <0x1 (2 + 3 * (4 ? 5 : 6)) -1>; s = "x\n\x41\101", [00 11]; b = /bits/ 16 <lbl: 'c'>; };
    p = &a, <&{/n@1} &a>, "str";
    /omit-if-no-ref/ q: q { phandle = <&q>; };
    // comment
    /* block */
};
&a { /delete-property/ s; c: child { }; };
&{/n@1} { x; };
/delete-node/ &{/n@1/child};
/omit-if-no-ref/ &q;
)";
    const std::string alphabet = "/{}<>[]();=&:\"'\\,-+*%!~?|^ \n#0x1aZ_@";
    std::uint32_t seed = 12345;
    auto rnd = [&] {
        seed = seed * 1103515245u + 12345u;
        return (seed >> 8) & 0xffffff;
    };
    for (int round = 0; round < 3000; ++round) {
        std::string m = src;
        const int edits = 1 + static_cast<int>(rnd() % 4);
        for (int e = 0; e < edits; ++e) {
            const std::size_t at = rnd() % m.size();
            switch (rnd() % 3) {
            case 0:
                m[at] = alphabet[rnd() % alphabet.size()];
                break;
            case 1:
                m.erase(at, 1 + rnd() % 8);
                break;
            default:
                m.insert(at, 1, alphabet[rnd() % alphabet.size()]);
                break;
            }
            if (m.empty()) m = "x";
        }
        auto l = load(m);
        if (!l->tree) CHECK(l->diags.has_errors());
        for (const auto& d : l->diags.items()) {
            CHECK(d.where.line >= 1);
            CHECK(d.where.column >= 1);
        }
    }
}
