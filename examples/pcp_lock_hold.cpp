// How many pages does the page allocator free or drain under one zone lock hold, for a board of
// a given memory size, CPU count and page size? Prints the table for every page size of arm64
// and PCP_BATCH_SCALE_MAX 0..6, from the library's calculator (calc/pcp.hpp), with the zones
// estimated as `cmalign pcp --memory` does.
//
//   example_pcp_lock_hold [MEMORY [CPUS [KERNEL_VERSION]]]     default: 1G 1 6.12 (RZ/G3S)
#include <cstdio>
#include <string>

#include "cmalign/core/size.hpp"
#include "cmalign/tune.hpp"

using namespace cmalign;

int main(int argc, char** argv) {
    std::string memory = argc > 1 ? argv[1] : "1G";
    unsigned cpus = argc > 2 ? static_cast<unsigned>(std::stoul(argv[2])) : 1;
    std::string version = argc > 3 ? argv[3] : "6.12";
    std::printf("arm64 %s, %s RAM, %u CPU(s): pages per zone-lock hold = batch << scale\n",
                version.c_str(), memory.c_str(), cpus);
    std::printf("%-5s %6s  %s\n", "page", "batch", "scale 0 .. 6 (pages, bytes)");
    for (const char* page : {"ARM64_4K_PAGES", "ARM64_16K_PAGES", "ARM64_64K_PAGES"}) {
        PcpRequest request;
        request.config.arch = "arm64";
        request.config.kernel_version = version;
        request.config.sets = {std::string("CONFIG_") + page + "=y"};
        request.memory = memory;
        request.cpus = cpus;
        auto outcome = run_pcp(request);
        if (outcome.exit_code() == ExitCode::input_error) {
            for (const auto& d : outcome.diags.items())
                std::fprintf(stderr, "%s\n", format_gcc(d).c_str());
            return 2;
        }
        const auto* zone = outcome.result.largest_zone();
        std::printf("%-5s %6d ", format_size(outcome.input.page_size).c_str(), zone->batch);
        for (const auto& row : outcome.result.by_scale)
            std::printf(" %u=%s", static_cast<unsigned>(row.max_pages_per_lock),
                        format_size(row.max_bytes_per_lock).c_str());
        std::printf("\n");
    }
    return 0;
}
