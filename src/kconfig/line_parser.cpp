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

constexpr std::string_view config_prefix = "CONFIG_";
constexpr std::string_view not_set_text = "is not set";

// Symbol names as Kconfig files spell them ([A-Za-z0-9_]; the lexer would also take '-', which
// no Kconfig file uses and a C macro could not carry).
const auto name_char = x3::char_("A-Za-z0-9_");
const auto symbol_name = +name_char;
const auto blank = x3::omit[x3::char_(" \t")];
const auto blanks = *blank;
const auto string_body = *(('\\' >> x3::char_) | ~x3::char_("\"\\"));

// Header words: "# Linux/arm64 6.12.117 Kernel Configuration" (conf_write_heading, since
// 2.6.2x) and the older "# Linux kernel version: 2.6.18".
const auto header_token = +~x3::char_(" \t");

// Semantic action storing the text a raw[] directive matched.
auto capture(std::string_view& out) {
    return [&out](auto& ctx) {
        const auto& range = x3::_attr(ctx);
        out =
            std::string_view(range.begin(), static_cast<std::size_t>(range.end() - range.begin()));
    };
}

int column_at(std::size_t offset) {
    return offset >= INT_MAX ? INT_MAX : static_cast<int>(offset) + 1; // lines over 2 GiB
}

bool is_name(std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

std::string quoted_line(std::string_view line) {
    return printable(line, 80);
}

LineResult ignored(std::size_t offset, std::string message, std::string check) {
    LineResult r;
    r.kind = LineKind::ignored;
    r.column = column_at(offset);
    r.message = std::move(message);
    r.check = std::move(check);
    return r;
}

bool parse_header(std::string_view line, LineResult& r) {
    It const begin = line.data();
    It const end = begin + line.size();
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
        return true;
    }
    it = begin;
    if (x3::parse(it, end, old_header)) {
        r.kind = LineKind::header;
        r.header_version = version;
        return true;
    }
    return false;
}

// Lines starting with '#': header, the not-set forms, near misses, plain comments.
LineResult parse_comment(std::string_view line) {
    LineResult r;
    if (parse_header(line, r)) return r;
    // "#?CONFIG_<name> <rest>": 5.10 compares from the third byte on whatever the second is.
    if (line.size() > 2 && line.substr(2, config_prefix.size()) == config_prefix) {
        std::string_view rest = line.substr(2 + config_prefix.size());
        std::size_t space = rest.find(' ');
        if (space != std::string_view::npos) {
            std::string_view name = rest.substr(0, space);
            std::string_view tail = rest.substr(space + 1);
            if (tail.substr(0, not_set_text.size()) == not_set_text) {
                r.kind = LineKind::assignment;
                r.name = name;
                r.text = "n";
                r.column = 1;
                if (line[1] != ' ')
                    r.form = LineForm::not_set_loose;
                else if (tail.size() == not_set_text.size())
                    r.form = LineForm::not_set;
                else
                    r.form = LineForm::not_set_suffix;
                if (!is_name(name)) { // "# CONFIG_ is not set": no symbol has that name
                    return ignored(2 + config_prefix.size(),
                                   fmt::format("kconfig looks up the symbol '{}', which no Kconfig "
                                               "defines, and ignores the line without a word",
                                               printable(name)),
                                   "config-ignored-line");
                }
                return r;
            }
        }
    }
    // Near misses kconfig ignores without a word: "#  CONFIG_X  is not set".
    {
        It const begin = line.data();
        It const end = begin + line.size();
        It it = begin;
        std::string_view name;
        auto near_unset = x3::lit('#') >> blanks >> x3::lit("CONFIG_") >>
                          x3::raw[symbol_name][capture(name)] >> +blank >> x3::lit("is") >>
                          +blank >> x3::lit("not") >> +blank >> x3::lit("set") >> blanks;
        if (x3::parse(it, end, near_unset)) {
            return ignored(0,
                           fmt::format("kconfig ignores this line without a word: only '# "
                                       "CONFIG_{} is not set' (one space each) unsets a symbol",
                                       name),
                           "config-ignored-line");
        }
    }
    return r; // a comment
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
    if (line.empty()) return {};
    if (line[0] == '#') return parse_comment(line);
    if (line.substr(0, config_prefix.size()) == config_prefix) {
        std::size_t equals = line.find('=');
        if (equals == std::string_view::npos) {
            return ignored(line.size(),
                           fmt::format("no '=' in '{}': kconfig ignores the line (since 6.8 it "
                                       "warns \"unexpected data: {}\")",
                                       quoted_line(line), quoted_line(line)),
                           "config-ignored-line");
        }
        std::string_view name = line.substr(config_prefix.size(), equals - config_prefix.size());
        if (!is_name(name)) {
            std::size_t bad = 0;
            while (bad < name.size() &&
                   (std::isalnum(static_cast<unsigned char>(name[bad])) || name[bad] == '_'))
                ++bad;
            std::string what =
                name.empty()
                    ? std::string("an empty symbol name")
                    : fmt::format("the symbol name '{}' (everything up to '=')", printable(name));
            return ignored(config_prefix.size() + bad,
                           fmt::format("kconfig reads {}, which no Kconfig defines, and ignores "
                                       "the line without a word",
                                       what),
                           "config-ignored-line");
        }
        LineResult r;
        r.kind = LineKind::assignment;
        r.form = LineForm::value;
        r.name = name;
        r.text = line.substr(equals + 1);
        r.column = column_at(equals + 1);
        return r;
    }
    // conf_read_simple(): "unexpected data: <line>", the line ignored.
    std::size_t first = 0;
    while (first < line.size() && is_blank(line[first]))
        ++first;
    std::string hint;
    if (first == line.size())
        hint = " (a line of blanks)";
    else if (first > 0 && line.substr(first, config_prefix.size()) == config_prefix)
        hint = " (an indented assignment: only a line starting with 'CONFIG_' is read)";
    else if (first > 0 && line[first] == '#')
        hint = " (an indented comment)";
    else {
        std::size_t end = first;
        while (end < line.size() &&
               (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_'))
            ++end;
        if (end > first && end < line.size() && line[end] == '=')
            hint = " (an assignment without the 'CONFIG_' prefix)";
    }
    return ignored(first == line.size() ? 0 : first,
                   fmt::format("kconfig warns \"unexpected data: {}\" and ignores the line{}",
                               quoted_line(line), hint),
                   "config-ignored-line");
}

const char* type_name(ValueType type) {
    switch (type) {
    case ValueType::boolean:
        return "bool";
    case ValueType::tristate:
        return "tristate";
    case ValueType::integer:
        return "int";
    case ValueType::hex:
        return "hex";
    case ValueType::string:
        return "string";
    }
    return "?";
}

ReadRules read_rules(int major, int minor) {
    // scripts/kconfig/confdata.c conf_read_simple(): 5.10 unsets only bool/tristate symbols and
    // does not look at the byte after '#'; 6.1 hands "n" to conf_set_sym_val() and needs "# ";
    // 6.12 (getline_stripped(), strcmp()) reads only the exact "is not set".
    ReadRules rules;
    bool before_6_0 = major < 6;
    bool before_6_8 = major < 6 || (major == 6 && minor < 8);
    rules.unset_all_types = !before_6_0;
    rules.loose_not_set = before_6_0;
    rules.exact_not_set = !before_6_8;
    return rules;
}

bool valid_int(std::string_view text) {
    // symbol.c sym_string_valid() S_INT: optional '-', no leading zero, digits only.
    std::size_t i = 0;
    if (i < text.size() && text[i] == '-') ++i;
    if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
    if (text[i] == '0' && i + 1 < text.size()) return false;
    return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(i), text.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool valid_hex(std::string_view text) {
    // symbol.c sym_string_valid() S_HEX: an optional 0x/0X, then one or more hex digits.
    if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
        text.remove_prefix(2);
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c));
    });
}

Verdict value_for(ValueType type, const std::string& name, std::string_view text, LineForm form,
                  const ReadRules& rules) {
    Verdict v;
    auto invalid = [&](std::string_view shown) {
        v.kconfig_warning = fmt::format("symbol value '{}' invalid for {}", printable(shown), name);
        return v;
    };
    bool not_set = form == LineForm::not_set || form == LineForm::not_set_suffix ||
                   form == LineForm::not_set_loose;
    if (form == LineForm::not_set_suffix && rules.exact_not_set) {
        v.why = "since 6.8 only the exact '# CONFIG_<name> is not set' unsets a symbol; this "
                "line is a comment";
        return v;
    }
    if (form == LineForm::not_set_loose && !rules.loose_not_set) {
        v.why = "since 6.0 only '# CONFIG_<name> is not set' (a space after '#') unsets a "
                "symbol; this line is a comment";
        return v;
    }
    if (not_set && !rules.unset_all_types && type != ValueType::boolean &&
        type != ValueType::tristate) {
        v.why = fmt::format("before 6.0 '# CONFIG_<name> is not set' unsets only bool and "
                            "tristate symbols; {} is {}",
                            name, type_name(type));
        return v;
    }
    const char first = text.empty() ? '\0' : text[0];
    switch (type) {
    case ValueType::tristate:
    case ValueType::boolean:
        if ((first == 'm' && type == ValueType::tristate) || first == 'y' || first == 'n') {
            v.accepted = true;
            v.value = std::string(1, first);
            return v;
        }
        return invalid(text);
    case ValueType::string: {
        if (first != '"') {
            v.why = fmt::format("a value for the string symbol {} must start with '\"'", name);
            return v;
        }
        // conf_set_sym_val(): a backslash is dropped and the byte after it kept; the first
        // other '"' ends the value and the rest of the line is not read.
        std::string out;
        for (std::size_t i = 1; i < text.size(); ++i) {
            if (text[i] == '"') {
                v.accepted = true;
                v.value = std::move(out);
                v.quoted = true;
                return v;
            }
            if (text[i] == '\\') {
                if (++i == text.size()) break;
            }
            out += text[i];
        }
        v.kconfig_warning = "invalid string found";
        return v;
    }
    case ValueType::integer:
    case ValueType::hex:
        if (type == ValueType::integer ? valid_int(text) : valid_hex(text)) {
            v.accepted = true;
            v.value = std::string(text);
            return v;
        }
        return invalid(text);
    }
    return v;
}

std::string rejected_message(const Verdict& verdict, std::string_view name,
                             std::string_view earlier) {
    std::string what =
        verdict.kconfig_warning.empty()
            ? fmt::format("kconfig ignores the line without a word ({})", verdict.why)
            : fmt::format("kconfig warns \"{}\" and ignores the line", verdict.kconfig_warning);
    if (earlier.empty())
        return fmt::format("{}; CONFIG_{} keeps the value it had (no earlier line set it)", what,
                           name);
    return fmt::format("{}; CONFIG_{} keeps {}", what, name, earlier);
}

SetResult parse_set(std::string_view argument) {
    SetResult r;
    auto fail = [&](std::size_t offset, std::string message) {
        r.ok = false;
        r.column = column_at(offset);
        r.message = std::move(message);
        return r;
    };
    if (const void* nul = std::memchr(argument.data(), '\0', argument.size()))
        return fail(static_cast<std::size_t>(static_cast<const char*>(nul) - argument.data()),
                    "NUL byte");
    It const begin = argument.data();
    It const end = begin + argument.size();
    It it = begin;
    auto offset = [&] { return static_cast<std::size_t>(it - begin); };

    x3::parse(it, end, x3::lit("CONFIG_"));
    std::string_view name, body;
    if (!x3::parse(it, end, x3::raw[symbol_name][capture(name)]))
        return fail(offset(), "expected a symbol name ('CONFIG_X=VALUE' or 'X=VALUE')");
    r.name = name;
    if (!x3::parse(it, end, x3::lit('='))) {
        if (it == end) return fail(offset(), fmt::format("expected '=VALUE' after '{}'", r.name));
        return fail(offset(), fmt::format("'{}' in symbol name '{}'; expected '='",
                                          printable(std::string_view(it, 1)), r.name));
    }
    if (it != end && *it == '"') {
        std::size_t open = offset();
        if (!x3::parse(it, end, '"' >> x3::raw[string_body][capture(body)] >> '"'))
            return fail(open, "unterminated string (no closing '\"')");
        for (std::size_t i = 0; i < body.size(); ++i) {
            if (body[i] == '\\' && i + 1 < body.size()) ++i;
            r.value += body[i];
        }
        x3::parse(it, end, blanks);
        if (it != end)
            return fail(offset(), fmt::format("unexpected '{}' after the closing quote",
                                              printable(std::string_view(it, 1))));
        r.quoted = true;
    } else {
        std::string_view value(it, static_cast<std::size_t>(end - it));
        while (!value.empty() && is_blank(value.front()))
            value.remove_prefix(1);
        while (!value.empty() && is_blank(value.back()))
            value.remove_suffix(1);
        if (value.empty())
            return fail(argument.size(), fmt::format("missing value after '{}='", r.name));
        if (value == "Y" || value == "M" || value == "N") {
            // kconfig's own setters accept upper case (symbol.c sym_set_string_value).
            r.value = std::string(1, static_cast<char>(value[0] - 'A' + 'a'));
        } else {
            r.value = std::string(value);
            r.quoted = !(value == "y" || value == "m" || value == "n" || valid_int(value) ||
                         (value.size() > 2 && value[0] == '0' && valid_hex(value)));
        }
    }
    r.ok = true;
    return r;
}

} // namespace cmalign::kconfig::detail
