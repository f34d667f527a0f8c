// Reading an integer symbol's value from a .config: the project's one integer reader
// (cmalign/internal/core/integer.hpp), under the kconfig names its first callers use.
#pragma once

#include "cmalign/internal/core/integer.hpp"

namespace cmalign::kconfig {

using cmalign::IntegerSyntax;
using cmalign::parse_integer;

} // namespace cmalign::kconfig
