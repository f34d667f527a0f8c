// Pipes, as a filter meets them: a board, a DTB or a configuration from `… | cmalign … /dev/stdin`
// is read once, to its writer's end, however late the writer writes, and every reader of the run
// sees the same bytes (explain reads -c three times); fix never renames over a pipe or a link to
// a descriptor, and `fix -o -` / `-o /dev/stdout` writes the board through stdout, its list of
// edits on stderr.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli.hpp"
#include "support/material.hpp"

namespace fs = std::filesystem;
using cli_test::read_file;
using cli_test::run_cli;
using cmalign::test::run_shell;

namespace {

const std::string source = CMALIGN_SOURCE_DIR;
const std::string cli = CMALIGN_CLI;
const std::string config = source + "/examples/configs/arm64-4k.config";

// One file: a 3 MiB pool (not a multiple of 2 MiB with 4K pages) that fix grows to 4 MiB.
const std::string board_text =
    "/dts-v1/;\n"
    "/ { #address-cells = <2>; #size-cells = <2>;\n"
    "    memory@40000000 { device_type = \"memory\"; reg = <0 0x40000000 0 0x40000000>; };\n"
    "    reserved-memory { #address-cells = <2>; #size-cells = <2>; ranges;\n"
    "        pool@50000000 { compatible = \"shared-dma-pool\"; reusable;\n"
    "                        reg = <0 0x50000000 0 0x300000>; };\n"
    "    };\n"
    "};\n";

struct Scratch {
    fs::path dir;
    Scratch() : dir(cli_test::temp_path("pipes")) {
        fs::remove_all(dir);
        fs::create_directories(dir);
        std::ofstream(dir / "b.dts") << board_text;
    }
    ~Scratch() { fs::remove_all(dir); }
    std::string path(const std::string& name) const { return (dir / name).string(); }
};

// `(sleep 1; cat FILE) | cmalign ARGS`: the writer starts after cmalign opened the pipe.
cmalign::test::Run late_pipe(const std::string& file, const std::string& args,
                             const std::string& err = "/dev/null") {
    return run_shell("(sleep 1; cat '" + file + "') | timeout 30 " + cli + " " + args + " 2>'" +
                     err + "'");
}

// The same text with the board's name in it replaced: a piped board is named /dev/stdin.
std::string renamed(std::string text, const std::string& from, const std::string& to) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

} // namespace

TEST_CASE("a board from a pipe is checked as the same board from a file, DTS and DTB") {
    Scratch s;
    auto board = s.path("b.dts");
    auto from_file = run_cli("check '" + board + "' -c '" + config + "'", s.path("file.err"));
    REQUIRE(from_file.exit_code == 1);
    auto piped = late_pipe(board, "check /dev/stdin -c '" + config + "'", s.path("pipe.err"));
    CHECK(piped.exit_code == 1);
    CHECK(piped.out == renamed(from_file.out, board, "/dev/stdin"));
    CHECK(piped.out.find("/dev/stdin:6:") != std::string::npos); // located in the piped text
    CHECK(piped.out.find("[cma-size-alignment]") != std::string::npos);
    CHECK(read_file(s.path("pipe.err")) == read_file(s.path("file.err")));

    auto dtb = s.path("b.dtb");
    REQUIRE(run_shell("dtc -q -I dts -O dtb -o '" + dtb + "' '" + board + "'").exit_code == 0);
    auto dtb_piped = late_pipe(dtb, "check /dev/stdin -c '" + config + "'", s.path("dtb.err"));
    CHECK(dtb_piped.exit_code == 1);
    CHECK(dtb_piped.out.find("/dev/stdin: error: CMA pool size 0x300000") != std::string::npos);
}

TEST_CASE("a configuration from a pipe is read once and serves every reader of the run") {
    Scratch s;
    const std::string log = source + "/examples/logs/seed-board-16k.dmesg";
    const std::string seed = source + "/examples/boards/seed-board.dts";
    const std::string sixteen = source + "/examples/configs/arm64-16k.config";
    // No --arch: the arch comes from the config, read for it before the evaluation reads it.
    auto from_file = run_cli("explain '" + log + "' '" + seed + "' -c '" + sixteen + "'");
    REQUIRE(from_file.out.find("fix: ") != std::string::npos);
    auto piped = late_pipe(sixteen, "explain '" + log + "' '" + seed + "' -c /dev/stdin");
    CHECK(piped.exit_code == from_file.exit_code);
    CHECK(piped.out == from_file.out); // fix's plan too, which reads the configuration again
}

TEST_CASE("fix: -o - writes the board to stdout and the edits to stderr; a pipe is never "
          "rewritten in place") {
    Scratch s;
    auto board = s.path("b.dts");
    std::string fixed = renamed(board_text, "0x300000", "0x400000");

    auto to_stdout = run_cli("fix '" + board + "' -c '" + config + "' -o -", s.path("err"));
    CHECK(to_stdout.exit_code == 0);
    CHECK(to_stdout.out == fixed);
    CHECK(read_file(s.path("err")).find("reg: 0x300000 -> 0x400000") != std::string::npos);
    CHECK(read_file(board) == board_text);

    // Through the shell's descriptor: `>>` appends, and the file the shell opened is the one
    // that holds the board (no rename behind its back).
    std::ofstream(s.path("appended.dts")) << "// kept\n";
    auto appended = run_shell(cli + " fix '" + board + "' -c '" + config + "' -o /dev/stdout >> '" +
                              s.path("appended.dts") + "' 2>/dev/null");
    CHECK(appended.exit_code == 0);
    CHECK(read_file(s.path("appended.dts")) == "// kept\n" + fixed);

    // A piped board, fixed to stdout: the edit lands in the bytes that came through the pipe.
    auto piped = late_pipe(board, "fix /dev/stdin -c '" + config + "' -o -");
    CHECK(piped.exit_code == 0);
    CHECK(piped.out == fixed);

    // --in-place on a link to a descriptor (as /dev/stdin is): refused, and the link stays a link.
    auto link = s.path("stdin-link");
    fs::create_symlink("/proc/self/fd/0", link);
    auto in_place = late_pipe(board, "fix '" + link + "' -c '" + config + "' --in-place",
                              s.path("in-place.err"));
    CHECK(in_place.exit_code == 2);
    CHECK(read_file(s.path("in-place.err"))
              .find("cannot rewrite " + link + " in place: it is a pipe, not a regular file") !=
          std::string::npos);
    CHECK(fs::is_symlink(link));
    CHECK(fs::read_symlink(link) == "/proc/self/fd/0");
}
