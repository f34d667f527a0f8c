// Running commands (the built cmalign above all) from tests, and reading what they wrote.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

namespace cmalign::test {

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

struct Run {
    int exit_code = -1;
    std::string out;
    std::string err; // what the command left on stderr (empty when it redirects it itself)
};

// Runs a shell command line: stdout captured, stderr through a temp file. It must exit, never
// die of a signal.
inline Run run_shell(const std::string& command) {
    auto err_path =
        std::filesystem::temp_directory_path() / ("cmalign-test-err-" + std::to_string(::getpid()));
    Run r;
    FILE* pipe = popen(("(" + command + ") 2>" + err_path.string()).c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::array<char, 4096> buffer{};
    size_t n = 0;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
        r.out.append(buffer.data(), n);
    int status = pclose(pipe);
    REQUIRE(WIFEXITED(status)); // never a signal
    r.exit_code = WEXITSTATUS(status);
    r.err = read_file(err_path.string());
    std::filesystem::remove(err_path);
    return r;
}

} // namespace cmalign::test
