// `cmalign pcp`'s inputs: vm sysctls read from the command line or a file, and the THP mode.
// (The zones and their sizes are the kernel layer's: cmalign/internal/kernel/zone_layout.hpp.)
// Private to src/api (pcp*.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/calc/pcp.hpp"
#include "cmalign/core/diagnostic.hpp"
#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::pcp_inputs {

using calc::ZoneType;

struct SysctlSetting {
    std::string name; // without "vm."
    std::string value;
    Location where;
};

std::string trim(std::string_view s);
// "vm.min_free_kbytes = 67584" lines of a file.
bool read_sysctl_file(const std::string& path, std::vector<SysctlSetting>& out, Diagnostics& diags,
                      const InputLimits& limits);
// One setting into the calculator's sysctls; false (with an error) when it is not one.
bool apply_sysctl(const SysctlSetting& s, calc::Sysctls& sysctls, Diagnostics& diags);
// The THP mode the calculator assumes for this configuration.
calc::ThpMode thp_mode(const kconfig::Config& cfg, const kernel::Model& m,
                       std::vector<std::string>& assumptions);

} // namespace cmalign::pcp_inputs
