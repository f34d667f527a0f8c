// Internal: the Boost.Spirit X3 grammar of one .config / defconfig / fragment line.
//
// What scripts/kconfig/confdata.c (conf_read_simple, 6.1 and 6.12) does with a line, and what we
// do:
//   ""                          blank                 → skipped (we also skip whitespace-only
//   lines,
//                                                       which kconfig warns about as "unexpected
//                                                       data")
//   "# CONFIG_X is not set"     exact form            → X = n
//   "#..." anything else        comment               → skipped; near misses ("#CONFIG_X is not
//   set",
//                                                       trailing text) get a warning, since kconfig
//                                                       6.12 ignores them (6.1 took a trailing
//                                                       suffix)
//   "CONFIG_X=<value>"          assignment            → X = value
//   other lines                 kconfig warns "unexpected data" and drops the line → we report an
//                                                       error: a value the user wrote would be lost
// kconfig takes the name as everything up to '=', so "CONFIG_X = y" names the unknown symbol "X "
// and is dropped; we report it as an error at the space. Values: kconfig reads only the first
// character of a bool/tristate value, requires a whole number for int/hex and a quoted string
// (escapes \" and \\) for string symbols; since we do not know the types here, a value is one
// quoted string or one bare word, optionally followed by blanks, and anything else is an error.
// Values kconfig would drop are kept (they say what the user meant) with a warning:
// an unquoted word that is not y/m/n or a number (config-unquoted-value), a number followed by
// blanks (config-trailing-blank).
#pragma once

#include <string>
#include <string_view>

namespace cmalign::kconfig::detail {

enum class LineKind {
    blank,      // empty or comment: nothing to do
    header,     // "# Linux/<arch> <version> Kernel Configuration"
    assignment, // name/value/quoted are set (also for "is not set", value "n")
    warning,    // ignored line that deserves a warning (message/column/check)
    error,      // malformed line (message/column)
};

struct LineResult {
    LineKind kind = LineKind::blank;
    std::string name; // without CONFIG_
    std::string value;
    bool quoted = false;
    std::string header_arch; // empty for the pre-2.6.2x "# Linux kernel version: X" form
    std::string header_version;
    // error/warning position (1-based byte column in the line) and text; an assignment may carry
    // a warning as well (unquoted word kconfig would drop), signalled by a non-empty message.
    int column = 0;
    std::string message;
    std::string check;
};

// One line without its line terminator ("\n" or "\r\n" already removed).
LineResult parse_line(std::string_view line);

// One --set argument "CONFIG_X=VALUE" or "X=VALUE". An unquoted value is taken verbatim (it
// came through a shell); one that is not y/m/n or a number is taken as a string.
LineResult parse_set(std::string_view argument);

// A short printable rendering of a value or byte for messages (escapes, truncation).
std::string printable(std::string_view text, std::size_t max_bytes = 60);

} // namespace cmalign::kconfig::detail
