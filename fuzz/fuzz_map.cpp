// The `map` layout and its writers: the input is split at "@@@" lines into board.dts and a.dtsi;
// run_map() lays the board out for the arm64 16K example configuration, then the SVG, the text
// picture (at 60 and 200 columns) and the JSON are written. Properties: no layout means a located
// error; the SVG is one well-formed <svg> element with every attribute value quoted and escaped
// (no raw '<' or '&' from a node name inside a text node).
#include <cstdint>
#include <string>
#include <string_view>

#include "cmalign/internal/map/map_json.hpp"
#include "cmalign/map/map.hpp"
#include "cmalign/run_map.hpp"
#include "fuzz_support.hpp"

namespace {

// What an XML reader needs: '<' only to start markup, '&' only to start an entity.
bool escaped(const std::string& svg) {
    for (std::size_t i = 0; i < svg.size(); ++i) {
        if (svg[i] == '&') {
            auto semi = svg.find(';', i);
            if (semi == std::string::npos || semi - i > 8) return false;
        } else if (svg[i] == '<') {
            if (i + 1 >= svg.size()) return false;
            char c = svg[i + 1];
            if (!(c == '/' || c == '?' || c == '!' || (c >= 'a' && c <= 'z'))) return false;
        }
    }
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto paths = cmalign::fuzz::write_named_parts({reinterpret_cast<const char*>(data), size},
                                                  {"board.dts", "a.dtsi"});
    cmalign::MapRequest request;
    request.input = paths[0];
    request.config.config_files = {"examples/configs/arm64-16k.config"};
    request.config.arch = "arm64";
    request.tree.include_dirs = {cmalign::fuzz::scratch_dir().string()};
    request.tree.limits.expanded_bytes = 4u << 20;
    auto outcome = cmalign::run_map(request);
    if (!outcome.layout) {
        if (outcome.errors.empty() && outcome.config_diagnostics.empty()) __builtin_trap();
        return 0;
    }
    std::string svg = cmalign::map::render_svg(*outcome.layout);
    if (!svg.starts_with("<svg") && !svg.starts_with("<?xml")) __builtin_trap();
    if (!escaped(svg)) __builtin_trap();
    (void)cmalign::map::render_text(*outcome.layout, 60);
    (void)cmalign::map::render_text(*outcome.layout, 200);
    (void)cmalign::map::to_json(*outcome.layout).dump();
    return 0;
}
