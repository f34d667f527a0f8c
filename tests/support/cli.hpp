// Running the built cmalign binary from tests.
#pragma once

#include <filesystem>
#include <string>

#include "support/run.hpp"

namespace cli_test {

using cmalign::test::read_file;
using cmalign::test::Run;
using cmalign::test::run_shell;

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

inline std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("cmalign-cli-test-" + name)).string();
}

} // namespace cli_test
