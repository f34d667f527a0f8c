// Configuration changes instead of bigger pools: each candidate is re-derived with
// kernel::derive().
#include "cmalign/fix/suggest.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/kernel/rules.hpp"
#include "cmalign/kernel/versions.hpp"

namespace cmalign::fix {

std::uint64_t largest_power_of_two_dividing(std::uint64_t value) {
    return value & (~value + 1);
}

std::optional<std::uint64_t> needed_alignment(std::span<const reserved::Reservations> trees) {
    std::uint64_t bits = 0;
    bool any = false;
    for (const auto& rs : trees) {
        for (const auto& r : rs.regions) {
            if (r.kind != reserved::Kind::cma || !r.size) continue;
            any = true;
            bits |= *r.size;
            // A dynamic pool's base is aligned by the allocator; only a static base matters.
            if (!r.dynamic && r.base) bits |= *r.base;
        }
    }
    if (!any) return std::nullopt;
    if (bits == 0) return std::uint64_t{1} << 63; // only empty pools: anything is fine
    return largest_power_of_two_dividing(bits);
}

namespace {

using kernel::Arch;
using kernel::Model;

// A copy of `config` without `drop` (the symbols Kconfig would recompute) and with `set` applied.
kconfig::Config modified(const kconfig::Config& config, const std::set<std::string>& drop,
                         const std::vector<std::pair<std::string, std::string>>& set) {
    kconfig::Config out;
    out.header_arch = config.header_arch;
    out.header_version = config.header_version;
    for (const auto& [name, entry] : config.entries())
        if (!drop.count(name)) out.set(entry);
    for (const auto& [name, value] : set) {
        kconfig::Entry e;
        e.name = name.starts_with("CONFIG_") ? name.substr(7) : name;
        e.value = value;
        e.where = {"suggest", 0, 0};
        out.set(std::move(e));
    }
    return out;
}

struct Candidate {
    std::optional<Model> model;
    std::size_t warnings = 0;
};

Candidate derive_quietly(const kconfig::Config& config, const kernel::Options& options) {
    Diagnostics diags;
    Candidate c;
    c.model = kernel::derive(config, options, diags);
    if (diags.has_errors()) c.model.reset();
    c.warnings = diags.count(Severity::warning);
    if (c.model)
        for (const auto& d : c.model->diagnostics)
            if (d.severity != Severity::note) ++c.warnings;
    return c;
}

bool valid_for(const Model& m, std::uint64_t needed) {
    return m.cma_min_alignment_bytes && needed % *m.cma_min_alignment_bytes == 0;
}

std::string size_words(std::uint64_t v) {
    return format_size(v);
}

} // namespace

std::optional<SuggestResult> suggest(const kconfig::Config& config, const kernel::Options& options,
                                     std::uint64_t needed, Diagnostics& diags) {
    auto base = kernel::derive(config, options, diags);
    if (!base) return std::nullopt;
    auto baseline = derive_quietly(config, options);
    std::size_t base_warnings = baseline.warnings;

    SuggestResult out;
    out.needed_alignment = needed;
    out.current_alignment = base->cma_min_alignment_bytes;
    if (valid_for(*base, needed)) {
        out.already_valid = true;
        out.notes.push_back(
            fmt::format("the CMA alignment {} of this configuration already divides "
                        "every pool: nothing to change",
                        size_words(*base->cma_min_alignment_bytes)));
        return out;
    }
    const auto version = base->version;
    const auto arch = base->arch;
    // A candidate only counts when derive() took it without new complaints (out of range values
    // fall back to defaults, which would make the suggestion a lie).
    auto accept = [&](const Candidate& c) {
        return c.model && c.warnings <= base_warnings && valid_for(*c.model, needed);
    };
    auto make = [&](std::vector<std::pair<std::string, std::string>> changes, const Model& m,
                    std::string note, bool upstream = true) {
        Suggestion s;
        s.changes = std::move(changes);
        s.cma_min_alignment_bytes = *m.cma_min_alignment_bytes;
        s.pageblock_order = m.pageblock_order.value_or(0);
        s.page_size = m.page_size;
        s.note = std::move(note);
        s.upstream = upstream;
        out.suggestions.push_back(std::move(s));
    };

    // 1. CONFIG_PAGE_BLOCK_ORDER (v6.16) / CONFIG_PAGE_BLOCK_MAX_ORDER (≥ v6.17): the cheapest.
    const auto* pbo = kernel::rules::find(kernel::rules::page_block_options(), version);
    bool page_block_helps = false;
    if (pbo) {
        std::set<std::string> drop;
        for (const char* name : kernel::rules::page_block_option_symbols())
            drop.insert(name);
        for (int order = base->max_page_order; order >= 1; --order) {
            std::string symbol = fmt::format("CONFIG_{}", pbo->symbol);
            auto c =
                derive_quietly(modified(config, drop, {{symbol, std::to_string(order)}}), options);
            if (!accept(c)) continue;
            make({{symbol, std::to_string(order)}}, *c.model,
                 fmt::format("pageblock_order becomes {} ({} pageblocks): page size and the buddy "
                             "allocator's max order stay; the page allocator groups pages by "
                             "mobility in smaller blocks, so huge pages and compaction may find "
                             "contiguous memory a little harder",
                             *c.model->pageblock_order,
                             size_words(*c.model->cma_min_alignment_bytes)));
            page_block_helps = true;
            break;
        }
    }

    // The arch's max-order symbol. Where it has no prompt, Kconfig recomputes it whenever its
    // conditions change (arm64 up to v5.11 defaults it by THP), so a changed candidate drops it.
    const auto* mo = kernel::rules::find(kernel::rules::max_order_kconfig(), arch, version);
    const bool recomputed_max_order = mo && mo->symbol && !mo->prompt;

    // 2. Disabling HugeTLB and/or THP, only where derive() says it lowers the alignment enough.
    {
        struct Off {
            std::vector<std::pair<std::string, std::string>> changes;
            std::set<std::string> drop;
            const char* words;
        };
        std::vector<Off> variants;
        if (base->hugetlb)
            variants.push_back(
                {{{"CONFIG_HUGETLBFS", "n"}},
                 {"HUGETLB_PAGE"},
                 "no HugeTLB pages (hugetlbfs, MAP_HUGETLB and gigantic pages gone)"});
        if (base->thp)
            variants.push_back(
                {{{"CONFIG_TRANSPARENT_HUGEPAGE", "n"}}, {}, "no transparent huge pages"});
        if (base->hugetlb && base->thp)
            variants.push_back({{{"CONFIG_HUGETLBFS", "n"}, {"CONFIG_TRANSPARENT_HUGEPAGE", "n"}},
                                {"HUGETLB_PAGE"},
                                "neither HugeTLB nor transparent huge pages"});
        for (auto& v : variants) {
            if (recomputed_max_order) v.drop.insert(mo->symbol);
            auto c = derive_quietly(modified(config, v.drop, v.changes), options);
            if (!accept(c)) continue;
            make(v.changes, *c.model,
                 fmt::format("{}: pageblock_order becomes {}; workloads that rely on huge pages "
                             "lose them",
                             v.words, *c.model->pageblock_order));
            break; // the first (smallest) one that helps
        }
    }

    // 3. A smaller ARCH_FORCE_MAX_ORDER where the arch has a prompt for it (vendor-only otherwise).
    std::optional<Suggestion> vendor_max_order;
    if (mo && mo->symbol) {
        const auto* current = config.find(mo->symbol);
        int raw_now = kernel::max_order_kconfig_value(version, base->max_page_order);
        if (current)
            if (auto v = config.get_int(mo->symbol)) raw_now = static_cast<int>(*v);
        for (int raw = raw_now - 1; raw >= 1; --raw) {
            std::string symbol = fmt::format("CONFIG_{}", mo->symbol);
            auto candidate_config = modified(config, {}, {{symbol, std::to_string(raw)}});
            auto c = derive_quietly(candidate_config, options);
            bool ok = c.model && valid_for(*c.model, needed) &&
                      (mo->prompt ? c.warnings <= base_warnings : true);
            if (!ok) continue;
            if (mo->prompt) {
                make({{symbol, std::to_string(raw)}}, *c.model,
                     fmt::format("the largest buddy allocation shrinks to order {} ({}); "
                                 "pageblock_order becomes {}; large contiguous allocations above "
                                 "that fail",
                                 c.model->max_page_order,
                                 size_words(c.model->page_size << c.model->max_page_order),
                                 *c.model->pageblock_order));
            } else {
                Suggestion s;
                s.changes = {{symbol, std::to_string(raw)}};
                s.cma_min_alignment_bytes = *c.model->cma_min_alignment_bytes;
                s.pageblock_order = c.model->pageblock_order.value_or(0);
                s.page_size = c.model->page_size;
                s.upstream = false;
                s.note = fmt::format(
                    "vendor kernels only: upstream {} {} has no prompt for {} ({}), so "
                    "`make olddefconfig` resets it; with a vendor patch that exposes it, the max "
                    "order becomes {} and pageblock_order {}",
                    kernel::to_string(arch), version.str(), symbol, mo->source,
                    c.model->max_page_order, *c.model->pageblock_order);
                vendor_max_order = std::move(s);
            }
            break;
        }
    }

    // 4. A smaller page size (the biggest change: user-space ABI page size, TLB reach).
    bool page_size_helps = false;
    {
        // The arch's choice, largest page first; the symbols Kconfig derives from it dropped.
        std::vector<kernel::PageSizeChoice> choices;
        for (const auto& c : kernel::page_size_choices(arch, version))
            if (c.symbol) choices.insert(choices.begin(), c);
        const auto derived = kernel::derived_page_size_symbols(arch, version);
        std::set<std::string> drop(derived.begin(), derived.end());
        // A prompt-less max order is recomputed by Kconfig for the new page size.
        if (recomputed_max_order) drop.insert(mo->symbol);
        for (const auto& row : choices) {
            if (row.page_shift >= base->page_shift) continue;
            std::vector<std::pair<std::string, std::string>> changes;
            changes.emplace_back(fmt::format("CONFIG_{}", row.symbol), "y");
            for (const auto& other : choices)
                if (other.symbol != row.symbol && config.get_bool(other.symbol).value_or(false))
                    changes.emplace_back(fmt::format("CONFIG_{}", other.symbol), "n");
            auto c = derive_quietly(modified(config, drop, changes), options);
            if (!c.model || !valid_for(*c.model, needed)) continue;
            make(changes, *c.model,
                 fmt::format("{} pages instead of {}: the biggest change — another kernel "
                             "build, less TLB reach, more page-table memory and different "
                             "page-size-dependent tuning; pageblock_order becomes {}",
                             size_words(c.model->page_size), size_words(base->page_size),
                             *c.model->pageblock_order));
            page_size_helps = true;
            break; // the largest page size that works
        }
    }
    if (vendor_max_order) out.suggestions.push_back(std::move(*vendor_max_order));

    std::string kernel_name = fmt::format("{} {}", kernel::to_string(arch), version.str());
    bool upstream_non_page_size = page_block_helps;
    for (const auto& s : out.suggestions)
        if (s.upstream && s.page_size == base->page_size) upstream_non_page_size = true;
    if (!upstream_non_page_size) {
        if (page_size_helps)
            out.notes.push_back(fmt::format(
                "no configuration of {} keeps {} pages and gives a CMA alignment dividing {}{}: "
                "only a smaller page size helps",
                kernel_name, size_words(base->page_size), size_words(needed),
                pbo ? ""
                    : " (CONFIG_PAGE_BLOCK_ORDER, which caps pageblock_order, arrives in v6.16)"));
        else
            out.notes.push_back(fmt::format(
                "no configuration of {} gives a CMA alignment dividing {}: grow the pools "
                "(cmalign fix)",
                kernel_name, size_words(needed)));
    }
    return out;
}

} // namespace cmalign::fix
