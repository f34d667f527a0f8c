// cmalign: will the kernel accept this device tree's CMA reservations?
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#ifdef CMALIGN_HAVE_MIMALLOC
#include <mimalloc.h>
#endif

#include "app.hpp"
#include "cmalign/core/error.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/version.hpp"

namespace {

// The arguments after the program name, as typed (what names the input of a failed run).
std::string command_line(int argc, char** argv) {
    std::string words;
    for (int i = 1; i < argc; ++i) {
        if (i > 1) words += ' ';
        words += argv[i];
    }
    return words;
}

// Nothing ends the process: an exception that escaped a command becomes one line on stderr and
// exit 2. cmalign::Error carries its own "file:line:col: error:" location; anything else is a bug,
// reported with the command line that caused it.
int report_escaped_exception(int argc, char** argv) {
    try {
        throw;
    } catch (const cmalign::Error& e) {
        std::cerr << e.what() << '\n';
    } catch (const std::bad_alloc&) {
        std::cerr << cmalign::internal_error_message("out of memory", command_line(argc, argv))
                  << '\n';
    } catch (const std::exception& e) {
        std::cerr << cmalign::internal_error_message(e.what(), command_line(argc, argv)) << '\n';
    } catch (...) {
        std::cerr << cmalign::internal_error_message("", command_line(argc, argv)) << '\n';
    }
    return cmalign::to_int(cmalign::ExitCode::input_error);
}

// A whole tree's check touches about 200 MB: on 2 MiB pages, where the kernel gives them
// (transparent huge pages in madvise mode, Debian's default), its page faults go from 83,000 to
// about 15,000 and it takes 3-10% less time; a one-board run keeps its page faults and time.
// MIMALLOC_LARGE_OS_PAGES in the environment still decides.
void prefer_large_pages() {
#ifdef CMALIGN_HAVE_MIMALLOC
    if (!std::getenv("MIMALLOC_LARGE_OS_PAGES")) mi_option_enable(mi_option_large_os_pages);
#endif
}

// The command line parsed (CLI11) and its command run.
int parse_and_run(int argc, char** argv) {
    CLI::App app{"cmalign: check device-tree CMA reservations against the kernel's alignment rules",
                 "cmalign"};
    app.set_version_flag("--version", std::string("cmalign ") + CMALIGN_VERSION);
    app.require_subcommand(1);

    cmalign::cli::register_commands(app, cmalign::cli::command_named(argc, argv));
    return cmalign::cli::run_command_line(app, argc, argv);
}

} // namespace

int main(int argc, char** argv) try {
    prefer_large_pages();
    // An unchanged board's answer is printed before the parser is built: a pre-commit hook's
    // warm run is mostly process start and stat(2) calls, and building CLI11's options took a
    // tenth of it.
    const auto replayed = cmalign::cli::replay_typed(argc, argv);
    // A board or -c from a pipe stays readable until the program ends (the report quotes its
    // lines after the command ran, fix -o writes it out), the answer kept in the cache after the
    // command stamps the files the Kconfig entry stamped during it only once, and what the run
    // handed to the scope to free (a whole tree's include memos) is never freed: the scope is
    // still open when the program exits.
    const cmalign::RunScope run;
    const int status = replayed ? *replayed : parse_and_run(argc, argv);
#ifdef CMALIGN_EXIT_WITHOUT_FREEING
    // Everything is printed and every cache entry written: freeing a whole tree's include memos
    // and results block by block would take the last 5 % of a bulk check, and the system takes
    // the memory back at once anyway.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    std::_Exit(status);
#else
    return status;
#endif
} catch (...) {
    return report_escaped_exception(argc, argv);
}
