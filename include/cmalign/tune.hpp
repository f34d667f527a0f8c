// `cmalign pcp` and `cmalign heap`: the memory-tuning calculators driven by a kernel
// configuration and a description of the board (total memory, zone sizes or a /proc/zoneinfo).
// The CLI and the bindings call these; they own no output format besides the JSON/text below.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cmalign/api.hpp"
#include "cmalign/calc/heap.hpp"
#include "cmalign/calc/pcp_analysis.hpp"
#include "cmalign/core/diagnostic.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign {

struct PcpRequest {
    ConfigOptions config;
    // Exactly one of memory / zones / zoneinfo.
    std::optional<std::string> memory;      // total RAM ("1G")
    std::optional<std::string> memory_base; // physical start of RAM, for the zone split
    std::vector<std::string> zones;         // "DMA32=3G": managed memory of a zone
    std::optional<std::string> zoneinfo;    // a /proc/zoneinfo
    std::optional<unsigned> cpus;           // CPUs of each node
    std::vector<std::string> sysctls;       // "vm.min_free_kbytes=67584"
    std::optional<std::string> sysctl_file; // "vm.x = value" lines (`sysctl vm.x ...` output)
    std::optional<std::string> bootargs;    // kernel command line
    std::optional<std::string> dt;          // a DTS/DTB whose /chosen/bootargs is used
    std::vector<std::string> vendor_params; // non-upstream parameters to apply
};

using SysctlValue = calc::SysctlValue;

// The analysis (calc/pcp_analysis.hpp) with the model it was computed for and the input errors.
struct PcpOutcome : calc::PcpAnalysis {
    std::optional<kernel::Model> model;
    Diagnostics diags; // input errors are fatal (exit 2)

    // input_error: unusable input; findings: the zoneinfo differs from the computation.
    ExitCode exit_code() const;
};

PcpOutcome run_pcp(const PcpRequest& request);
std::string pcp_text(const PcpOutcome& outcome);

struct HeapRequest {
    ConfigOptions config;
    std::string size;
    std::optional<int> available_order;
};

struct HeapOutcome {
    std::optional<kernel::Model> model;
    std::optional<calc::HeapPlan> plan;
    Diagnostics diags;
    ExitCode exit_code() const {
        return plan && !diags.has_errors() ? ExitCode::clean : ExitCode::input_error;
    }
};

HeapOutcome run_heap(const HeapRequest& request);
std::string heap_text(const HeapOutcome& outcome);

} // namespace cmalign
