#include "cmalign/internal/report/log_lines.hpp"

namespace cmalign::report {

nlohmann::json log_lines_json(const std::vector<bootlog::Message>& lines, LogLineText text) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& m : lines) {
        nlohmann::json line = {{"line_number", m.line_number},
                               {"text", text == LogLineText::as_read ? m.text : m.message},
                               {"event", bootlog::to_string(m.event)}};
        if (text == LogLineText::as_read) line["source"] = bootlog::source_of(m.event);
        if (!m.matched_by.empty()) line["matched_by"] = m.matched_by;
        out.push_back(std::move(line));
    }
    return out;
}

} // namespace cmalign::report
