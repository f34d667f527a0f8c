// JSON as the command line prints it. Private, as every JSON of the library.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace cmalign::report {

// Exactly value.dump(2, ' ', false, on_bad_utf8) — the same bytes, and the same exception for a
// string that is not UTF-8 under `strict` — written several times faster: `check --format json`
// of a whole kernel tree prints megabytes of plain ASCII strings, which nlohmann's serializer
// decodes byte by byte after every worker has finished, on one core.
std::string
pretty_json(const nlohmann::json& value,
            nlohmann::json::error_handler_t on_bad_utf8 = nlohmann::json::error_handler_t::strict);

// pretty_json(value) as it stands inside a larger document `indent` spaces in (its first line
// at the caller's position, the rest indented), appended to `out`: a document too large to hold
// whole (check's thousands of regions) is written piece by piece.
void pretty_json_to(
    std::string& out, const nlohmann::json& value, std::size_t indent,
    nlohmann::json::error_handler_t on_bad_utf8 = nlohmann::json::error_handler_t::strict);

} // namespace cmalign::report
