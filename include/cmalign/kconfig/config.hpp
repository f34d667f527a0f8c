// Kernel configuration as read from .config / defconfig / fragment files.
//
// Reading follows scripts/kconfig/merge_config.sh: files apply in order, a later value wins, and a
// redefinition with another value is a warning naming both places. `--set` entries apply last.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/limits.hpp"

namespace cmalign::kconfig {

// One assignment. `name` has no CONFIG_ prefix ("ARM64_16K_PAGES").
// `value` is as written without quotes: "y", "m", "n" (also for "# CONFIG_X is not set"),
// "123", "0x1f", or the unescaped string text when `quoted`.
struct Entry {
    std::string name;
    std::string value;
    bool quoted = false;
    Location where; // file:line of the line that set it (column 1); "--set" for command line
};

// One value replaced by a later one with a *different* value (same-value repeats are not kept).
// Overrides by --set are recorded here too although they are not warnings.
struct Redefinition {
    Entry before;
    Entry after;
};

class Config {
public:
    // Header "# Linux/arm64 6.12.117 Kernel Configuration" of the first file that has one.
    std::optional<std::string> header_arch;
    std::optional<std::string> header_version;
    // Filled by Kconfig evaluation (kconfig_tree.hpp) for values the inputs did not give: how the
    // entry's `where` (a Kconfig file:line) decided it: "default", "selected by DMA_CMA",
    // "implied by X", "range", "choice", "no default".
    std::map<std::string, std::string, std::less<>> decided_by;

    // Sets (or overrides) a symbol; returns the entry it replaced, if any.
    std::optional<Entry> set(Entry e);
    const Entry* find(std::string_view name) const; // name with or without CONFIG_
    // Forgets a symbol, as olddefconfig drops one the Kconfig does not define. True if it was set.
    bool erase(std::string_view name);
    bool contains(std::string_view name) const { return find(name) != nullptr; }

    // Convenience readers; nullopt when the symbol is absent from every input.
    std::optional<bool> get_bool(std::string_view name) const;     // y/m → true, n → false
    std::optional<long long> get_int(std::string_view name) const; // decimal or 0x hex
    // The value text (strings unescaped, without quotes); nullopt when absent.
    std::optional<std::string_view> get_string(std::string_view name) const;

    const std::map<std::string, Entry, std::less<>>& entries() const { return entries_; }
    // Every value change by a later file or --set, in the order it happened.
    const std::vector<Redefinition>& redefinitions() const { return redefinitions_; }

private:
    std::map<std::string, Entry, std::less<>> entries_;
    std::vector<Redefinition> redefinitions_;
};

// Parses one file's text into `into` (merging as described above). `file` names the text in
// locations. Malformed lines are errors at file:line:col (1-based byte column of the offending
// byte); parsing continues with the next line. Returns false when any error was reported.
// Accepted: "CONFIG_X=<word>" and "CONFIG_X=\"<string>\"" (escapes \" and \\) with optional
// trailing blanks, "# CONFIG_X is not set", comments, blank lines, LF or CRLF. Warnings (check
// names): config-redefined (another value than an earlier line, naming both places),
// config-ignored-line (a "# CONFIG_X is not set" look-alike kconfig skips),
// config-unquoted-value / config-trailing-blank (a value kconfig would drop; we keep it).
// The rules and their confdata.c sources are in
// src/private/cmalign/internal/kconfig/line_parser.hpp.
// After `max_errors` errors, one more says so and reading stops (InputLimits::errors).
bool read_fragment(std::string_view text, const std::string& file, Config& into, Diagnostics& diags,
                   std::uint64_t max_errors = InputLimits{}.errors);

// Reads a file from disk (unreadable file → error at "file"), then read_fragment().
// A file over limits.file_bytes, or with a line over limits.line_bytes, is a located error;
// so is binary data ("not a text file"). gzip, xz and zstd files (/proc/config.gz) and kernel
// images built with CONFIG_IKCONFIG are read as the configuration they hold.
bool read_fragment_file(const std::string& path, Config& into, Diagnostics& diags,
                        const InputLimits& limits = {});

// Applies one "CONFIG_X=VALUE" (or "X=VALUE") given on the command line. Location "--set".
bool apply_set(std::string_view assignment, Config& into, Diagnostics& diags);

// Files in order, then sets: the whole `-c ... --set ...` pipeline.
bool load(const std::vector<std::string>& files, const std::vector<std::string>& sets, Config& into,
          Diagnostics& diags, const InputLimits& limits = {});

} // namespace cmalign::kconfig
