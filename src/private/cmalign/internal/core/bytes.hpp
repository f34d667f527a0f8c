// Big-endian cells as device trees store them (the flattened format and every property value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace cmalign::bytes {

// The 32-bit big-endian cell at `p` (four bytes; the caller checks the length).
inline std::uint32_t be32(const std::uint8_t* p) {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
}

// The cell at byte `offset` of `value` (offset + 4 <= value.size()).
inline std::uint32_t be32_at(std::span<const std::uint8_t> value, std::size_t offset) {
    return be32(value.data() + offset);
}

// Bytes [begin, end) read as one big-endian number; bytes above the low 64 bits fall off, as
// of_read_number() lets cells before the last two fall off.
inline std::uint64_t be_number(std::span<const std::uint8_t> value, std::size_t begin,
                               std::size_t end) {
    std::uint64_t v = 0;
    for (std::size_t i = begin; i < end; ++i)
        v = (v << 8) | value[i];
    return v;
}

// Writes `cell` big-endian at `p` (four bytes).
inline void put_be32(std::uint8_t* p, std::uint32_t cell) {
    p[0] = static_cast<std::uint8_t>(cell >> 24);
    p[1] = static_cast<std::uint8_t>(cell >> 16);
    p[2] = static_cast<std::uint8_t>(cell >> 8);
    p[3] = static_cast<std::uint8_t>(cell);
}

// "<0x0 0x2000000>": cells as a DTS writes them (each in hex, whatever its width).
std::string cells_text(std::span<const std::uint64_t> cells);

} // namespace cmalign::bytes
