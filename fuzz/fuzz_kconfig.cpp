// The Kconfig language parser and evaluator. The input is split at "@@@" lines into a small kernel
// tree: Kconfig (top), arch/x86/Kconfig, lib/Kconfig and a .config; the first byte chooses the
// version in the Makefile (6.12, 6.1, 7.2 or 5.10: the Kconfig dialects differ in choices,
// out-of-range values, `depends on X if Y`, "# end of" lines).
#include <cstdint>
#include <fstream>
#include <string_view>

#include "cmalign/kconfig/config.hpp"
#include "cmalign/kconfig/kconfig_tree.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    // Bits 0-1 of the first byte; 0 and 1 keep the meaning older corpora gave them.
    static constexpr const char* versions[][2] = {{"6", "12"}, {"6", "1"}, {"7", "2"}, {"5", "10"}};
    const auto* version = versions[data[0] & 3];
    std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
    const auto& dir = cmalign::fuzz::scratch_dir();
    std::ofstream(dir / "Makefile", std::ios::trunc)
        << "VERSION = " << version[0] << "\nPATCHLEVEL = " << version[1] << "\nSUBLEVEL = 0\n";
    auto paths = cmalign::fuzz::write_named_parts(
        input, {"Kconfig", "arch/x86/Kconfig", "lib/Kconfig", "fuzz.config"});
    std::filesystem::create_directories(dir / "arch/x86");

    cmalign::Diagnostics diags;
    cmalign::kconfig::Config inputs;
    if (paths.size() == 4) {
        std::ifstream in(paths[3], std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        (void)cmalign::kconfig::read_fragment(text, paths[3], inputs, diags);
    }
    cmalign::kconfig::EvalOptions options; // probes are never run while fuzzing
    auto result = cmalign::kconfig::evaluate(dir.string(), "x86_64", inputs, options, diags);
    // Property: an evaluation that failed said why.
    if (!result && !diags.has_errors()) __builtin_trap();
    return 0;
}
