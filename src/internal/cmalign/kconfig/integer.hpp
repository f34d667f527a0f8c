// Reading an integer symbol's value from a .config: the one parser for kconfig and derive().
#pragma once

#include <optional>
#include <string_view>

namespace cmalign::kconfig {

enum class IntegerSyntax {
    // An int symbol as kconfig accepts it (scripts/kconfig/symbol.c sym_string_valid(), S_INT,
    // 6.1 and 6.12): optional '-', decimal digits, no leading zero, no "0x"; kconfig rejects
    // anything else and keeps the default. Within int: every value derive() reads this way is an
    // order or a count.
    int_symbol,
    // Config::get_int(): decimal (optional '-', leading zeros allowed) or non-negative "0x" hex,
    // within long long.
    decimal_or_hex,
};

// nullopt when `text` is not an integer of that syntax or out of range.
std::optional<long long> parse_integer(std::string_view text, IntegerSyntax syntax);

} // namespace cmalign::kconfig
