// fix on DTS source. Properties, beyond "no crash": the fixed text parses again, it differs from
// the input only inside the reported edits, and fixing the fixed text changes nothing more.
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "cmalign/fix/fix.hpp"
#include "cmalign/internal/dt/dts.hpp"
#include "cmalign/internal/fix/plan.hpp"
#include "cmalign/reserved/regions.hpp"
#include "fuzz_support.hpp"

namespace {

std::optional<cmalign::fix::Plan> plan_for(const std::string& path, cmalign::dt::FileCache& cache,
                                           std::uint64_t alignment) {
    cmalign::dt::PreprocessOptions options;
    cmalign::Diagnostics diags;
    auto tree = cmalign::dt::load_dts(path, options, cache, diags);
    if (!tree) return std::nullopt;
    auto reservations = cmalign::reserved::read(*tree);
    return cmalign::fix::plan_fixes(*tree, reservations, alignment, cache);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    auto paths = cmalign::fuzz::write_parts(input, 1);
    const std::uint64_t alignment =
        cmalign::fuzz::arm64_16k_model().cma_min_alignment_bytes.value();
    cmalign::dt::FileCache cache;
    auto plan = plan_for(paths.front(), cache, alignment);
    if (!plan || plan->edits.empty()) return 0;
    auto merged = cmalign::fix::merge_edits(plan->edits);
    if (merged.conflict) return 0;
    cmalign::Diagnostics diags;
    auto changes = cmalign::fix::render(merged.edits, diags);
    if (diags.has_errors() || changes.size() != 1) __builtin_trap(); // one file, its own edits
    const std::string& fixed = changes.front().new_content;

    // Bytes outside the edits are the input's, in order.
    std::size_t in = 0, out = 0;
    for (const auto& e : merged.edits) {
        if (e.begin < in || e.end > input.size()) __builtin_trap();
        if (input.substr(in, e.begin - in) != std::string_view(fixed).substr(out, e.begin - in))
            __builtin_trap();
        out += e.begin - in;
        if (std::string_view(fixed).substr(out, e.new_text.size()) != e.new_text) __builtin_trap();
        out += e.new_text.size();
        in = e.end;
    }
    if (input.substr(in) != std::string_view(fixed).substr(out)) __builtin_trap();

    // The fixed board parses, and a second fix has nothing left to change.
    auto fixed_path = (cmalign::fuzz::scratch_dir() / "fixed.dts").string();
    std::ofstream(fixed_path, std::ios::binary | std::ios::trunc) << fixed;
    cmalign::dt::FileCache again_cache;
    auto again = plan_for(fixed_path, again_cache, alignment);
    if (!again) __builtin_trap();
    if (!again->edits.empty()) __builtin_trap();
    return 0;
}
