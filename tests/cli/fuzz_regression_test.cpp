// Every fuzz finding under tests/data/fuzz/<target>/ runs through the CLI again: it must end with
// an exit status (never a signal), and inputs that are corrupt must be rejected with exit 2 and a
// located error naming the file. Multi-file inputs are split at "@@@" lines as their fuzz target
// splits them (fuzz/fuzz_support.hpp write_named_parts()).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> findings(const char* target) {
    std::vector<fs::path> files;
    fs::path dir = fs::path(CMALIGN_TEST_DATA) / "fuzz" / target;
    if (!fs::is_directory(dir)) return files;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.is_regular_file()) files.push_back(entry.path());
    return files;
}

// The parts of a multi-file fuzz input, written under `dir` with `names` (as the fuzz target
// writes them); the paths written.
std::vector<std::string> write_parts(const std::string& input, const fs::path& dir,
                                     const std::vector<std::string>& names) {
    std::vector<std::string> paths;
    std::size_t start = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
        std::size_t cut = input.find("\n@@@\n", start);
        bool last = cut == std::string::npos || i + 1 == names.size();
        auto path = dir / names[i];
        fs::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary)
            << input.substr(start, last ? std::string::npos : cut - start);
        paths.push_back(path.string());
        if (last) break;
        start = cut + 5;
    }
    return paths;
}

std::string shell_quoted(const std::string& s) {
    return "'" + s + "'";
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

TEST_CASE("DTB fuzz findings are rejected with a located error, never a crash") {
    auto files = findings("dtb");
    REQUIRE(!files.empty());
    for (const auto& file : files) {
        CAPTURE(file.string());
        std::string err = fs::temp_directory_path() / "cmalign-fuzz-regression.err";
        auto run = cli_test::run_cli("check --arch arm64 '" + file.string() + "'", err);
        CHECK(run.exit_code == 2);
        std::string messages = read_text(err);
        CHECK(messages.find(file.string() + ": error: ") != std::string::npos);
    }
}

TEST_CASE("DTS fuzz findings end in an exit status, and the reduced ones in a located error") {
    auto files = findings("dts");
    REQUIRE(files.size() >= 3);
    for (const auto& file : files) {
        CAPTURE(file.string());
        std::string err = fs::temp_directory_path() / "cmalign-fuzz-regression.err";
        auto run = cli_test::run_cli("check --arch arm64 '" + file.string() + "'", err);
        CHECK(run.exit_code == 2); // every one of them is malformed
        CHECK(read_text(err).find(file.string() + ":") != std::string::npos);
    }
}

namespace {

// The command line that feeds a kept input of `target` to the program as the fuzz target feeds
// it to the library; empty for a target this test does not know (a failure: add it here).
std::string command_for(const std::string& target, const fs::path& file, const fs::path& work) {
    std::string input = read_text(file.string());
    if (target == "dtb" || target == "dts")
        return "check --arch arm64 " + shell_quoted(file.string());
    if (target == "overlay") {
        auto parts = write_parts(input, work, {"board.dts", "overlay.dtso", "a.dtsi"});
        if (parts.size() < 2) return "check --arch arm64 " + shell_quoted(parts[0]);
        return "check --arch arm64 " + shell_quoted(parts[0]) + " --overlay " +
               shell_quoted(parts[1]);
    }
    if (target == "kconfig") {
        // First byte: the version's semantics as fuzz/fuzz_kconfig.cpp picks them; then
        // Kconfig, arch/x86/Kconfig, lib/Kconfig and a .config.
        static constexpr const char* versions[][2] = {
            {"6", "12"}, {"6", "1"}, {"7", "2"}, {"5", "10"}};
        const auto* version = versions[input.empty() ? 0 : input[0] & 3];
        std::ofstream(work / "Makefile")
            << "VERSION = " << version[0] << "\nPATCHLEVEL = " << version[1] << "\nSUBLEVEL = 0\n";
        fs::create_directories(work / "arch/x86");
        auto parts = write_parts(input.empty() ? input : input.substr(1), work,
                                 {"Kconfig", "arch/x86/Kconfig", "lib/Kconfig", "fuzz.config"});
        std::string config = parts.size() == 4 ? " -c " + shell_quoted(parts[3]) : "";
        return "config --arch x86_64 --kernel-tree " + shell_quoted(work.string()) + config;
    }
    if (target == "fragment") return "config --arch arm64 -c " + shell_quoted(file.string());
    if (target == "explain") {
        auto parts = write_parts(input, work, {"boot.log", "board.dts"});
        std::string board =
            parts.size() == 2 ? parts[1]
                              : std::string(CMALIGN_SOURCE_DIR) + "/examples/boards/seed-board.dts";
        return "explain --arch arm64 --format json " + shell_quoted(parts[0]) + " " +
               shell_quoted(board);
    }
    return {};
}

} // namespace

TEST_CASE("every kept fuzz input runs through the program to an exit status, never a signal") {
    fs::path root = fs::path(CMALIGN_TEST_DATA) / "fuzz";
    std::size_t ran = 0;
    for (const auto& target_dir : fs::directory_iterator(root)) {
        if (!target_dir.is_directory()) continue;
        std::string target = target_dir.path().filename().string();
        for (const auto& entry : fs::directory_iterator(target_dir.path())) {
            if (!entry.is_regular_file()) continue;
            CAPTURE(entry.path().string());
            fs::path work = fs::temp_directory_path() / ("cmalign-fuzz-replay-" + target);
            fs::remove_all(work);
            fs::create_directories(work);
            std::string command = command_for(target, entry.path(), work);
            REQUIRE_MESSAGE(!command.empty(), "no command for fuzz target " << target);
            CAPTURE(command);
            std::string err = (work / "stderr").string();
            auto run = cli_test::run_cli(command, err);
            std::string messages = read_text(err);
            CAPTURE(messages);
            // The shell reports a child killed by a signal as 128 + its number.
            CHECK(run.exit_code <= 2);
            CHECK(messages.find("terminate called") == std::string::npos);
            // Under ASan/UBSan a finding exits 1 by default: the report is the failure.
            CHECK(messages.find("Sanitizer") == std::string::npos);
            CHECK(messages.find("runtime error:") == std::string::npos);
            CHECK(messages.find("internal error") == std::string::npos); // fixed, not caught
            ++ran;
            fs::remove_all(work);
        }
    }
    CHECK(ran >= 6);
}

TEST_CASE("the two fuzz-found aborts end in exit 2 with a located error") {
    fs::path work = fs::temp_directory_path() / "cmalign-fuzz-aborts";
    fs::remove_all(work);
    fs::create_directories(work);
    SUBCASE("an overlay __fixups__ offset of 26 digits") {
        auto file = fs::path(CMALIGN_TEST_DATA) / "fuzz/overlay/fixup-offset-30-digits.dts";
        std::string err = (work / "stderr").string();
        auto run = cli_test::run_cli(command_for("overlay", file, work), err);
        CHECK(run.exit_code == 2);
        std::string messages = read_text(err);
        CAPTURE(messages);
        CHECK(messages.find((work / "overlay.dtso").string() + ":") != std::string::npos);
        CHECK(messages.find("offset 99999999999999999999999999") != std::string::npos);
        CHECK(messages.find("out of range") != std::string::npos);
    }
    SUBCASE("a Kconfig user function called with a 23-digit argument number") {
        // kconfig's preprocess.c: strtoul() saturates, so $(99999999999999999999999) is no
        // argument but an undefined variable: empty, as `make olddefconfig` has it.
        auto file = fs::path(CMALIGN_TEST_DATA) / "fuzz/kconfig/huge-argument-number.kconfig";
        std::string err = (work / "stderr").string();
        auto run = cli_test::run_cli(command_for("kconfig", file, work) + " --format json", err);
        CAPTURE(read_text(err));
        CHECK(run.exit_code == 0);
        CHECK(run.out.find("\"CONFIG_X\"") != std::string::npos);
    }
    fs::remove_all(work);
}
