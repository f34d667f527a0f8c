// Every command as JSON in, JSON out: the one place that turns a request (a JSON object whose keys
// are the Python keyword arguments, e.g. {"arch": "arm64", "kernel_version": "6.16", "sets":
// {"CONFIG_ARM64_16K_PAGES": "y"}}) into the library's option structs and the outcome into the
// CLI's JSON. The C API (cmalign/cmalign.h) and the Python module are thin wrappers around it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cmalign {

// Runs `command` (one of json_commands(): "calc", "check", ...) on `request`, a JSON object as
// text, and returns what `cmalign COMMAND --format json` prints, as compact JSON text. Findings
// are data (check's diagnostics); what makes the CLI exit 2 (unreadable or unparsable input,
// contradictory configuration, an unknown or mistyped request key, a request that is not a JSON
// object) throws cmalign::Error whose what() is "file:line:col: error: message"
// (core/error.hpp; a syntax error in the request is located in "<request>").
std::string run_json_text(std::string_view command, std::string_view request);

// The commands run_json_text() knows, in the order the CLI lists them.
std::vector<std::string> json_commands();

// The definitions of cmalign/internal/commands.hpp as JSON text, for front ends written in other
// languages (the Python package builds its functions from it): [{name, summary, usage, options:
// [{key, flags, type, repeatable, required, positional, metavar, default, choices, help,
// surface}]}].
std::string command_definitions_json_text();

} // namespace cmalign
