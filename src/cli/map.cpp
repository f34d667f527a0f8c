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

void register_map(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand("map");
    auto request = std::make_shared<MapRequest>();
    auto format = std::make_shared<std::string>("text");
    auto output = std::make_shared<std::string>();
    auto columns = std::make_shared<int>(80);
    add_input(cmd, "board", request->input, "a .dts or .dtb board");
    add_config_options(*cmd, request->config);
    add_tree_options(*cmd, request->tree);
    cmd->add_option("--bootargs", request->checks.bootargs);
    add_format(cmd, *format);
    cmd->add_option("-o,--output", *output);
    cmd->add_option("--columns", *columns)->check(CLI::Range(60, 1000));

    on_run(cmd, [=, &exit_code] {
        auto outcome = run_map(*request);
        Diagnostics shown;
        for (const auto* list : {&outcome.config_diagnostics, &outcome.errors})
            for (const auto& d : *list)
                shown.add(d);
        print_diagnostics(shown);
        if (!outcome.layout) {
            exit_code = ExitCode::input_error;
            return;
        }
        std::string text = *format == "svg"    ? map::render_svg(*outcome.layout)
                           : *format == "json" ? map::to_json(*outcome.layout).dump(2) + "\n"
                                               : map::render_text(*outcome.layout, *columns);
        // Box-drawing glyphs only where the locale says UTF-8 (LC_ALL=C gets ASCII).
        if (*format == "text" && !utf8_locale()) text = map::to_ascii(text);
        if (output->empty()) {
            std::cout << text;
        } else {
            Diagnostics written; // atomic, and a read-only target refused, as fix writes
            if (!fix::write_file_atomically(*output, text, written)) {
                print_diagnostics(written);
                exit_code = ExitCode::input_error;
                return;
            }
        }
        exit_code = outcome.exit_code();
    });
}

} // namespace cmalign::cli
