// `cmalign fix` and `cmalign suggest` as JSON (docs/json.md); the api's fix_json()/suggest_json()
// (cmalign/run_fix.hpp) hand their outcomes here.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp> // IWYU pragma: export (callers take the JSON apart)

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/fix/fix.hpp"
#include "cmalign/fix/suggest.hpp"

namespace cmalign::report {

// The edits, then the diagnostics of every list in order, the files written and the alignment
// the sizes are rounded to.
nlohmann::json fix_json(const std::vector<fix::Edit>& edits,
                        std::initializer_list<const std::vector<Diagnostic>*> diagnostics,
                        const std::vector<std::string>& written,
                        std::optional<std::uint64_t> alignment);

nlohmann::json suggest_json(const std::optional<fix::SuggestResult>& result,
                            const std::vector<Diagnostic>& errors);

} // namespace cmalign::report
