// derive() steps for the orders: the max order (Kconfig symbol, range, section size), the page
// block option (v6.16+) and pageblock_order.
#include <algorithm>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/kernel/deriver.hpp"

namespace cmalign::kernel::detail {

// The raw value the kernel builds with: the user's where upstream (or a vendor kernel) takes
// it, else the default `def`; what was read or assumed goes to `inputs`.
int Deriver::max_order_raw(const kconfig::Entry* e, const rules::MaxOrderKconfigRow* kc, int def,
                           std::optional<std::pair<int, int>> range,
                           const std::string& where_defined, const char* spelling,
                           std::vector<StepInput>& inputs) {
    int raw = def;
    if (e) {
        inputs.push_back(input(*e));
        auto v = parse_int(e->value);
        if (!v) {
            warn(e->where, fmt::format("{}: {}", kconfig_invalid(*e), def));
        } else if (!(kc && kc->symbol)) {
            raw = static_cast<int>(*v);
            if (raw != def)
                warn(e->where,
                     fmt::format("CONFIG_{}={}: upstream {} {} has no such option (the generic "
                                 "default {} applies); honoured as in a vendor kernel that adds it",
                                 e->name, e->value, to_string(m_.arch), version_name(), def),
                     "kernel-config-upstream");
        } else if (kc->prompt) {
            if (range && (*v < range->first || *v > range->second)) {
                raw = out_of_range_value(*e, *v, range->first, range->second, def, where_defined);
            } else {
                raw = static_cast<int>(*v);
            }
        } else {
            raw = static_cast<int>(*v);
            // A generated .config always carries the computed default of a prompt-less int;
            // only a different value is something upstream would not build.
            if (raw != def && stale_default(*kc, raw, *e)) {
                warn(e->where,
                     fmt::format("CONFIG_{}={} ({}) is the {} default for another page size, "
                                 "written by kconfig before the page size was changed in {}: "
                                 "upstream {} has no prompt for it ({}), so `make olddefconfig` "
                                 "recomputes it; using {}",
                                 e->name, e->value, place(e->where), to_string(m_.arch),
                                 place(page_size_entry_->where), version_name(), where_defined,
                                 def),
                     "kernel-config-upstream");
                raw = def;
            } else if (raw != def) {
                warn(e->where,
                     fmt::format("CONFIG_{}={}: upstream {} {} has no prompt for it ({}), so "
                                 "`make olddefconfig` would reset it to {}; honoured as in vendor "
                                 "kernels that expose it",
                                 e->name, e->value, to_string(m_.arch), version_name(),
                                 where_defined, def),
                     "kernel-config-upstream");
            }
        }
    } else if (kc && kc->symbol) {
        inputs.push_back(assumed(spelling, std::to_string(def)));
        assume(fmt::format("CONFIG_{} not set: using the {} default {} for {} KiB pages ({}, {}{})",
                           spelling, to_string(m_.arch), def, m_.page_size / 1024, kc->source,
                           kc->versions.str(), *kc->note ? fmt::format("; {}", kc->note) : ""));
    }
    return raw;
}

// mmzone.h: "#error Allocator MAX_ORDER exceeds SECTION_SIZE" (SPARSEMEM only).
void Deriver::check_section_size(const kconfig::Entry* e, int mpo) {
    bool sparsemem = rules::info(m_.arch).always_sparsemem || flag("SPARSEMEM").value_or(false);
    if (const auto* section = rules::find(rules::section_sizes(), m_.version, [&](const auto& s) {
            return s.arch == m_.arch && holds(s.when);
        })) {
        const auto& s = *section;
        m_.section_size_bits = s.bits;
        if (sparsemem && mpo + m_.page_shift > s.bits)
            warn(e ? e->where : Location{},
                 fmt::format("max order {} + PAGE_SHIFT {} exceeds SECTION_SIZE_BITS {} ({}): "
                             "such a kernel does not build (\"Allocator MAX_ORDER exceeds "
                             "SECTION_SIZE\", include/linux/mmzone.h)",
                             mpo, m_.page_shift, s.bits, s.source),
                 "kernel-config-range");
    }
}

void Deriver::resolve_max_order() {
    definition_ = rules::find(rules::max_order_definitions(), m_.version);
    const auto* kc = rules::find(rules::max_order_kconfig(), m_.arch, m_.version);
    const int generic_default = definition_->generic_default;

    int def = generic_default;
    std::optional<std::pair<int, int>> range;
    if (kc && kc->symbol) {
        for (const auto& d : kc->defaults) {
            if (holds(d.when)) {
                def = d.value;
                break;
            }
        }
        for (const auto& r : kc->ranges) {
            if (holds(r.when)) {
                range = std::pair{r.lo, r.hi};
                break;
            }
        }
    }
    // The version's spelling, and the other one (renamed in v6.1).
    const char* spelling =
        (kc && kc->symbol) ? kc->symbol
                           : (KernelVersion{6, 1, 0, false} <= m_.version ? "ARCH_FORCE_MAX_ORDER"
                                                                          : "FORCE_MAX_ZONEORDER");
    const char* other = std::string_view(spelling) == "ARCH_FORCE_MAX_ORDER"
                            ? "FORCE_MAX_ZONEORDER"
                            : "ARCH_FORCE_MAX_ORDER";
    max_order_symbol_ = spelling;
    const std::string where_defined =
        kc ? source_text(kc->source, kc->versions, kc->note) : std::string{};

    const kconfig::Entry* e = entry(spelling);
    if (!e) {
        if (const auto* o = entry(other))
            warn(o->where,
                 fmt::format("CONFIG_{} is not a symbol of {} (renamed {} → ARCH_FORCE_MAX_ORDER "
                             "in v6.1): Kconfig ignores it",
                             other, version_name(), "FORCE_MAX_ZONEORDER"));
    }
    std::vector<StepInput> inputs;
    int raw = max_order_raw(e, kc, def, range, where_defined, spelling, inputs);
    int mpo = definition_->exclusive ? raw - 1 : raw;
    if (mpo < 0) {
        warn(e ? e->where : Location{},
             fmt::format("CONFIG_{}={} gives a negative max order: using the default {}", spelling,
                         raw, def),
             "kernel-config-range");
        raw = def;
        mpo = definition_->exclusive ? raw - 1 : raw;
    }
    max_order_entry_ = e;
    max_order_raw_ = raw;
    m_.max_page_order = mpo;

    check_section_size(e, mpo);

    std::string rule = fmt::format(fmt::runtime(definition_->rule), fmt::arg("sym", spelling));
    std::string source = source_text(definition_->source, definition_->versions);
    if (kc && kc->symbol) source += "; " + where_defined;
    step("max_page_order", mpo, std::move(rule), std::move(source), std::move(inputs));
}

void Deriver::resolve_page_block_option() {
    const auto* row = rules::find(rules::page_block_options(), m_.version);
    const kconfig::Entry* e = nullptr;
    if (row) {
        pbo_symbol_ = row->symbol;
        pbo_macro_ = row->macro;
        e = entry(row->symbol);
        if (!e) {
            for (const char* name : rules::page_block_option_symbols()) {
                const auto* o = entry(name);
                if (!o || name == pbo_symbol_) continue;
                if (std::string_view(name) == "PAGE_BLOCK_MAX_ORDER") {
                    // A v6.16-based vendor kernel with the v6.17 rename backported.
                    e = o;
                    pbo_symbol_ = name;
                    assume(fmt::format("CONFIG_PAGE_BLOCK_MAX_ORDER is set although upstream {} "
                                       "calls it CONFIG_PAGE_BLOCK_ORDER: assuming a vendor "
                                       "kernel with the rename backported",
                                       version_name()));
                } else {
                    warn(o->where,
                         fmt::format("CONFIG_{} was renamed CONFIG_{} in v6.17 [likely]: {} "
                                     "ignores the old name, so the default applies",
                                     name, row->symbol, version_name()),
                         "kernel-config-renamed");
                }
            }
        }
    } else {
        for (const char* name : rules::page_block_option_symbols()) {
            if (const auto* o = entry(name)) {
                e = o;
                pbo_symbol_ = name;
                pbo_macro_ = name;
                pbo_backport_ = true;
                assume(fmt::format("CONFIG_{} is set although upstream {} has no such option "
                                   "(added in v6.16): assuming a vendor kernel that backported "
                                   "\"mm: add CONFIG_PAGE_BLOCK_ORDER to select page block "
                                   "order\" (Android does) and applying it",
                                   name, version_name()));
                break;
            }
        }
        if (!e) return; // the version has no such option
    }
    // mm/Kconfig: range 1 ARCH_FORCE_MAX_ORDER (1..10 where the arch has none), default the
    // upper bound. Kconfig keeps a written value while it is in range; otherwise the default.
    const int hi = m_.max_page_order;
    int value = hi;
    std::vector<StepInput> inputs;
    if (e) {
        inputs.push_back(input(*e));
        auto v = parse_int(e->value);
        if (!v) {
            warn(e->where, fmt::format("{}: {}", kconfig_invalid(*e), hi), "kernel-config-range");
        } else if (*v < 1 || *v > hi) {
            value = out_of_range_value(*e, *v, 1, hi, hi, "mm/Kconfig: 1 .. ARCH_FORCE_MAX_ORDER");
        } else {
            value = static_cast<int>(*v);
        }
    } else {
        inputs.push_back(assumed(pbo_symbol_, std::to_string(hi)));
        assume(fmt::format("CONFIG_{} not set: using its default {} (= the max order; mm/Kconfig, "
                           "{})",
                           pbo_symbol_, hi, row ? row->versions.str() : std::string("backport")));
    }
    pbo_entry_ = e;
    m_.page_block_order_option = value;
    std::string source = row ? source_text(row->source, row->versions, row->note)
                             : std::string("mm/Kconfig, include/linux/mmzone.h (vendor backport "
                                           "of the v6.16 option)");
    step("page_block_order", value,
         fmt::format("{} = CONFIG_{} (range 1..ARCH_FORCE_MAX_ORDER, default ARCH_FORCE_MAX_ORDER; "
                     "else 10)",
                     pbo_macro_, pbo_symbol_),
         std::move(source), std::move(inputs));
}

// One operand of a pageblock formula: the HugeTLB or PMD order, the max order or the page block
// option; each order the geometry gives is a derivation step.
std::optional<OrderRange> Deriver::pageblock_operand(rules::Operand o) {
    using O = rules::Operand;
    if (o == O::max_order && pbo_backport_) o = O::page_block_option;
    switch (o) {
    case O::hugetlb_order: {
        auto r = order_of(geometry_->hugetlb, m_.page_shift, mmu_choices());
        step("hugetlb_page_order",
             r && !r->runtime ? std::optional<long long>(r->lo) : std::nullopt,
             r && r->runtime ? fmt::format("{} → {}..{}", geometry_->hugetlb.formula, r->lo, r->hi)
                             : geometry_->hugetlb.formula,
             source_text(geometry_->source, geometry_->versions),
             page_size_entry_ ? std::vector<StepInput>{input(*page_size_entry_)}
                              : std::vector<StepInput>{});
        return r;
    }
    case O::pmd_order: {
        auto r = order_of(geometry_->pmd, m_.page_shift, mmu_choices());
        step("hpage_pmd_order", r && !r->runtime ? std::optional<long long>(r->lo) : std::nullopt,
             r && r->runtime ? fmt::format("{} → {}..{}", geometry_->pmd.formula, r->lo, r->hi)
                             : geometry_->pmd.formula,
             source_text(geometry_->source, geometry_->versions),
             page_size_entry_ ? std::vector<StepInput>{input(*page_size_entry_)}
                              : std::vector<StepInput>{});
        return r;
    }
    case O::max_order:
        return OrderRange{m_.max_page_order, m_.max_page_order, false};
    case O::page_block_option:
        if (!m_.page_block_order_option) return std::nullopt;
        return OrderRange{*m_.page_block_order_option, *m_.page_block_order_option, false};
    }
    return std::nullopt;
}

void Deriver::resolve_pageblock_order() {
    using C = rules::PageblockCase;
    bool variable =
        geometry_ && (geometry_->hugetlb.kind == rules::OrderSpec::Kind::runtime_shifts ||
                      geometry_->hugetlb.kind == rules::OrderSpec::Kind::runtime_orders);
    C which = m_.hugetlb ? (variable ? C::hugetlb_variable : C::hugetlb_fixed)
              : m_.thp   ? C::thp_only
                         : C::neither;
    const auto* row =
        rules::find(rules::pageblock_rules(), m_.version,
                    [which](const rules::PageblockRow& r) { return r.which == which; });
    if (!row) {
        error({}, fmt::format("no pageblock rule for {}", m_.version.str()));
        return;
    }

    auto a = pageblock_operand(row->formula.a);
    std::optional<OrderRange> b;
    if (row->formula.min_with) b = pageblock_operand(*row->formula.min_with);
    if (!a || (row->formula.min_with && !b)) {
        error({}, "internal: a pageblock formula operand is missing");
        return;
    }
    OrderRange result = *a;
    if (b) result = {std::min(a->lo, b->lo), std::min(a->hi, b->hi), a->runtime || b->runtime};

    std::string mpo_name = pbo_backport_ ? pbo_macro_ : definition_->mpo_name;
    std::string rule = fmt::format(fmt::runtime(row->rule), fmt::arg("mpo", mpo_name),
                                   fmt::arg("pbo", pbo_macro_));
    std::string source = source_text(row->source, row->versions, row->note);
    if (pbo_backport_)
        source += fmt::format("; with {} (vendor backport) in place of the max order", pbo_macro_);

    std::vector<StepInput> inputs;
    if (hugetlb_entry_) inputs.push_back(input(*hugetlb_entry_));
    if (thp_entry_) inputs.push_back(input(*thp_entry_));
    if (max_order_entry_) inputs.push_back(input(*max_order_entry_));
    if (pbo_entry_) inputs.push_back(input(*pbo_entry_));
    if (const auto* v = entry("HUGETLB_PAGE_SIZE_VARIABLE"))
        if (which == C::hugetlb_variable) inputs.push_back(input(*v));

    if (result.runtime) {
        m_.pageblock_order = std::nullopt;
        m_.pageblock_order_range = std::pair{result.lo, result.hi};
        rule += fmt::format(" → {}..{}, decided at boot", result.lo, result.hi);
        assume(fmt::format("pageblock_order is decided at boot on this configuration "
                           "(HUGETLB_PAGE_SIZE_VARIABLE or a runtime PMD size): it is one of "
                           "{}..{}, so the CMA alignment is not known before boot",
                           result.lo, result.hi));
    } else {
        m_.pageblock_order = result.lo;
    }
    step("pageblock_order",
         m_.pageblock_order ? std::optional<long long>(*m_.pageblock_order) : std::nullopt,
         "pageblock_order = " + rule, std::move(source), std::move(inputs));

    resolve_cma_alignment();
}

// CMA_MIN_ALIGNMENT_BYTES from the max order and pageblock_order, as the version computes it.
void Deriver::resolve_cma_alignment() {
    const auto* cma = rules::find(rules::cma_alignment_rules(), m_.version);
    // Up to v5.18 the alignment is PAGE_SIZE << max(MPO, pageblock_order): when every value the
    // boot may give pageblock_order is at most MPO (powerpc's HUGETLB_PAGE_SIZE_VARIABLE: hash
    // or radix order, not above MPO), the alignment is known at build time.
    const bool known_despite_boot = !m_.pageblock_order && m_.pageblock_order_range &&
                                    cma->max_with_max_order &&
                                    m_.pageblock_order_range->second <= m_.max_page_order;
    std::optional<int> cma_order;
    if (m_.pageblock_order)
        cma_order = cma->max_with_max_order ? std::max(m_.max_page_order, *m_.pageblock_order)
                                            : *m_.pageblock_order;
    else if (known_despite_boot)
        cma_order = m_.max_page_order;
    if (cma_order) {
        const int order = *cma_order;
        // The kernel computes PAGE_SIZE * (1UL << order) in unsigned long: an absurd order
        // (an arch without a range lets ARCH_FORCE_MAX_ORDER=99 through) wraps, as the compiler
        // folds it (to 0 for shifts past the width).
        const int width = is_64bit_ ? 64 : 32;
        const std::uint64_t mask =
            width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
        const std::uint64_t pages = order >= width ? 0 : (std::uint64_t{1} << order) & mask;
        m_.cma_min_alignment_bytes = (m_.page_size * pages) & mask;
        if (order + m_.page_shift >= width)
            warn(max_order_entry_ ? max_order_entry_->where : Location{},
                 fmt::format("PAGE_SIZE << {} does not fit the {}-bit unsigned long: the kernel's "
                             "CMA_MIN_ALIGNMENT_BYTES wraps to {}, and no CMA area can be set up "
                             "sensibly",
                             order, width, *m_.cma_min_alignment_bytes),
                 "kernel-config-range");
    }
    std::string cma_rule = cma->rule;
    if (m_.cma_min_alignment_bytes && known_despite_boot)
        cma_rule += fmt::format(
            " = {} << {} = {}: pageblock_order is set at boot to {}..{}, never above the max "
            "order {} (and still 0 when rmem_cma_setup() runs, before set_pageblock_order())",
            m_.page_size, *cma_order, format_size(*m_.cma_min_alignment_bytes, ByteUnit::bytes),
            m_.pageblock_order_range->first, m_.pageblock_order_range->second, m_.max_page_order);
    else if (m_.cma_min_alignment_bytes)
        cma_rule += fmt::format(" = {} << {} = {}", m_.page_size, *cma_order,
                                format_size(*m_.cma_min_alignment_bytes, ByteUnit::bytes));
    else if (m_.pageblock_order_range) {
        auto [lo, hi] = *m_.pageblock_order_range;
        if (cma->max_with_max_order) {
            lo = std::max(lo, m_.max_page_order);
            hi = std::max(hi, m_.max_page_order);
        }
        cma_rule += fmt::format(" → {}..{} once pageblock_order is set at boot (PAGE_SIZE until "
                                "then, for code that runs before sparse_init())",
                                format_size(m_.page_size << lo, ByteUnit::bytes),
                                format_size(m_.page_size << hi, ByteUnit::bytes));
    }
    step("cma_min_alignment_bytes",
         m_.cma_min_alignment_bytes
             ? std::optional<long long>(static_cast<long long>(*m_.cma_min_alignment_bytes))
             : std::nullopt,
         std::move(cma_rule), source_text(cma->source, cma->versions, cma->note), {});
}

} // namespace cmalign::kernel::detail
