// Internal: one .config / defconfig / fragment line as scripts/kconfig/confdata.c reads it, and
// the value kconfig's conf_set_sym_val() takes from it for a symbol of a given type.
//
// conf_read_simple() (5.10, 6.1, 6.12 and 7.2 compared) reads a line so:
// - the line ends at "\n"; one "\r" before it is dropped (6.12 getline_stripped(); 5.10/6.1 strip
//   "\n" and one "\r" from the value); C string functions then stop at the first NUL byte.
// - "" (and, before 6.8, a line starting with NUL or "\r"): skipped without a word.
// - "#": "# CONFIG_<name> is not set" gives <name> the value "n", where <name> runs to the first
//   space. 6.12 compares the rest with strcmp(); 6.1 and 5.10 with strncmp(.., 10), so text after
//   "is not set" is ignored there. 5.10 does not look at the second character ("#\tCONFIG_X is
//   not set" unsets X there); 6.1 and later need a space. Every other "#" line: a comment.
// - "CONFIG_<name>=<value>": <name> is every byte up to the first '=', <value> the rest.
//   "CONFIG_<name>" without '=': ignored (6.12 warns "unexpected data").
// - anything else (an indented line, a blank-only line, "FOO=y"): "unexpected data", ignored.
// A name no symbol has is ignored without a word (KCONFIG_WARN_UNKNOWN_SYMBOLS is not set by
// kbuild). The value then goes to conf_set_sym_val() (value_for() below).
#pragma once

#include <string>
#include <string_view>

#include "cmalign/kconfig/config.hpp"

namespace cmalign::kconfig::detail {

using kconfig::LineForm;

// What the line is.
enum class LineKind {
    skipped,    // empty line or a comment: nothing to say
    header,     // "# Linux/<arch> <version> Kernel Configuration"
    assignment, // name/text/form are set
    ignored,    // kconfig ignores the line; `message` says how (a warning)
};

struct LineResult {
    LineKind kind = LineKind::skipped;
    std::string name; // without CONFIG_, as kconfig takes it (for `value`: every byte up to '=')
    std::string text; // the value text conf_set_sym_val() gets ("n" for the not-set forms)
    LineForm form = LineForm::value;
    std::string header_arch; // empty for the pre-2.6.2x "# Linux kernel version: X" form
    std::string header_version;
    int column = 0; // 1-based byte column of what the message is about (the value: after '=')
    std::string message;
    std::string check;
};

// One line without its "\n" (a "\r" before it already dropped), cut at its first NUL.
LineResult parse_line(std::string_view line);

// The symbol types conf_set_sym_val() distinguishes.
enum class ValueType { boolean, tristate, integer, hex, string };
const char* type_name(ValueType type);

// What conf_set_sym_val() (and conf_read_simple() for the not-set forms) does with a value.
struct Verdict {
    bool accepted = false;
    std::string value; // y/m/n, the number as written, or the unescaped string
    bool quoted = false;
    // When not accepted: kconfig's own warning ("symbol value 'm' invalid for X",
    // "invalid string found"), or empty when kconfig ignores the line without a word.
    std::string kconfig_warning;
    std::string why; // for a silent ignore: why ("a string value needs quotes")
};
// `unset_all_types`: 6.0 and later pass "n" of a not-set line to conf_set_sym_val() (an int/hex
// symbol warns); 5.10 unsets bool/tristate symbols only. `exact_not_set`: 6.8 and later ignore
// text after "is not set"; `loose_not_set`: before 6.0 "#\tCONFIG_X is not set" is read.
struct ReadRules {
    bool unset_all_types = true;
    bool exact_not_set = true;
    bool loose_not_set = false;
};
ReadRules read_rules(int major, int minor);
// The message for a line kconfig does not take: what kconfig says (or that it says nothing and
// why) and what the symbol keeps (`earlier`: "y from defconfig:12", or empty).
std::string rejected_message(const Verdict& verdict, std::string_view name,
                             std::string_view earlier);
Verdict value_for(ValueType type, const std::string& name, std::string_view text, LineForm form,
                  const ReadRules& rules);

// sym_string_valid() of symbol.c (5.10 to 7.2) for int and hex.
bool valid_int(std::string_view text);
bool valid_hex(std::string_view text);

// One --set argument "CONFIG_X=VALUE" or "X=VALUE". An unquoted value is taken verbatim (it
// came through a shell); one that is not y/m/n or a number is taken as a string.
struct SetResult {
    bool ok = false;
    std::string name;
    std::string value;
    bool quoted = false;
    int column = 0;
    std::string message;
};
SetResult parse_set(std::string_view argument);

// A short printable rendering of a value or byte for messages (escapes, truncation).
std::string printable(std::string_view text, std::size_t max_bytes = 60);

} // namespace cmalign::kconfig::detail
