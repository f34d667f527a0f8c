// Findings and regions as text (gcc style), JSON (docs/json.md's `check` object) and SARIF 2.1.0.
// Formats only: nothing here decides what is a finding.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/version.hpp"

namespace cmalign::report {

// ---- text -------------------------------------------------------------------------------------

struct TextOptions {
    bool show_source = true; // the source line and a caret under the column, as gcc/clang do
    bool color = false;      // ANSI colours (severity words, caret), as gcc -fdiagnostics-color
};

// "file:line:col: error: message [check]" then, when the file is readable and the line known,
//  "   12 |     size = <0x0 0x400000>;" and "      |                  ^". Ends with '\n'.
std::string text(const Diagnostic& d, const TextOptions& options = {});
std::string text(std::span<const Diagnostic> diagnostics, const TextOptions& options = {});
// One finding per place for the line-oriented formats (text, GitHub): findings that differ only
// in their board (a shared .dtsi checked through several boards) become one, whose message ends
// with "(in 3 boards: a.dts, b.dts, c.dts)"; first-seen order. JSON and SARIF keep one per board.
std::vector<Diagnostic> merge_shared(std::span<const Diagnostic> diagnostics);
// "2 errors, 1 warning, 0 notes" ("" when there is nothing).
std::string summary_line(std::span<const Diagnostic> diagnostics);

// ---- JSON (docs/json.md, `check`) ------------------------------------------------------

// Which keys a diagnostic has: `finding` (check, fix, explain, ...: {input, file, line, column,
// severity, check, message, node, fix}) or `config`, the problems of a configuration inside the
// calc object ({file (null when none), line, column, severity, check, message}).
enum class DiagnosticKeys { finding, config };

// ---- SARIF 2.1.0 ------------------------------------------------------------------------------

struct SarifOptions {
    // Locations under this directory are written relative to it with uriBaseId "SRCROOT" (GitHub
    // code scanning resolves them against the checkout); others as absolute file:// URIs.
    std::optional<std::string> base_dir;
    std::string tool_version = CMALIGN_VERSION;
};

// The rule id of diagnostics without a check (unreadable input).
inline constexpr const char* input_rule_id = "input";

// ---- GitHub Actions workflow commands ---------------------------------------------------------

// One "::error file=F,line=L,col=C,title=T::message" line per diagnostic (warning → ::warning,
// note → ::notice), which GitHub shows as annotations on the pull request. The message is
// escaped as GitHub's toolkit does (% \r \n), property values also : and ,. `title` is the
// check name ("cmalign" for input errors). Paths are written as given. A finding in a file shared
// by several inputs is written once.
std::string github(std::span<const Diagnostic> diagnostics);

// "a b/c.dts" → "a%20b/c.dts" (RFC 3986 path characters kept).
std::string uri_encode_path(const std::string& path);

} // namespace cmalign::report
