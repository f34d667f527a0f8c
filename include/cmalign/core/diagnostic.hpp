// Locations and diagnostics shared by every layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cmalign {

// A place in a source file, 1-based; line/column 0 means "whole file" / "unknown".
struct Location {
    std::string file;
    int line = 0;
    int column = 0;

    bool known() const { return !file.empty(); }
    friend bool operator==(const Location&, const Location&) = default;
};

enum class Severity { note, warning, error };

const char* to_string(Severity s);

// A proposed change of one property value, as numbers (the `fix` object of docs/json.md).
struct FixHint {
    std::string property;
    std::uint64_t old_value = 0;
    std::uint64_t new_value = 0;
};

struct Diagnostic {
    Severity severity = Severity::error;
    Location where;
    std::string check;   // named check ("cma-size-alignment"); empty for input errors
    std::string message; // one line, no trailing period
    std::string node;    // DT path the finding is about, when there is one
    std::string input;   // the file named on the command line this belongs to
    std::vector<FixHint> fix;
};

// Collects diagnostics; library calls take one instead of throwing, so that
// a parse can report several problems and callers decide what is fatal.
class Diagnostics {
public:
    void add(Diagnostic d) { items_.push_back(std::move(d)); }
    void error(Location where, std::string message, std::string check = {});
    void warning(Location where, std::string message, std::string check = {});
    void note(Location where, std::string message, std::string check = {});

    const std::vector<Diagnostic>& items() const { return items_; }
    std::vector<Diagnostic>& items() { return items_; }
    bool has_errors() const;
    std::size_t count(Severity s) const;
    void append(const Diagnostics& other);

private:
    std::vector<Diagnostic> items_;
};

// "file:line:col: error: message [check]" as gcc prints it.
// A diagnostic built member by member, out of line: a brace-initialised Diagnostic temporary makes
// GCC 12 at -O3 warn -Wmaybe-uninitialized inside std::string's destructor (a false positive, but
// the Release build must be silent).
Diagnostic make_diagnostic(Severity severity, Location where, std::string message,
                           std::string check = {});

std::string format_gcc(const Diagnostic& d);

} // namespace cmalign
