// A BSP tool's check step in C++: before building the images, make sure the kernel will create
// every CMA pool of the boards. Usage: bsp_check_cpp [-I DIR]... CONFIG... -- BOARD...
// Prints the alignment and each finding gcc-style; exit 1 when a pool would be rejected.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <cmalign/api.hpp>
#include <cmalign/report/report.hpp>
#include <cmalign/run.hpp>

int main(int argc, char** argv) {
    cmalign::CheckRequest request;
    bool boards = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") == 0)
            boards = true;
        else if (!boards && std::strcmp(argv[i], "-I") == 0 && i + 1 < argc)
            request.tree.include_dirs.push_back(argv[++i]);
        else if (boards)
            request.inputs.push_back(argv[i]);
        else
            request.config.config_files.push_back(argv[i]);
    }
    if (request.inputs.empty()) {
        std::cerr << "usage: bsp_check_cpp [-I DIR]... CONFIG... -- BOARD...\n";
        return 2;
    }
    request.config.kernel_version = "6.12";

    auto outcome = cmalign::run_check(request);
    if (outcome.unusable_input()) {
        for (const auto* list : {&outcome.config_diagnostics, &outcome.input_errors})
            for (const auto& d : *list)
                std::cerr << cmalign::format_gcc(d) << '\n';
        return 2;
    }
    std::cout << "cmalign " << cmalign::library_version << ": CMA alignment "
              << outcome.model->cma_min_alignment_bytes.value_or(0) << " bytes\n";
    int failing = 0;
    for (const auto& result : outcome.results) {
        cmalign::report::TextOptions options;
        options.show_source = false;
        std::cout << cmalign::report::text(result.diagnostics, options);
        if (result.failed(false)) ++failing;
    }
    std::cout << failing << " of " << outcome.results.size() << " boards would lose a CMA pool\n";
    return failing ? 1 : 0;
}
