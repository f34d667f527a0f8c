// cmalign map BOARD: a picture of the board's physical memory for one kernel configuration:
// /memory banks, /memreserve/ entries, every reservation with its kind and size, the CMA
// alignment grid, what the kernel rejects and what `fix` would change.
//
// --format text (default): a compact terminal picture, 80 columns; svg: a standalone picture;
// json: the layout as data. Exit codes: 0 nothing rejected, 1 the kernel rejects something
// shown, 2 configuration, input or usage error.
#include <langinfo.h>

#include <clocale>
#include <fstream>
#include <iostream>

#include "cmalign/fix/fix.hpp"
#include "cmalign/internal/map/map_json.hpp"
#include "cmalign/internal/report/json_text.hpp"
#include "cmalign/map/map.hpp"
#include "cmalign/run_map.hpp"
#include "common.hpp"

namespace cmalign::cli {

namespace {
bool utf8_locale() {
    std::setlocale(LC_CTYPE, "");
    std::string codeset = nl_langinfo(CODESET);
    std::setlocale(LC_CTYPE, "C");
    return codeset == "UTF-8" || codeset == "utf8";
}
} // namespace

ExitCode map_command(const Invocation& invocation) {
    auto request = invocation.read(read_map_request);
    pass_environment(request.config, invocation);
    auto outcome = run_map(request);
    std::vector<Diagnostic> shown = outcome.config_diagnostics;
    shown.insert(shown.end(), outcome.errors.begin(), outcome.errors.end());
    print_diagnostics(shown);
    if (!outcome.layout) return ExitCode::input_error;
    const auto format = invocation.value("format");
    std::string text =
        format == "svg" ? map::render_svg(*outcome.layout)
        : format == "json"
            ? report::pretty_json(map::to_json(*outcome.layout)) + "\n"
            : map::render_text(*outcome.layout, std::stoi(invocation.value("columns")));
    // Box-drawing glyphs only where the locale says UTF-8 (LC_ALL=C gets ASCII).
    if (format == "text" && !utf8_locale()) text = map::to_ascii(text);
    const auto output = invocation.value("output");
    if (output.empty() || output == "-") {
        std::cout << text;
    } else {
        Diagnostics written; // atomic, and a read-only target refused, as fix writes
        if (!fix::write_file_atomically(output, text, written)) {
            print_diagnostics(written);
            return ExitCode::input_error;
        }
    }
    return outcome.exit_code();
}

} // namespace cmalign::cli
