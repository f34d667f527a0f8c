// `cmalign pcp`: from a configuration and a board description (memory, zones, zoneinfo, CPUs,
// sysctls, command line) to the PCP and watermark calculator's inputs and result. The steps are
// the calc layer's (calc/pcp_setup.hpp); this reads the inputs and takes them in order.
#include <fmt/format.h>

#include "cmalign/internal/calc/pcp_setup.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/kernel/zone_layout.hpp"
#include "cmalign/internal/report/tune_report.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/reserved/regions.hpp"
#include "cmalign/tune.hpp"

namespace cmalign {

ExitCode PcpOutcome::exit_code() const {
    if (diags.has_errors() || !model) return ExitCode::input_error;
    return differences.empty() ? ExitCode::clean : ExitCode::findings;
}

namespace {

// Boot parameters: --bootargs, else /chosen/bootargs of --dt. false when --dt cannot be read.
bool read_bootargs(const PcpRequest& request, PcpOutcome& out) {
    if (request.bootargs) {
        out.bootargs = request.bootargs;
    } else if (request.dt) {
        dt::FileCache cache;
        auto tree =
            detail::load_tree(*request.dt, detail::preprocess_options({}), cache, out.diags);
        if (!tree) return false;
        auto rs = reserved::read(*tree);
        out.bootargs = rs.bootargs;
        if (!rs.bootargs)
            out.notes.push_back(fmt::format("{} has no /chosen/bootargs", *request.dt));
    }
    return true;
}

// --sysctl-file, then every --sysctl, into the calculator's sysctls.
bool read_sysctls(const PcpRequest& request, std::vector<calc::SysctlSetting>& settings,
                  calc::Sysctls& sysctls, Diagnostics& diags) {
    if (request.sysctl_file &&
        !calc::read_sysctl_file(*request.sysctl_file, settings, diags, request.config.limits))
        return false;
    for (const auto& s : request.sysctls)
        if (!calc::read_sysctl_argument(s, settings, diags)) return false;
    for (const auto& s : settings)
        if (!calc::apply_sysctl(s, sysctls, diags)) return false;
    return true;
}

// The zones from exactly one of --zoneinfo, --zone and --memory, and the CPUs of each node.
bool read_zones(const PcpRequest& request, const std::vector<calc::ZoneType>& zone_types,
                const kernel::Model& m, PcpOutcome& out, std::vector<std::string>& how,
                std::vector<std::string>& assumed) {
    auto& in = out.input;
    if (request.zoneinfo) {
        out.zoneinfo = calc::parse_zoneinfo(*request.zoneinfo, out.diags, request.config.limits);
        if (!out.zoneinfo) return false;
        out.memory_source = "--zoneinfo " + *request.zoneinfo;
        calc::zones_from_zoneinfo(*out.zoneinfo, request.cpus.has_value(), in, how, assumed);
    } else if (!request.zones.empty()) {
        out.memory_source = "--zone";
        if (!calc::zones_from_sizes(request.zones, zone_types, m, in, how, out.diags)) return false;
    } else {
        if (!calc::zones_from_memory(*request.memory, request.memory_base, zone_types, m, in, how,
                                     assumed, out.diags))
            return false;
        out.memory_source = "--memory " + *request.memory;
    }
    const calc::Zoneinfo* zoneinfo = out.zoneinfo ? &*out.zoneinfo : nullptr;
    return calc::set_cpus(request.cpus, zoneinfo, in, assumed, out.diags) &&
           calc::zones_usable(in, zoneinfo, out.diags);
}

} // namespace

PcpOutcome run_pcp(const PcpRequest& request) {
    const RunScope run_scope; // pipes read once, files stamped once
    PcpOutcome out;
    auto& diags = out.diags;
    int sources =
        (request.memory ? 1 : 0) + (request.zones.empty() ? 0 : 1) + (request.zoneinfo ? 1 : 0);
    if (sources != 1) {
        diags.error({}, "give the memory as exactly one of --memory SIZE, --zone NAME=SIZE... or "
                        "--zoneinfo FILE");
        return out;
    }
    auto options = kernel_options(request.config, diags);
    if (!options) return out;
    auto config = load_config(request.config, diags);
    if (!config) return out;
    out.model = kernel::derive(*config, *options, diags);
    if (!out.model || diags.has_errors()) return out;
    const auto& m = *out.model;
    std::vector<std::string> assumed = m.assumptions;
    out.input = calc::kernel_input(*config, m, assumed, diags);

    if (!read_bootargs(request, out) || !calc::known_vendor_params(request.vendor_params, diags))
        return out;
    if (out.bootargs) {
        out.boot = reserved::parse_boot_params(*out.bootargs);
        if (!calc::apply_boot_params(*out.boot, request.vendor_params, out.input, out.notes, diags))
            return out;
    }
    std::vector<calc::SysctlSetting> settings;
    if (!read_sysctls(request, settings, out.input.sysctls, diags)) return out;
    auto zone_types = kernel::configured_zones(*config, m, assumed);
    std::vector<std::string> how;
    if (!read_zones(request, zone_types, m, out, how, assumed)) return out;

    // The kernel's own values (no sysctl) first: what the board's sysctls are compared with.
    calc::PcpInput defaults = out.input;
    defaults.sysctls = {};
    auto kernel_defaults = calc::compute_pcp(defaults);
    out.result = calc::compute_pcp(out.input);
    auto& result_assumptions = out.result.assumptions;
    result_assumptions.insert(result_assumptions.begin(), assumed.begin(), assumed.end());
    if (request.memory)
        result_assumptions.insert(result_assumptions.end(), how.begin(), how.end());
    else
        out.notes.insert(out.notes.begin(), how.begin(), how.end());
    out.sysctls = calc::compare_sysctls(settings, out.input.sysctls, kernel_defaults, out.notes);
    if (out.zoneinfo) {
        out.differences = calc::compare(*out.zoneinfo, out.result, &out.not_compared);
        calc::explain_differences(out.differences, out.result, out.input, !settings.empty(),
                                  out.notes);
    }
    return out;
}

nlohmann::json pcp_json(const PcpOutcome& outcome) {
    return report::pcp_json(outcome, outcome.model);
}

std::string pcp_text(const PcpOutcome& outcome) {
    return report::pcp_text(outcome, outcome.model);
}

} // namespace cmalign
