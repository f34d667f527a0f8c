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

// How a line gave its symbol a value; the forms whose reading differs between kernel versions
// (scripts/kconfig/confdata.c conf_read_simple(), cmalign/internal/kconfig/line_parser.hpp).
enum class LineForm {
    value,          // "CONFIG_X=<text>"
    not_set,        // "# CONFIG_X is not set" exactly
    not_set_suffix, // "# CONFIG_X is not set<more>": unsets X before 6.8 (strncmp), ignored since
    not_set_loose,  // "#<not a space>CONFIG_X is not set": unsets X before 6.0 only
    entry,          // a value given by --set or a program (value/quoted as in Entry)
};

// One line that assigns a symbol, as read and before its type is known: what conf_read_simple()
// hands to conf_set_sym_val(). A Kconfig evaluation replays these in order with the tree's types,
// so that a line kconfig rejects keeps the value an earlier line gave.
struct Assignment {
    std::string name; // as kconfig takes it, without CONFIG_
    std::string text; // the value text after '=' ("n" for the not-set forms)
    LineForm form = LineForm::entry;
    bool quoted = false;   // form entry: the value is a string
    Location where;        // file:line:col, col at the value (1 for the not-set forms)
    bool reported = false; // the reader already warned about the line in words true for any type
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
    // Every assignment read (files in order, then --set), including those kconfig rejects; set()
    // by a program does not add one. erase() drops a symbol's assignments too.
    const std::vector<Assignment>& assignments() const { return assignments_; }
    void record(Assignment a) { assignments_.push_back(std::move(a)); }
    // Every value change by a later file or --set, in the order it happened.
    const std::vector<Redefinition>& redefinitions() const { return redefinitions_; }

private:
    std::map<std::string, Entry, std::less<>> entries_;
    std::vector<Redefinition> redefinitions_;
    std::vector<Assignment> assignments_;
};

// Parses one file's text into `into` (merging as described above) the way kconfig's
// conf_read_simple() reads it (cmalign/internal/kconfig/line_parser.hpp has the rules and
// their confdata.c sources): no line is an error. A line kconfig ignores, or a value it rejects,
// is a warning at file:line:col saying what kconfig does, and the symbol keeps the value it had.
// The value a line gives depends on the symbol's type: the type cmalign knows for the symbols it
// reads (known_type()), else the one the value's form suggests; where that choice decides the
// value, a config-type-assumed warning says so (a Kconfig evaluation replaces it with the tree's
// verdict). Check names: config-ignored-line, config-invalid-value (kconfig warns),
// config-ignored-value (kconfig ignores it without a word), config-type-assumed,
// config-redefined (another value than an earlier line, naming both places).
// Returns false only for errors of the file itself (limits); `max_errors` is kept for them.
bool read_fragment(std::string_view text, const std::string& file, Config& into, Diagnostics& diags,
                   std::uint64_t max_errors = InputLimits{}.errors);

// Reads a file from disk (unreadable file → error at "file"), then read_fragment().
// A file over limits.file_bytes, or with a line over limits.line_bytes, is a located error;
// so is binary data ("not a text file"). gzip, xz and zstd files (/proc/config.gz) and kernel
// images built with CONFIG_IKCONFIG are read as the configuration they hold.
bool read_fragment_file(const std::string& path, Config& into, Diagnostics& diags,
                        const InputLimits& limits = {});

// The type of a symbol cmalign's rules read (the same in 5.10, 6.1, 6.12 and 7.2), if it is one:
// "bool", "tristate", "int", "hex" or "string".
std::optional<std::string_view> known_type(std::string_view name);

// Applies one "CONFIG_X=VALUE" (or "X=VALUE") given on the command line. Location "--set".
bool apply_set(std::string_view assignment, Config& into, Diagnostics& diags);

// Files in order, then sets: the whole `-c ... --set ...` pipeline.
bool load(const std::vector<std::string>& files, const std::vector<std::string>& sets, Config& into,
          Diagnostics& diags, const InputLimits& limits = {});

} // namespace cmalign::kconfig
