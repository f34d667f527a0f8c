// cmalign explain LOG BOARD: what a boot log shows happened to each reserved-memory node, why,
// and the fix.
#include <iostream>

#include "cmalign/explain.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/report/json_text.hpp"
#include "common.hpp"

namespace cmalign::cli {

ExitCode explain_command(const Invocation& invocation) {
    auto request = invocation.read(read_explain_request);
    pass_environment(request.config, invocation);
    auto outcome = run_explain(request);
    for (const auto& d : outcome.errors)
        std::cerr << format_gcc(d) << '\n';
    if (invocation.value("format") == "json")
        // A log is bytes from a serial line: invalid UTF-8 becomes U+FFFD, as run_json() does.
        std::cout << report::pretty_json(explain_json(outcome),
                                         nlohmann::json::error_handler_t::replace)
                  << '\n';
    else if (outcome.errors.empty())
        std::cout << explain_text(outcome);
    return outcome.exit_code();
}

} // namespace cmalign::cli
