// A configuration as JSON (`config --format json`). Private, as every JSON of the library.
#pragma once

#include <nlohmann/json.hpp> // IWYU pragma: export (callers take the JSON apart)

#include "cmalign/internal/kconfig/write.hpp"

namespace cmalign::kconfig {

// {"symbols": {"CONFIG_X": "value", ...}}: values as Entry::value (strings without quotes and
// escapes), "n" for unset bools. Bytes that are not valid UTF-8 become U+FFFD, so the result
// can always be dumped.
nlohmann::json to_json(const Config& config);

} // namespace cmalign::kconfig
