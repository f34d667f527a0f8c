#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <unistd.h>

#include "support/material.hpp"

namespace cmalign::test {

MaterialCounters& material_counters() {
    static MaterialCounters counters;
    return counters;
}

bool material_required() {
#ifdef CMALIGN_REQUIRE_MATERIAL
    return true;
#else
    const char* ci = std::getenv("CI");
    return ci && *ci && std::strcmp(ci, "false") != 0 && std::strcmp(ci, "0") != 0;
#endif
}

bool program_available(const char* name) {
    if (std::strchr(name, '/')) return ::access(name, X_OK) == 0;
    const char* path = std::getenv("PATH");
    if (!path) return false;
    std::string dirs = path;
    std::size_t start = 0;
    while (start <= dirs.size()) {
        std::size_t end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        std::string candidate = dirs.substr(start, end - start) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return true;
        start = end + 1;
    }
    return false;
}

} // namespace cmalign::test

namespace {

// Every test binary works in a temporary directory of its own (TMPDIR, which
// std::filesystem::temp_directory_path() reads): tests name their scratch files by purpose, and
// two runs at once (two build trees, two checkouts on one machine) must not share them.
struct PrivateTmpdir {
    std::filesystem::path dir;
    PrivateTmpdir() {
        std::error_code ec;
        auto base = std::filesystem::temp_directory_path(ec);
        if (ec) return;
        dir = base / ("cmalign-test-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir, ec);
        if (ec || ::setenv("TMPDIR", dir.c_str(), 1) != 0) dir.clear();
    }
    ~PrivateTmpdir() {
        std::error_code ec;
        if (!dir.empty()) std::filesystem::remove_all(dir, ec);
    }
};

} // namespace

int main(int argc, char** argv) {
    PrivateTmpdir tmpdir;
    doctest::Context context(argc, argv);
    int result = context.run();
    if (context.shouldExit()) return result;
    auto& counters = cmalign::test::material_counters();
    // Said on every run so a log shows how much of it touched real material.
    std::cout << "real material: " << counters.present << " present, " << counters.missing
              << " missing"
              << (counters.missing == 0                ? ""
                  : cmalign::test::material_required() ? " (required: those checks failed)"
                                                       : " (those checks were skipped)")
              << '\n';
    return result;
}
