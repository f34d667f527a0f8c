// `cmalign pcp`: from a configuration and a board description (memory, zones, zoneinfo, CPUs,
// sysctls, command line) to the PCP and watermark calculator's inputs and result.
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/kernel/zone_layout.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/kernel/calc_rules.hpp"
#include "cmalign/reserved/regions.hpp"
#include "cmalign/run.hpp"
#include "cmalign/tune.hpp"
#include "pcp_inputs.hpp"

namespace cmalign {

using calc::ZoneType;
using namespace pcp_inputs;
using kernel::configured_zones;
using kernel::estimate_zones;
using kernel::has_zone;

ExitCode PcpOutcome::exit_code() const {
    if (diags.has_errors() || !model) return ExitCode::input_error;
    return differences.empty() ? ExitCode::clean : ExitCode::findings;
}

PcpOutcome run_pcp(const PcpRequest& request) {
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
    auto& in = out.input;
    std::vector<std::string> notes_assumed = m.assumptions;

    in.version = m.version;
    in.page_size = m.page_size;
    in.page_shift = m.page_shift;
    if (m.pageblock_order) {
        in.pageblock_order = *m.pageblock_order;
    } else if (m.pageblock_order_range) {
        in.pageblock_order = m.pageblock_order_range->second;
        notes_assumed.push_back(fmt::format(
            "pageblock_order is decided at boot ({}–{}): the largest, {}, is used for the THP "
            "min_free_kbytes raise (the largest raise)",
            m.pageblock_order_range->first, m.pageblock_order_range->second, in.pageblock_order));
    }
    in.thp = thp_mode(*config, m, notes_assumed);

    // CONFIG_PCP_BATCH_SCALE_MAX: its default and range are the kernel layer's.
    const auto& scale_symbol = kernel::calc_rules::pcp_batch_scale_max();
    const auto* scale_entry = config->find(scale_symbol.symbol);
    auto scale = config->get_int(scale_symbol.symbol);
    if (scale && *scale >= scale_symbol.lo && *scale <= scale_symbol.hi) {
        in.scale_max = static_cast<int>(*scale);
    } else {
        in.scale_max = scale_symbol.default_value;
        if (scale_entry && scale)
            diags.warning(scale_entry->where,
                          fmt::format("CONFIG_{}={} is outside its Kconfig range {}–{}; make "
                                      "olddefconfig resets it to the default {}",
                                      scale_symbol.symbol, *scale, scale_symbol.lo, scale_symbol.hi,
                                      scale_symbol.default_value));
        else if (kernel::calc_rules::find(kernel::calc_rules::Topic::pcp_batch_scale_max, m.version)
                     .variant == 1)
            notes_assumed.push_back(fmt::format("CONFIG_{} not in the configuration: assumed {} "
                                                "(mm/Kconfig default)",
                                                scale_symbol.symbol, scale_symbol.default_value));
        else
            notes_assumed.push_back(fmt::format(
                "CONFIG_{} not in the configuration: assumed {}, the default of the 6.1.y stable "
                "backport; mainline {} before v6.7 has no such cap (the free factor grows until "
                "high - batch)",
                scale_symbol.symbol, scale_symbol.default_value, m.version.str()));
    }

    // Boot parameters: --bootargs, else /chosen/bootargs of --dt.
    if (request.bootargs) {
        out.bootargs = request.bootargs;
    } else if (request.dt) {
        dt::FileCache cache;
        auto tree = load_tree(*request.dt, preprocess_options({}), cache, diags);
        if (!tree) return out;
        auto rs = reserved::read(*tree);
        out.bootargs = rs.bootargs;
        if (!rs.bootargs)
            out.notes.push_back(fmt::format("{} has no /chosen/bootargs", *request.dt));
    }
    for (const auto& p : request.vendor_params) {
        if (p != "pcp_batch_scale_max") {
            diags.error({},
                        fmt::format("--vendor-param {}: unknown (known: pcp_batch_scale_max)", p));
            return out;
        }
    }
    if (out.bootargs) {
        out.boot = reserved::parse_boot_params(*out.bootargs);
        const auto& bp = *out.boot;
        if (bp.transparent_hugepage && in.thp != calc::ThpMode::not_built) {
            if (bp.transparent_hugepage_valid) {
                in.thp = *bp.transparent_hugepage == "always"    ? calc::ThpMode::always
                         : *bp.transparent_hugepage == "madvise" ? calc::ThpMode::madvise
                                                                 : calc::ThpMode::never;
                out.notes.push_back(fmt::format("transparent_hugepage={} on the command line "
                                                "sets the THP mode",
                                                *bp.transparent_hugepage));
            } else {
                out.notes.push_back(fmt::format("transparent_hugepage={}: the kernel cannot parse "
                                                "it and ignores it",
                                                *bp.transparent_hugepage));
            }
        }
        if (bp.pcp_batch_scale_max_text) {
            bool apply = std::find(request.vendor_params.begin(), request.vendor_params.end(),
                                   "pcp_batch_scale_max") != request.vendor_params.end();
            std::string base = fmt::format(
                "pcp_batch_scale_max={} is not an upstream kernel parameter (RFC \"mm: "
                "page_alloc: Add kernel parameter to select maximum PCP batch scale number\", "
                "Nov 2024, not merged); upstream kernels ignore it and use "
                "CONFIG_PCP_BATCH_SCALE_MAX",
                *bp.pcp_batch_scale_max_text);
            if (!apply) {
                out.notes.push_back(base + "; pass --vendor-param pcp_batch_scale_max for a "
                                           "kernel that carries the patch");
            } else if (!bp.pcp_batch_scale_max) {
                diags.error({}, fmt::format("pcp_batch_scale_max={}: not a decimal number",
                                            *bp.pcp_batch_scale_max_text));
                return out;
            } else {
                in.scale_max = *bp.pcp_batch_scale_max;
                out.notes.push_back(
                    base + fmt::format("; applied with the proposed semantics (--vendor-param): "
                                       "scale {}{}",
                                       in.scale_max,
                                       bp.pcp_batch_scale_max_clamped
                                           ? fmt::format(" (clamped to {})", scale_symbol.hi)
                                           : std::string()));
            }
        }
    }

    // Sysctls.
    std::vector<SysctlSetting> settings;
    if (request.sysctl_file &&
        !read_sysctl_file(*request.sysctl_file, settings, diags, request.config.limits))
        return out;
    for (const auto& s : request.sysctls) {
        auto eq = s.find('=');
        if (eq == std::string::npos) {
            diags.error({}, fmt::format("--sysctl {}: expected NAME=VALUE", s));
            return out;
        }
        settings.push_back({trim(std::string_view(s).substr(0, eq)),
                            trim(std::string_view(s).substr(eq + 1)), Location{}});
    }
    for (const auto& s : settings)
        if (!apply_sysctl(s, in.sysctls, diags)) return out;

    // Zones.
    auto zone_types = configured_zones(*config, m, notes_assumed);
    std::vector<std::string> how;
    if (request.zoneinfo) {
        out.zoneinfo = calc::parse_zoneinfo(*request.zoneinfo, diags, request.config.limits);
        if (!out.zoneinfo) return out;
        out.memory_source = "--zoneinfo " + *request.zoneinfo;
        for (const auto& z : out.zoneinfo->zones)
            in.zones.push_back({z.node, z.type, *z.managed, z.present});
        how.push_back(fmt::format("managed pages of every zone from {}", *request.zoneinfo));
        unsigned cpus = out.zoneinfo->online_cpus();
        unsigned nodes = std::max(1u, out.zoneinfo->nodes());
        if (!request.cpus && cpus > 0) {
            in.cpus_per_node = std::max(1u, cpus / nodes);
            how.push_back(
                fmt::format("{} online CPU(s) from the pagesets of {}", cpus, *request.zoneinfo));
            if (nodes > 1)
                notes_assumed.push_back(fmt::format(
                    "{} nodes: the {} CPUs are assumed spread evenly ({} per node); give "
                    "--cpus N for the CPUs of each node",
                    nodes, cpus, in.cpus_per_node));
        }
    } else if (!request.zones.empty()) {
        out.memory_source = "--zone";
        std::map<ZoneType, std::uint64_t> managed;
        for (const auto& spec : request.zones) {
            auto eq = spec.find('=');
            auto type = eq == std::string::npos ? std::nullopt
                                                : calc::parse_zone_name(trim(spec.substr(0, eq)));
            auto size =
                eq == std::string::npos ? std::nullopt : parse_size(trim(spec.substr(eq + 1)));
            if (!type || !size) {
                diags.error({}, fmt::format("--zone {}: expected NAME=SIZE with NAME one of DMA, "
                                            "DMA32, Normal, HighMem, Movable",
                                            spec));
                return out;
            }
            if (!has_zone(zone_types, *type)) {
                diags.error({}, fmt::format("--zone {}: this configuration has no {} zone", spec,
                                            calc::zone_name(*type)));
                return out;
            }
            if (managed.count(*type)) {
                diags.error({},
                            fmt::format("--zone {}: {} given twice", spec, calc::zone_name(*type)));
                return out;
            }
            managed[*type] = *size / m.page_size;
        }
        for (auto t : zone_types)
            in.zones.push_back({0, t, managed.count(t) ? managed[t] : 0, std::nullopt});
        how.push_back("managed pages of each zone = --zone size / PAGE_SIZE (rounded down)");
    } else {
        auto total = parse_size(*request.memory);
        if (!total || *total < m.page_size) {
            diags.error({}, fmt::format("--memory {}: expected a size of at least one page",
                                        *request.memory));
            return out;
        }
        std::uint64_t base = 0;
        if (request.memory_base) {
            auto b = parse_size(*request.memory_base);
            if (!b) {
                diags.error(
                    {}, fmt::format("--memory-base {}: expected an address", *request.memory_base));
                return out;
            }
            base = *b;
        } else {
            notes_assumed.push_back("RAM assumed to start at physical address 0 "
                                    "(--memory-base sets it)");
        }
        out.memory_source = "--memory " + *request.memory;
        auto bytes = estimate_zones(*total, base, zone_types, m, how);
        for (auto t : zone_types)
            in.zones.push_back({0, t, bytes.count(t) ? bytes[t] / m.page_size : 0, std::nullopt});
    }
    if (request.cpus) {
        if (*request.cpus == 0) {
            diags.error({}, "--cpus must be at least 1");
            return out;
        }
        in.cpus_per_node = *request.cpus;
    } else if (!request.zoneinfo || out.zoneinfo->online_cpus() == 0) {
        in.cpus_per_node = 1;
        notes_assumed.push_back("1 CPU assumed (--cpus N): PCP high limits are per CPU and "
                                "shrink with more CPUs");
    }
    // The kernel's own u64 arithmetic (pages_min * managed) stays exact for real machines; so
    // does ours below 2^40 pages per zone (4 PiB of 4K pages, beyond any physical address width).
    for (const auto& z : in.zones) {
        if (z.managed_pages > (std::uint64_t{1} << 40)) {
            diags.error(out.zoneinfo ? Location{out.zoneinfo->path, 0, 0} : Location{},
                        fmt::format("zone {}: {} managed pages is more memory than any kernel "
                                    "addresses",
                                    calc::zone_name(z.type), z.managed_pages));
            return out;
        }
    }
    bool any_populated = std::any_of(in.zones.begin(), in.zones.end(),
                                     [](const calc::ZoneInput& z) { return z.populated(); });
    if (!any_populated) {
        diags.error({}, "no zone has managed pages");
        return out;
    }

    // The kernel's own values (no sysctl) first: what the board's sysctls are compared with.
    calc::PcpInput defaults = in;
    defaults.sysctls = {};
    auto kernel_defaults = calc::compute_pcp(defaults);
    out.result = calc::compute_pcp(in);
    auto& result_assumptions = out.result.assumptions;
    result_assumptions.insert(result_assumptions.begin(), notes_assumed.begin(),
                              notes_assumed.end());
    if (request.memory)
        result_assumptions.insert(result_assumptions.end(), how.begin(), how.end());
    else
        out.notes.insert(out.notes.begin(), how.begin(), how.end());

    for (const auto& s : settings) {
        std::string name = s.name.starts_with("vm.") ? s.name.substr(3) : s.name;
        SysctlValue v{"vm." + name, s.value, "", false, s.where};
        if (name == "min_free_kbytes") {
            v.kernel_default = std::to_string(kernel_defaults.min_free_kbytes);
            v.differs = *in.sysctls.min_free_kbytes != kernel_defaults.min_free_kbytes;
        } else if (name == "watermark_scale_factor") {
            v.kernel_default = "10";
            v.differs = *in.sysctls.watermark_scale_factor != 10;
        } else if (name == "percpu_pagelist_high_fraction") {
            v.kernel_default = "0";
            v.differs = *in.sysctls.percpu_pagelist_high_fraction != 0;
        } else if (name == "lowmem_reserve_ratio") {
            std::string d;
            for (auto r : kernel_defaults.lowmem_reserve_ratio)
                d += (d.empty() ? "" : " ") + std::to_string(r);
            v.kernel_default = d;
            v.differs = *in.sysctls.lowmem_reserve_ratio != kernel_defaults.lowmem_reserve_ratio;
        } else {
            continue;
        }
        if (v.differs)
            out.notes.push_back(fmt::format("{} = {} differs from the value the kernel sets "
                                            "itself ({}): changed after boot (sysctl.conf, a "
                                            "tuning daemon or a boot script); the figures use "
                                            "the board's value",
                                            v.name, v.value, v.kernel_default));
        out.sysctls.push_back(std::move(v));
    }

    if (out.zoneinfo) {
        out.differences = calc::compare(*out.zoneinfo, out.result, &out.not_compared);
        // A different min watermark in a lowmem zone points at vm.min_free_kbytes: invert
        // min = pages_min * managed / lowmem_pages (u64 division) for the largest such zone.
        const calc::Difference* min_diff = nullptr;
        const auto& lowmem_rule =
            kernel::calc_rules::find(kernel::calc_rules::Topic::watermark_lowmem, m.version);
        auto capped = [&](ZoneType t) {
            return t == ZoneType::highmem || (lowmem_rule.variant == 1 && t == ZoneType::movable);
        };
        std::uint64_t lowmem_pages = 0;
        for (const auto& z : out.result.zones)
            if (!capped(z.type)) lowmem_pages += z.managed_pages;
        std::uint64_t best_managed = 0;
        for (const auto& d : out.differences) {
            if (d.field != "watermarks.min") continue;
            for (const auto& z : out.result.zones)
                if (z.node == d.node && calc::zone_name(z.type) == d.zone && !capped(z.type) &&
                    z.managed_pages > best_managed) {
                    best_managed = z.managed_pages;
                    min_diff = &d;
                }
        }
        if (min_diff && best_managed > 0) {
            std::uint64_t pages_min =
                (min_diff->reported * lowmem_pages + best_managed - 1) / best_managed;
            long long implied = static_cast<long long>(pages_min << (m.page_shift - 10));
            out.notes.push_back(fmt::format(
                "the file's {} min watermark {} implies vm.min_free_kbytes ≈ {} (computed {}): "
                "min_free_kbytes was probably changed on the board (sysctl, or a THP setting "
                "changed at run time)",
                min_diff->zone, min_diff->reported, implied, out.result.min_free_kbytes));
        }
        if (!out.differences.empty() && settings.empty())
            out.notes.push_back("the zoneinfo differs from the computation: if a vm sysctl "
                                "(min_free_kbytes, watermark_scale_factor, "
                                "percpu_pagelist_high_fraction, lowmem_reserve_ratio) was "
                                "changed on the board, pass its values with --sysctl-file");
    }
    return out;
}

} // namespace cmalign
