// How findings and fixes write an address or an amount of memory ("0x400000 (4 MiB)").
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"

namespace cmalign {

// "0x400000"
inline std::string hex(std::uint64_t value) {
    return fmt::format("{:#x}", value);
}

// "0x400000 (4 MiB)"
inline std::string amount(std::uint64_t value) {
    return fmt::format("{:#x} ({})", value, format_size(value));
}

} // namespace cmalign
