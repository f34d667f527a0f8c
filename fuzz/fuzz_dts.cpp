// DTS parser and resolver (after the preprocessor), then the reservation model and every check.
#include <cstdint>
#include <string_view>

#include "cmalign/checks/checks.hpp"
#include "cmalign/internal/dt/dts.hpp"
#include "cmalign/reserved/regions.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto paths = cmalign::fuzz::write_parts({reinterpret_cast<const char*>(data), size});
    cmalign::dt::FileCache cache;
    cmalign::dt::PreprocessOptions options;
    options.include_dirs = {cmalign::fuzz::scratch_dir().string()};
    options.limits.expanded_bytes = 4u << 20;
    cmalign::Diagnostics diags;
    auto tree = cmalign::dt::load_dts(paths.front(), options, cache, diags);
    // Property: no tree means at least one located error.
    if (!tree) {
        if (!diags.has_errors()) __builtin_trap();
        return 0;
    }
    static const auto model = cmalign::fuzz::arm64_16k_model();
    auto result = cmalign::checks::run(*tree, model, cmalign::checks::Options{});
    for (const auto& d : result.diagnostics)
        if (d.check.empty()) __builtin_trap(); // every finding names its check
    return 0;
}
