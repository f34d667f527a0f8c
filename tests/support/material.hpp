// Real material (Debian kernel trees, kernel images, dtc, cpp) for the tests that need it.
//
// A test that cannot find its material must not pass quietly: where material is required (the
// environment variable CI is set, as in CI, or the build sets CMALIGN_REQUIRE_MATERIAL=ON) a
// missing piece fails the test case; elsewhere it is a visible skip, counted and listed in the
// run's closing summary ("real material: ..."), so a developer sees what did not run.
#pragma once

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include <doctest/doctest.h>

namespace cmalign::test {

struct MaterialCounters {
    std::atomic<int> present{0};
    std::atomic<int> missing{0};
};
MaterialCounters& material_counters(); // defined in tests/main.cpp

bool material_required(); // CI set (non-empty, not "false"/"0"), or built to require it
bool program_available(const char* name); // on PATH (or an absolute path that is executable)

// True when `path` exists. Otherwise FAIL (material required) or a visible skip; returns false,
// and the caller returns from the test case.
inline bool have_material(const std::filesystem::path& path, std::string_view what = {}) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
        ++material_counters().present;
        return true;
    }
    ++material_counters().missing;
    std::string why = "missing real material: " + path.string();
    if (!what.empty()) why += " (" + std::string(what) + ")";
    if (material_required())
        FAIL_CHECK(why << " -- required in CI; install it with scripts/install-deps "
                          "--with-kernel-sources && scripts/kernel-sources");
    else
        MESSAGE("SKIPPED: " << why);
    return false;
}

// The same for a program the test compares against (dtc, cpp, diff, xz, ...).
inline bool have_program(const char* name) {
    if (program_available(name)) {
        ++material_counters().present;
        return true;
    }
    ++material_counters().missing;
    if (material_required())
        FAIL_CHECK("missing program " << std::string(name)
                                      << " -- required in CI (scripts/install-deps)");
    else
        MESSAGE("SKIPPED: missing program " << std::string(name));
    return false;
}

// For doctest's skip decorator, evaluated when the test case is registered: true (skip, with the
// reason on stderr) when `path` is missing and material is not required.
inline bool skip_without(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec) || material_required()) return false;
    std::fprintf(stderr, "SKIPPED test case: missing real material %s\n", path.c_str());
    return true;
}

} // namespace cmalign::test

// Decorators of a test case that reads real material at `path`: in the doctest suite
// "real-material" (its own ctest entry, label real-material) and skipped visibly when missing.
#define CMALIGN_REAL_MATERIAL(path)                                                                \
    doctest::test_suite("real-material") * doctest::skip(::cmalign::test::skip_without(path))
