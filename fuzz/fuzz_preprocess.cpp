// The C preprocessor: the input is split into board.dts, a.dtsi, b.h, c.dtsi (at "@@@" lines)
// so #include, include cycles and macro definitions across files are fuzzed too.
#include <cstdint>
#include <string_view>

#include "cmalign/internal/dt/preprocess.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto paths = cmalign::fuzz::write_parts({reinterpret_cast<const char*>(data), size});
    cmalign::dt::FileCache cache; // fresh: the files change with every input
    cmalign::dt::PreprocessOptions options;
    options.include_dirs = {cmalign::fuzz::scratch_dir().string()};
    options.limits.expanded_bytes = 4u << 20;
    cmalign::Diagnostics diags;
    auto out = cmalign::dt::preprocess(paths.front(), options, cache, diags);
    if (!out) return 0;
    // Property: every output byte maps back to a place in some input file.
    for (std::size_t i = 0; i < out->text.size(); i += 97)
        (void)out->locate(i);
    return 0;
}
