#include "cmalign/internal/kconfig/line_parser.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>

#include <boost/spirit/home/x3.hpp>
#include <fmt/format.h>

namespace cmalign::kconfig::detail {
namespace {

namespace x3 = boost::spirit::x3;
using It = const char*;

// Symbol names as merge_config.sh matches them ([a-zA-Z0-9_]); Kconfig's lexer would also take
// '-', but such a name could not become a C macro and no Kconfig file uses one.
const auto name_char = x3::char_("A-Za-z0-9_");
const auto symbol_name = +name_char;
const auto blank = x3::omit[x3::char_(" \t")];
const auto blanks = *blank;

// A quoted string as conf_write writes it (confdata.c escape_string_value): \" and \\ are the
// only escapes; a backslash before any other character keeps that character (confdata.c's
// reader drops every backslash), so we do the same.
const auto string_body = *(('\\' >> x3::char_) | ~x3::char_("\"\\"));
// A bare word: y/m/n, 123, -5, 0x1f, or an unquoted word. Control bytes, blanks, quotes and '#'
// end it; bytes >= 0x80 are kept as they are (the file's encoding is not ours to judge).
const auto bare_word = +~x3::char_("\x01-\x20\"#\x7f");

// Header words: "# Linux/arm64 6.12.117 Kernel Configuration" (conf_write_heading, since
// 2.6.2x) and the older "# Linux kernel version: 2.6.18".
const auto header_token = +~x3::char_(" \t");

// Semantic action storing the text a raw[] directive matched; parsing into std::string
// attributes instead costs a call per character in unoptimised builds.
auto capture(std::string_view& out) {
    return [&out](auto& ctx) {
        const auto& range = x3::_attr(ctx);
        out =
            std::string_view(range.begin(), static_cast<std::size_t>(range.end() - range.begin()));
    };
}

// The body of a quoted string (what string_body matched): drop each escaping backslash.
std::string unescape(std::string_view body) {
    std::string out;
    out.reserve(body.size());
    for (std::size_t i = 0; i < body.size(); ++i) {
        if (body[i] == '\\' && i + 1 < body.size()) ++i;
        out += body[i];
    }
    return out;
}

// Matches '"' string_body '"' at `it`; on success `body` is the raw text between the quotes.
bool quoted_string(It& it, It end, std::string_view& body) {
    return x3::parse(it, end, '"' >> x3::raw[string_body][capture(body)] >> '"');
}

int column_of(std::string_view line, It at) {
    auto offset = at - line.data();
    return offset >= INT_MAX ? INT_MAX : static_cast<int>(offset) + 1; // lines over 2 GiB
}

std::string describe_byte(char c) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x21 && u < 0x7f) return fmt::format("'{}'", c);
    if (c == ' ') return "a space";
    if (c == '\t') return "a tab";
    return fmt::format("byte 0x{:02x}", u);
}

LineResult error_at(std::string_view line, It at, std::string message) {
    LineResult r;
    r.kind = LineKind::error;
    r.column = column_of(line, at);
    r.message = std::move(message);
    return r;
}

bool is_number(std::string_view v) {
    // The forms kconfig writes for int (sym_string_valid: optional '-', digits) and hex (0x...).
    if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X'))
        return std::all_of(v.begin() + 2, v.end(),
                           [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
    if (!v.empty() && v[0] == '-') v.remove_prefix(1);
    return !v.empty() &&
           std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_tristate_or_number(std::string_view v) {
    return v == "y" || v == "m" || v == "n" || is_number(v);
}

// Lines starting with '#': header, "is not set", near misses, plain comments.
LineResult parse_comment(std::string_view line) {
    It const begin = line.data();
    It const end = begin + line.size();
    LineResult r;

    {
        It it = begin;
        std::string_view arch, version;
        auto modern_header = x3::lit("# Linux/") >> x3::raw[header_token][capture(arch)] >>
                             +x3::lit(' ') >> x3::raw[header_token][capture(version)] >>
                             +x3::lit(' ') >> x3::lit("Kernel Configuration") >> blanks >> x3::eoi;
        auto old_header = x3::lit("# Linux kernel version:") >> blanks >>
                          x3::raw[header_token][capture(version)] >> blanks >> x3::eoi;
        if (x3::parse(it, end, modern_header)) {
            r.kind = LineKind::header;
            r.header_arch = arch;
            r.header_version = version;
            return r;
        }
        it = begin;
        if (x3::parse(it, end, old_header)) {
            r.kind = LineKind::header;
            r.header_version = version;
            return r;
        }
    }

    // The exact form confdata.c accepts: "# CONFIG_" name " is not set" and nothing else.
    {
        It it = begin;
        std::string_view name;
        if (x3::parse(it, end,
                      x3::lit("# CONFIG_") >> x3::raw[symbol_name][capture(name)] >>
                          x3::lit(" is not set"))) {
            if (it == end) {
                r.kind = LineKind::assignment;
                r.name = name;
                r.value = "n";
                return r;
            }
            r.kind = LineKind::warning;
            r.check = "config-ignored-line";
            r.column = column_of(line, it);
            r.message = fmt::format(
                "text after '# CONFIG_{} is not set': kconfig 6.12 ignores this line (6.1 read it "
                "as 'n'); the symbol keeps its earlier value",
                name);
            return r;
        }
    }

    // Near misses kconfig silently ignores: "#CONFIG_X is not set", "#  CONFIG_X  is not set".
    {
        It it = begin;
        std::string_view name;
        auto near_unset = x3::lit('#') >> blanks >> x3::lit("CONFIG_") >>
                          x3::raw[symbol_name][capture(name)] >> +blank >> x3::lit("is") >>
                          +blank >> x3::lit("not") >> +blank >> x3::lit("set") >> blanks >> x3::eoi;
        if (x3::parse(it, end, near_unset)) {
            r.kind = LineKind::warning;
            r.check = "config-ignored-line";
            r.column = 1;
            r.message = fmt::format("kconfig ignores this line: only '# CONFIG_{} is not set' "
                                    "(one space each, nothing after) unsets a symbol",
                                    name);
            return r;
        }
    }
    return r; // plain comment
}

LineResult parse_assignment(std::string_view line) {
    It const begin = line.data();
    It const end = begin + line.size();
    It it = begin;

    if (!x3::parse(it, end, x3::lit("CONFIG_"))) {
        It probe = begin;
        if (x3::parse(probe, end, blanks >> x3::lit("CONFIG_")))
            return error_at(line, begin,
                            "indented assignment: kconfig only reads lines that start with "
                            "'CONFIG_' and would drop this one");
        probe = begin;
        if (x3::parse(probe, end, symbol_name >> blanks >> '='))
            return error_at(line, begin,
                            "assignment without the 'CONFIG_' prefix (kconfig would drop it)");
        return error_at(line, begin,
                        "expected 'CONFIG_<NAME>=<value>', '# CONFIG_<NAME> is not set' or a "
                        "comment");
    }

    LineResult r;
    std::string_view name, value;
    if (x3::parse(it, end, x3::raw[symbol_name][capture(name)]))
        r.name = name;
    else {
        if (it != end && *it == '=')
            return error_at(line, it, "missing symbol name after 'CONFIG_'");
        if (it == end) return error_at(line, it, "missing symbol name after 'CONFIG_'");
        return error_at(line, it, fmt::format("{} cannot start a symbol name", describe_byte(*it)));
    }

    if (!x3::parse(it, end, x3::lit('='))) {
        if (it == end)
            return error_at(line, it, fmt::format("expected '=' after 'CONFIG_{}'", r.name));
        if (*it == ' ' || *it == '\t')
            return error_at(line, it,
                            fmt::format("blank before '=': kconfig would read the name as "
                                        "'CONFIG_{}{}' and drop the line",
                                        r.name, *it == ' ' ? " " : "\\t"));
        return error_at(
            line, it,
            fmt::format("{} in symbol name 'CONFIG_{}'; expected '='", describe_byte(*it), r.name));
    }

    if (it == end)
        return error_at(line, it, fmt::format("missing value after 'CONFIG_{}='", r.name));
    if (*it == '"') {
        It const open = it;
        if (!quoted_string(it, end, value))
            return error_at(line, open, "unterminated string (no closing '\"')");
        r.value = unescape(value);
        r.quoted = true;
        x3::parse(it, end, blanks);
        if (it != end)
            return error_at(
                line, it, fmt::format("unexpected {} after the closing quote", describe_byte(*it)));
    } else {
        if (!x3::parse(it, end, x3::raw[bare_word][capture(value)])) {
            if (*it == ' ' || *it == '\t')
                return error_at(line, it,
                                fmt::format("blank after '=': kconfig would read the value of "
                                            "CONFIG_{} as empty or invalid",
                                            r.name));
            return error_at(
                line, it,
                fmt::format("unexpected {} at the start of the value", describe_byte(*it)));
        }
        r.value = value;
        It const value_end = it;
        x3::parse(it, end, blanks);
        if (it != end)
            return error_at(line, it,
                            fmt::format("unexpected {} after the value", describe_byte(*it)));
        if (it != value_end && is_number(value)) {
            // y/m/n: kconfig reads the first character only, so trailing blanks do not matter;
            // an int/hex value must be all digits (symbol.c sym_string_valid).
            r.column = column_of(line, value_end);
            r.check = "config-trailing-blank";
            r.message = fmt::format("blank after the number '{}' of CONFIG_{}: kconfig rejects "
                                    "the value and keeps the default",
                                    printable(r.value), r.name);
        } else if (!is_tristate_or_number(r.value)) {
            r.column = column_of(line, value.data());
            r.check = "config-unquoted-value";
            // scripts/kconfig/confdata.c conf_set_sym_val() (6.1, 6.12): int/hex values must
            // pass sym_string_valid(), bool/tristate ones start with y/m/n, string ones are
            // quoted; any other value leaves the symbol at its default.
            r.message = fmt::format(
                "unquoted value '{}' for CONFIG_{}: for an int or hex symbol kconfig prints "
                "\"symbol value '{}' invalid for {}\" and keeps the default; a bool/tristate "
                "one reads only the first letter (y, m or n, else the same message); a string "
                "one is dropped without a word",
                printable(r.value), r.name, printable(r.value), r.name);
        }
    }
    r.kind = LineKind::assignment;
    return r;
}

} // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
    std::string out;
    std::size_t shown = std::min(text.size(), max_bytes);
    out.reserve(shown + 8);
    for (std::size_t i = 0; i < shown; ++i) {
        auto u = static_cast<unsigned char>(text[i]);
        if (u < 0x20 || u == 0x7f || u >= 0x80)
            out += fmt::format("\\x{:02x}", u);
        else
            out += text[i];
    }
    if (shown < text.size()) out += fmt::format("...({} bytes)", text.size());
    return out;
}

LineResult parse_line(std::string_view line) {
    // kconfig reads lines as C strings; a NUL byte would silently cut the line short.
    if (const void* nul = std::memchr(line.data(), '\0', line.size()))
        return error_at(line, static_cast<It>(nul), "NUL byte in line");

    It const begin = line.data();
    It const end = begin + line.size();
    It it = begin;
    x3::parse(it, end, blanks);
    if (it == end) return {}; // blank line
    if (*it == '#') {
        if (it != begin) return {}; // an indented comment is still a comment
        return parse_comment(line);
    }
    return parse_assignment(line);
}

LineResult parse_set(std::string_view argument) {
    if (const void* nul = std::memchr(argument.data(), '\0', argument.size()))
        return error_at(argument, static_cast<It>(nul), "NUL byte");
    It const begin = argument.data();
    It const end = begin + argument.size();
    It it = begin;
    LineResult r;

    x3::parse(it, end, x3::lit("CONFIG_"));
    std::string_view name, body;
    if (!x3::parse(it, end, x3::raw[symbol_name][capture(name)]))
        return error_at(argument, it, "expected a symbol name ('CONFIG_X=VALUE' or 'X=VALUE')");
    r.name = name;
    if (!x3::parse(it, end, x3::lit('='))) {
        if (it == end)
            return error_at(argument, it, fmt::format("expected '=VALUE' after '{}'", r.name));
        return error_at(
            argument, it,
            fmt::format("{} in symbol name '{}'; expected '='", describe_byte(*it), r.name));
    }
    if (it != end && *it == '"') {
        It const open = it;
        if (!quoted_string(it, end, body))
            return error_at(argument, open, "unterminated string (no closing '\"')");
        r.value = unescape(body);
        x3::parse(it, end, blanks);
        if (it != end)
            return error_at(
                argument, it,
                fmt::format("unexpected {} after the closing quote", describe_byte(*it)));
        r.quoted = true;
    } else {
        std::string_view value(it, static_cast<std::size_t>(end - it));
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
            value.remove_prefix(1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
            value.remove_suffix(1);
        if (value.empty())
            return error_at(argument, end, fmt::format("missing value after '{}='", r.name));
        if (value == "Y" || value == "M" || value == "N") {
            // kconfig's own setters accept upper case (symbol.c sym_set_string_value).
            r.value = std::string(1, static_cast<char>(value[0] - 'A' + 'a'));
        } else {
            r.value = std::string(value);
            r.quoted = !is_tristate_or_number(value);
        }
    }
    r.kind = LineKind::assignment;
    return r;
}

} // namespace cmalign::kconfig::detail
