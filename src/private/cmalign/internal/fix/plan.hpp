// plan_fixes() for a board read from DTS: private, because it reads the source files through the
// preprocessor's FileCache (not installed). Programs use run_fix() (cmalign/run_fix.hpp).
#pragma once

#include <cstdint>

#include "cmalign/fix/fix.hpp"
#include "cmalign/internal/dt/dts.hpp"

namespace cmalign::fix {

// Plans the edits for one board read from DTS. `cache` gives the source files (the same cache the
// tree was loaded with, so the bytes are the ones parsed); no file is written.
Plan plan_fixes(const dt::Tree& tree, const reserved::Reservations& reservations,
                std::uint64_t alignment, dt::FileCache& cache);

} // namespace cmalign::fix
