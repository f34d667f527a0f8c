#include "cmalign/internal/core/bytes.hpp"

#include <fmt/format.h>

namespace cmalign::bytes {

std::string cells_text(std::span<const std::uint64_t> cells) {
    std::string out = "<";
    for (std::size_t i = 0; i < cells.size(); ++i)
        out += fmt::format("{}{:#x}", i ? " " : "", cells[i]);
    return out + ">";
}

} // namespace cmalign::bytes
