// The dma-buf system heap's chunk plan for a camera or display buffer, side by side for 6.1 and
// 6.12 and for 4K/16K/64K pages: how many chunks of each order, which may enter direct reclaim,
// and how many scatterlist entries the importer gets.
//
//   example_heap_plan [SIZE [AVAILABLE_ORDER]]     default: 10M (e.g. 1080p NV12 x 3)
#include <cstdio>
#include <string>

#include "cmalign/core/size.hpp"
#include "cmalign/tune.hpp"

using namespace cmalign;

int main(int argc, char** argv) {
    std::string size = argc > 1 ? argv[1] : "10M";
    std::optional<int> available;
    if (argc > 2) available = std::stoi(argv[2]);
    for (const char* version : {"6.1", "6.12"}) {
        for (const char* page : {"ARM64_4K_PAGES", "ARM64_16K_PAGES", "ARM64_64K_PAGES"}) {
            HeapRequest request;
            request.config.arch = "arm64";
            request.config.kernel_version = version;
            request.config.sets = {std::string("CONFIG_") + page + "=y"};
            request.size = size;
            request.available_order = available;
            auto outcome = run_heap(request);
            if (outcome.exit_code() != ExitCode::clean) {
                for (const auto& d : outcome.diags.items())
                    std::fprintf(stderr, "%s\n", format_gcc(d).c_str());
                return 2;
            }
            const auto& plan = *outcome.plan;
            std::printf("%-5s %-7s sg %-5llu", version, format_size(plan.page_size).c_str(),
                        static_cast<unsigned long long>(plan.sg_entries));
            for (const auto& c : plan.chunks)
                std::printf("  order %d: %llu x %s (%s reclaim)", c.order,
                            static_cast<unsigned long long>(c.count), format_size(c.bytes).c_str(),
                            c.reclaim ? "may" : "no");
            std::printf("\n");
        }
    }
    return 0;
}
