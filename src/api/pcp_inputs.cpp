// `cmalign pcp`'s inputs: vm sysctls (command line or file) and the THP mode.
#include "pcp_inputs.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/core/integer.hpp"
#include "cmalign/internal/core/text_file.hpp"

namespace cmalign::pcp_inputs {

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

std::string trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return std::string(s);
}

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

} // namespace cmalign::pcp_inputs
