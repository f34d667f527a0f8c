// Boot log lines as JSON, for `cmalign explain` and `cmalign boot-check` (docs/json.md).
#pragma once

#include <vector>

#include <nlohmann/json.hpp> // IWYU pragma: export (callers take the JSON apart)

#include "cmalign/bootlog/bootlog.hpp"

namespace cmalign::report {

enum class LogLineText {
    as_read,        // the whole line as read, and the kernel file that prints it (explain)
    kernel_message, // from the kernel's prefix on (boot-check)
};

// [{line_number, text, event[, source]}]
nlohmann::json log_lines_json(const std::vector<bootlog::Message>& lines, LogLineText text);

} // namespace cmalign::report
