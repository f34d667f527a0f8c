// `cmalign pcp` / `cmalign heap`: from a configuration and a board description to the
// calculators' inputs, and their JSON and text output.
#include "cmalign/tune.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "cmalign/calc/rules.hpp"
#include "cmalign/core/size.hpp"
#include "cmalign/reserved/regions.hpp"
#include "cmalign/run.hpp"
#include "cmalign/run_inputs.hpp"

namespace cmalign {

using calc::ZoneType;
using nlohmann::json;

namespace {

constexpr std::uint64_t four_gib = std::uint64_t{4} << 30;

std::string trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return std::string(s);
}

// The zones this kernel has (enum zone_type), from the configuration or the arch's Kconfig
// defaults (mm/Kconfig ZONE_DMA "default y if ARM64 || X86", ZONE_DMA32 "default y if ARM64",
// selected by x86_64, riscv64, loongarch).
std::vector<ZoneType> configured_zones(const kconfig::Config& cfg, const kernel::Model& m,
                                       std::vector<std::string>& assumptions) {
    using kernel::Arch;
    auto symbol = [&](const char* name, bool arch_default) {
        if (auto v = cfg.get_bool(name)) return *v;
        assumptions.push_back(fmt::format("CONFIG_{} not in the configuration: assumed {} ({}'s "
                                          "default)",
                                          name, arch_default ? "y" : "n", to_string(m.arch)));
        return arch_default;
    };
    bool is64 = m.arch == Arch::arm64 || m.arch == Arch::x86_64 || m.arch == Arch::riscv ||
                m.arch == Arch::loongarch;
    std::vector<ZoneType> out;
    if (symbol("ZONE_DMA", m.arch == Arch::arm64 || m.arch == Arch::x86_64 || m.arch == Arch::x86))
        out.push_back(ZoneType::dma);
    if (symbol("ZONE_DMA32", is64)) out.push_back(ZoneType::dma32);
    out.push_back(ZoneType::normal);
    if (cfg.get_bool("HIGHMEM").value_or(false)) out.push_back(ZoneType::highmem);
    out.push_back(ZoneType::movable);
    if (cfg.get_bool("ZONE_DEVICE").value_or(false)) out.push_back(ZoneType::device);
    return out;
}

bool has_zone(const std::vector<ZoneType>& zones, ZoneType z) {
    return std::find(zones.begin(), zones.end(), z) != zones.end();
}

// --memory: split total RAM into zones as the arch's zone_sizes_init() would for one
// contiguous bank at `base`, then take the memmap (struct page array) off the highest zone,
// where memblock allocates it top-down.
std::map<ZoneType, std::uint64_t> estimate_zones(std::uint64_t total, std::uint64_t base,
                                                 const std::vector<ZoneType>& zones,
                                                 const kernel::Model& m,
                                                 std::vector<std::string>& how) {
    using kernel::Arch;
    std::map<ZoneType, std::uint64_t> bytes;
    std::uint64_t end = base + total;
    auto add_range = [&](ZoneType z, std::uint64_t lo, std::uint64_t hi) {
        // [lo, hi) ∩ [base, end)
        std::uint64_t a = std::max(lo, base), b = std::min(hi, end);
        if (b > a) bytes[z] += b - a;
    };
    const std::uint64_t top = ~std::uint64_t{0};
    switch (m.arch) {
    case Arch::x86_64:
    case Arch::x86: {
        // arch/x86/mm/init.c zone_sizes_init(): DMA below MAX_DMA_PFN (16 MiB), DMA32 below
        // 4 GiB, Normal above (x86-32: Normal up to max_low_pfn, about 896 MiB, HighMem above).
        std::uint64_t dma_end = has_zone(zones, ZoneType::dma) ? (16u << 20) : 0;
        add_range(ZoneType::dma, 0, dma_end);
        if (m.arch == Arch::x86_64) {
            add_range(has_zone(zones, ZoneType::dma32) ? ZoneType::dma32 : ZoneType::normal,
                      dma_end, four_gib);
            add_range(ZoneType::normal, four_gib, top);
        } else {
            std::uint64_t lowmem = 896u << 20;
            add_range(ZoneType::normal, dma_end, lowmem);
            add_range(has_zone(zones, ZoneType::highmem) ? ZoneType::highmem : ZoneType::normal,
                      lowmem, has_zone(zones, ZoneType::highmem) ? top : lowmem);
        }
        how.push_back("x86: ZONE_DMA = RAM below 16 MiB, ZONE_DMA32 = RAM below 4 GiB, Normal "
                      "above (arch/x86/mm/init.c); the RAM is taken as one bank without the PCI "
                      "hole below 4 GiB that real machines have (use --zone or --zoneinfo)");
        break;
    }
    case Arch::arm64: {
        // arch/arm64/mm/init.c zone_sizes_init(): ZONE_DMA ends at min(DT/ACPI DMA limit,
        // 4 GiB) when RAM starts below 4 GiB, else it covers all RAM; ZONE_DMA32 below 4 GiB.
        if (has_zone(zones, ZoneType::dma)) {
            std::uint64_t dma_end = base >= four_gib ? top : four_gib;
            add_range(ZoneType::dma, 0, dma_end);
            add_range(ZoneType::normal, dma_end, top);
            how.push_back("arm64: ZONE_DMA = RAM below 4 GiB (all RAM when it starts above "
                          "4 GiB), ZONE_DMA32 then empty, Normal above (arch/arm64/mm/init.c "
                          "zone_sizes_init(), ≥ v5.11); assumes no device-tree dma-ranges that "
                          "lower the DMA limit");
        } else if (has_zone(zones, ZoneType::dma32)) {
            add_range(ZoneType::dma32, 0, four_gib);
            add_range(ZoneType::normal, four_gib, top);
            how.push_back("arm64: ZONE_DMA32 = RAM below 4 GiB, Normal above");
        } else {
            add_range(ZoneType::normal, 0, top);
        }
        break;
    }
    case Arch::riscv:
    case Arch::loongarch:
        if (has_zone(zones, ZoneType::dma32)) {
            add_range(ZoneType::dma32, 0, four_gib);
            add_range(ZoneType::normal, four_gib, top);
            how.push_back(
                fmt::format("{}: ZONE_DMA32 = RAM below 4 GiB, Normal above", to_string(m.arch)));
        } else {
            add_range(ZoneType::normal, 0, top);
        }
        break;
    case Arch::arm:
        if (has_zone(zones, ZoneType::highmem)) {
            // VMSPLIT_3G with the default 240 MiB vmalloc area: about 760 MiB of lowmem.
            std::uint64_t lowmem = base + (760u << 20);
            add_range(ZoneType::normal, 0, lowmem);
            add_range(ZoneType::highmem, lowmem, top);
            how.push_back("arm: Normal = the first 760 MiB (VMSPLIT_3G, vmalloc=240M), HighMem "
                          "above");
        } else {
            add_range(ZoneType::normal, 0, top);
        }
        break;
    default:
        add_range(ZoneType::normal, 0, top);
        how.push_back(fmt::format("{}: all RAM taken as ZONE_NORMAL", to_string(m.arch)));
        break;
    }
    // sizeof(struct page): 64 bytes on 64-bit kernels, 32 on 32-bit ones (typical configs).
    std::uint64_t struct_page = m.phys_addr_64bit && m.arch != kernel::Arch::arm ? 64 : 32;
    std::uint64_t memmap = total / m.page_size * struct_page;
    for (auto it = zones.rbegin(); it != zones.rend(); ++it) {
        auto found = bytes.find(*it);
        if (found == bytes.end() || found->second == 0 || *it == ZoneType::highmem) continue;
        found->second -= std::min(found->second, memmap);
        break;
    }
    how.push_back(fmt::format(
        "managed pages = RAM of the zone minus the memmap ({} bytes of struct page per page: {}) "
        "from the highest lowmem zone; the kernel image, the initrd, page tables, no-map "
        "reservations and firmware carve-outs are not subtracted, so the real counts are lower "
        "(CMA pools stay managed)",
        struct_page, format_size(memmap)));
    return bytes;
}

std::optional<std::vector<long long>> parse_int_list(std::string_view text) {
    std::vector<long long> out;
    std::istringstream in{std::string(text)};
    std::string word;
    while (in >> word) {
        try {
            std::size_t used = 0;
            long long v = std::stoll(word, &used, 10);
            if (used != word.size()) return std::nullopt;
            out.push_back(v);
        } catch (...) {
            return std::nullopt;
        }
    }
    if (out.empty()) return std::nullopt;
    return out;
}

struct SysctlSetting {
    std::string name; // without "vm."
    std::string value;
    Location where;
};

// "vm.min_free_kbytes = 67584" lines, as `sysctl vm.min_free_kbytes ...` prints them.
bool read_sysctl_file(const std::string& path, std::vector<SysctlSetting>& out,
                      Diagnostics& diags) {
    std::ifstream in(path);
    if (!in) {
        diags.error({path, 0, 0}, "cannot read the file");
        return false;
    }
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        std::string t = trim(line);
        if (t.empty() || t.front() == '#') continue;
        auto eq = t.find('=');
        if (eq == std::string::npos) {
            diags.error({path, n, 1}, "expected \"vm.NAME = VALUE\"");
            return false;
        }
        out.push_back({trim(std::string_view(t).substr(0, eq)),
                       trim(std::string_view(t).substr(eq + 1)), Location{path, n, 1}});
    }
    return true;
}

bool apply_sysctl(const SysctlSetting& s, calc::Sysctls& sysctls, Diagnostics& diags) {
    std::string name = s.name.starts_with("vm.") ? s.name.substr(3) : s.name;
    auto one = [&](std::optional<long long>& field, long long lo) {
        auto list = parse_int_list(s.value);
        // The vm sysctls are C ints (proc_dointvec_minmax).
        if (!list || list->size() != 1 || list->front() < lo || list->front() > INT32_MAX) {
            diags.error(s.where, fmt::format("vm.{}: expected an integer from {} to {}, found "
                                             "\"{}\"",
                                             name, lo, INT32_MAX, s.value));
            return false;
        }
        field = list->front();
        return true;
    };
    if (name == "min_free_kbytes") return one(sysctls.min_free_kbytes, 0);
    if (name == "watermark_scale_factor") return one(sysctls.watermark_scale_factor, 1);
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

calc::ThpMode thp_mode(const kconfig::Config& cfg, const kernel::Model& m,
                       std::vector<std::string>& assumptions) {
    if (!m.thp) return calc::ThpMode::not_built;
    if (cfg.get_bool("TRANSPARENT_HUGEPAGE_ALWAYS").value_or(false)) return calc::ThpMode::always;
    if (cfg.get_bool("TRANSPARENT_HUGEPAGE_MADVISE").value_or(false)) return calc::ThpMode::madvise;
    if (cfg.get_bool("TRANSPARENT_HUGEPAGE_NEVER").value_or(false)) return calc::ThpMode::never;
    assumptions.push_back("no CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS/MADVISE/NEVER in the "
                          "configuration: assumed ALWAYS (the Kconfig choice's default in "
                          "mm/Kconfig)");
    return calc::ThpMode::always;
}

void add_zone_json(json& j, const calc::ZoneResult& z, bool autotuned) {
    j["managed_pages"] = z.managed_pages;
    j["batch"] = z.batch;
    j["high_min"] = z.high_min;
    j["high_max"] = z.high_max;
    if (!autotuned) j["high"] = z.high_min;
    j["watermarks"] = {{"min", z.watermarks.min},
                       {"low", z.watermarks.low},
                       {"high", z.watermarks.high},
                       {"promo", z.watermarks.promo}};
    j["lowmem_reserve"] = z.lowmem_reserve;
    j["max_pages_per_lock"] = z.max_pages_per_lock;
}

} // namespace

int PcpOutcome::exit_code() const {
    if (diags.has_errors() || !model) return 2;
    return differences.empty() ? 0 : 1;
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

    // CONFIG_PCP_BATCH_SCALE_MAX (mm/Kconfig: default 5, range 0 6).
    const auto* scale_entry = config->find("PCP_BATCH_SCALE_MAX");
    auto scale = config->get_int("PCP_BATCH_SCALE_MAX");
    if (scale && *scale >= 0 && *scale <= 6) {
        in.scale_max = static_cast<int>(*scale);
    } else {
        in.scale_max = 5;
        if (scale_entry && scale)
            diags.warning(scale_entry->where,
                          fmt::format("CONFIG_PCP_BATCH_SCALE_MAX={} is outside its Kconfig range "
                                      "0–6; make olddefconfig resets it to the default 5",
                                      *scale));
        else if (m.version >= KernelVersion{6, 7, 0, false})
            notes_assumed.push_back("CONFIG_PCP_BATCH_SCALE_MAX not in the configuration: "
                                    "assumed 5 (mm/Kconfig default)");
        else
            notes_assumed.push_back(fmt::format(
                "CONFIG_PCP_BATCH_SCALE_MAX not in the configuration: assumed 5, the default of "
                "the 6.1.y stable backport; mainline {} before v6.7 has no such cap (the free "
                "factor grows until high - batch)",
                m.version.str()));
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
                                       bp.pcp_batch_scale_max_clamped ? " (clamped to 6)" : ""));
            }
        }
    }

    // Sysctls.
    std::vector<SysctlSetting> settings;
    if (request.sysctl_file && !read_sysctl_file(*request.sysctl_file, settings, diags)) return out;
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
        out.zoneinfo = calc::parse_zoneinfo(*request.zoneinfo, diags);
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
        out.differences = calc::compare(*out.zoneinfo, out.result);
        // A different min watermark in a lowmem zone points at vm.min_free_kbytes: invert
        // min = pages_min * managed / lowmem_pages (u64 division) for the largest such zone.
        const calc::Difference* min_diff = nullptr;
        const auto& lowmem_rule =
            calc::rules::find(calc::rules::Topic::watermark_lowmem, m.version);
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

json pcp_json(const PcpOutcome& o) {
    const auto& r = o.result;
    const auto* top = r.largest_zone();
    json j;
    j["kernel_version"] = o.model ? o.model->version.str() : "";
    j["arch"] = o.model ? kernel::to_string(o.model->arch) : "";
    j["page_size"] = o.input.page_size;
    j["pageblock_order"] = o.input.pageblock_order;
    j["thp"] = calc::to_string(o.input.thp);
    j["cpus_per_node"] = o.input.cpus_per_node;
    j["memory_source"] = o.memory_source;
    j["scale_max"] = r.scale_max;
    j["high_autotuned"] = r.high_autotuned;
    if (top) {
        j["zone"] = calc::zone_name(top->type);
        add_zone_json(j, *top, r.high_autotuned);
    }
    j["min_free_kbytes"] = r.min_free_kbytes;
    j["min_free_kbytes_sqrt"] = r.min_free_kbytes_sqrt;
    j["thp_recommended_min_free_kbytes"] =
        r.thp_recommended_kbytes ? json(*r.thp_recommended_kbytes) : json(nullptr);
    j["thp_raised"] = r.thp_raised;
    j["watermark_scale_factor"] = r.watermark_scale_factor;
    j["lowmem_reserve_ratio"] = r.lowmem_reserve_ratio;
    json rows = json::array();
    for (const auto& s : r.by_scale)
        rows.push_back({{"scale", s.scale},
                        {"max_pages_per_lock", s.max_pages_per_lock},
                        {"max_bytes_per_lock", s.max_bytes_per_lock}});
    j["by_scale"] = rows;
    json zones = json::array();
    for (const auto& z : r.zones) {
        if (!z.populated) continue;
        json zj;
        zj["node"] = z.node;
        zj["name"] = calc::zone_name(z.type);
        add_zone_json(zj, z, r.high_autotuned);
        zones.push_back(std::move(zj));
    }
    j["zones"] = zones;
    json sysctls = json::array();
    for (const auto& s : o.sysctls)
        sysctls.push_back({{"name", s.name},
                           {"value", s.value},
                           {"kernel_default", s.kernel_default},
                           {"differs", s.differs}});
    j["sysctls"] = sysctls;
    if (o.bootargs) {
        json b;
        b["text"] = *o.bootargs;
        const auto& bp = *o.boot;
        if (bp.pcp_batch_scale_max_text)
            b["pcp_batch_scale_max"] = {
                {"text", *bp.pcp_batch_scale_max_text},
                {"value", bp.pcp_batch_scale_max ? json(*bp.pcp_batch_scale_max) : json(nullptr)},
                {"upstream", false}};
        if (bp.cma)
            b["cma"] = {{"text", bp.cma->text},
                        {"size", bp.cma->size},
                        {"base", bp.cma->base ? json(*bp.cma->base) : json(nullptr)},
                        {"limit", bp.cma->limit ? json(*bp.cma->limit) : json(nullptr)}};
        if (bp.cma_pernuma_text)
            b["cma_pernuma"] = {{"text", *bp.cma_pernuma_text}, {"size", bp.cma_pernuma}};
        if (bp.numa_cma_text) {
            json entries = json::array();
            for (const auto& e : bp.numa_cma)
                entries.push_back({{"node", e.node}, {"size", e.size}});
            b["numa_cma"] = {{"text", *bp.numa_cma_text},
                             {"entries", entries},
                             {"ignored", bp.numa_cma_ignored}};
        }
        if (bp.transparent_hugepage) b["transparent_hugepage"] = *bp.transparent_hugepage;
        j["bootargs"] = b;
    } else {
        j["bootargs"] = nullptr;
    }
    if (o.zoneinfo) {
        json diffs = json::array();
        for (const auto& d : o.differences)
            diffs.push_back({{"node", d.node},
                             {"zone", d.zone},
                             {"field", d.field},
                             {"reported", d.reported},
                             {"computed", d.computed},
                             {"file", d.where.file},
                             {"line", d.where.line}});
        j["comparison"] = {
            {"file", o.zoneinfo->path}, {"matches", o.differences.empty()}, {"differences", diffs}};
    }
    json steps = json::array();
    for (const auto& s : r.derivation)
        steps.push_back(
            {{"quantity", s.quantity}, {"value", s.value}, {"rule", s.rule}, {"source", s.source}});
    j["derivation"] = steps;
    j["assumptions"] = r.assumptions;
    j["notes"] = o.notes;
    return j;
}

std::string pcp_text(const PcpOutcome& o) {
    const auto& r = o.result;
    std::string s;
    auto line = [&](std::string text) { s += text + "\n"; };
    line(fmt::format("kernel {} {}, {} pages, pageblock order {}, THP {}, {} CPU(s) per node",
                     o.model ? kernel::to_string(o.model->arch) : "",
                     o.model ? o.model->version.str() : "", format_size(o.input.page_size),
                     o.input.pageblock_order, calc::to_string(o.input.thp), o.input.cpus_per_node));
    line(fmt::format("memory from {}", o.memory_source));
    line(fmt::format(
        "min_free_kbytes {} (sqrt rule {}{}{})", r.min_free_kbytes, r.min_free_kbytes_sqrt,
        r.thp_recommended_kbytes ? fmt::format(", THP recommendation {}", *r.thp_recommended_kbytes)
                                 : "",
        r.thp_raised ? ", raised by khugepaged" : ""));
    line(fmt::format("PCP_BATCH_SCALE_MAX {}; watermark_scale_factor {}", r.scale_max,
                     r.watermark_scale_factor));
    line("");
    std::string high_head = r.high_autotuned ? fmt::format("{:>9} {:>9}", "high_min", "high_max")
                                             : fmt::format("{:>9}", "high");
    line(fmt::format("{:<4} {:<8} {:>10} {:>6} {} {:>9} {:>9} {:>9} {:>10}  {}", "node", "zone",
                     "managed", "batch", high_head, "wmark_min", "wmark_low", "wmark_hi",
                     "pages/lock", "lowmem_reserve"));
    for (const auto& z : r.zones) {
        if (!z.populated) continue;
        std::string high = r.high_autotuned ? fmt::format("{:>9} {:>9}", z.high_min, z.high_max)
                                            : fmt::format("{:>9}", z.high_min);
        std::string reserve;
        for (auto v : z.lowmem_reserve)
            reserve += (reserve.empty() ? "" : ", ") + std::to_string(v);
        line(fmt::format("{:<4} {:<8} {:>10} {:>6} {} {:>9} {:>9} {:>9} {:>10}  ({})", z.node,
                         calc::zone_name(z.type), z.managed_pages, z.batch, high, z.watermarks.min,
                         z.watermarks.low, z.watermarks.high, z.max_pages_per_lock, reserve));
    }
    if (const auto* top = r.largest_zone()) {
        line("");
        line(fmt::format("pages per zone-lock hold in {} (batch {} << scale):",
                         calc::zone_name(top->type), top->batch));
        for (const auto& row : r.by_scale)
            line(fmt::format("  scale {}: {:>6} pages {:>12}{}", row.scale, row.max_pages_per_lock,
                             format_size(row.max_bytes_per_lock),
                             row.scale == r.scale_max ? "  <- PCP_BATCH_SCALE_MAX" : ""));
    }
    if (o.zoneinfo) {
        line("");
        if (o.differences.empty()) {
            line(fmt::format("{}: every batch, high limit, watermark and lowmem_reserve matches",
                             o.zoneinfo->path));
        } else {
            line(fmt::format("{}: {} difference(s) from the computation:", o.zoneinfo->path,
                             o.differences.size()));
            for (const auto& d : o.differences)
                line(fmt::format("  {}:{}: node {} {} {}: file {}, computed {}", d.where.file,
                                 d.where.line, d.node, d.zone, d.field, d.reported, d.computed));
        }
    }
    for (const auto& sv : o.sysctls)
        line(fmt::format("{} = {} (kernel's own value {}){}", sv.name, sv.value, sv.kernel_default,
                         sv.differs ? ": CHANGED on the board" : ""));
    if (!o.notes.empty()) {
        line("");
        for (const auto& n : o.notes)
            line("note: " + n);
    }
    line("");
    line("how:");
    for (const auto& st : r.derivation)
        line(fmt::format("  {} = {}: {} [{}]", st.quantity, st.value, st.rule, st.source));
    for (const auto& a : r.assumptions)
        line("  assumed: " + a);
    return s;
}

HeapOutcome run_heap(const HeapRequest& request) {
    HeapOutcome out;
    out.model = load_model(request.config, out.diags);
    if (!out.model || out.diags.has_errors()) return out;
    auto size = parse_size(request.size);
    if (!size) {
        out.diags.error({}, fmt::format("--size {}: expected a size (4194304, 0x400000, 4M, "
                                        "4MiB, SZ_4M)",
                                        request.size));
        return out;
    }
    calc::HeapInput in;
    in.version = out.model->version;
    in.page_size = out.model->page_size;
    in.max_page_order = out.model->max_page_order;
    in.size = *size;
    in.available_order = request.available_order;
    std::string error;
    out.plan = calc::compute_heap(in, error);
    if (!out.plan) out.diags.error({}, error);
    return out;
}

json heap_json(const HeapOutcome& o) {
    const auto& p = *o.plan;
    json j;
    j["kernel_version"] = o.model->version.str();
    j["page_size"] = p.page_size;
    j["requested_bytes"] = p.requested;
    j["total_bytes"] = p.total_bytes;
    j["orders"] = p.orders;
    json chunks = json::array();
    for (const auto& c : p.chunks)
        chunks.push_back({{"order", c.order},
                          {"bytes", c.bytes},
                          {"count", c.count},
                          {"reclaim", c.reclaim},
                          {"available", c.available}});
    j["chunks"] = chunks;
    j["sg_entries"] = p.sg_entries;
    j["notes"] = p.notes;
    j["sources"] = p.sources;
    j["assumptions"] = o.model->assumptions;
    return j;
}

std::string heap_text(const HeapOutcome& o) {
    const auto& p = *o.plan;
    std::string s = fmt::format("dma-buf system heap, kernel {} {}, {} pages: {} requested, {} "
                                "allocated in {} sg entries\n",
                                kernel::to_string(o.model->arch), o.model->version.str(),
                                format_size(p.page_size), format_size(p.requested),
                                format_size(p.total_bytes), p.sg_entries);
    s += fmt::format("{:>5} {:>12} {:>8} {:>8}\n", "order", "chunk", "count", "reclaim");
    for (const auto& c : p.chunks)
        s += fmt::format("{:>5} {:>12} {:>8} {:>8}{}\n", c.order, format_size(c.bytes), c.count,
                         c.reclaim ? "may" : "never", c.available ? "" : "  (unavailable)");
    for (const auto& n : p.notes)
        s += "note: " + n + "\n";
    for (const auto& src : p.sources)
        s += "source: " + src + "\n";
    return s;
}

} // namespace cmalign
