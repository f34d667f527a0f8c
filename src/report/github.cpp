// --format github: workflow commands that GitHub Actions turns into annotations.
#include <set>

#include <fmt/format.h>

#include "cmalign/report/report.hpp"

namespace cmalign::report {

namespace {

// As @actions/core escapeData(): the message part.
std::string escape_data(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '%')
            out += "%25";
        else if (c == '\r')
            out += "%0D";
        else if (c == '\n')
            out += "%0A";
        else
            out += c;
    }
    return out;
}

// As @actions/core escapeProperty(): property values also escape ':' and ','.
std::string escape_property(const std::string& s) {
    std::string out;
    for (char c : escape_data(s)) {
        if (c == ':')
            out += "%3A";
        else if (c == ',')
            out += "%2C";
        else
            out += c;
    }
    return out;
}

// GitHub's workflow commands are the severity names, but "notice" for a note.
const char* command(Severity s) {
    return s == Severity::note ? "notice" : to_string(s);
}

} // namespace

std::string github(std::span<const Diagnostic> diagnostics) {
    std::string out;
    std::set<std::string> seen; // a .dtsi shared by many boards: one annotation, not one per board
    for (const auto& d : diagnostics) {
        std::string props;
        auto add = [&](const char* key, const std::string& value) {
            props += fmt::format("{}{}={}", props.empty() ? " " : ",", key, escape_property(value));
        };
        if (d.where.known()) add("file", d.where.file);
        if (d.where.line > 0) add("line", std::to_string(d.where.line));
        if (d.where.column > 0) add("col", std::to_string(d.where.column));
        add("title", d.check.empty() ? std::string("cmalign") : d.check);
        std::string message = d.message;
        if (!d.node.empty()) message += " (" + d.node + ")";
        auto line = fmt::format("::{}{}::{}\n", command(d.severity), props, escape_data(message));
        if (seen.insert(line).second) out += line;
    }
    return out;
}

} // namespace cmalign::report
