// Bounds on the work one input can cause. `check` and `fix` run on untrusted pull requests, so a
// macro bomb, a 20,000-level tree or a Kconfig `source` loop must end in a located error (exit 2)
// quickly instead of a crash, a hang or an out-of-memory. The defaults sit far above anything in
// the kernel's own trees (docs/limits.md has the measured maxima); `--limit NAME=VALUE` raises one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cmalign/core/diagnostic.hpp"

namespace cmalign {

struct InputLimits {
    std::uint64_t file_bytes = 64ull << 20;      // any one file read (DTS, DTSI, header, DTB,
                                                 // .config, Kconfig)
    std::uint64_t line_bytes = 16ull << 20;      // one line of a text input
    int include_depth = 200;                     // nested #include and /include/
    int macro_depth = 256;                       // nested macro expansion (cpp and Kconfig $(...))
    std::uint64_t expanded_bytes = 256ull << 20; // preprocessor output for one input
    int node_depth = 256;                        // device-tree node nesting (and DTS expressions)
    std::uint64_t nodes = 200'000;               // device-tree nodes in one input
    std::uint64_t properties = 2'000'000;        // device-tree properties in one input
    int kconfig_source_depth = 100;              // nested Kconfig `source`
    std::uint64_t kconfig_symbols = 200'000;     // Kconfig symbols in one tree
    std::uint64_t errors = 20; // errors reported for one input file before reading it stops
                               // (clang's -ferror-limit default; gcc's -fmax-errors)
};

// One row per limit: its --limit name, what it bounds and the largest value it may be raised to
// (recursive parsers cannot go deeper than the thread stack allows).
struct LimitInfo {
    std::string_view name;
    std::string_view bounds;
    std::uint64_t ceiling;
};
std::span<const LimitInfo> limit_table();

// The current value of a limit by name; nullopt for an unknown name.
std::optional<std::uint64_t> limit_value(const InputLimits& limits, std::string_view name);

// Applies "NAME=VALUE" (VALUE as parse_size() reads it: 1000, 64M, 0x100). The error message
// when the name is unknown, the value unreadable, zero or above the ceiling.
std::optional<std::string> set_limit(InputLimits& limits, std::string_view spec);

// The first line of `text` longer than `line_bytes`: its 1-based number and its length.
struct LongLine {
    std::size_t line = 0;
    std::size_t length = 0;
};
std::optional<LongLine> first_line_over(std::string_view text, std::uint64_t line_bytes);
// Where and what to report for such a line: the column where the limit was passed.
Location long_line_location(const std::string& file, const LongLine& line,
                            const InputLimits& limits);
std::string long_line_message(const LongLine& line, const InputLimits& limits);

// The hint every limit error ends with: "(--limit node-depth=N raises it)".
std::string limit_hint(std::string_view name);

} // namespace cmalign
