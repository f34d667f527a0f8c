// cmalign: will the kernel accept this device tree's CMA reservations?
#include <exception>
#include <iostream>
#include <string>

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

} // namespace

int main(int argc, char** argv) try {
    CLI::App app{"cmalign: check device-tree CMA reservations against the kernel's alignment rules",
                 "cmalign"};
    app.set_version_flag("--version", std::string("cmalign ") + CMALIGN_VERSION);
    app.require_subcommand(1);

    cmalign::cli::register_commands(app, cmalign::cli::command_named(argc, argv));
    // A board or -c from a pipe stays readable until the program ends (the report quotes its
    // lines after the command ran, fix -o writes it out), and the answer kept in the cache after
    // the command stamps the files the Kconfig entry stamped during it only once.
    const cmalign::RunScope run;
    return cmalign::cli::run_command_line(app, argc, argv);
} catch (...) {
    return report_escaped_exception(argc, argv);
}
