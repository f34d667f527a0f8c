// `cmalign pcp`'s inputs: the zones a configuration has, zone sizes estimated from --memory, and
// vm sysctls read from the command line or a file. Private to src/api (pcp*.cpp).
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
// The zones this kernel has (enum zone_type), from the configuration or the arch's defaults.
std::vector<ZoneType> configured_zones(const kconfig::Config& cfg, const kernel::Model& m,
                                       std::vector<std::string>& assumptions);
bool has_zone(const std::vector<ZoneType>& zones, ZoneType z);
// --memory split into zones as the arch's zone_sizes_init() would, minus the memmap.
std::map<ZoneType, std::uint64_t> estimate_zones(std::uint64_t total, std::uint64_t base,
                                                 const std::vector<ZoneType>& zones,
                                                 const kernel::Model& m,
                                                 std::vector<std::string>& how);
// "vm.min_free_kbytes = 67584" lines of a file.
bool read_sysctl_file(const std::string& path, std::vector<SysctlSetting>& out, Diagnostics& diags);
// One setting into the calculator's sysctls; false (with an error) when it is not one.
bool apply_sysctl(const SysctlSetting& s, calc::Sysctls& sysctls, Diagnostics& diags);
// The THP mode the calculator assumes for this configuration.
calc::ThpMode thp_mode(const kconfig::Config& cfg, const kernel::Model& m,
                       std::vector<std::string>& assumptions);

} // namespace cmalign::pcp_inputs
