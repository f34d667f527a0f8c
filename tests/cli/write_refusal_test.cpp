// Writes say no the same way everywhere: fix --in-place, fix -o and map -o refuse a
// read-only target with the reason, exit 2, and leave its bytes and mode as they were.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli.hpp"

namespace fs = std::filesystem;
using cli_test::read_file;
using cli_test::run_cli;

namespace {

const std::string source = CMALIGN_SOURCE_DIR;
const std::string config = " -c '" + source + "/examples/configs/arm64-16k.config'";

struct Scratch {
    fs::path dir;
    Scratch() : dir(cli_test::temp_path("write-refusal")) {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~Scratch() {
        for (const auto& e : fs::directory_iterator(dir))
            ::chmod(e.path().c_str(), 0644);
        fs::remove_all(dir);
    }
    std::string path(const std::string& name) const { return (dir / name).string(); }
    std::string err() const { return path("stderr"); }
};

unsigned mode_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

// The upstream commit's example board, one file (its 4 MiB pool is rejected with 16K pages, and
// fix changes its literal size), copied to `path` with `mode`.
std::string board_copy(const std::string& path, unsigned mode) {
    fs::copy_file(source + "/examples/boards/upstream-commit-example.dts", path,
                  fs::copy_options::overwrite_existing);
    REQUIRE(::chmod(path.c_str(), mode) == 0);
    return path;
}

} // namespace

TEST_CASE("fix --in-place refuses a read-only board with the reason") {
    Scratch s;
    auto board = board_copy(s.path("board.dts"), 0444);
    std::string before = read_file(board);
    auto run = run_cli("fix '" + board + "'" + config + " --in-place", s.err());
    std::string err = read_file(s.err());
    CAPTURE(err);
    CHECK(run.exit_code == 2);
    CHECK(err.find(board + ": error: permission denied: " + board +
                   " is read-only (mode 0444); nothing written") != std::string::npos);
    CHECK(read_file(board) == before);
    CHECK(mode_of(board) == 0444);
    // The same board writable is fixed: the refusal is about the mode, nothing else.
    REQUIRE(::chmod(board.c_str(), 0644) == 0);
    auto fixed = run_cli("fix '" + board + "'" + config + " --in-place", s.err());
    CAPTURE(read_file(s.err()));
    CHECK(fixed.exit_code <= 1);
    CHECK(read_file(board) != before);
}

TEST_CASE("fix -o and map -o refuse a read-only target the same way") {
    Scratch s;
    auto board = board_copy(s.path("board.dts"), 0644);
    const std::pair<std::string, std::string> cases[] = {
        {"fix '" + board + "'" + config + " -o ", s.path("fixed.dts")},
        {"map '" + board + "'" + config + " --format svg -o ", s.path("map.svg")}};
    for (const auto& one : cases) { // (clang 14 cannot capture a structured binding)
        const std::string& command = one.first;
        const std::string& target = one.second;
        CAPTURE(command);
        std::ofstream(target) << "keep me\n";
        REQUIRE(::chmod(target.c_str(), 0444) == 0);
        auto run = run_cli(command + "'" + target + "'", s.err());
        std::string err = read_file(s.err());
        CAPTURE(err);
        CHECK(run.exit_code == 2);
        CHECK(err.find(target + ": error: permission denied: " + target +
                       " is read-only (mode 0444); nothing written") != std::string::npos);
        CHECK(read_file(target) == "keep me\n");
        CHECK(mode_of(target) == 0444);
        // Writable, the same command writes it.
        REQUIRE(::chmod(target.c_str(), 0644) == 0);
        auto written = run_cli(command + "'" + target + "'", s.err());
        CAPTURE(read_file(s.err()));
        CHECK(written.exit_code <= 1);
        CHECK(read_file(target) != "keep me\n");
    }
}
