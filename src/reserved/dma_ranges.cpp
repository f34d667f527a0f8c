// The tree's dma-ranges as of_dma_get_max_cpu_address(NULL) reads them (drivers/of/address.c,
// read in 5.10.223, 6.1.192 and 6.12.117): for every available node with a non-empty
// dma-ranges the highest CPU address one of its ranges reaches, and the lowest of those over the
// tree. arm64 sizes ZONE_DMA with it, and so where the default CMA area may go.
#include <algorithm>

#include "cmalign/reserved/regions.hpp"

namespace cmalign::reserved {

namespace {

std::optional<std::uint32_t> own_cells(const dt::Node& node, const char* name) {
    const auto* p = node.find_property(name);
    if (!p) return std::nullopt;
    return p->u32();
}

bool available(const dt::Node& node) {
    const auto* p = node.find_property("status");
    if (!p) return true;
    std::string s(p->value.begin(), p->value.end());
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s == "okay" || s == "ok";
}

std::uint64_t read_cells(const std::vector<std::uint32_t>& cells, std::size_t at, std::uint32_t n) {
    std::uint64_t v = 0;
    for (std::uint32_t i = 0; i < n; ++i)
        v = (v << 32) | cells[at + i];
    return v;
}

// `address_cells`/`size_cells`: the cells in force for this node's children (its own, else its
// parent's); `parent_address_cells`: those of its parent's bus. CPU addresses are taken as the
// parent bus addresses (no translation through the ancestors' ranges: the identity `ranges;` of
// most boards).
std::optional<std::uint64_t> max_cpu_address(const dt::Node& node, std::uint32_t address_cells,
                                             std::uint32_t size_cells,
                                             std::uint32_t parent_address_cells) {
    std::optional<std::uint64_t> out;
    const std::uint32_t na = own_cells(node, "#address-cells").value_or(address_cells);
    const std::uint32_t ns = own_cells(node, "#size-cells").value_or(size_cells);
    if (const auto* p = node.find_property("dma-ranges"); p && !p->value.empty()) {
        const auto cells = p->cells();
        const std::size_t tuple = std::size_t{na} + parent_address_cells + ns;
        if (cells && tuple > 0 && na <= 2 && ns <= 2 && parent_address_cells <= 2) {
            std::optional<std::uint64_t> end;
            for (std::size_t at = 0; at + tuple <= cells->size(); at += tuple) {
                const std::uint64_t cpu = read_cells(*cells, at + na, parent_address_cells);
                const std::uint64_t size = read_cells(*cells, at + na + parent_address_cells, ns);
                if (size == 0) continue;
                const std::uint64_t last = cpu + size - 1;
                end = end ? std::max(*end, last) : last;
            }
            if (end) out = *end;
        }
    }
    for (const auto& child : node.children) {
        if (!available(child)) continue;
        if (auto sub = max_cpu_address(child, na, ns, na)) out = out ? std::min(*out, *sub) : *sub;
    }
    return out;
}

} // namespace

std::optional<std::uint64_t> dma_max_cpu_address(const dt::Node& root) {
    const std::uint32_t na = own_cells(root, "#address-cells").value_or(1);
    const std::uint32_t ns = own_cells(root, "#size-cells").value_or(1);
    return max_cpu_address(root, na, ns, na);
}

} // namespace cmalign::reserved
