// The /proc/zoneinfo and sysctl readers and the PCP calculation behind them: the input is split at
// "@@@" lines into a zoneinfo and a sysctl file (`vm.NAME = VALUE` lines). The zoneinfo is parsed
// alone, then both go through run_pcp() as `cmalign pcp --zoneinfo F --sysctl-file S` does (arm64
// 6.12, THP and the rest from the example configuration), and the comparison and both renderings
// run. Property: a failed run says why (a located error); nothing throws or crashes.
#include <cstdint>
#include <string_view>

#include "cmalign/calc/zoneinfo.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/tune.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    auto paths = cmalign::fuzz::write_named_parts(input, {"zoneinfo", "sysctl"});
    {
        cmalign::Diagnostics diags;
        auto parsed = cmalign::calc::parse_zoneinfo_text(
            std::string(input.substr(0, input.find("\n@@@\n"))), "zoneinfo", diags);
        if (!parsed && !diags.has_errors()) __builtin_trap();
    }
    cmalign::PcpRequest request;
    request.config.config_files = {"examples/configs/arm64-16k.config"};
    request.config.arch = "arm64";
    request.config.kernel_version = "6.12";
    request.config.limits.file_bytes = 1u << 20;
    request.zoneinfo = paths[0];
    if (paths.size() > 1) request.sysctl_file = paths[1];
    auto outcome = cmalign::run_pcp(request);
    if (outcome.exit_code() == cmalign::ExitCode::input_error && !outcome.diags.has_errors())
        __builtin_trap();
    (void)cmalign::pcp_json(outcome).dump();
    (void)cmalign::pcp_text(outcome);
    return 0;
}
