// What `cmalign pcp` found for one board: the calculator's input and result, where the memory
// came from, the board's sysctls and /proc/zoneinfo compared with the computation, and the notes.
// The report layer renders it; cmalign::PcpOutcome (cmalign/tune.hpp) adds the model and errors.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cmalign/calc/pcp.hpp"
#include "cmalign/calc/zoneinfo.hpp"
#include "cmalign/core/diagnostic.hpp"
#include "cmalign/reserved/bootargs.hpp"

namespace cmalign::calc {

struct SysctlValue {
    std::string name; // "vm.min_free_kbytes"
    std::string value;
    std::string kernel_default;
    bool differs = false;
    Location where;
};

struct PcpAnalysis {
    PcpInput input;
    PcpResult result;
    std::string memory_source; // "--memory", "--zone", "--zoneinfo FILE"
    std::optional<Zoneinfo> zoneinfo;
    std::vector<Difference> differences;
    std::vector<std::string> not_compared; // what the zoneinfo comparison could not check
    std::vector<SysctlValue> sysctls;
    std::optional<std::string> bootargs;
    std::optional<reserved::BootParams> boot;
    std::vector<std::string> notes; // what the tool noticed (boot parameters, hints)
};

} // namespace cmalign::calc
