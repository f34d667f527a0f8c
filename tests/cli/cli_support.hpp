// Running the built cmalign binary from tests.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include <doctest/doctest.h>

namespace cli_test {

struct Run {
    int exit_code = -1;
    std::string out;
};

// Runs a shell command line, stdout captured.
inline Run run_shell(const std::string& command) {
    Run r;
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::array<char, 4096> buffer{};
    size_t n = 0;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
        r.out.append(buffer.data(), n);
    int status = pclose(pipe);
    REQUIRE(WIFEXITED(status)); // never a signal
    r.exit_code = WEXITSTATUS(status);
    return r;
}

// Runs the built cmalign with `args` (shell words), stdout captured, stderr to `err_file`.
inline Run run_cli(const std::string& args, const std::string& err_file = "/dev/null") {
    return run_shell(std::string(CMALIGN_CLI) + " " + args + " 2>" + err_file);
}

// The same with `dir` as the working directory and no ARCH in the environment.
inline Run run_cli_in(const std::string& dir, const std::string& args,
                      const std::string& err_file = "/dev/null") {
    return run_shell("cd '" + dir + "' && env -u ARCH " + std::string(CMALIGN_CLI) + " " + args +
                     " 2>" + err_file);
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

inline std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("cmalign-cli-test-" + name)).string();
}

} // namespace cli_test
