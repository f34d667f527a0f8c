// cmalign pcp: per-CPU page list batch/high, watermarks and min_free_kbytes of a board; cmalign
// heap: the chunk plan of one dma-buf system heap allocation.
#include <iostream>

#include "cmalign/internal/json.hpp"
#include "cmalign/internal/report/json_text.hpp"
#include "cmalign/tune.hpp"
#include "common.hpp"

namespace cmalign::cli {

namespace {

// Both calculators alike: the request read and run, its diagnostics, then JSON or text.
template <class Request, class Outcome>
ExitCode calculate(const Invocation& invocation, Request request, Outcome (*run)(const Request&),
                   nlohmann::json (*json)(const Outcome&), std::string (*text)(const Outcome&)) {
    pass_environment(request.config, invocation);
    auto outcome = run(request);
    print_diagnostics(outcome.diags);
    if (outcome.exit_code() == ExitCode::input_error) return ExitCode::input_error;
    if (invocation.value("format") == "json")
        std::cout << report::pretty_json(json(outcome)) << '\n';
    else
        std::cout << text(outcome);
    return outcome.exit_code();
}

} // namespace

ExitCode pcp_command(const Invocation& invocation) {
    return calculate(invocation, invocation.read(read_pcp_request), run_pcp, pcp_json, pcp_text);
}

ExitCode heap_command(const Invocation& invocation) {
    return calculate(invocation, invocation.read(read_heap_request), run_heap, heap_json,
                     heap_text);
}

} // namespace cmalign::cli
