#include "cmalign/kernel/versions.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <set>
#include <span>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/core/strings.hpp"
#include "cmalign/internal/kernel/reserved_mem.hpp"
#include "cmalign/internal/kernel/rules.hpp"

namespace cmalign::kernel {

// The newest release whose tree was read (Debian sid linux-source-7.2, 7.2.13).
KernelVersion newest_modelled_version() {
    return KernelVersion{7, 2, 0, false};
}
KernelVersion oldest_modelled_version() {
    return KernelVersion{4, 19, 0, false};
}

std::optional<OutsideModelledRange> outside_modelled_range(const KernelVersion& version) {
    // The tables key on major.minor: 7.2.13 has the rules of 7.2.
    const KernelVersion release{version.major, version.minor, 0, false};
    if (release < oldest_modelled_version())
        return OutsideModelledRange{true,
                                    fmt::format("kernel {} is older than the oldest modelled "
                                                "version ({})",
                                                version.str(), oldest_modelled_version().str())};
    if (newest_modelled_version() < release)
        return OutsideModelledRange{false,
                                    fmt::format("kernel {} is newer than the newest modelled "
                                                "version ({}): its rules are assumed unchanged",
                                                version.str(), newest_modelled_version().str())};
    return std::nullopt;
}

std::span<const KernelVersion> read_trees() {
    static const std::array<KernelVersion, 4> trees = {
        KernelVersion{5, 10, 223, true}, KernelVersion{6, 1, 192, true},
        KernelVersion{6, 12, 117, true}, KernelVersion{7, 2, 13, true}};
    return trees;
}

namespace {

// The last release of each major line the model spans (v5.19 was followed by v6.0, v6.19 by
// v7.0); the newest line ends at newest_modelled_version().
int last_minor_of(int major) {
    switch (major) {
    case 4:
        return 20; // v4.20 was followed by v5.0
    case 5:
        return 19;
    case 6:
        return 19;
    default:
        return newest_modelled_version().minor;
    }
}

KernelVersion release(int major, int minor) {
    return KernelVersion{major, minor, 0, false};
}

bool same_release(const KernelVersion& a, const KernelVersion& b) {
    return a.major == b.major && a.minor == b.minor;
}

std::string v(const KernelVersion& version) {
    return "v" + version.str();
}

std::vector<std::string> split_commas(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        out.push_back(std::string(trim(text.substr(start, comma - start))));
        start = comma + 1;
    }
    return out;
}

template <class Row> void add_firsts(std::span<const Row> rows, std::set<KernelVersion>& out) {
    for (const auto& r : rows)
        if (r.versions.first_major != 0)
            out.insert(release(r.versions.first_major, r.versions.first_minor));
}

template <class Row>
void add_arch_firsts(std::span<const Row> rows, Arch arch, std::set<KernelVersion>& out) {
    for (const auto& r : rows)
        if (r.arch == arch && r.versions.first_major != 0)
            out.insert(release(r.versions.first_major, r.versions.first_minor));
}

} // namespace

std::vector<KernelVersion> modelled_versions() {
    std::vector<KernelVersion> out;
    const auto oldest = oldest_modelled_version();
    const auto newest = newest_modelled_version();
    for (int major = oldest.major; major <= newest.major; ++major) {
        int first = major == oldest.major ? oldest.minor : 0;
        int last = major == newest.major ? newest.minor : last_minor_of(major);
        for (int minor = first; minor <= last; ++minor)
            out.push_back(release(major, minor));
    }
    return out;
}

std::vector<KernelVersion> rule_boundaries(Arch arch) {
    std::set<KernelVersion> firsts;
    firsts.insert(oldest_modelled_version());
    add_arch_firsts(rules::page_sizes(), arch, firsts);
    add_arch_firsts(rules::max_order_kconfig(), arch, firsts);
    add_arch_firsts(rules::huge_geometry(), arch, firsts);
    add_arch_firsts(rules::section_sizes(), arch, firsts);
    add_firsts(rules::max_order_definitions(), firsts);
    add_firsts(rules::pageblock_rules(), firsts);
    add_firsts(rules::cma_alignment_rules(), firsts);
    add_firsts(rules::page_block_options(), firsts);
    add_firsts(rules::cma_areas_rules(), firsts);
    add_firsts(rules::kconfig_range_rules(), firsts);
    // Releases where the reserved-memory code the checks follow changed (reserved_mem.cpp):
    // v6.12 moved static regions from drivers/of/fdt.c into of_reserved_mem.c and initialises
    // each node as it is saved; v6.19 [likely] reads reg/alloc-ranges through
    // of_flat_dt_get_addr_size_prop(); v7.1 [likely] declines with -ENODEV (a reusable no-map
    // pool stays reserved); v7.2 [likely] reserves only the first reg tuple.
    add_firsts(reserved_mem_rows(), firsts);
    add_firsts(restricted_pool_rows(), firsts); // v5.15: restricted-dma-pool handler
    std::vector<KernelVersion> out;
    for (const auto& f : firsts)
        if (f >= oldest_modelled_version() && f <= newest_modelled_version()) out.push_back(f);
    return out;
}

bool same_rules(Arch arch, const KernelVersion& earlier, const KernelVersion& later) {
    if (!(earlier < later)) return false;
    auto from = release(earlier.major, earlier.minor);
    auto to = release(later.major, later.minor);
    const auto boundaries = rule_boundaries(arch);
    return std::none_of(boundaries.begin(), boundaries.end(),
                        [&](const auto& b) { return from < b && b < to; });
}

std::optional<std::vector<KernelVersion>> parse_version_list(std::string_view text, Arch arch,
                                                             Diagnostics& diags) {
    const auto all = modelled_versions();
    auto modelled = [&](const KernelVersion& version, std::string_view given) {
        bool known = std::any_of(all.begin(), all.end(),
                                 [&](const auto& r) { return same_release(r, version); });
        if (!known)
            diags.error({}, fmt::format("kernel version '{}' is not modelled (v{} … v{})", given,
                                        oldest_modelled_version().str(),
                                        newest_modelled_version().str()));
        return known;
    };
    std::vector<KernelVersion> out;
    for (const auto& item : split_commas(text)) {
        if (item == "all") {
            out.insert(out.end(), all.begin(), all.end());
            continue;
        }
        if (item == "boundaries") {
            // ... and the newest modelled release, so the sweep reaches the end of the model.
            auto b = rule_boundaries(arch);
            out.insert(out.end(), b.begin(), b.end());
            out.push_back(newest_modelled_version());
            continue;
        }
        auto dots = item.find("..");
        if (dots == std::string::npos) {
            auto version = KernelVersion::parse(item);
            if (!version) {
                diags.error({}, fmt::format("invalid kernel version '{}' in '{}' (expected X.Y, "
                                            "X.Y.Z or FIRST..LAST)",
                                            item, text));
                return std::nullopt;
            }
            if (!modelled(*version, item)) return std::nullopt;
            out.push_back(*version);
            continue;
        }
        auto first = KernelVersion::parse(trim(item.substr(0, dots)));
        auto last = KernelVersion::parse(trim(item.substr(dots + 2)));
        if (!first || !last || *last < *first) {
            diags.error({}, fmt::format("invalid version range '{}' (expected FIRST..LAST, e.g. "
                                        "6.1..6.18)",
                                        item));
            return std::nullopt;
        }
        if (!modelled(*first, item.substr(0, dots)) || !modelled(*last, item.substr(dots + 2)))
            return std::nullopt;
        for (const auto& r : all)
            if (r >= release(first->major, first->minor) && r <= release(last->major, last->minor))
                out.push_back(r);
    }
    // Sorted and each release once: a cell is a (version, page size) pair.
    std::stable_sort(out.begin(), out.end());
    // 6.12 and 6.12.117 have the same rules (the tables key on major.minor): one cell.
    out.erase(std::unique(out.begin(), out.end(), same_release), out.end());
    if (out.empty()) {
        diags.error({}, fmt::format("no kernel version in '{}'", text));
        return std::nullopt;
    }
    return out;
}

std::vector<PageSizeChoice> page_size_choices(Arch arch, const KernelVersion& version) {
    std::vector<PageSizeChoice> out;
    for (const auto& r : rules::page_sizes()) {
        if (r.arch != arch || !r.versions.contains(version)) continue;
        bool seen = std::any_of(out.begin(), out.end(),
                                [&](const auto& c) { return c.page_shift == r.page_shift; });
        if (!seen) out.push_back({r.page_shift, std::uint64_t{1} << r.page_shift, r.symbol});
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.page_shift < b.page_shift; });
    return out;
}

std::vector<std::string> derived_page_size_symbols(Arch arch, const KernelVersion& version) {
    std::set<std::string> members;
    for (const auto& c : page_size_choices(arch, version))
        if (c.symbol) members.insert(c.symbol);
    std::set<std::string> out;
    for (const auto& g : rules::generic_page_sizes())
        if (g.symbol && !members.contains(g.symbol)) out.insert(g.symbol);
    out.insert("PAGE_SHIFT");
    return {out.begin(), out.end()};
}

int max_order_kconfig_value(const KernelVersion& version, int max_page_order) {
    const auto* definition = rules::find(rules::max_order_definitions(), version);
    return max_page_order + (definition && definition->exclusive ? 1 : 0);
}

std::optional<std::vector<int>> parse_page_size_list(std::string_view text, Arch arch,
                                                     Diagnostics& diags) {
    std::set<int> offered;
    for (const auto& version : modelled_versions())
        for (const auto& c : page_size_choices(arch, version))
            offered.insert(c.page_shift);
    std::set<int> out;
    for (const auto& item : split_commas(text)) {
        if (item == "all") {
            out.insert(offered.begin(), offered.end());
            continue;
        }
        auto bytes = parse_size(item);
        if (!bytes || *bytes == 0 || (*bytes & (*bytes - 1)) != 0) {
            diags.error(
                {}, fmt::format("invalid page size '{}' (expected 4K, 16K, 64K, … or all)", item));
            return std::nullopt;
        }
        int shift = std::countr_zero(*bytes);
        if (!offered.contains(shift)) {
            std::string sizes;
            for (int s : offered)
                sizes += (sizes.empty() ? "" : ", ") +
                         format_size(std::uint64_t{1} << s, ByteUnit::bytes);
            diags.error({},
                        fmt::format("{} does not offer {} pages (it offers {})", to_string(arch),
                                    format_size(*bytes, ByteUnit::bytes), sizes));
            return std::nullopt;
        }
        out.insert(shift);
    }
    if (out.empty()) {
        diags.error({}, fmt::format("no page size in '{}'", text));
        return std::nullopt;
    }
    return std::vector<int>(out.begin(), out.end());
}

namespace {

bool is_set(const kconfig::Config& config, const char* symbol) {
    return config.get_bool(symbol).value_or(false);
}

void switch_page_size(const kconfig::Config& config, Arch arch, const KernelVersion& version,
                      int page_shift, Retarget& out) {
    const auto choices = page_size_choices(arch, version);
    auto chosen = std::find_if(choices.begin(), choices.end(),
                               [&](const auto& c) { return c.page_shift == page_shift; });
    if (chosen == choices.end()) {
        out.unavailable = fmt::format("{} {} offers no {} pages", to_string(arch), v(version),
                                      format_size(std::uint64_t{1} << page_shift, ByteUnit::bytes));
        return;
    }
    if (!chosen->symbol) return; // the arch's only page size
    // The arch's choice: the chosen member on, every other member off (a fragment that leaves
    // the old one set contradicts itself; derive() rejects that as Kconfig would not).
    std::set<std::string> members;
    for (const auto& r : rules::page_sizes()) {
        if (r.arch != arch || !r.versions.contains(version) || !r.symbol) continue;
        members.insert(r.symbol);
        bool want = r.symbol == std::string_view(chosen->symbol);
        if (want == is_set(config, r.symbol)) continue;
        if (!want && !config.contains(r.symbol)) continue; // absent is off
        out.sets.push_back(fmt::format("CONFIG_{}={}", r.symbol, want ? "y" : "n"));
    }
    // Symbols Kconfig derives from the choice (arch/Kconfig ≥ v6.10): kept consistent, as
    // olddefconfig would recompute them.
    bool has_generic = false;
    for (const auto& g : rules::generic_page_sizes())
        has_generic = has_generic || (!members.contains(g.symbol) && config.contains(g.symbol));
    for (const auto& g : rules::generic_page_sizes()) {
        if (!has_generic || members.contains(g.symbol)) continue;
        bool want = g.page_shift == page_shift;
        if (want == is_set(config, g.symbol)) continue;
        if (!want && !config.contains(g.symbol)) continue;
        out.sets.push_back(fmt::format("CONFIG_{}={}", g.symbol, want ? "y" : "n"));
    }
    if (auto shift = config.get_int("PAGE_SHIFT"); shift && *shift != page_shift) {
        out.sets.push_back(fmt::format("CONFIG_PAGE_SHIFT={}", page_shift));
    }
    // The sets are the record of the switch (config_changes); the notes are for what a
    // version's Kconfig does differently, so a page size alone adds none.
}

// CONFIG_PAGE_BLOCK_ORDER (v6.16) / CONFIG_PAGE_BLOCK_MAX_ORDER (≥ v6.17).
void page_block_option(const kconfig::Config& config, const KernelVersion& version, Retarget& out) {
    const auto* row = rules::find(rules::page_block_options(), version);
    for (const char* name : rules::page_block_option_symbols()) {
        const auto* e = config.find(name);
        if (!e) continue;
        if (row && row->symbol == std::string_view(name)) continue;
        // The first release that spells the option this way.
        const rules::PageBlockOptionRow* own = nullptr;
        for (const auto& r : rules::page_block_options())
            if (r.symbol == std::string_view(name) && !own) own = &r;
        std::string since =
            own ? fmt::format("v{}.{}", own->versions.first_major, own->versions.first_minor)
                : std::string("a later version");
        if (!row) {
            out.dropped.push_back(fmt::format("CONFIG_{}", name));
            out.notes.push_back(fmt::format("CONFIG_{}={} dropped: no such option before {} "
                                            "(olddefconfig drops it)",
                                            name, e->value, since));
        } else if (own && version < release(own->versions.first_major, own->versions.first_minor)) {
            // A newer spelling than the version has: its Kconfig does not know the symbol.
            out.dropped.push_back(fmt::format("CONFIG_{}", name));
            out.notes.push_back(fmt::format("CONFIG_{}={} dropped: called CONFIG_{} before {} "
                                            "(olddefconfig drops it)",
                                            name, e->value, row->symbol, since));
        } else {
            // An older spelling: derive() reads only the version's name and warns, as Kconfig
            // ignores the old one and its default applies.
            out.notes.push_back(fmt::format("CONFIG_{}={} ignored: renamed CONFIG_{} in v{}.{}, "
                                            "so its default applies",
                                            name, e->value, row->symbol, row->versions.first_major,
                                            row->versions.first_minor));
        }
    }
}

// FORCE_MAX_ZONEORDER (≤ v6.0) / ARCH_FORCE_MAX_ORDER (≥ v6.1), exclusive until v6.3.
void max_order_symbol(const kconfig::Config& config, Arch arch, const KernelVersion& version,
                      std::optional<KernelVersion> own_version, Retarget& out) {
    const auto* row = rules::find(rules::max_order_kconfig(), version, [arch](const auto& r) {
        return r.arch == arch && r.symbol != nullptr;
    });
    std::set<std::string> spellings;
    for (const auto& r : rules::max_order_kconfig())
        if (r.arch == arch && r.symbol) spellings.insert(r.symbol);
    for (const auto& name : spellings) {
        const auto* e = config.find(name);
        if (!e) continue;
        if (!row || row->symbol != name) {
            out.notes.push_back(fmt::format("CONFIG_{}={} ignored: {}, so its default applies",
                                            name, e->value,
                                            row ? fmt::format("the max order is CONFIG_{} in {}",
                                                              row->symbol, row->versions.str())
                                                : std::string("no max order option")));
            continue;
        }
        if (!own_version) continue;
        const auto* at_own = rules::find(rules::max_order_definitions(), *own_version);
        const auto* at_target = rules::find(rules::max_order_definitions(), version);
        if (at_own && at_target && at_own->exclusive != at_target->exclusive)
            out.notes.push_back(fmt::format(
                "CONFIG_{}={} counts {} in {} (include/linux/mmzone.h: MAX_ORDER redefined in "
                "v6.4)",
                name, e->value,
                at_target->exclusive ? "one past the largest order" : "the largest order itself",
                at_target->versions.str()));
    }
}

} // namespace

Retarget retarget(const kconfig::Config& config, Arch arch, const KernelVersion& version,
                  std::optional<int> page_shift, std::optional<KernelVersion> own_version) {
    Retarget out;
    if (page_shift) switch_page_size(config, arch, version, *page_shift, out);
    if (!own_version || !same_release(*own_version, version)) {
        page_block_option(config, version, out);
        max_order_symbol(config, arch, version, own_version, out);
    }
    return out;
}

bool apply_retarget(const Retarget& change, kconfig::Config& config, Diagnostics& diags) {
    bool ok = true;
    for (const auto& set : change.sets)
        ok = kconfig::apply_set(set, config, diags) && ok;
    for (const auto& name : change.dropped)
        config.erase(name);
    return ok;
}

} // namespace cmalign::kernel
