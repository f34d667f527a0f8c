// `cmalign pcp`'s steps from a configuration and a board description to the calculator's input:
// kernel values, boot parameters, vm sysctls (command line or file), zones and CPUs; and the
// result compared with the board's sysctls and zoneinfo.
#include "cmalign/internal/calc/pcp_setup.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/core/integer.hpp"
#include "cmalign/internal/core/strings.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/kernel/calc_rules.hpp"
#include "cmalign/internal/kernel/zone_layout.hpp"

namespace cmalign::calc {

namespace {

std::optional<std::vector<long long>> parse_int_list(std::string_view text) {
    std::vector<long long> out;
    std::istringstream in{std::string(text)};
    std::string word;
    while (in >> word) {
        auto v = parse_integer(word, IntegerSyntax::decimal);
        if (!v) return std::nullopt; // not a number, or out of range: the caller says where
        out.push_back(*v);
    }
    if (out.empty()) return std::nullopt;
    return out;
}

} // namespace

// "vm.min_free_kbytes = 67584" lines, as `sysctl vm.min_free_kbytes ...` prints them.
bool read_sysctl_file(const std::string& path, std::vector<SysctlSetting>& out, Diagnostics& diags,
                      const InputLimits& limits) {
    TextFile file;
    if (auto error = read_text_file(path, limits, {"the sysctl file", false}, file)) {
        diags.error(std::move(error->where), std::move(error->message));
        return false;
    }
    std::istringstream in(file.text);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        std::string_view t = trim(line);
        if (t.empty() || t.front() == '#') continue;
        auto eq = t.find('=');
        if (eq == std::string::npos) {
            diags.error({path, n, 1}, "expected \"vm.NAME = VALUE\"");
            return false;
        }
        out.push_back({std::string(trim(t.substr(0, eq))), std::string(trim(t.substr(eq + 1))),
                       Location{path, n, 1}});
    }
    return true;
}

bool apply_sysctl(const SysctlSetting& s, Sysctls& sysctls, Diagnostics& diags) {
    std::string name = s.name.starts_with("vm.") ? s.name.substr(3) : s.name;
    // The vm sysctls are C ints read by proc_dointvec_minmax() between the table's extra1 and
    // extra2 (mm/page_alloc.c page_alloc_sysctl_table, 6.12; kernel/sysctl.c vm_table, 6.1);
    // a value outside is -EINVAL, so the kernel keeps its own and so does not this calculation.
    auto one = [&](std::optional<long long>& field, long long lo, long long hi = INT32_MAX) {
        auto list = parse_int_list(s.value);
        if (!list || list->size() != 1 || list->front() < lo || list->front() > hi) {
            diags.error(s.where, fmt::format("vm.{}: expected an integer from {} to {} (the "
                                             "kernel refuses anything else with -EINVAL), found "
                                             "\"{}\"",
                                             name, lo, hi, s.value));
            return false;
        }
        field = list->front();
        return true;
    };
    if (name == "min_free_kbytes") return one(sysctls.min_free_kbytes, 0);
    // extra1 = SYSCTL_ONE, extra2 = SYSCTL_THREE_THOUSAND
    if (name == "watermark_scale_factor") return one(sysctls.watermark_scale_factor, 1, 3000);
    if (name == "percpu_pagelist_high_fraction") {
        if (!one(sysctls.percpu_pagelist_high_fraction, 0)) return false;
        // mm/page_alloc.c percpu_pagelist_high_fraction_sysctl_handler(): non-zero values
        // below MIN_PERCPU_PAGELIST_HIGH_FRACTION (8) are refused with -EINVAL.
        if (*sysctls.percpu_pagelist_high_fraction != 0 &&
            *sysctls.percpu_pagelist_high_fraction < 8) {
            diags.error(s.where, "vm.percpu_pagelist_high_fraction: the kernel refuses non-zero "
                                 "values below 8 (-EINVAL)");
            return false;
        }
        return true;
    }
    if (name == "lowmem_reserve_ratio") {
        auto list = parse_int_list(s.value);
        if (!list) {
            diags.error(s.where, fmt::format("vm.lowmem_reserve_ratio: expected integers, found "
                                             "\"{}\"",
                                             s.value));
            return false;
        }
        sysctls.lowmem_reserve_ratio = *list;
        return true;
    }
    // watermark_boost_factor only boosts watermarks temporarily after fragmenting fallbacks;
    // the printed watermarks' boost is taken off before comparing.
    if (name == "watermark_boost_factor") return true;
    diags.warning(s.where, fmt::format("vm.{} does not enter these calculations; ignored", name));
    return true;
}

ThpMode thp_mode(const kconfig::Config& cfg, const kernel::Model& m,
                 std::vector<std::string>& assumptions) {
    if (!m.thp) return ThpMode::not_built;
    if (cfg.get_bool("TRANSPARENT_HUGEPAGE_ALWAYS").value_or(false)) return ThpMode::always;
    if (cfg.get_bool("TRANSPARENT_HUGEPAGE_MADVISE").value_or(false)) return ThpMode::madvise;
    if (cfg.get_bool("TRANSPARENT_HUGEPAGE_NEVER").value_or(false)) return ThpMode::never;
    assumptions.push_back("no CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS/MADVISE/NEVER in the "
                          "configuration: assumed ALWAYS (the Kconfig choice's default in "
                          "mm/Kconfig)");
    return ThpMode::always;
}

namespace {

// CONFIG_PCP_BATCH_SCALE_MAX: its default and range are the kernel layer's.
int batch_scale_max(const kconfig::Config& config, const kernel::Model& m,
                    std::vector<std::string>& assumed, Diagnostics& diags) {
    const auto& scale_symbol = kernel::calc_rules::pcp_batch_scale_max();
    const auto* scale_entry = config.find(scale_symbol.symbol);
    auto scale = config.get_int(scale_symbol.symbol);
    if (scale && *scale >= scale_symbol.lo && *scale <= scale_symbol.hi)
        return static_cast<int>(*scale);
    if (scale_entry && scale)
        diags.warning(scale_entry->where,
                      fmt::format("CONFIG_{}={} is outside its Kconfig range {}–{}; make "
                                  "olddefconfig resets it to the default {}",
                                  scale_symbol.symbol, *scale, scale_symbol.lo, scale_symbol.hi,
                                  scale_symbol.default_value));
    else if (kernel::calc_rules::find(kernel::calc_rules::Topic::pcp_batch_scale_max, m.version)
                 .variant == 1)
        assumed.push_back(fmt::format("CONFIG_{} not in the configuration: assumed {} "
                                      "(mm/Kconfig default)",
                                      scale_symbol.symbol, scale_symbol.default_value));
    else
        assumed.push_back(fmt::format(
            "CONFIG_{} not in the configuration: assumed {}, the default of the 6.1.y stable "
            "backport; mainline {} before v6.7 has no such cap (the free factor grows until "
            "high - batch)",
            scale_symbol.symbol, scale_symbol.default_value, m.version.str()));
    return scale_symbol.default_value;
}

void apply_transparent_hugepage(const reserved::BootParams& bp, PcpInput& in,
                                std::vector<std::string>& notes) {
    if (!bp.transparent_hugepage || in.thp == ThpMode::not_built) return;
    if (bp.transparent_hugepage_valid) {
        in.thp = *bp.transparent_hugepage == "always"    ? ThpMode::always
                 : *bp.transparent_hugepage == "madvise" ? ThpMode::madvise
                                                         : ThpMode::never;
        notes.push_back(fmt::format("transparent_hugepage={} on the command line sets the THP mode",
                                    *bp.transparent_hugepage));
    } else {
        notes.push_back(fmt::format("transparent_hugepage={}: the kernel cannot parse it and "
                                    "ignores it",
                                    *bp.transparent_hugepage));
    }
}

// pcp_batch_scale_max= is a vendor patch's: noted, or applied with --vendor-param.
bool apply_vendor_batch_scale(const reserved::BootParams& bp,
                              const std::vector<std::string>& vendor_params, PcpInput& in,
                              std::vector<std::string>& notes, Diagnostics& diags) {
    if (!bp.pcp_batch_scale_max_text) return true;
    bool apply = std::find(vendor_params.begin(), vendor_params.end(), "pcp_batch_scale_max") !=
                 vendor_params.end();
    std::string base =
        fmt::format("pcp_batch_scale_max={} is not an upstream kernel parameter (RFC \"mm: "
                    "page_alloc: Add kernel parameter to select maximum PCP batch scale number\", "
                    "Nov 2024, not merged); upstream kernels ignore it and use "
                    "CONFIG_PCP_BATCH_SCALE_MAX",
                    *bp.pcp_batch_scale_max_text);
    if (!apply) {
        notes.push_back(base + "; pass --vendor-param pcp_batch_scale_max for a "
                               "kernel that carries the patch");
    } else if (!bp.pcp_batch_scale_max) {
        diags.error({}, fmt::format("pcp_batch_scale_max={}: not a decimal number",
                                    *bp.pcp_batch_scale_max_text));
        return false;
    } else {
        in.scale_max = *bp.pcp_batch_scale_max;
        const auto& scale_symbol = kernel::calc_rules::pcp_batch_scale_max();
        notes.push_back(base +
                        fmt::format("; applied with the proposed semantics (--vendor-param): "
                                    "scale {}{}",
                                    in.scale_max,
                                    bp.pcp_batch_scale_max_clamped
                                        ? fmt::format(" (clamped to {})", scale_symbol.hi)
                                        : std::string()));
    }
    return true;
}

} // namespace

PcpInput kernel_input(const kconfig::Config& config, const kernel::Model& m,
                      std::vector<std::string>& assumed, Diagnostics& diags) {
    PcpInput in;
    in.version = m.version;
    in.page_size = m.page_size;
    in.page_shift = m.page_shift;
    if (m.pageblock_order) {
        in.pageblock_order = *m.pageblock_order;
    } else if (m.pageblock_order_range) {
        in.pageblock_order = m.pageblock_order_range->second;
        assumed.push_back(fmt::format(
            "pageblock_order is decided at boot ({}–{}): the largest, {}, is used for the THP "
            "min_free_kbytes raise (the largest raise)",
            m.pageblock_order_range->first, m.pageblock_order_range->second, in.pageblock_order));
    }
    in.thp = thp_mode(config, m, assumed);
    in.scale_max = batch_scale_max(config, m, assumed, diags);
    return in;
}

bool known_vendor_params(const std::vector<std::string>& params, Diagnostics& diags) {
    for (const auto& p : params) {
        if (p != "pcp_batch_scale_max") {
            diags.error({},
                        fmt::format("--vendor-param {}: unknown (known: pcp_batch_scale_max)", p));
            return false;
        }
    }
    return true;
}

bool apply_boot_params(const reserved::BootParams& bp,
                       const std::vector<std::string>& vendor_params, PcpInput& in,
                       std::vector<std::string>& notes, Diagnostics& diags) {
    apply_transparent_hugepage(bp, in, notes);
    return apply_vendor_batch_scale(bp, vendor_params, in, notes, diags);
}

bool read_sysctl_argument(const std::string& text, std::vector<SysctlSetting>& out,
                          Diagnostics& diags) {
    auto eq = text.find('=');
    if (eq == std::string::npos) {
        diags.error({}, fmt::format("--sysctl {}: expected NAME=VALUE", text));
        return false;
    }
    std::string_view s = text;
    out.push_back(
        {std::string(trim(s.substr(0, eq))), std::string(trim(s.substr(eq + 1))), Location{}});
    return true;
}

void zones_from_zoneinfo(const Zoneinfo& zoneinfo, bool cpus_given, PcpInput& in,
                         std::vector<std::string>& how, std::vector<std::string>& assumed) {
    for (const auto& z : zoneinfo.zones)
        in.zones.push_back({z.node, z.type, *z.managed, z.present});
    how.push_back(fmt::format("managed pages of every zone from {}", zoneinfo.path));
    unsigned cpus = zoneinfo.online_cpus();
    unsigned nodes = std::max(1u, zoneinfo.nodes());
    if (cpus_given || cpus == 0) return;
    in.cpus_per_node = std::max(1u, cpus / nodes);
    how.push_back(fmt::format("{} online CPU(s) from the pagesets of {}", cpus, zoneinfo.path));
    if (nodes > 1)
        assumed.push_back(fmt::format("{} nodes: the {} CPUs are assumed spread evenly ({} per "
                                      "node); give --cpus N for the CPUs of each node",
                                      nodes, cpus, in.cpus_per_node));
}

bool zones_from_sizes(const std::vector<std::string>& specs, const std::vector<ZoneType>& types,
                      const kernel::Model& m, PcpInput& in, std::vector<std::string>& how,
                      Diagnostics& diags) {
    std::map<ZoneType, std::uint64_t> managed;
    for (const auto& spec : specs) {
        auto eq = spec.find('=');
        std::string_view text = spec;
        auto type = eq == std::string::npos
                        ? std::nullopt
                        : parse_zone_name(std::string(trim(text.substr(0, eq))));
        auto size = eq == std::string::npos ? std::nullopt : parse_size(trim(text.substr(eq + 1)));
        if (!type || !size) {
            diags.error({}, fmt::format("--zone {}: expected NAME=SIZE with NAME one of DMA, "
                                        "DMA32, Normal, HighMem, Movable",
                                        spec));
            return false;
        }
        if (!kernel::has_zone(types, *type)) {
            diags.error({}, fmt::format("--zone {}: this configuration has no {} zone", spec,
                                        zone_name(*type)));
            return false;
        }
        if (managed.count(*type)) {
            diags.error({}, fmt::format("--zone {}: {} given twice", spec, zone_name(*type)));
            return false;
        }
        managed[*type] = *size / m.page_size;
    }
    for (auto t : types)
        in.zones.push_back({0, t, managed.count(t) ? managed[t] : 0, std::nullopt});
    how.push_back("managed pages of each zone = --zone size / PAGE_SIZE (rounded down)");
    return true;
}

bool zones_from_memory(const std::string& memory, const std::optional<std::string>& memory_base,
                       const std::vector<ZoneType>& types, const kernel::Model& m, PcpInput& in,
                       std::vector<std::string>& how, std::vector<std::string>& assumed,
                       Diagnostics& diags) {
    auto total = parse_size(memory);
    if (!total || *total < m.page_size) {
        diags.error({}, fmt::format("--memory {}: expected a size of at least one page", memory));
        return false;
    }
    std::uint64_t base = 0;
    if (memory_base) {
        auto b = parse_size(*memory_base);
        if (!b) {
            diags.error({}, fmt::format("--memory-base {}: expected an address", *memory_base));
            return false;
        }
        base = *b;
    } else {
        assumed.push_back("RAM assumed to start at physical address 0 (--memory-base sets it)");
    }
    auto bytes = kernel::estimate_zones(*total, base, types, m, how);
    for (auto t : types)
        in.zones.push_back({0, t, bytes.count(t) ? bytes[t] / m.page_size : 0, std::nullopt});
    return true;
}

bool set_cpus(std::optional<unsigned> cpus, const Zoneinfo* zoneinfo, PcpInput& in,
              std::vector<std::string>& assumed, Diagnostics& diags) {
    if (cpus) {
        if (*cpus == 0) {
            diags.error({}, "--cpus must be at least 1");
            return false;
        }
        in.cpus_per_node = *cpus;
    } else if (!zoneinfo || zoneinfo->online_cpus() == 0) {
        in.cpus_per_node = 1;
        assumed.push_back("1 CPU assumed (--cpus N): PCP high limits are per CPU and "
                          "shrink with more CPUs");
    }
    return true;
}

bool zones_usable(const PcpInput& in, const Zoneinfo* zoneinfo, Diagnostics& diags) {
    // The kernel's own u64 arithmetic (pages_min * managed) stays exact for real machines; so
    // does ours below 2^40 pages per zone (4 PiB of 4K pages, beyond any physical address width).
    for (const auto& z : in.zones) {
        if (z.managed_pages > (std::uint64_t{1} << 40)) {
            diags.error(zoneinfo ? Location{zoneinfo->path, 0, 0} : Location{},
                        fmt::format("zone {}: {} managed pages is more memory than any kernel "
                                    "addresses",
                                    zone_name(z.type), z.managed_pages));
            return false;
        }
    }
    bool any_populated = std::any_of(in.zones.begin(), in.zones.end(),
                                     [](const ZoneInput& z) { return z.populated(); });
    if (!any_populated) {
        diags.error({}, "no zone has managed pages");
        return false;
    }
    return true;
}

std::vector<SysctlValue> compare_sysctls(const std::vector<SysctlSetting>& settings,
                                         const Sysctls& applied, const PcpResult& kernel_defaults,
                                         std::vector<std::string>& notes) {
    std::vector<SysctlValue> out;
    for (const auto& s : settings) {
        std::string name = s.name.starts_with("vm.") ? s.name.substr(3) : s.name;
        SysctlValue v{"vm." + name, s.value, "", false, s.where};
        if (name == "min_free_kbytes") {
            v.kernel_default = std::to_string(kernel_defaults.min_free_kbytes);
            v.differs = *applied.min_free_kbytes != kernel_defaults.min_free_kbytes;
        } else if (name == "watermark_scale_factor") {
            v.kernel_default = "10";
            v.differs = *applied.watermark_scale_factor != 10;
        } else if (name == "percpu_pagelist_high_fraction") {
            v.kernel_default = "0";
            v.differs = *applied.percpu_pagelist_high_fraction != 0;
        } else if (name == "lowmem_reserve_ratio") {
            std::string d;
            for (auto r : kernel_defaults.lowmem_reserve_ratio)
                d += (d.empty() ? "" : " ") + std::to_string(r);
            v.kernel_default = d;
            v.differs = *applied.lowmem_reserve_ratio != kernel_defaults.lowmem_reserve_ratio;
        } else {
            continue;
        }
        if (v.differs)
            notes.push_back(fmt::format("{} = {} differs from the value the kernel sets "
                                        "itself ({}): changed after boot (sysctl.conf, a "
                                        "tuning daemon or a boot script); the figures use "
                                        "the board's value",
                                        v.name, v.value, v.kernel_default));
        out.push_back(std::move(v));
    }
    return out;
}

void explain_differences(const std::vector<Difference>& differences, const PcpResult& result,
                         const PcpInput& in, bool sysctls_given, std::vector<std::string>& notes) {
    // A different min watermark in a lowmem zone points at vm.min_free_kbytes: invert
    // min = pages_min * managed / lowmem_pages (u64 division) for the largest such zone.
    const Difference* min_diff = nullptr;
    const auto& lowmem_rule =
        kernel::calc_rules::find(kernel::calc_rules::Topic::watermark_lowmem, in.version);
    auto capped = [&](ZoneType t) {
        return t == ZoneType::highmem || (lowmem_rule.variant == 1 && t == ZoneType::movable);
    };
    std::uint64_t lowmem_pages = 0;
    for (const auto& z : result.zones)
        if (!capped(z.type)) lowmem_pages += z.managed_pages;
    std::uint64_t best_managed = 0;
    for (const auto& d : differences) {
        if (d.field != "watermarks.min") continue;
        for (const auto& z : result.zones)
            if (z.node == d.node && zone_name(z.type) == d.zone && !capped(z.type) &&
                z.managed_pages > best_managed) {
                best_managed = z.managed_pages;
                min_diff = &d;
            }
    }
    if (min_diff && best_managed > 0) {
        std::uint64_t pages_min =
            (min_diff->reported * lowmem_pages + best_managed - 1) / best_managed;
        long long implied = static_cast<long long>(pages_min << (in.page_shift - 10));
        notes.push_back(fmt::format(
            "the file's {} min watermark {} implies vm.min_free_kbytes ≈ {} (computed {}): "
            "min_free_kbytes was probably changed on the board (sysctl, or a THP setting "
            "changed at run time)",
            min_diff->zone, min_diff->reported, implied, result.min_free_kbytes));
    }
    if (!differences.empty() && !sysctls_given)
        notes.push_back("the zoneinfo differs from the computation: if a vm sysctl "
                        "(min_free_kbytes, watermark_scale_factor, "
                        "percpu_pagelist_high_fraction, lowmem_reserve_ratio) was "
                        "changed on the board, pass its values with --sysctl-file");
}

} // namespace cmalign::calc
