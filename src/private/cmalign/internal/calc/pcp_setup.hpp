// The PCP calculator's input built from a configuration and a board description, one step at a
// time in the order `cmalign pcp` (src/api/tune_pcp.cpp) takes them, and the result compared with
// the board's sysctls and /proc/zoneinfo. The zones of an arch and how RAM splits into them are the
// kernel layer's (cmalign/kernel/zone_layout.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cmalign/calc/pcp.hpp"
#include "cmalign/calc/pcp_analysis.hpp"
#include "cmalign/calc/zoneinfo.hpp"
#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/limits.hpp"
#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"
#include "cmalign/reserved/bootargs.hpp"

namespace cmalign::calc {

struct SysctlSetting {
    std::string name; // with or without "vm."
    std::string value;
    Location where;
};

// Version, page size, pageblock order, THP mode and CONFIG_PCP_BATCH_SCALE_MAX of the model and
// its configuration; what had to be assumed goes to `assumed`.
PcpInput kernel_input(const kconfig::Config& config, const kernel::Model& m,
                      std::vector<std::string>& assumed, Diagnostics& diags);
// The THP mode the calculator assumes for this configuration.
ThpMode thp_mode(const kconfig::Config& cfg, const kernel::Model& m,
                 std::vector<std::string>& assumptions);

// false (with an error) when a --vendor-param is not one the calculator knows.
bool known_vendor_params(const std::vector<std::string>& params, Diagnostics& diags);
// transparent_hugepage= and the vendor pcp_batch_scale_max= of the command line applied to `in`;
// false (with an error) when a parameter to apply cannot be.
bool apply_boot_params(const reserved::BootParams& bp,
                       const std::vector<std::string>& vendor_params, PcpInput& in,
                       std::vector<std::string>& notes, Diagnostics& diags);

// "vm.min_free_kbytes = 67584" lines of a file.
bool read_sysctl_file(const std::string& path, std::vector<SysctlSetting>& out, Diagnostics& diags,
                      const InputLimits& limits);
// One "NAME=VALUE" argument; false (with an error) when it is not that.
bool read_sysctl_argument(const std::string& text, std::vector<SysctlSetting>& out,
                          Diagnostics& diags);
// One setting into the calculator's sysctls; false (with an error) when it is not one.
bool apply_sysctl(const SysctlSetting& s, Sysctls& sysctls, Diagnostics& diags);

// The zones as a /proc/zoneinfo lists them, and its online CPUs unless the CPUs are given.
void zones_from_zoneinfo(const Zoneinfo& zoneinfo, bool cpus_given, PcpInput& in,
                         std::vector<std::string>& how, std::vector<std::string>& assumed);
// "NAME=SIZE" managed memory of each zone; false (with an error) on a bad or repeated zone.
bool zones_from_sizes(const std::vector<std::string>& specs, const std::vector<ZoneType>& types,
                      const kernel::Model& m, PcpInput& in, std::vector<std::string>& how,
                      Diagnostics& diags);
// Total RAM (and where it starts) split into the zones as the kernel's zone layout does.
bool zones_from_memory(const std::string& memory, const std::optional<std::string>& memory_base,
                       const std::vector<ZoneType>& types, const kernel::Model& m, PcpInput& in,
                       std::vector<std::string>& how, std::vector<std::string>& assumed,
                       Diagnostics& diags);
// The CPUs of each node: given, from the zoneinfo (already set), or one assumed.
bool set_cpus(std::optional<unsigned> cpus, const Zoneinfo* zoneinfo, PcpInput& in,
              std::vector<std::string>& assumed, Diagnostics& diags);
// false (with an error) when no zone has pages, or one has more than any kernel addresses.
bool zones_usable(const PcpInput& in, const Zoneinfo* zoneinfo, Diagnostics& diags);

// The board's sysctls next to the values the kernel sets itself (`kernel_defaults`, computed
// without them); a changed one adds a note.
std::vector<SysctlValue> compare_sysctls(const std::vector<SysctlSetting>& settings,
                                         const Sysctls& applied, const PcpResult& kernel_defaults,
                                         std::vector<std::string>& notes);
// The notes on a zoneinfo that differs from the computation: the vm.min_free_kbytes a different
// min watermark implies, and a hint to pass the board's sysctls when none were given.
void explain_differences(const std::vector<Difference>& differences, const PcpResult& result,
                         const PcpInput& in, bool sysctls_given, std::vector<std::string>& notes);

} // namespace cmalign::calc
