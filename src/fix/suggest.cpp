// Configuration changes instead of bigger pools: each candidate is re-derived with
// kernel::derive().
#include "cmalign/fix/suggest.hpp"

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

using Changes = std::vector<std::pair<std::string, std::string>>;

Suggestion suggestion(Changes changes, const Model& m, std::string note, bool upstream = true) {
    Suggestion s;
    s.changes = std::move(changes);
    s.cma_min_alignment_bytes = *m.cma_min_alignment_bytes;
    s.pageblock_order = m.pageblock_order.value_or(0);
    s.page_size = m.page_size;
    s.note = std::move(note);
    s.upstream = upstream;
    return s;
}

// The candidates, cheapest first, each re-derived from `config` with its changes.
class Suggester {
public:
    Suggester(const kconfig::Config& config, const kernel::Options& options, std::uint64_t needed,
              const Model& base, std::size_t base_warnings)
        : config_(config), options_(options), needed_(needed), base_(base),
          base_warnings_(base_warnings), version_(base.version), arch_(base.arch),
          // The arch's max-order symbol. Where it has no prompt, Kconfig recomputes it whenever
          // its conditions change (arm64 up to v5.11 defaults it by THP), so a changed candidate
          // drops it.
          mo_(kernel::rules::find(kernel::rules::max_order_kconfig(), arch_, version_)),
          recomputed_max_order_(mo_ && mo_->symbol && !mo_->prompt) {}

    void run(SuggestResult& out) {
        out_ = &out;
        bool page_block_helps = smaller_page_block_order();
        without_huge_pages();
        auto vendor_max_order = smaller_max_order();
        bool page_size_helps = smaller_page_size();
        if (vendor_max_order) out.suggestions.push_back(std::move(*vendor_max_order));
        closing_note(page_block_helps, page_size_helps);
    }

private:
    const kconfig::Config& config_;
    const kernel::Options& options_;
    const std::uint64_t needed_;
    const Model& base_;
    const std::size_t base_warnings_;
    const KernelVersion version_;
    const Arch arch_;
    const kernel::rules::MaxOrderKconfigRow* mo_;
    const bool recomputed_max_order_;
    const kernel::rules::PageBlockOptionRow* pbo_ =
        kernel::rules::find(kernel::rules::page_block_options(), version_);
    SuggestResult* out_ = nullptr;

    // A candidate only counts when derive() took it without new complaints (out of range values
    // fall back to defaults, which would make the suggestion a lie).
    bool accept(const Candidate& c) const {
        return c.model && c.warnings <= base_warnings_ && valid_for(*c.model, needed_);
    }

    void make(Changes changes, const Model& m, std::string note) {
        out_->suggestions.push_back(suggestion(std::move(changes), m, std::move(note)));
    }

    // 1. CONFIG_PAGE_BLOCK_ORDER (v6.16) / CONFIG_PAGE_BLOCK_MAX_ORDER (≥ v6.17): the cheapest.
    bool smaller_page_block_order() {
        if (!pbo_) return false;
        std::set<std::string> drop;
        for (const char* name : kernel::rules::page_block_option_symbols())
            drop.insert(name);
        for (int order = base_.max_page_order; order >= 1; --order) {
            std::string symbol = fmt::format("CONFIG_{}", pbo_->symbol);
            auto c = derive_quietly(modified(config_, drop, {{symbol, std::to_string(order)}}),
                                    options_);
            if (!accept(c)) continue;
            make({{symbol, std::to_string(order)}}, *c.model,
                 fmt::format("pageblock_order becomes {} ({} pageblocks): page size and the buddy "
                             "allocator's max order stay; the page allocator groups pages by "
                             "mobility in smaller blocks, so huge pages and compaction may find "
                             "contiguous memory a little harder",
                             *c.model->pageblock_order,
                             size_words(*c.model->cma_min_alignment_bytes)));
            return true;
        }
        return false;
    }

    // 2. Disabling HugeTLB and/or THP, only where derive() says it lowers the alignment enough.
    void without_huge_pages() {
        struct Off {
            Changes changes;
            std::set<std::string> drop;
            const char* words;
        };
        std::vector<Off> variants;
        if (base_.hugetlb)
            variants.push_back(
                {{{"CONFIG_HUGETLBFS", "n"}},
                 {"HUGETLB_PAGE"},
                 "no HugeTLB pages (hugetlbfs, MAP_HUGETLB and gigantic pages gone)"});
        if (base_.thp)
            variants.push_back(
                {{{"CONFIG_TRANSPARENT_HUGEPAGE", "n"}}, {}, "no transparent huge pages"});
        if (base_.hugetlb && base_.thp)
            variants.push_back({{{"CONFIG_HUGETLBFS", "n"}, {"CONFIG_TRANSPARENT_HUGEPAGE", "n"}},
                                {"HUGETLB_PAGE"},
                                "neither HugeTLB nor transparent huge pages"});
        for (auto& v : variants) {
            if (recomputed_max_order_) v.drop.insert(mo_->symbol);
            auto c = derive_quietly(modified(config_, v.drop, v.changes), options_);
            if (!accept(c)) continue;
            make(v.changes, *c.model,
                 fmt::format("{}: pageblock_order becomes {}; workloads that rely on huge pages "
                             "lose them",
                             v.words, *c.model->pageblock_order));
            return; // the first (smallest) one that helps
        }
    }

    // 3. A smaller ARCH_FORCE_MAX_ORDER where the arch has a prompt for it; without a prompt
    // (vendor kernels only) the suggestion is returned, to be listed last.
    std::optional<Suggestion> smaller_max_order() {
        if (!mo_ || !mo_->symbol) return std::nullopt;
        const auto* current = config_.find(mo_->symbol);
        int raw_now = kernel::max_order_kconfig_value(version_, base_.max_page_order);
        if (current)
            if (auto v = config_.get_int(mo_->symbol)) raw_now = static_cast<int>(*v);
        for (int raw = raw_now - 1; raw >= 1; --raw) {
            std::string symbol = fmt::format("CONFIG_{}", mo_->symbol);
            auto candidate_config = modified(config_, {}, {{symbol, std::to_string(raw)}});
            auto c = derive_quietly(candidate_config, options_);
            bool ok = c.model && valid_for(*c.model, needed_) &&
                      (mo_->prompt ? c.warnings <= base_warnings_ : true);
            if (!ok) continue;
            if (!mo_->prompt)
                return suggestion(
                    {{symbol, std::to_string(raw)}}, *c.model,
                    fmt::format("vendor kernels only: upstream {} {} has no prompt for {} ({}), so "
                                "`make olddefconfig` resets it; with a vendor patch that exposes "
                                "it, the max order becomes {} and pageblock_order {}",
                                kernel::to_string(arch_), version_.str(), symbol, mo_->source,
                                c.model->max_page_order, *c.model->pageblock_order),
                    false);
            make({{symbol, std::to_string(raw)}}, *c.model,
                 fmt::format("the largest buddy allocation shrinks to order {} ({}); "
                             "pageblock_order becomes {}; large contiguous allocations above "
                             "that fail",
                             c.model->max_page_order,
                             size_words(c.model->page_size << c.model->max_page_order),
                             *c.model->pageblock_order));
            return std::nullopt;
        }
        return std::nullopt;
    }

    // 4. A smaller page size (the biggest change: user-space ABI page size, TLB reach).
    bool smaller_page_size() {
        // The arch's choice, largest page first; the symbols Kconfig derives from it dropped.
        std::vector<kernel::PageSizeChoice> choices;
        for (const auto& c : kernel::page_size_choices(arch_, version_))
            if (c.symbol) choices.insert(choices.begin(), c);
        const auto derived = kernel::derived_page_size_symbols(arch_, version_);
        std::set<std::string> drop(derived.begin(), derived.end());
        // A prompt-less max order is recomputed by Kconfig for the new page size.
        if (recomputed_max_order_) drop.insert(mo_->symbol);
        for (const auto& row : choices) {
            if (row.page_shift >= base_.page_shift) continue;
            Changes changes;
            changes.emplace_back(fmt::format("CONFIG_{}", row.symbol), "y");
            for (const auto& other : choices)
                if (other.symbol != row.symbol && config_.get_bool(other.symbol).value_or(false))
                    changes.emplace_back(fmt::format("CONFIG_{}", other.symbol), "n");
            auto c = derive_quietly(modified(config_, drop, changes), options_);
            if (!c.model || !valid_for(*c.model, needed_)) continue;
            make(changes, *c.model,
                 fmt::format("{} pages instead of {}: the biggest change — another kernel "
                             "build, less TLB reach, more page-table memory and different "
                             "page-size-dependent tuning; pageblock_order becomes {}",
                             size_words(c.model->page_size), size_words(base_.page_size),
                             *c.model->pageblock_order));
            return true; // the largest page size that works
        }
        return false;
    }

    // When nothing upstream keeps the page size: what is left to do.
    void closing_note(bool page_block_helps, bool page_size_helps) {
        std::string kernel_name = fmt::format("{} {}", kernel::to_string(arch_), version_.str());
        bool upstream_non_page_size = page_block_helps;
        for (const auto& s : out_->suggestions)
            if (s.upstream && s.page_size == base_.page_size) upstream_non_page_size = true;
        if (upstream_non_page_size) return;
        if (page_size_helps)
            out_->notes.push_back(fmt::format(
                "no configuration of {} keeps {} pages and gives a CMA alignment dividing {}{}: "
                "only a smaller page size helps",
                kernel_name, size_words(base_.page_size), size_words(needed_),
                pbo_ ? ""
                     : " (CONFIG_PAGE_BLOCK_ORDER, which caps pageblock_order, arrives in v6.16)"));
        else
            out_->notes.push_back(fmt::format(
                "no configuration of {} gives a CMA alignment dividing {}: grow the pools "
                "(cmalign fix)",
                kernel_name, size_words(needed_)));
    }
};

} // namespace

std::optional<SuggestResult> suggest(const kconfig::Config& config, const kernel::Options& options,
                                     std::uint64_t needed, Diagnostics& diags) {
    auto base = kernel::derive(config, options, diags);
    if (!base) return std::nullopt;
    auto baseline = derive_quietly(config, options);

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
    Suggester(config, options, needed, *base, baseline.warnings).run(out);
    return out;
}

} // namespace cmalign::fix
