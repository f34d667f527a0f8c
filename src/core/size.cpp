#include "cmalign/core/size.hpp"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "cmalign/internal/core/strings.hpp"

namespace cmalign {

namespace {

std::optional<int> unit_shift(std::string_view unit) {
    if (unit.empty() || unit == "B") return 0;
    static constexpr struct {
        char letter;
        int shift;
    } units[] = {{'K', 10}, {'M', 20}, {'G', 30}, {'T', 40}};
    for (auto u : units) {
        char up = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
        if (up != u.letter) continue;
        auto rest = unit.substr(1);
        if (rest.empty() || rest == "iB" || rest == "ib" || rest == "B") return u.shift;
    }
    return std::nullopt;
}
} // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
    auto s = trim(text);
    if (s.starts_with("SZ_")) s.remove_prefix(3); // the kernel's <linux/sizes.h> names: SZ_4M
    if (s.empty()) return std::nullopt;
    int base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s.remove_prefix(2);
    }
    std::uint64_t number = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number, base);
    if (ec != std::errc{} || end == s.data()) return std::nullopt;
    auto unit = trim(std::string_view(end, static_cast<std::size_t>(s.data() + s.size() - end)));
    if (base == 16 && !unit.empty()) return std::nullopt; // 0x10M is not a size anyone writes
    auto shift = unit_shift(unit);
    if (!shift) return std::nullopt;
    if (*shift > 0 && number > (UINT64_MAX >> *shift)) return std::nullopt;
    return number << *shift;
}

std::string format_size(std::uint64_t bytes, ByteUnit small_unit) {
    static constexpr struct {
        int shift;
        const char* name;
    } units[] = {{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}};
    if (bytes != 0) {
        for (auto u : units) {
            std::uint64_t unit = std::uint64_t{1} << u.shift;
            if (bytes % unit == 0) return fmt::format("{} {}", bytes / unit, u.name);
        }
    }
    return fmt::format("{} {}", bytes, small_unit == ByteUnit::b ? "B" : "bytes");
}

std::optional<std::uint64_t> round_up(std::uint64_t value, std::uint64_t align) {
    if (align == 0) return std::nullopt;
    std::uint64_t rem = value % align;
    if (rem == 0) return value;
    std::uint64_t add = align - rem;
    if (value > UINT64_MAX - add) return std::nullopt;
    return value + add;
}

} // namespace cmalign
