// cmalign boot-check BOARD --kernel IMAGE: boot the kernel in QEMU with the board's reservations
// and set what it did next to check's prediction.
#include <iostream>

#include "cmalign/boot_check.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/report/json_text.hpp"
#include "common.hpp"

namespace cmalign::cli {

ExitCode boot_check_command(const Invocation& invocation) {
    auto request = invocation.read(read_boot_check_request);
    pass_environment(request.config, invocation);
    auto outcome = run_boot_check(request);
    for (const auto& d : outcome.errors)
        std::cerr << format_gcc(d) << '\n';
    if (invocation.value("format") == "json")
        std::cout << report::pretty_json(boot_check_json(outcome)) << '\n';
    else
        std::cout << boot_check_text(outcome);
    return outcome.exit_code();
}

} // namespace cmalign::cli
