#include "cmalign/internal/report/json_text.hpp"

#include <array>
#include <charconv>

namespace cmalign::report {

namespace {

constexpr unsigned kIndentStep = 2;

struct HasBinary {}; // binary values (never in our documents) are left to nlohmann, whole

// Bytes a string cannot hold as they are: controls, '"', '\\' (escaped) and non-ASCII (checked).
constexpr auto kSpecial = [] {
    std::array<bool, 256> special{};
    for (int c = 0; c < 256; ++c)
        special[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
    return special;
}();

using Handler = nlohmann::json::error_handler_t;

void put_string(std::string& out, const std::string& s, Handler on_bad_utf8) {
    const std::size_t begin = out.size();
    out += '"';
    std::size_t written = 0; // s[written, i) is plain and not yet copied
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (!kSpecial[c]) continue;
        if (c >= 0x80) {
            // UTF-8 is validated (or rejected) as nlohmann does it: let it write the string.
            out.resize(begin);
            out += nlohmann::json(s).dump(-1, ' ', false, on_bad_utf8);
            return;
        }
        out.append(s, written, i - written);
        written = i + 1;
        out += '\\';
        switch (c) {
        case '\b':
            out += 'b';
            break;
        case '\t':
            out += 't';
            break;
        case '\n':
            out += 'n';
            break;
        case '\f':
            out += 'f';
            break;
        case '\r':
            out += 'r';
            break;
        case '"':
            out += '"';
            break;
        case '\\':
            out += '\\';
            break;
        default: {
            static constexpr char hex[] = "0123456789abcdef";
            out += "u00";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
        }
    }
    out.append(s, written, s.size() - written);
    out += '"';
}

template <typename Int> void put_integer(std::string& out, Int v) {
    char buffer[24];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
    out.append(buffer, end);
}

void put_indent(std::string& out, std::size_t n) {
    out.append(n, ' ');
}

void put(std::string& out, const nlohmann::json& value, std::size_t indent, Handler on_bad_utf8) {
    using Type = nlohmann::json::value_t;
    switch (value.type()) {
    case Type::object: {
        const auto& object = value.get_ref<const nlohmann::json::object_t&>();
        if (object.empty()) {
            out += "{}";
            return;
        }
        out += "{\n";
        std::size_t left = object.size();
        for (const auto& [key, item] : object) {
            put_indent(out, indent + kIndentStep);
            put_string(out, key, on_bad_utf8);
            out += ": ";
            put(out, item, indent + kIndentStep, on_bad_utf8);
            out += --left ? ",\n" : "\n";
        }
        put_indent(out, indent);
        out += '}';
        return;
    }
    case Type::array: {
        const auto& array = value.get_ref<const nlohmann::json::array_t&>();
        if (array.empty()) {
            out += "[]";
            return;
        }
        out += "[\n";
        std::size_t left = array.size();
        for (const auto& item : array) {
            put_indent(out, indent + kIndentStep);
            put(out, item, indent + kIndentStep, on_bad_utf8);
            out += --left ? ",\n" : "\n";
        }
        put_indent(out, indent);
        out += ']';
        return;
    }
    case Type::string:
        put_string(out, value.get_ref<const std::string&>(), on_bad_utf8);
        return;
    case Type::boolean:
        out += value.get<bool>() ? "true" : "false";
        return;
    case Type::number_integer:
        put_integer(out, value.get<nlohmann::json::number_integer_t>());
        return;
    case Type::number_unsigned:
        put_integer(out, value.get<nlohmann::json::number_unsigned_t>());
        return;
    case Type::null:
        out += "null";
        return;
    case Type::number_float: // nlohmann's shortest round-trip form, "null" for NaN and infinity
    case Type::discarded:
        out += value.dump();
        return;
    case Type::binary:
        throw HasBinary{};
    }
}

} // namespace

void pretty_json_to(std::string& out, const nlohmann::json& value, std::size_t indent,
                    Handler on_bad_utf8) {
    const std::size_t begin = out.size();
    try {
        put(out, value, indent, on_bad_utf8);
    } catch (const HasBinary&) {
        // nlohmann's text, moved to `indent`: a newline in JSON text is never inside a string.
        out.resize(begin);
        for (char c : value.dump(kIndentStep, ' ', false, on_bad_utf8)) {
            out += c;
            if (c == '\n') put_indent(out, indent);
        }
    }
}

std::string pretty_json(const nlohmann::json& value, Handler on_bad_utf8) {
    std::string out;
    out.reserve(64 * 1024);
    try {
        put(out, value, 0, on_bad_utf8);
    } catch (const HasBinary&) {
        return value.dump(kIndentStep, ' ', false, on_bad_utf8);
    }
    return out;
}

} // namespace cmalign::report
