// cmalign fix FILE... (--in-place | -o OUT | --diff): CMA pool sizes rounded up where written.
//
// Exit codes: 0 nothing needed fixing, or everything was fixed (--in-place / -o); 1 something
// needs a fix that was not applied: an unfixable size or base, conflicting edits, or — with
// --diff or without a mode — edits that are only shown (as `ruff --diff` and `black --check`
// do, so CI can fail on them); 2 configuration, input, usage or write errors.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/report/json_text.hpp"
#include "cmalign/report/report.hpp"
#include "cmalign/run_fix.hpp"
#include "common.hpp"

namespace cmalign::cli {

namespace {

// -o - or -o /dev/stdout (any name of the file stdout is): the fixed board is the output, so
// the list of edits goes to stderr, as a filter keeps its stdout for its data.
bool output_is_stdout(const FixRequest& request) {
    if (!request.out_path) return false;
    struct stat out {
    }, to{};
    return ::stat(request.out_path->c_str(), &out) == 0 && ::fstat(STDOUT_FILENO, &to) == 0 &&
           out.st_dev == to.st_dev && out.st_ino == to.st_ino;
}

// What was (or would be) changed, one line per edit, and the count on stderr.
void print_text(const FixRequest& request, const FixOutcome& outcome, std::ostream& edits_to) {
    std::vector<Diagnostic> all = outcome.config_diagnostics;
    for (const auto* list : {&outcome.input_errors, &outcome.diagnostics, &outcome.io_errors})
        all.insert(all.end(), list->begin(), list->end());
    report::TextOptions options;
    options.color = isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
    std::cerr << report::text(all, options);
    if (request.mode == FixMode::diff) std::cout << outcome.diff;
    if (request.mode != FixMode::diff) {
        for (const auto& e : outcome.edits)
            edits_to << fmt::format("{}:{}:{}: {} {}: {} -> {}\n", e.where.file, e.where.line,
                                    e.where.column, e.node, e.property,
                                    e.binary ? fmt::format("{:#x}", e.old_value) : e.old_text,
                                    e.binary ? fmt::format("{:#x}", e.new_value) : e.new_text);
    }
    if (!outcome.model || !outcome.alignment) return;
    std::vector<std::string> files;
    for (const auto& e : outcome.edits)
        if (std::find(files.begin(), files.end(), e.file) == files.end()) files.push_back(e.file);
    const bool writes = request.mode == FixMode::in_place || request.mode == FixMode::output;
    std::cerr << fmt::format(
        "{} board{}, alignment {}: {} edit{} in {} file{}{}\n", outcome.inputs,
        outcome.inputs == 1 ? "" : "s", format_size(*outcome.alignment), outcome.edits.size(),
        outcome.edits.size() == 1 ? "" : "s", files.size(), files.size() == 1 ? "" : "s",
        outcome.written.empty() ? (writes ? ", nothing written" : "")
                                : fmt::format(", {} file{} written", outcome.written.size(),
                                              outcome.written.size() == 1 ? "" : "s"));
}

} // namespace

ExitCode fix_command(const Invocation& invocation) {
    auto request = invocation.read(read_fix_request);
    if (request.out_path == "-") request.out_path = "/dev/stdout";
    pass_environment(request.config, invocation);
    const bool to_stdout = output_is_stdout(request);
    auto outcome = run_fix(request);
    std::cout.flush(); // the board went to stdout through its own descriptor
    std::ostream& report_to = to_stdout ? std::cerr : std::cout;
    if (invocation.value("format") == "json") {
        report_to << report::pretty_json(fix_json(outcome)) << '\n';
        if (request.mode == FixMode::diff) std::cerr << outcome.diff;
    } else {
        print_text(request, outcome, report_to);
    }
    return outcome.exit_code();
}

} // namespace cmalign::cli
