// A string in double quotes with '"' and '\' escaped: how kconfig writes a string value
// (scripts/kconfig/confdata.c escape_string_value()) and how cpp spells __FILE__.
#pragma once

#include <string>
#include <string_view>

namespace cmalign::strings {

inline std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    out += '"';
    return out;
}

} // namespace cmalign::strings
