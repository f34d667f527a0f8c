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

void Diagnostics::error(Location where, std::string message, std::string check) {
    add({Severity::error, std::move(where), std::move(check), std::move(message), {}, {}, {}});
}
void Diagnostics::warning(Location where, std::string message, std::string check) {
    add({Severity::warning, std::move(where), std::move(check), std::move(message), {}, {}, {}});
}
void Diagnostics::note(Location where, std::string message, std::string check) {
    add({Severity::note, std::move(where), std::move(check), std::move(message), {}, {}, {}});
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
