// The one exception type the library throws, only at API edges that cannot return values
// (bindings, CLI helpers). Library code reports through Diagnostics instead.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "cmalign/core/diagnostic.hpp"

namespace cmalign {

class Error : public std::runtime_error {
public:
    explicit Error(Diagnostic d) : std::runtime_error(format_gcc(d)), diagnostic_(std::move(d)) {}
    const Diagnostic& diagnostic() const { return diagnostic_; }

private:
    Diagnostic diagnostic_;
};

// The one message every entry point (CLI main, C API, Python) prints for an exception that
// escaped the library, a bug: "cmalign: internal error: WHAT (input: INPUT)", where INPUT names
// what was being read (the command line, or the command and request).
std::string internal_error_message(std::string_view what, std::string_view input);

} // namespace cmalign
