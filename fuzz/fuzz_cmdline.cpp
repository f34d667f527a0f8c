// Sizes, versions and the kernel command line (memparse, next_arg splitting, cma=).
#include <cstdint>
#include <string_view>

#include "cmalign/core/size.hpp"
#include "cmalign/core/version.hpp"
#include "cmalign/reserved/regions.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto bytes = cmalign::parse_size(text)) {
        // Property: what we print for a size parses back to the same size.
        auto again = cmalign::parse_size(cmalign::format_size(*bytes));
        if (!again || *again != *bytes) __builtin_trap();
    }
    (void)cmalign::KernelVersion::parse(text);
    auto m = cmalign::reserved::memparse(text);
    if (m.consumed > text.size()) __builtin_trap();
    (void)cmalign::reserved::split_cmdline(text);
    if (auto cma = cmalign::reserved::parse_cma_cmdline(text)) {
        if (cma->occurrences < 1) __builtin_trap();
    }
    return 0;
}
