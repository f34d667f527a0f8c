#include "cmalign/internal/core/integer.hpp"

#include <charconv>
#include <limits>
#include <system_error>

namespace cmalign {

std::optional<long long> parse_integer(std::string_view text, IntegerSyntax syntax) {
    const bool int_symbol = syntax == IntegerSyntax::int_symbol;
    bool negative = false;
    int base = 10;
    if (!text.empty() && text.front() == '-') {
        negative = true;
        text.remove_prefix(1);
    }
    if (syntax == IntegerSyntax::decimal_or_hex && text.size() > 2 && text[0] == '0' &&
        (text[1] == 'x' || text[1] == 'X')) {
        if (negative) return std::nullopt; // kconfig never writes a negative hex value
        base = 16;
        text.remove_prefix(2);
    }
    if (text.empty()) return std::nullopt;
    if (int_symbol && text.front() == '0' && text.size() > 1) return std::nullopt;
    // from_chars does not take a sign after we removed it, nor "+", nor leading blanks.
    unsigned long long magnitude = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), magnitude, base);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    long long value = 0;
    if (negative) {
        if (magnitude > 1ULL << 63) return std::nullopt;
        value = magnitude == 1ULL << 63 ? std::numeric_limits<long long>::min()
                                        : -static_cast<long long>(magnitude);
    } else {
        if (magnitude > static_cast<unsigned long long>(std::numeric_limits<long long>::max()))
            return std::nullopt;
        value = static_cast<long long>(magnitude);
    }
    if (int_symbol &&
        (value > std::numeric_limits<int>::max() || value < std::numeric_limits<int>::min()))
        return std::nullopt;
    return value;
}

std::optional<std::uint64_t> parse_unsigned(std::string_view text, int base) {
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

} // namespace cmalign
