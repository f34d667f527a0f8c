// derive() steps for the page size (the arch's choice, the generic symbols, PAGE_SHIFT) and
// the huge page geometry (HugeTLB, THP).
#include <algorithm>

#include <fmt/format.h>

#include "cmalign/internal/kernel/deriver.hpp"

namespace cmalign::kernel::detail {

// The page size when the arch's choice is not in the configuration: the generic symbols Kconfig
// derives from it, CONFIG_PAGE_SHIFT, else the choice's default (assumed). `shift` stays 0 when
// none tells.
void Deriver::unselected_page_shift(const std::vector<const rules::PageSizeRow*>& rows, int& shift,
                                    std::string& rule, const char*& source,
                                    std::vector<StepInput>& inputs) {
    // The arch's choice is not in the config: the generic symbols Kconfig derives from it
    // (≥ v6.10) still say which it was.
    for (const auto& g : rules::generic_page_sizes()) {
        if (!flag(g.symbol).value_or(false)) continue;
        shift = g.page_shift;
        page_size_entry_ = entry(g.symbol);
        inputs.push_back(input(*page_size_entry_));
        rule = fmt::format("CONFIG_{}=y → PAGE_SHIFT {}", g.symbol, shift);
        source = g.source;
        break;
    }
    if (shift == 0) {
        if (const auto* e = entry("PAGE_SHIFT"); e && parse_int(e->value)) {
            auto v = *parse_int(e->value);
            if (v >= 12 && v <= 18) {
                shift = static_cast<int>(v);
                page_size_entry_ = e;
                inputs.push_back(input(*e));
                rule = fmt::format("CONFIG_PAGE_SHIFT = {}", shift);
                source = "arch/Kconfig";
            }
        }
    }
    if (shift == 0) {
        m_.page_shift = 0;
        for (const auto* r : rows) {
            if (!r->default_if || !holds(*r->default_if)) continue;
            shift = r->page_shift;
            inputs.push_back(assumed(r->symbol, "y"));
            rule = fmt::format("choice default CONFIG_{} → PAGE_SHIFT {}", r->symbol, shift);
            source = r->source;
            assume(fmt::format("no page size selected: using the {} default CONFIG_{} "
                               "({} KiB pages, {})",
                               to_string(m_.arch), r->symbol, (1 << shift) / 1024, r->source));
            break;
        }
    }
}

// Cross-check the symbols Kconfig derives from the choice (≥ v6.10); a stale value left by an
// earlier file is recomputed by olddefconfig, so it only earns a warning.
void Deriver::cross_check_page_size(int shift) {
    for (const auto& g : rules::generic_page_sizes()) {
        const auto* e = entry(g.symbol);
        if (e && e != page_size_entry_ && flag(g.symbol).value_or(false) && g.page_shift != shift)
            warn(e->where, fmt::format("CONFIG_{}=y disagrees with CONFIG_{}={}: Kconfig "
                                       "derives it from the page size choice, so it is ignored",
                                       g.symbol, page_size_entry_->name, page_size_entry_->value));
    }
    if (const auto* e = entry("PAGE_SHIFT"); e && e != page_size_entry_) {
        if (auto v = parse_int(e->value); v && *v != shift)
            warn(e->where, fmt::format("CONFIG_PAGE_SHIFT={} disagrees with CONFIG_{}={}: "
                                       "Kconfig derives it from the page size choice, so it is "
                                       "ignored",
                                       *v, page_size_entry_->name, page_size_entry_->value));
    }
}

bool Deriver::resolve_page_size() {
    std::vector<const rules::PageSizeRow*> rows;
    for (const auto& r : rules::page_sizes())
        if (r.arch == m_.arch && r.versions.contains(m_.version)) rows.push_back(&r);
    if (rows.empty()) {
        error({}, fmt::format("no page size rule for {} {}", to_string(m_.arch), m_.version.str()));
        return false;
    }

    std::vector<StepInput> inputs;
    std::string rule;
    const char* source = rows.front()->source;
    int shift = 0;
    if (rows.size() == 1 && rows.front()->symbol == nullptr) {
        shift = rows.front()->page_shift;
        rule = fmt::format("PAGE_SHIFT = {} (the only page size of {})", shift, to_string(m_.arch));
    } else {
        std::vector<std::pair<const rules::PageSizeRow*, const kconfig::Entry*>> selected;
        for (const auto* r : rows)
            if (flag(r->symbol).value_or(false)) selected.emplace_back(r, entry(r->symbol));
        for (const auto& [r, e] : selected) {
            if (r->page_shift != selected.front().first->page_shift) {
                const auto* first = selected.front().second;
                std::string hint =
                    first->where.file != e->where.file
                        ? fmt::format(" (a fragment that switches the page size must also say "
                                      "\"# CONFIG_{} is not set\")",
                                      first->name)
                        : std::string();
                error(e->where,
                      fmt::format("contradictory page sizes: CONFIG_{}={} ({}) and CONFIG_{}={} "
                                  "({}) are both selected{}",
                                  first->name, first->value, place(first->where), e->name, e->value,
                                  place(e->where), hint),
                      "kernel-config");
                return false;
            }
        }
        if (!selected.empty()) {
            shift = selected.front().first->page_shift;
            page_size_entry_ = selected.front().second;
            source = selected.front().first->source;
            for (const auto& [r, e] : selected)
                inputs.push_back(input(*e));
            rule =
                fmt::format("CONFIG_{}=y → PAGE_SHIFT {}", selected.front().first->symbol, shift);
        } else {
            unselected_page_shift(rows, shift, rule, source, inputs);
        }
    }
    if (shift == 0) {
        error({}, "cannot tell the page size");
        return false;
    }
    m_.page_shift = shift;
    m_.page_size = std::uint64_t{1} << shift;

    if (page_size_entry_) cross_check_page_size(shift);
    // Facts for the Kconfig conditions of later rows.
    for (const auto* r : rows)
        if (r->symbol) facts_[r->symbol] = r->page_shift == shift;
    for (const auto& g : rules::generic_page_sizes())
        facts_[g.symbol] = g.page_shift == shift;

    step("page_size", static_cast<long long>(m_.page_size), std::move(rule),
         source_text(source, rules::all_versions()), std::move(inputs));
    return true;
}

void Deriver::resolve_huge_pages() {
    geometry_ = rules::find(rules::huge_geometry(), m_.version,
                            [&](const auto& r) { return r.arch == m_.arch && holds(r.when); });
    bool hugetlb_possible = geometry_ && geometry_->hugetlb.kind != rules::OrderSpec::Kind::none;
    bool thp_possible = geometry_ && geometry_->pmd.kind != rules::OrderSpec::Kind::none;

    // HUGETLB_PAGE is `def_bool HUGETLBFS` (fs/Kconfig): HUGETLBFS is what users set.
    hugetlb_entry_ = entry("HUGETLBFS");
    if (!hugetlb_entry_) hugetlb_entry_ = entry("HUGETLB_PAGE");
    bool hugetlb_wanted =
        wanted(hugetlb_entry_,
               "CONFIG_HUGETLBFS not set: Kconfig default n (fs/Kconfig), so no HugeTLB pages");
    if (hugetlb_wanted && !hugetlb_possible) {
        warn(hugetlb_entry_->where,
             fmt::format("CONFIG_{}=y but this {} configuration has no HugeTLB support ({}): "
                         "Kconfig drops it",
                         hugetlb_entry_->name, to_string(m_.arch),
                         geometry_ ? geometry_->source : "no rule"));
    }
    m_.hugetlb = hugetlb_wanted && hugetlb_possible;

    thp_entry_ = entry("TRANSPARENT_HUGEPAGE");
    bool thp_wanted =
        wanted(thp_entry_, "CONFIG_TRANSPARENT_HUGEPAGE not set: Kconfig default n (mm/Kconfig)");
    if (thp_wanted && !thp_possible) {
        warn(thp_entry_->where,
             fmt::format("CONFIG_TRANSPARENT_HUGEPAGE=y but this {} configuration has no "
                         "HAVE_ARCH_TRANSPARENT_HUGEPAGE ({}): Kconfig drops it",
                         to_string(m_.arch), geometry_ ? geometry_->source : "no rule"));
    }
    bool rt = flag("PREEMPT_RT").value_or(false);
    if (thp_wanted && thp_possible && rt) {
        warn(thp_entry_->where, "CONFIG_TRANSPARENT_HUGEPAGE=y with CONFIG_PREEMPT_RT=y: THP "
                                "depends on !PREEMPT_RT (mm/Kconfig), so Kconfig drops it");
    }
    m_.thp = thp_wanted && thp_possible && !rt;

    if (m_.hugetlb)
        if (auto r = order_of(geometry_->hugetlb, m_.page_shift, mmu_choices()); r && !r->runtime)
            m_.hugetlb_page_order = r->lo;
    if (m_.thp)
        if (auto r = order_of(geometry_->pmd, m_.page_shift, mmu_choices()); r && !r->runtime)
            m_.hpage_pmd_order = r->lo;
    facts_["HUGETLBFS"] = m_.hugetlb;
    facts_["HUGETLB_PAGE"] = m_.hugetlb;
    facts_["TRANSPARENT_HUGEPAGE"] = m_.thp;
    facts_["MIPS_HUGE_TLB_SUPPORT"] = m_.hugetlb || m_.thp; // arch/mips/Kconfig def_bool

    std::vector<StepInput> hin = {input_or_assumed(hugetlb_entry_, "HUGETLBFS", "n")};
    step("hugetlb", m_.hugetlb ? 1 : 0,
         hugetlb_possible ? "HUGETLB_PAGE = HUGETLBFS (def_bool)"
                          : "HUGETLB_PAGE = n (the arch does not select ARCH_SUPPORTS_HUGETLBFS)",
         source_text("fs/Kconfig", rules::all_versions()), std::move(hin));
    std::vector<StepInput> tin = {input_or_assumed(thp_entry_, "TRANSPARENT_HUGEPAGE", "n")};
    step("thp", m_.thp ? 1 : 0,
         thp_possible ? "TRANSPARENT_HUGEPAGE, depends on HAVE_ARCH_TRANSPARENT_HUGEPAGE && "
                        "!PREEMPT_RT"
                      : "TRANSPARENT_HUGEPAGE = n (no HAVE_ARCH_TRANSPARENT_HUGEPAGE)",
         source_text("mm/Kconfig", rules::all_versions()), std::move(tin));
}

} // namespace cmalign::kernel::detail
