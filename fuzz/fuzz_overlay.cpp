// Overlays as `check --overlay` applies them (fdtoverlay's steps, dt/overlay.cpp): the input is
// split at "@@@" lines into board.dts, then overlay.dtso (and a.dtsi for includes). The overlay
// is applied to the base with libfdt 1.7.0's and 1.6.1's phandle rules, and alone (no base), and
// every check runs on the results.
#include <cstdint>
#include <string_view>

#include "cmalign/checks/checks.hpp"
#include "cmalign/internal/dt/overlay.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto paths = cmalign::fuzz::write_named_parts({reinterpret_cast<const char*>(data), size},
                                                  {"board.dts", "overlay.dtso", "a.dtsi"});
    if (paths.size() < 2) return 0;
    cmalign::dt::FileCache cache;
    cmalign::dt::PreprocessOptions options;
    options.include_dirs = {cmalign::fuzz::scratch_dir().string()};
    options.limits.expanded_bytes = 4u << 20;
    static const auto model = cmalign::fuzz::arm64_16k_model();
    cmalign::Diagnostics overlay_diags;
    auto overlays = cmalign::detail::load_overlays({paths[1]}, options, cache, overlay_diags);
    // Property: no overlay means at least one located error.
    if (!overlays) {
        if (!overlay_diags.has_errors()) __builtin_trap();
        return 0;
    }
    for (bool keep : {true, false}) {
        cmalign::dt::OverlayOptions overlay_options;
        overlay_options.keep_target_phandles = keep;
        cmalign::Diagnostics diags;
        auto tree = cmalign::detail::load_board(paths[0], options, cache, diags,
                                                cmalign::detail::reservation_resolve_options(),
                                                *overlays, overlay_options);
        if (!tree) {
            if (!diags.has_errors()) __builtin_trap();
            continue;
        }
        auto result = cmalign::checks::run(*tree, model, cmalign::checks::Options{});
        for (const auto& d : result.diagnostics)
            if (d.check.empty()) __builtin_trap(); // every finding names its check
    }
    // The overlay alone, as `check overlay.dtso` reads it.
    auto lone = cmalign::dt::overlay_without_base(overlays->front());
    cmalign::checks::run(lone.tree, model, cmalign::checks::Options{});
    return 0;
}
