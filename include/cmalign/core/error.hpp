// The one exception type the library throws, only at API edges that cannot return values
// (bindings, CLI helpers). Library code reports through Diagnostics instead.
#pragma once

#include <stdexcept>
#include <string>

#include "cmalign/core/diagnostic.hpp"

namespace cmalign {

class Error : public std::runtime_error {
public:
    explicit Error(Diagnostic d) : std::runtime_error(format_gcc(d)), diagnostic_(std::move(d)) {}
    const Diagnostic& diagnostic() const { return diagnostic_; }

private:
    Diagnostic diagnostic_;
};

} // namespace cmalign
