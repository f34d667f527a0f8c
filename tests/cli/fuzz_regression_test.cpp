// Every fuzz finding under tests/data/fuzz/<target>/ runs through the CLI again: it must end with
// an exit status (never a signal), and inputs that are corrupt must be rejected with exit 2 and a
// located error naming the file.
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
