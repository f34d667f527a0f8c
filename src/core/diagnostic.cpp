#include "cmalign/core/diagnostic.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace cmalign {

const char* to_string(Severity s) {
    switch (s) {
    case Severity::note:
        return "note";
    case Severity::warning:
        return "warning";
    case Severity::error:
        return "error";
    }
    return "error";
}

Diagnostic make_diagnostic(Severity severity, Location where, std::string message,
                           std::string check) {
    Diagnostic d;
    d.severity = severity;
    d.where = std::move(where);
    d.check = std::move(check);
    d.message = std::move(message);
    return d;
}

void Diagnostics::error(Location where, std::string message, std::string check) {
    add(make_diagnostic(Severity::error, std::move(where), std::move(message), std::move(check)));
}
void Diagnostics::warning(Location where, std::string message, std::string check) {
    add(make_diagnostic(Severity::warning, std::move(where), std::move(message), std::move(check)));
}
void Diagnostics::note(Location where, std::string message, std::string check) {
    add(make_diagnostic(Severity::note, std::move(where), std::move(message), std::move(check)));
}

bool Diagnostics::has_errors() const {
    return count(Severity::error) > 0;
}

std::size_t Diagnostics::count(Severity s) const {
    return static_cast<std::size_t>(std::count_if(items_.begin(), items_.end(),
                                                  [s](const auto& d) { return d.severity == s; }));
}

void Diagnostics::append(const Diagnostics& other) {
    items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

std::string format_gcc(const Diagnostic& d) {
    std::string out;
    if (d.where.known()) {
        out += d.where.file;
        if (d.where.line > 0) {
            out += fmt::format(":{}", d.where.line);
            if (d.where.column > 0) out += fmt::format(":{}", d.where.column);
        }
        out += ": ";
    } else {
        out += "cmalign: ";
    }
    out += fmt::format("{}: {}", to_string(d.severity), d.message);
    if (!d.check.empty()) out += fmt::format(" [{}]", d.check);
    return out;
}

} // namespace cmalign
