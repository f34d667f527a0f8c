// The CLI argument vector: the first "@@@" part is split at blanks into the words after "cmalign";
// the next parts are written as b.dts, c.config and d.log in the scratch directory, which is the
// working directory, so the words can name them. The app is built as src/cli/main.cpp builds it
// and parsed; the commands run (their output goes nowhere). Words that would reach outside the
// scratch directory or run programs are dropped: any with '/', and --kernel-tree/--kconfig-shell.
// Property: parsing and running end in an exit code or a CLI11 error, never in any other
// exception or a crash (main() would turn one into "internal error", a bug).
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "cli/app.hpp"
#include "fuzz_support.hpp"

namespace {

struct NullBuffer : std::streambuf {
    int overflow(int c) override { return c; }
};

// Every command the program has, less boot-check: it starts QEMU (a --qemu word could name any
// program), which a fuzzer must not do.
void register_all(CLI::App& app) {
    cmalign::cli::register_commands(app);
    app.remove_subcommand(app.get_subcommand("boot-check"));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static NullBuffer null;
    static bool quiet = [] {
        std::cout.rdbuf(&null);
        std::cerr.rdbuf(&null);
        return true;
    }();
    (void)quiet;
    std::string_view input(reinterpret_cast<const char*>(data), size);
    auto cut = input.find("\n@@@\n");
    if (cut != std::string_view::npos)
        cmalign::fuzz::write_named_parts(input.substr(cut + 5), {"b.dts", "c.config", "d.log"});
    std::vector<std::string> words{"cmalign"};
    std::istringstream split{std::string(input.substr(0, cut))};
    for (std::string w; split >> w;) {
        if (w.find('/') != std::string::npos || w.starts_with("--kernel-tree") ||
            w.starts_with("--kconfig-shell") || w.starts_with("--help-man"))
            continue;
        words.push_back(w);
    }
    if (words.size() > 64) return 0;
    const auto dir = cmalign::fuzz::scratch_dir().string();
    if (::chdir(dir.c_str()) != 0) return 0;
    std::vector<char*> argv;
    for (auto& w : words)
        argv.push_back(w.data());
    argv.push_back(nullptr);

    // One app for the process: add_command() keys each command's values by the App's address,
    // so a new App per input could meet the stale entry of a freed one. CLI11 clears the parse
    // state of an App parsed again; option values of an earlier input may stay (as in a long-lived
    // program), which only widens what is explored.
    static CLI::App app{"cmalign", "cmalign"};
    static bool registered = [] {
        app.require_subcommand(1);
        register_all(app);
        return true;
    }();
    (void)registered;
    try {
        app.parse(static_cast<int>(words.size()), argv.data());
    } catch (const CLI::Error&) {
        // usage errors and --help/--version: main() prints them, exit 0 or 2
    }
    return 0;
}
