#include "cmalign/core/version.hpp"

#include <charconv>

#include <fmt/format.h>

namespace cmalign {

std::optional<KernelVersion> KernelVersion::parse(std::string_view text) {
    KernelVersion v;
    const char* p = text.data();
    const char* end = text.data() + text.size();
    auto number = [&](int& out) {
        auto [q, ec] = std::from_chars(p, end, out);
        if (ec != std::errc{} || out < 0) return false;
        p = q;
        return true;
    };
    if (text.starts_with('v')) ++p;
    if (!number(v.major) || p == end || *p != '.') return std::nullopt;
    ++p;
    if (!number(v.minor)) return std::nullopt;
    if (p != end && *p == '.') {
        ++p;
        if (!number(v.patch)) return std::nullopt;
        v.has_patch = true;
    }
    // Anything after is a local version or -rc suffix ("-rc3", "-android15-8"): it does not
    // change which rules apply.
    if (p != end && *p != '-' && *p != '+' && *p != '_') return std::nullopt;
    if (v.major < 2 || v.major > 99 || v.minor > 999) return std::nullopt;
    return v;
}

std::string KernelVersion::str() const {
    return has_patch ? fmt::format("{}.{}.{}", major, minor, patch)
                     : fmt::format("{}.{}", major, minor);
}

std::string VersionRange::str() const {
    bool open_low = first_major == 0;
    bool open_high = last_major >= 99;
    if (open_low && open_high) return "all versions";
    if (open_low) return fmt::format("≤ v{}.{}", last_major, last_minor);
    if (open_high) return fmt::format("≥ v{}.{}", first_major, first_minor);
    if (first_major == last_major && first_minor == last_minor)
        return fmt::format("v{}.{}", first_major, first_minor);
    return fmt::format("v{}.{}–v{}.{}", first_major, first_minor, last_major, last_minor);
}

} // namespace cmalign
