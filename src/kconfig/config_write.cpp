#include "cmalign/internal/kconfig/write.hpp"

#include "cmalign/internal/core/quote.hpp"
#include "cmalign/internal/kconfig/config_json.hpp"

namespace cmalign::kconfig {
namespace {

// Length of the valid UTF-8 sequence at text[i], or 0 when it is not one (RFC 3629: no
// overlongs, no surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence_length(const std::string& text, std::size_t i) {
    auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    unsigned char b0 = byte(i);
    if (b0 < 0x80) return 1;
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF)
        length = 2;
    else if (b0 >= 0xE0 && b0 <= 0xEF) {
        length = 3;
        if (b0 == 0xE0) low = 0xA0;
        if (b0 == 0xED) high = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        length = 4;
        if (b0 == 0xF0) low = 0x90;
        if (b0 == 0xF4) high = 0x8F;
    } else
        return 0;
    if (i + length > text.size()) return 0;
    if (byte(i + 1) < low || byte(i + 1) > high) return 0;
    for (std::size_t k = 2; k < length; ++k)
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    return length;
}

std::string valid_utf8(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        std::size_t n = utf8_sequence_length(text, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD"; // U+FFFD
            ++i;
        } else {
            out.append(text, i, n);
            i += n;
        }
    }
    return out;
}

// Whether an unquoted value reads back as the same bare word (line_parser.cpp's bare_word).
bool is_bare_word(const std::string& value) {
    if (value.empty()) return false;
    for (char c : value) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f || c == '"' || c == '#') return false;
    }
    return true;
}

} // namespace

std::string to_config_text(const Config& config) {
    std::string out;
    if (config.header_version) {
        // conf_write_heading(); the old "Linux kernel version:" form had no arch.
        out += "#\n# Automatically generated file; DO NOT EDIT.\n";
        if (config.header_arch)
            out += "# Linux/" + *config.header_arch + " " + *config.header_version +
                   " Kernel Configuration\n";
        else
            out += "# Linux kernel version: " + *config.header_version + "\n";
        out += "#\n";
    }
    for (const auto& [name, entry] : config.entries()) {
        if (!entry.quoted && entry.value == "n") {
            out += "# CONFIG_" + name + " is not set\n";
            continue;
        }
        out += "CONFIG_" + name + "=";
        // An unquoted value that is not one word (only possible through Config::set) is written
        // as a string, so that the text always reads back.
        if (entry.quoted || !is_bare_word(entry.value))
            out += strings::quoted(entry.value); // escape_string_value()
        else
            out += entry.value;
        out += '\n';
    }
    return out;
}

nlohmann::json to_json(const Config& config) {
    nlohmann::json symbols = nlohmann::json::object();
    for (const auto& [name, entry] : config.entries())
        symbols["CONFIG_" + name] = valid_utf8(entry.value);
    return nlohmann::json{{"symbols", std::move(symbols)}};
}

} // namespace cmalign::kconfig
