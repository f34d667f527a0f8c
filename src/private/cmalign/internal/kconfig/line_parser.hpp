// Internal: the Boost.Spirit X3 grammar of one .config / defconfig / fragment line.
//
// What scripts/kconfig/confdata.c (conf_read_simple, 6.1 and 6.12) does with a line, and what we
// do with it:
// - empty line: skipped. We also skip blank-only lines (kconfig 6.12 warns "unexpected data").
// - "# CONFIG_X is not set", exactly: X = n.
// - "#" anything else: a comment, skipped. Look-alikes kconfig skips silently get a warning
//   (config-ignored-line): "#CONFIG_X is not set", "#  CONFIG_X  is not set", and text after
//   "is not set" (6.12 compares with strcmp and skips it; 6.1 used strncmp and read 'n'; we follow
//   6.12 and say so).
// - "CONFIG_X=<value>": X = value.
// - anything else ("FOO=y", "CONFIG_FOO", "  CONFIG_X=y"): kconfig warns "unexpected data" and
//   drops the line; we report an error, since a value the user wrote would be lost.
// kconfig takes the name as everything up to '=', so "CONFIG_X = y" names the unknown symbol "X "
// and is dropped: an error at the blank. Values: kconfig reads only the first character of a
// bool/tristate value, requires a whole number for int/hex and a quoted string (escapes \" and
// \\) for a string symbol. Since types are unknown here, a value is one quoted string or one bare
// word, optionally followed by blanks; anything else after it is an error. Values kconfig would
// drop are kept (they say what the user meant) with a warning: an unquoted word that is not y/m/n
// or a number (config-unquoted-value), a number followed by blanks (config-trailing-blank).
// A NUL byte anywhere in a line is an error (kconfig would silently cut the line there).
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
