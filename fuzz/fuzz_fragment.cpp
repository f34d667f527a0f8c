// Kconfig fragment reader (.config / defconfig / fragment lines) and merging.
#include <cstdint>
#include <string_view>

#include "cmalign/kconfig/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    cmalign::kconfig::Config config;
    cmalign::Diagnostics diags;
    bool ok = cmalign::kconfig::read_fragment(text, "fuzz.config", config, diags);
    // Property: a read that reports no error reported nothing as an error.
    if (ok && diags.has_errors()) __builtin_trap();
    for (const auto& [name, entry] : config.entries()) {
        (void)config.get_bool(name);
        (void)config.get_int(name);
    }
    // The input line by line as --set values: never a crash.
    cmalign::kconfig::Config sets;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        (void)cmalign::kconfig::apply_set(text.substr(start, end - start), sets, diags);
        start = end + 1;
    }
    return 0;
}
