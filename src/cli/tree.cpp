// cmalign tree FILE: the resolved tree, as dtc builds it.
#include <iostream>

#include "cmalign/run.hpp"
#include "common.hpp"

namespace cmalign::cli {

ExitCode tree_command(const Invocation& invocation) {
    auto outcome = run_tree(invocation.read(read_tree_request));
    print_diagnostics(outcome.diags);
    if (outcome.exit_code() == ExitCode::input_error) return ExitCode::input_error;
    if (outcome.dts)
        std::cout << *outcome.dts;
    else
        std::cout << *outcome.json << '\n';
    return ExitCode::clean;
}

} // namespace cmalign::cli
