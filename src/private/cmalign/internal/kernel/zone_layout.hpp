// What an arch's kernel does with its memory zones (src/kernel/zones.cpp). Private: read by
// `cmalign pcp` (src/api/tune_pcp.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"
#include "cmalign/kernel/zones.hpp"

namespace cmalign::kernel {

// The zones this kernel has (enum zone_type), from the configuration or the arch's Kconfig
// defaults; each default taken is said in `assumptions`.
std::vector<ZoneType> configured_zones(const kconfig::Config& cfg, const Model& m,
                                       std::vector<std::string>& assumptions);
bool has_zone(const std::vector<ZoneType>& zones, ZoneType z);
// --memory: total RAM at `base` split into zones as the arch's zone_sizes_init() would, minus
// the memmap; each rule used is said in `how`.
std::map<ZoneType, std::uint64_t> estimate_zones(std::uint64_t total, std::uint64_t base,
                                                 const std::vector<ZoneType>& zones, const Model& m,
                                                 std::vector<std::string>& how);

} // namespace cmalign::kernel
