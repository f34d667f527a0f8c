// table(): the what-if grid of `cmalign table`. Each row is derive() run on a synthetic config,
// so the grid and `calc` can never disagree.
#include <algorithm>
#include <set>

#include "cmalign/internal/kernel/rules.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::kernel {
namespace {

struct Variant {
    bool hugetlb;
    bool thp;
};

kconfig::Entry make(std::string name, std::string value) {
    return kconfig::Entry{std::move(name), std::move(value), false, Location{"table", 0, 0}};
}

// Symbols that make an arch's page size (and huge pages) possible at all, for the grid.
void platform_symbols(Arch arch, int page_shift, bool huge, kconfig::Config& cfg) {
    switch (arch) {
    case Arch::arm:
        if (huge) cfg.set(make("ARM_LPAE", "y")); // HugeTLB and THP need LPAE on arm
        break;
    case Arch::riscv:
        cfg.set(make("64BIT", "y"));
        break;
    case Arch::mips:
        cfg.set(make("64BIT", "y"));
        cfg.set(make("CPU_SUPPORTS_HUGEPAGES", "y"));
        break;
    case Arch::powerpc:
        // 4K and 64K pages: Book3S-64 (POWER); 16K and 256K exist only on 32-bit 44x/8xx.
        if (page_shift == 12 || page_shift == 16) {
            cfg.set(make("PPC64", "y"));
            cfg.set(make("PPC_BOOK3S_64", "y"));
        } else {
            cfg.set(make("PPC64", "n"));
            cfg.set(make("PPC_BOOK3S_64", "n"));
            cfg.set(make("PPC_44x", "y"));
        }
        break;
    default:
        break;
    }
}

// The largest max order a user can build with (raw Kconfig value), or nullopt when the arch
// has no choice.
std::optional<int> largest_raw(Arch arch, const KernelVersion& v, int page_shift,
                               const kconfig::Config& cfg, const Model& model) {
    const auto* kc = rules::find(rules::max_order_kconfig(), arch, v);
    if (!kc || !kc->symbol) return std::nullopt;
    const auto* def = rules::find(rules::max_order_definitions(), v);
    const int excl = def && def->exclusive ? 1 : 0;

    auto holds = [&](const rules::When& w) {
        if (w.page_shift != 0 && w.page_shift != page_shift) return false;
        for (const auto& t : w.terms)
            if (cfg.get_bool(t.symbol).value_or(false) != t.want) return false;
        return true;
    };
    std::optional<int> section_cap;
    if (const auto* s = rules::find(rules::section_sizes(), v, [&](const auto& row) {
            return row.arch == arch && holds(row.when);
        }))
        section_cap = s->bits - page_shift + excl;
    for (const auto& vl : kc->vendor_largest)
        if (holds(vl.when)) return vl.value;
    if (!kc->prompt) return std::nullopt;
    for (const auto& r : kc->ranges) {
        if (holds(r.when)) return section_cap ? std::min(r.hi, *section_cap) : r.hi;
    }
    if (section_cap) return *section_cap;
    (void)model;
    return std::nullopt;
}

} // namespace

std::vector<TableRow> table(Arch arch, const KernelVersion& version) {
    std::vector<TableRow> out;
    std::set<int> shifts;
    for (const auto& r : rules::page_sizes())
        if (r.arch == arch && r.versions.contains(version)) shifts.insert(r.page_shift);

    const auto* option = rules::find(rules::page_block_options(), version);
    const bool has_option = option != nullptr;
    const char* option_symbol = option ? option->symbol : nullptr;
    // The arch's max-order symbol in this version (FORCE_MAX_ZONEORDER until v6.0, then
    // ARCH_FORCE_MAX_ORDER): the grid's "largest" rows set it.
    const auto* max_order_row = rules::find(rules::max_order_kconfig(), arch, version);
    const auto* definition = rules::find(rules::max_order_definitions(), version);

    Options options;
    options.arch = arch;
    options.version = version;

    for (int shift : shifts) {
        const char* size_symbol = nullptr;
        for (const auto& r : rules::page_sizes())
            if (r.arch == arch && r.page_shift == shift && r.symbol && !size_symbol)
                size_symbol = r.symbol;
        for (Variant variant : {Variant{true, true}, Variant{false, true}, Variant{false, false}}) {
            kconfig::Config base;
            if (size_symbol) base.set(make(size_symbol, "y"));
            platform_symbols(arch, shift, variant.hugetlb || variant.thp, base);
            base.set(make("HUGETLBFS", variant.hugetlb ? "y" : "n"));
            base.set(make("TRANSPARENT_HUGEPAGE", variant.thp ? "y" : "n"));

            Diagnostics scratch;
            auto plain = derive(base, options, scratch);
            if (!plain) continue;
            // A variant the platform cannot have (HugeTLB on arm without LPAE ...) is skipped.
            if (plain->hugetlb != variant.hugetlb || plain->thp != variant.thp) continue;

            std::vector<std::pair<std::optional<int>, bool>> max_orders = {{std::nullopt, false}};
            if (auto largest = largest_raw(arch, version, shift, base, *plain)) {
                int default_raw = plain->max_page_order;
                if (definition && definition->exclusive) default_raw += 1;
                if (*largest != default_raw) max_orders.push_back({*largest, true});
            }
            for (const auto& [raw, is_largest] : max_orders) {
                kconfig::Config cfg = base;
                if (raw) cfg.set(make(max_order_row->symbol, std::to_string(*raw)));
                Diagnostics diags;
                auto m = derive(cfg, options, diags);
                if (!m) continue;

                // From v6.16: the default (unset) plus the orders that give 2 MiB and 4 MiB
                // blocks, the values vendors pick to keep 4K-kernel alignments.
                std::vector<std::optional<int>> options_values = {std::nullopt};
                if (has_option) {
                    std::set<int> seen = {m->max_page_order};
                    for (int bytes_shift : {21, 22}) {
                        int o = bytes_shift - shift;
                        if (o >= 1 && o <= m->max_page_order && seen.insert(o).second)
                            options_values.push_back(o);
                    }
                }
                for (const auto& pbo : options_values) {
                    std::optional<Model> model = m;
                    if (pbo) {
                        kconfig::Config with = cfg;
                        with.set(make(option_symbol, std::to_string(*pbo)));
                        Diagnostics d2;
                        model = derive(with, options, d2);
                        if (!model) continue;
                    }
                    TableRow row;
                    row.page_size = model->page_size;
                    row.max_page_order = model->max_page_order;
                    row.max_order_is_largest = is_largest;
                    row.hugetlb = model->hugetlb;
                    row.thp = model->thp;
                    row.page_block_max_order = model->page_block_order_option;
                    row.pageblock_order = model->pageblock_order;
                    row.pageblock_order_range = model->pageblock_order_range;
                    row.cma_min_alignment_bytes = model->cma_min_alignment_bytes;
                    out.push_back(row);
                }
            }
        }
    }
    return out;
}

} // namespace cmalign::kernel
