// A file that inputs #include between two statements (a SoC's .dtsi) is parsed once and shared
// by the inputs that include the same output (dt::ParsedChunk). Every board must get exactly
// the tree, the locations and the diagnostics a parse of its own gives.
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cmalign/internal/dt/dts.hpp"

namespace fs = std::filesystem;
using namespace cmalign;

namespace {

std::string where(const Location& l) {
    return fmt::format("{}:{}:{}", l.file, l.line, l.column);
}

void dump(const dt::Node& node, const std::string& path, std::string& out) {
    out += fmt::format("node {} @{} labels", path, where(node.where));
    for (const auto& l : node.labels)
        out += ' ' + l;
    out += '\n';
    for (const auto& p : node.properties) {
        out += fmt::format("  prop {} @{} refs={} labels", p.name, where(p.where), p.has_refs);
        for (const auto& l : p.labels)
            out += ' ' + l;
        out += " value";
        for (auto b : p.value)
            out += fmt::format(" {:02x}", b);
        out += '\n';
        for (const auto& c : p.chunks) {
            out +=
                fmt::format("    chunk {}+{} @{} '{}'", c.offset, c.size, where(c.where), c.text);
            if (c.literal)
                out += fmt::format(" literal {}:{}-{}", c.literal->file, c.literal->begin,
                                   c.literal->end);
            out += '\n';
        }
    }
    for (const auto& child : node.children)
        dump(child, path == "/" ? "/" + child.name : path + "/" + child.name, out);
}

// The whole tree with every location, or the diagnostics that refused the input.
std::string load(const std::string& path, const dt::PreprocessOptions& options,
                 dt::FileCache& cache) {
    Diagnostics diags;
    auto tree = dt::load_dts(path, options, cache, diags);
    std::string out;
    for (const auto& d : diags.items())
        out +=
            fmt::format("diag {} {} {}\n", static_cast<int>(d.severity), where(d.where), d.message);
    if (!tree) return out + "no tree\n";
    dump(tree->root, "/", out);
    for (const auto& m : tree->memreserve)
        out += fmt::format("memreserve {} {} @{}\n", m.address, m.size, where(m.where));
    if (tree->sources)
        for (const auto& s : *tree->sources)
            out += "source " + s + '\n';
    return out;
}

// How many statements of `path`'s parse came from shared chunks.
std::size_t shared_statements(const std::string& path, const dt::PreprocessOptions& options,
                              dt::FileCache& cache) {
    Diagnostics diags;
    auto pre = dt::preprocess(path, options, cache, diags);
    REQUIRE(pre);
    dt::ParseOptions parse_options;
    parse_options.limits = options.limits;
    auto file = dt::parse(*pre, parse_options, cache, diags);
    if (!file) return 0;
    std::size_t n = 0;
    for (const auto& chunk : file->chunks)
        n += chunk->file.items.size();
    return n;
}

struct Scratch {
    fs::path dir;
    explicit Scratch(const std::string& name)
        : dir(fs::temp_directory_path() / ("cmalign-shared-" + name)) {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~Scratch() { fs::remove_all(dir); }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(dir / name) << text;
        return (dir / name).string();
    }
};

// Boards that include the same file: the first parses it on its own and keeps that parse, the
// later ones take it. Each must see what it sees alone; the last is counted.
void same_as_alone(const std::vector<std::string>& boards, std::size_t expect_shared_in_third) {
    dt::PreprocessOptions options;
    dt::FileCache shared;
    for (const auto& b : boards) {
        dt::FileCache own;
        CAPTURE(b);
        CHECK(load(b, options, shared) == load(b, options, own));
    }
    dt::FileCache counting;
    for (std::size_t i = 0; i + 1 < boards.size(); ++i)
        shared_statements(boards[i], options, counting);
    CHECK(shared_statements(boards.back(), options, counting) == expect_shared_in_third);
}

} // namespace

TEST_CASE("dts: a shared .dtsi parse gives each board its own parse's tree and locations") {
    Scratch s("basic");
    s.write("soc.dtsi", R"(#define SZ (4 << 20)
/ {
    #address-cells = <2>;
    #size-cells = <2>;
    soc: soc { uart0: serial@100 { reg = <0 0x100 0 SZ>; status = "disabled"; }; };
    reserved-memory { ranges; #address-cells = <2>; #size-cells = <2>;
        pool: pool@80000000 { compatible = "shared-dma-pool"; reusable;
            reg = <0 0x80000000 0 SZ>; }; };
};
&uart0 { clocks = <&soc>; };
)");
    std::vector<std::string> boards;
    for (int i = 0; i < 3; ++i)
        boards.push_back(
            s.write(fmt::format("b{}.dts", i),
                    fmt::format(R"(/dts-v1/;
#include "soc.dtsi"
&uart0 {{ status = "okay"; current-speed = <{}>; }};
/ {{ model = "b{}"; }};
{}
)",
                                115200 * (i + 1), i, i == 1 ? "/delete-node/ &pool;" : "")));
    same_as_alone(boards, 2); // soc.dtsi's two statements
}

TEST_CASE("dts: a board family's .dtsi shares the parse of the SoC .dtsi it includes") {
    Scratch s("nested");
    s.write("soc.dtsi", "/ { soc: soc { a = <1>; }; };\n&soc { b = <2>; };\n");
    s.write("fam.dtsi", "#include \"soc.dtsi\"\n/ { fam: family { c = <&soc>; }; };\n");
    // Another board takes soc.dtsi first; then the family's boards: the first parses
    // fam.dtsi on its own around soc.dtsi's shared parse, the others take fam.dtsi whole.
    std::vector<std::string> boards{
        s.write("a.dts", "/dts-v1/;\n#include \"soc.dtsi\"\n/ { model = \"a\"; };\n")};
    for (int i = 0; i < 3; ++i)
        boards.push_back(s.write(fmt::format("f{}.dts", i),
                                 fmt::format("/dts-v1/;\n#include \"fam.dtsi\"\n"
                                             "&fam {{ d = <{}>; }};\n/delete-node/ &soc;\n",
                                             i)));
    dt::PreprocessOptions options;
    dt::FileCache shared, counting;
    std::vector<std::size_t> statements;
    for (const auto& b : boards) {
        dt::FileCache own;
        CAPTURE(b);
        CHECK(load(b, options, shared) == load(b, options, own));
        statements.push_back(shared_statements(b, options, counting));
    }
    // a: soc.dtsi's two statements (parsed on their own there, for the next); f0: fam.dtsi's
    // chunk (its own statement and soc.dtsi's two), made around soc.dtsi's parse; f1, f2:
    // fam.dtsi taken whole.
    CAPTURE(statements[0]);
    CAPTURE(statements[1]);
    CHECK(statements == std::vector<std::size_t>{2, 3, 3, 3});
    // fam.dtsi's parse took soc.dtsi's: the same statements, not a parse of their own.
    Diagnostics diags;
    auto pre = dt::preprocess(boards[3], options, counting, diags);
    REQUIRE(pre);
    auto file = dt::parse(*pre, {}, counting, diags);
    REQUIRE(file);
    REQUIRE(file->chunks.size() == 1);
    const auto& fam = *file->chunks.front();
    REQUIRE(fam.file.chunks.size() == 1); // soc.dtsi's parse, taken by fam.dtsi's
    CHECK(fam.file.chunks.front()->file.items.size() == 2);
    CHECK(file->shared_texts.size() == 2); // both texts, for the spans of both
}

TEST_CASE("dts: a .dtsi that is not whole statements where it is included is parsed in place") {
    Scratch s("partial");
    // Included inside a node, and included where its last statement is closed by the board.
    s.write("body.dtsi", "a = <1>; b: sub { c = <&b>; };\n");
    s.write("open.dtsi", "/ { model = \"x\";\n");
    std::vector<std::string> inside, open;
    for (int i = 0; i < 3; ++i) {
        inside.push_back(
            s.write(fmt::format("in{}.dts", i), "/dts-v1/;\n/ {\n#include \"body.dtsi\"\n};\n"));
        open.push_back(
            s.write(fmt::format("open{}.dts", i), "/dts-v1/;\n#include \"open.dtsi\"\n};\n"));
    }
    same_as_alone(inside, 0);
    same_as_alone(open, 0);
}

TEST_CASE("dts: errors in a shared .dtsi are reported for every board, where they are") {
    Scratch s("errors");
    // A syntax error, then (in another file) a reference to a label nobody defines, and a
    // duplicate label: each found by every board that includes the file.
    s.write("bad-syntax.dtsi", "/ { a = <1 2; };\n");
    s.write("bad-ref.dtsi", "/ { a = <&nowhere>; x: n1 {}; x: n2 {}; };\n");
    s.write("incbin.dtsi", "/ { blob = /incbin/(\"data.bin\"); };\n");
    // Duplicate names in one body: only a shared parse knows of them, and each board must.
    s.write("dup.dtsi", "/ { p; p; n { }; n { }; };\n");
    s.write("special.dtsi",
            "/ { a { phandle = <1>; }; b { phandle = <1>; }; c { name = \"x\"; }; };\n");
    s.write("data.bin", "abcd");
    for (std::string dtsi :
         {"bad-syntax.dtsi", "bad-ref.dtsi", "incbin.dtsi", "dup.dtsi", "special.dtsi"}) {
        std::vector<std::string> boards;
        for (int i = 0; i < 3; ++i)
            boards.push_back(
                s.write(fmt::format("{}-{}.dts", dtsi, i),
                        fmt::format("/dts-v1/;\n#include \"{}\"\n/ {{ m = <{}>; }};\n", dtsi, i)));
        CAPTURE(dtsi);
        // A syntax error or /incbin/ (found from the board's directories): never shared.
        same_as_alone(
            boards, dtsi == "bad-ref.dtsi" || dtsi == "dup.dtsi" || dtsi == "special.dtsi" ? 1 : 0);
        if (dtsi == "special.dtsi") {
            dt::FileCache shared;
            for (const auto& b : boards) {
                const std::string out = load(b, {}, shared);
                CHECK(out.find("duplicated phandle 0x1") != std::string::npos);
                CHECK(out.find("\"name\" property is incorrect") != std::string::npos);
            }
        }
        if (dtsi == "dup.dtsi") { // the errors are there, for every board
            dt::FileCache shared;
            for (const auto& b : boards) {
                const std::string out = load(b, {}, shared);
                CHECK(out.find("duplicate node name 'n'") != std::string::npos);
                CHECK(out.find("duplicate property name 'p'") != std::string::npos);
            }
        }
    }
}

TEST_CASE("dts: a shared .dtsi counts against each board's node limit") {
    Scratch s("limits");
    // The .dtsi alone (11 nodes) is within the limit, the board's 7 nodes before it are too;
    // together they are not, and the error names the .dtsi's node that passes the limit.
    std::string dtsi = "/ {\n";
    for (int i = 0; i < 10; ++i)
        dtsi += fmt::format("  n{} {{ }};\n", i);
    s.write("many.dtsi", dtsi + "};\n");
    dt::PreprocessOptions options;
    options.limits.nodes = 15;
    dt::FileCache shared;
    for (int i = 0; i < 3; ++i) {
        auto b = s.write(fmt::format("b{}.dts", i),
                         "/dts-v1/;\n/ { a {}; b {}; c {}; d {}; e {}; f {}; };\n"
                         "#include \"many.dtsi\"\n");
        dt::FileCache own;
        const std::string alone = load(b, options, own);
        CHECK(alone.find("more than 15 nodes") != std::string::npos);
        CHECK(load(b, options, shared) == alone);
    }
}

TEST_CASE("real boards: a SoC's .dtsi parsed once gives every board its own parse's tree" *
          CMALIGN_REAL_MATERIAL(std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12")) {
    const std::string tree = std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12";
    if (!cmalign::test::have_material(tree + "/arch/arm64/boot/dts")) return;
    // Boards of a few SoCs, in path order as a bulk check takes them.
    std::vector<std::string> boards;
    for (const char* dir :
         {"arm64/boot/dts/qcom", "arm64/boot/dts/rockchip", "arm/boot/dts/ti/omap"})
        for (const auto& e : fs::directory_iterator(tree + "/arch/" + dir)) {
            const auto name = e.path().filename().string();
            if (e.path().extension() == ".dts" &&
                (name.starts_with("sdm845") || name.starts_with("rk3399") ||
                 name.starts_with("am335x")))
                boards.push_back(e.path().string());
        }
    std::sort(boards.begin(), boards.end());
    REQUIRE(boards.size() >= 40);
    dt::PreprocessOptions options;
    options.kernel_tree = tree;
    dt::FileCache shared, counting;
    std::size_t boards_sharing = 0;
    for (const auto& b : boards) {
        CAPTURE(b);
        dt::FileCache own;
        CHECK(load(b, options, shared) == load(b, options, own));
        if (shared_statements(b, options, counting) > 0) ++boards_sharing;
    }
    // All but the first board of each SoC take its .dtsi from the shared parse (91 of 95).
    CHECK(boards_sharing * 10 >= boards.size() * 9);
}

TEST_CASE("real boards: include memos dropped past the cache's budget leave every tree as it was" *
          CMALIGN_REAL_MATERIAL(std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12")) {
    const std::string tree = std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12";
    if (!cmalign::test::have_material(tree + "/arch/arm64/boot/dts")) return;
    // Two SoC families, one after the other, as a bulk check takes them: the first family's
    // memos are dropped while the second is read, and a board of the first read again after
    // that preprocesses its .dtsi anew.
    std::vector<std::string> boards;
    for (const auto& e : fs::directory_iterator(tree + "/arch/arm64/boot/dts/qcom")) {
        const auto name = e.path().filename().string();
        if (e.path().extension() == ".dts" &&
            (name.starts_with("sdm845") || name.starts_with("sc7180")))
            boards.push_back(e.path().string());
    }
    std::sort(boards.begin(), boards.end());
    REQUIRE(boards.size() >= 20);
    boards.push_back(boards.front());
    dt::PreprocessOptions options;
    options.kernel_tree = tree;
    constexpr std::size_t budget = std::size_t{1} << 20;
    dt::FileCache kept_all(std::size_t{1} << 30), small(budget);
    for (const auto& b : boards) {
        CAPTURE(b);
        CHECK(load(b, options, small) == load(b, options, kept_all));
        const auto use = small.include_memo_use();
        CHECK((use.bytes <= budget || use.files == 1));
    }
    const auto all = kept_all.include_memo_use(), some = small.include_memo_use();
    MESSAGE("memos kept: ", all.files, " files, ", all.bytes,
            " bytes; within the budget: ", some.files, " files, ", some.bytes, " bytes");
    CHECK(all.bytes > 4 * budget);
    CHECK(some.files < all.files);
}
