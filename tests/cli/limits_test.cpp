// Input limits (include/cmalign/core/limits.hpp): the inputs of bench/hostile-inputs.sh end in
// a located error (exit 2) or a correct answer, never a crash; --limit raises a bound.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

extern "C" {
#include <libfdt.h>
}

#include "support/cli.hpp"

namespace fs = std::filesystem;
using cli_test::read_file;
using cli_test::run_cli;

namespace {

struct Scratch {
    fs::path dir;
    explicit Scratch(const std::string& name) : dir(cli_test::temp_path("limits-" + name)) {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~Scratch() { fs::remove_all(dir); }
    std::string write(const std::string& name, const std::string& text) const {
        auto path = dir / name;
        fs::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << text;
        return path.string();
    }
    std::string err() const { return (dir / "stderr").string(); }
};

const std::string model = "--arch arm64 --kernel-version 6.12 ";

std::string nested_nodes(int depth) {
    std::string s = "/dts-v1/;\n/ {\n";
    for (int i = 0; i < depth; ++i)
        s += "n" + std::to_string(i) + " {\n";
    for (int i = 0; i < depth; ++i)
        s += "};\n";
    return s + "};\n";
}

// A board whose one reusable pool is 4 MiB at a 4 MiB-aligned base, its size written `size_expr`.
std::string board_with_pool_size(const std::string& prelude, const std::string& size_expr) {
    return prelude +
           "/dts-v1/;\n/ {\n#address-cells = <2>;\n#size-cells = <2>;\n"
           "memory@40000000 { device_type = \"memory\"; reg = <0 0x40000000 0 0x40000000>; };\n"
           "reserved-memory {\n#address-cells = <2>;\n#size-cells = <2>;\nranges;\n"
           "pool@50000000 { compatible = \"shared-dma-pool\"; reusable;\n"
           "reg = <0 0x50000000 0 (" +
           size_expr + ")>; };\n};\n};\n";
}

} // namespace

TEST_CASE("a DTS nested 20,000 levels deep is a located error at the first level too deep") {
    Scratch s("deep");
    auto path = s.write("deep.dts", nested_nodes(20000));
    auto r = run_cli("check " + model + "'" + path + "'", s.err());
    CHECK(r.exit_code == 2);
    CHECK(read_file(s.err()).find(path + ":258:1: error: nodes nested deeper than 256 levels "
                                         "(--limit node-depth=N raises it)") != std::string::npos);

    // Raised past the input's depth (within the ceiling), the same shape parses.
    auto shallow = s.write("shallow.dts", nested_nodes(1500));
    CHECK(run_cli("check " + model + "'" + shallow + "'").exit_code == 2);
    CHECK(run_cli("check " + model + "--limit node-depth=1600 '" + shallow + "'").exit_code == 0);
    // Above the ceiling: a usage error, not a stack overflow.
    CHECK(run_cli("check " + model + "--limit node-depth=30000 '" + path + "'").exit_code == 2);
}

TEST_CASE("a DTB nested 20,000 levels deep is an error naming the structure offset") {
    Scratch s("deepdtb");
    std::vector<char> blob(1 << 20);
    void* fdt = blob.data();
    REQUIRE(fdt_create(fdt, static_cast<int>(blob.size())) == 0);
    REQUIRE(fdt_finish_reservemap(fdt) == 0);
    REQUIRE(fdt_begin_node(fdt, "") == 0);
    for (int i = 0; i < 20000; ++i)
        REQUIRE(fdt_begin_node(fdt, "n") == 0);
    for (int i = 0; i < 20000; ++i)
        REQUIRE(fdt_end_node(fdt) == 0);
    REQUIRE(fdt_end_node(fdt) == 0);
    REQUIRE(fdt_finish(fdt) == 0);
    auto path = (s.dir / "deep.dtb").string();
    std::ofstream(path, std::ios::binary).write(blob.data(), fdt_totalsize(fdt));
    auto r = run_cli("check " + model + "'" + path + "'", s.err());
    CHECK(r.exit_code == 2);
    CHECK(read_file(s.err()).find(path + ": error: device tree nested deeper than 256 levels") !=
          std::string::npos);
}

TEST_CASE("1 MiB on one line: the right answer; over --limit line-bytes a located error") {
    Scratch s("line");
    // The pool's size is 0x400000 written as 0x200000 + 1 + 1 + ... + 1 - (the ones) on one line.
    std::string ones;
    while (ones.size() < (1u << 20))
        ones += " + 1";
    std::string count = std::to_string(ones.size() / 4);
    auto path = s.write("long.dts", board_with_pool_size("", "0x400000" + ones + " - " + count));
    auto r = run_cli("check " + model + "--format json '" + path + "'", s.err());
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("\"size\": 4194304") != std::string::npos);
    // The same board with a 4 MiB + 1 pool: the error, so the long line was really evaluated.
    auto bad = s.write("bad.dts", board_with_pool_size("", "0x400001" + ones + " - " + count));
    CHECK(run_cli("check " + model + "'" + bad + "'").exit_code == 1);

    auto limited = run_cli("check " + model + "--limit line-bytes=1000 '" + path + "'", s.err());
    CHECK(limited.exit_code == 2);
    CHECK(read_file(s.err()).find(path + ":11:1001: error: line 11 is ") != std::string::npos);
}

TEST_CASE("10 MB of #define chains: a located error at the use that recurses too deep") {
    Scratch s("defines");
    std::string text = "#define M0 1\n";
    int i = 1;
    while (text.size() < 10'000'000) {
        text += "#define M" + std::to_string(i) + " (M" + std::to_string(i - 1) + " + M" +
                std::to_string(i - 1) + ")\n";
        ++i;
    }
    auto path = s.write("defines.dts", board_with_pool_size(text, "M" + std::to_string(i - 1)));
    auto r = run_cli("check " + model + "'" + path + "'", s.err());
    CHECK(r.exit_code == 2);
    auto err = read_file(s.err());
    // The pool's reg line: the text's i lines, then line 11 of the board.
    CHECK(err.find(path + ":" + std::to_string(i + 11) + ":24: error: ") != std::string::npos);
    CHECK(err.find("macro expansion nested too deeply (more than 256 levels)") !=
          std::string::npos);

    // A linear chain within the limit is expanded: L200 is 0x400000, a valid pool; 0x400001 not.
    std::string chain;
    for (int k = 1; k <= 200; ++k)
        chain += "#define L" + std::to_string(k) + " L" + std::to_string(k - 1) + "\n";
    auto ok = s.write("ok.dts", board_with_pool_size("#define L0 0x400000\n" + chain, "L200"));
    CHECK(run_cli("check " + model + "'" + ok + "'").exit_code == 0);
    auto off = s.write("off.dts", board_with_pool_size("#define L0 0x400001\n" + chain, "L200"));
    CHECK(run_cli("check " + model + "'" + off + "'").exit_code == 1);
}

TEST_CASE("node and property counts, file size and unknown limits") {
    Scratch s("counts");
    std::string wide = "/dts-v1/;\n/ {\n";
    for (int i = 0; i < 300; ++i)
        wide += "n" + std::to_string(i) + " { a = <1>; b = <2>; };\n";
    wide += "};\n";
    auto path = s.write("wide.dts", wide);
    CHECK(run_cli("check " + model + "'" + path + "'").exit_code == 0);
    CHECK(run_cli("check " + model + "--limit nodes=100 '" + path + "'", s.err()).exit_code == 2);
    CHECK(read_file(s.err()).find(path + ":102:1: error: more than 100 nodes") !=
          std::string::npos);
    CHECK(run_cli("check " + model + "--limit properties=100 '" + path + "'", s.err()).exit_code ==
          2);
    CHECK(read_file(s.err()).find(path + ":53:") != std::string::npos);
    CHECK(run_cli("check " + model + "--limit file-bytes=1K '" + path + "'", s.err()).exit_code ==
          2);
    CHECK(read_file(s.err()).find(path + ": error: file is larger than 1024 bytes") !=
          std::string::npos);
    CHECK(run_cli("check " + model + "--limit wombats=3 '" + path + "'", s.err()).exit_code == 2);
    CHECK(read_file(s.err()).find("unknown limit 'wombats'") != std::string::npos);
}

TEST_CASE("Kconfig: a source loop and a source chain deeper than the limit are located errors") {
    Scratch s("kconfig");
    s.write("Makefile", "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\n");
    s.write("arch/x86/Kconfig", "config X86\n\tdef_bool y\n");
    auto fragment = s.write("my.config", "CONFIG_A=y\n");
    auto top = s.write("Kconfig", "source \"arch/x86/Kconfig\"\nconfig A\n\tbool \"a\"\n"
                                  "source \"Kconfig\"\n");
    std::string args =
        "config --arch x86_64 --kernel-tree '" + s.dir.string() + "' -c '" + fragment + "'";
    CHECK(run_cli(args, s.err()).exit_code == 2);
    CHECK(read_file(s.err()).find(top + ":4:1: error: recursive inclusion detected") !=
          std::string::npos);

    // A chain of 150 files, each sourcing the next: deeper than the default 100.
    s.write("Kconfig", "source \"arch/x86/Kconfig\"\nconfig A\n\tbool \"a\"\nsource \"k/1\"\n");
    for (int i = 1; i < 150; ++i)
        s.write("k/" + std::to_string(i), "source \"k/" + std::to_string(i + 1) + "\"\n");
    s.write("k/150", "config B\n\tdef_bool y\n");
    CHECK(run_cli(args, s.err()).exit_code == 2);
    CHECK(read_file(s.err()).find("error: 'source' nested deeper than 100 levels "
                                  "(--limit kconfig-source-depth=N raises it)") !=
          std::string::npos);
    auto raised = run_cli(args + " --limit kconfig-source-depth=200", s.err());
    CHECK(raised.exit_code == 0);
    CHECK(raised.out.find("CONFIG_B=y\n") != std::string::npos);
    CHECK(raised.out.find("CONFIG_A=y\n") != std::string::npos);
}
