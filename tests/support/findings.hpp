// The diagnostics of one check in a checks::run() result, for tests that assert on one check.
#pragma once

#include <string>
#include <vector>

#include "cmalign/checks/checks.hpp"

namespace cmalign::test {

inline std::vector<Diagnostic> findings_of(const checks::Result& r, const std::string& check) {
    std::vector<Diagnostic> out;
    for (const auto& d : r.diagnostics)
        if (d.check == check) out.push_back(d);
    return out;
}

} // namespace cmalign::test
