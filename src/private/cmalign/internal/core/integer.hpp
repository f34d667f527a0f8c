// The one integer reader: every number read from an input (a .config value, an overlay's
// __fixups__ offset, a Kconfig $(N), a sysctl value, a Makefile VERSION, a boot log's address, a
// zoneinfo count) goes through parse_integer() or parse_unsigned(), so an out-of-range number is a
// nullopt the caller reports at its location, never an exception or undefined behaviour (std::stoul
// throws, std::atoi overflows).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace cmalign {

enum class IntegerSyntax {
    // An int symbol as kconfig accepts it (scripts/kconfig/symbol.c sym_string_valid(), S_INT,
    // 6.1 and 6.12): optional '-', decimal digits, no leading zero, no "0x"; kconfig rejects
    // anything else and keeps the default. Within int: every value derive() reads this way is an
    // order or a count.
    int_symbol,
    // Config::get_int(): decimal (optional '-', leading zeros allowed) or non-negative "0x" hex,
    // within long long.
    decimal_or_hex,
    // Decimal digits with an optional '-' (leading zeros allowed), within long long: what
    // strtol(…, 10) accepts without its saturation (sysctl values, offsets, argument numbers).
    decimal,
};

// nullopt when `text` is not an integer of that syntax or out of range.
std::optional<long long> parse_integer(std::string_view text, IntegerSyntax syntax);

// Digits of `base` only (no sign, prefix or blank), within 64 bits: addresses and page counts
// a kernel prints (a boot log's %pa, /proc/zoneinfo). nullopt otherwise.
std::optional<std::uint64_t> parse_unsigned(std::string_view text, int base = 10);

} // namespace cmalign
