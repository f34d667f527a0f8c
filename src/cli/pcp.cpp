// cmalign pcp: per-CPU page list batch/high, watermarks and min_free_kbytes of a board; cmalign
// heap: the chunk plan of one dma-buf system heap allocation.
#include <iostream>

#include "cmalign/tune.hpp"
#include "common.hpp"

namespace cmalign::cli {

ExitCode pcp_command(const Invocation& invocation) {
    auto request = invocation.read(read_pcp_request);
    pass_environment(request.config, invocation);
    auto outcome = run_pcp(request);
    print_diagnostics(outcome.diags);
    if (outcome.exit_code() == ExitCode::input_error) return ExitCode::input_error;
    if (invocation.value("format") == "json")
        std::cout << pcp_json(outcome).dump(2) << '\n';
    else
        std::cout << pcp_text(outcome);
    return outcome.exit_code();
}

ExitCode heap_command(const Invocation& invocation) {
    auto request = invocation.read(read_heap_request);
    pass_environment(request.config, invocation);
    auto outcome = run_heap(request);
    print_diagnostics(outcome.diags);
    if (outcome.exit_code() == ExitCode::input_error) return ExitCode::input_error;
    if (invocation.value("format") == "json")
        std::cout << heap_json(outcome).dump(2) << '\n';
    else
        std::cout << heap_text(outcome);
    return outcome.exit_code();
}

} // namespace cmalign::cli
