// Hand-made device trees for unit tests: dt::Tree values without going through a parser.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "cmalign/dt/tree.hpp"

namespace cmalign::test {

inline dt::Property cells(std::string name, std::initializer_list<std::uint32_t> values,
                          int line = 0) {
    dt::Property p;
    p.name = std::move(name);
    for (auto v : values) {
        p.value.push_back(static_cast<std::uint8_t>(v >> 24));
        p.value.push_back(static_cast<std::uint8_t>(v >> 16));
        p.value.push_back(static_cast<std::uint8_t>(v >> 8));
        p.value.push_back(static_cast<std::uint8_t>(v));
    }
    if (line > 0) {
        p.where = Location{"board.dts", line, 2};
        // One chunk per cell at a made-up column, so locations of single values can be tested.
        for (std::size_t i = 0; i < values.size(); ++i)
            p.chunks.push_back({i * 4, 4,
                                Location{"board.dts", line, 10 + static_cast<int>(i) * 11}, "",
                                std::nullopt});
    }
    return p;
}

inline dt::Property str(std::string name, std::initializer_list<std::string> values) {
    dt::Property p;
    p.name = std::move(name);
    for (const auto& s : values) {
        p.value.insert(p.value.end(), s.begin(), s.end());
        p.value.push_back(0);
    }
    return p;
}

inline dt::Property flag(std::string name) {
    dt::Property p;
    p.name = std::move(name);
    return p;
}

inline dt::Node node(std::string name, std::vector<dt::Property> props,
                     std::vector<dt::Node> children = {}) {
    dt::Node n;
    n.name = std::move(name);
    n.properties = std::move(props);
    n.children = std::move(children);
    n.where = Location{"board.dts", 1, 1};
    return n;
}

// A 2/2-cell root with 1 GiB of RAM at 0x40000000 and a /reserved-memory holding `regions`.
inline dt::Tree board(std::vector<dt::Node> regions, std::uint32_t ac = 2, std::uint32_t sc = 2) {
    dt::Tree t;
    t.input = "board.dts";
    std::vector<dt::Property> mem_reg;
    dt::Node memory = node("memory@40000000", {str("device_type", {"memory"})});
    if (ac == 2 && sc == 2)
        memory.properties.push_back(cells("reg", {0, 0x40000000, 0, 0x40000000}));
    else
        memory.properties.push_back(cells("reg", {0x40000000, 0x40000000}));
    dt::Node rm = node("reserved-memory",
                       {cells("#address-cells", {ac}), cells("#size-cells", {sc}), flag("ranges")},
                       std::move(regions));
    t.root = node("", {cells("#address-cells", {ac}), cells("#size-cells", {sc})}, {memory, rm});
    return t;
}

// reusable shared-dma-pool placed dynamically with a 2-cell size.
inline dt::Node cma_pool(std::string name, std::uint64_t size, int line = 0) {
    return node(
        std::move(name),
        {str("compatible", {"shared-dma-pool"}), flag("reusable"),
         cells("size", {static_cast<std::uint32_t>(size >> 32), static_cast<std::uint32_t>(size)},
               line)});
}

// reusable shared-dma-pool at a fixed base (2/2 cells).
inline dt::Node cma_static(std::string name, std::uint64_t base, std::uint64_t size, int line = 0) {
    return node(std::move(name),
                {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                 cells("reg",
                       {static_cast<std::uint32_t>(base >> 32), static_cast<std::uint32_t>(base),
                        static_cast<std::uint32_t>(size >> 32), static_cast<std::uint32_t>(size)},
                       line)});
}

} // namespace cmalign::test
