// Kernel versions ("6.12.117") and ranges of them, as the rule tables key on them.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace cmalign {

struct KernelVersion {
    int major = 0;
    int minor = 0;
    int patch = 0;
    bool has_patch = false; // "6.12" vs "6.12.0": kept so we print what the user gave

    static std::optional<KernelVersion>
    parse(std::string_view text); // "6.12", "6.12.117", "6.12.0-rc3"
    std::string str() const;

    // Ordering ignores has_patch: 6.12 == 6.12.0.
    friend std::strong_ordering operator<=>(const KernelVersion& a, const KernelVersion& b) {
        if (auto c = a.major <=> b.major; c != 0) return c;
        if (auto c = a.minor <=> b.minor; c != 0) return c;
        return a.patch <=> b.patch;
    }
    friend bool operator==(const KernelVersion& a, const KernelVersion& b) {
        return (a <=> b) == 0;
    }
};

// [first, last] inclusive on major.minor; the patch level never changes a rule we model.
struct VersionRange {
    int first_major = 0, first_minor = 0;
    int last_major = 99, last_minor = 99;
    bool contains(const KernelVersion& v) const {
        auto key = v.major * 1000 + v.minor;
        return key >= first_major * 1000 + first_minor && key <= last_major * 1000 + last_minor;
    }
    std::string str() const; // "v5.18–v6.9", "≥ v6.17", "≤ v5.17"
};

} // namespace cmalign
