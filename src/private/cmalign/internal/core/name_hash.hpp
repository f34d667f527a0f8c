// A hash for the short names the DTS pipeline looks up in open-addressing tables (macro names,
// labels). Private.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace cmalign {

// Eight bytes a step (a .dtsi's names are long: "GCC_QUPV3_WRAP0_S0_CLK"), the tail byte by byte
// (a memcpy of a variable size is a call); the last multiply spreads every byte into the low
// bits the tables index with.
inline std::uint64_t name_hash(std::string_view s) {
    std::uint64_t h = 0x9e3779b97f4a7c15ull ^ s.size();
    const char* p = s.data();
    std::size_t n = s.size();
    for (; n >= 8; p += 8, n -= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 29;
    }
    std::uint64_t w = 0;
    for (std::size_t i = 0; i < n; ++i)
        w |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
    h = (h ^ w) * 0x94d049bb133111ebull;
    return h ^ (h >> 32);
}

} // namespace cmalign
