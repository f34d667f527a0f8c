// derive()'s private parts: the Deriver that walks the rule tables for one configuration, and
// the helpers its steps share. Private to src/kernel (derive*.cpp).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "cmalign/internal/kconfig/integer.hpp"
#include "cmalign/internal/kernel/rules.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::kernel::detail {

// An int symbol's value as derive() reads it: kconfig::parse_integer(text,
// IntegerSyntax::int_symbol); nullopt for what kconfig rejects (kconfig_invalid()).
inline std::optional<long long> parse_int(std::string_view text) {
    return kconfig::parse_integer(text, kconfig::IntegerSyntax::int_symbol);
}
// What kconfig prints for an int value it rejects.
std::string kconfig_invalid(const kconfig::Entry& e);
// "file:line", or "assumed" for a default.
std::string place(const Location& where);
// "include/linux/pageblock-flags.h (v6.10–v6.15; note)"
std::string source_text(const char* file, const VersionRange& versions, const char* note = "");

struct OrderRange {
    int lo = 0;
    int hi = 0;
    bool runtime = false;
};

// Which boot-time choices are still open for the runtime kinds: `a` is the radix value, `b`
// the hash one (powerpc Book3S-64); a config without one of the MMUs leaves one value.
struct RuntimeChoices {
    bool a = true;
    bool b = true;
};

std::optional<OrderRange> order_of(const rules::OrderSpec& spec, int page_shift,
                                   RuntimeChoices open = {});

// State of one derivation: the config, the facts derived so far, and the Model being filled.
class Deriver {
public:
    Deriver(const kconfig::Config& cfg, const Options& options, Diagnostics& diags)
        : cfg_(cfg), options_(options), diags_(diags) {}

    std::optional<Model> run();

private:
    const kconfig::Config& cfg_;
    const Options& options_;
    Diagnostics& diags_;
    Model m_;
    std::map<std::string, bool, std::less<>> facts_;
    bool failed_ = false;

    // Values the later steps need.
    const rules::HugeGeometryRow* geometry_ = nullptr;
    const rules::MaxOrderDefinitionRow* definition_ = nullptr;
    const kconfig::Entry* page_size_entry_ = nullptr;
    const kconfig::Entry* hugetlb_entry_ = nullptr;
    const kconfig::Entry* thp_entry_ = nullptr;
    const kconfig::Entry* max_order_entry_ = nullptr;
    std::string max_order_symbol_;
    int max_order_raw_ = 0;
    const kconfig::Entry* pbo_entry_ = nullptr;
    std::string pbo_symbol_;
    std::string pbo_macro_;
    bool pbo_backport_ = false;
    bool is_64bit_ = true;

    const kconfig::Entry* entry(std::string_view name) const { return cfg_.find(name); }

    // A bool/tristate symbol's value. One set to anything but y, m or n ("1") is what kconfig
    // refuses with "symbol value '1' invalid for X", keeping the default: never silently, it is
    // reported when the derivation ends (not_bool()).
    std::optional<bool> flag(std::string_view symbol) const {
        auto value = cfg_.get_bool(symbol);
        if (!value)
            if (const auto* e = cfg_.find(symbol)) not_bool_.insert(e->name);
        return value;
    }
    mutable std::set<std::string> not_bool_;
    void report_not_bool();
    bool run_steps();

    std::optional<bool> lookup(std::string_view symbol) const {
        if (auto it = facts_.find(symbol); it != facts_.end()) return it->second;
        return flag(symbol);
    }
    bool holds(const rules::When& w) const {
        if (w.page_shift != 0 && w.page_shift != m_.page_shift) return false;
        for (const auto& t : w.terms)
            if (lookup(t.symbol).value_or(false) != t.want) return false;
        return true;
    }

    StepInput input(const kconfig::Entry& e) const {
        auto how = cfg_.decided_by.find(e.name);
        return {"CONFIG_" + e.name, e.value, e.where,
                how == cfg_.decided_by.end() ? std::string{} : how->second};
    }
    static StepInput assumed(std::string_view symbol, std::string value) {
        return {fmt::format("CONFIG_{}", symbol), std::move(value), {}};
    }
    // The entry as an input of a step, or `symbol`=`value` assumed when the config lacks it.
    StepInput input_or_assumed(const kconfig::Entry* e, std::string_view symbol,
                               std::string value) const {
        return e ? input(*e) : assumed(symbol, std::move(value));
    }

    void report(Severity severity, const Location& where, std::string message, std::string check) {
        Diagnostic d;
        d.severity = severity;
        d.where = where;
        d.check = std::move(check);
        d.message = std::move(message);
        m_.diagnostics.push_back(d);
        diags_.add(std::move(d));
        if (severity == Severity::error) failed_ = true;
    }
    void warn(const Location& where, std::string message, std::string check = "kernel-config") {
        report(Severity::warning, where, std::move(message), std::move(check));
    }
    void error(const Location& where, std::string message, std::string check = "kernel-config") {
        report(Severity::error, where, std::move(message), std::move(check));
    }
    void assume(std::string text) { m_.assumptions.push_back(std::move(text)); }
    // A bool the user sets: its value, or n with `absent` noted as an assumption.
    bool wanted(const kconfig::Entry* e, const char* absent) {
        if (e) return flag(e->name).value_or(false);
        assume(absent);
        return false;
    }
    void step(std::string quantity, std::optional<long long> value, std::string rule,
              std::string source, std::vector<StepInput> inputs) {
        m_.derivation.push_back(
            {std::move(quantity), value, std::move(rule), std::move(source), std::move(inputs)});
    }

    // A user's int outside its Kconfig range: the version's kconfig either forgets it (the
    // default applies) or clamps it to the nearer bound (rules::kconfig_range_rules()).
    int out_of_range_value(const kconfig::Entry& e, long long value, long long lo, long long hi,
                           int default_value, const std::string& where_defined) {
        const auto& rule = rules::kconfig_range_rule(m_.version);
        bool clamp = rule.behaviour == rules::OutOfRange::clamp_to_bound;
        int result = clamp ? static_cast<int>(value < lo ? lo : hi) : default_value;
        warn(e.where,
             fmt::format("CONFIG_{}={} is outside its range {}..{} ({}): kconfig of {} {} {} "
                         "({})",
                         e.name, e.value, lo, hi, where_defined, version_name(),
                         clamp ? "clamps it to" : "falls back to the default", result,
                         source_text(rule.source, rule.versions, rule.note)),
             "kernel-config-range");
        return result;
    }

    std::string version_name() const {
        return fmt::format("v{}.{}", m_.version.major, m_.version.minor);
    }

    bool stale_default(const rules::MaxOrderKconfigRow& kc, int value,
                       const kconfig::Entry& e) const;
    // powerpc Book3S-64 picks the hash or radix MMU at boot; a config can rule one out
    // (PPC_RADIX_MMU=n; PPC_64S_HASH_MMU=n, ≥ v5.17).
    RuntimeChoices mmu_choices() const {
        RuntimeChoices c;
        if (m_.arch != Arch::powerpc) return c;
        c.a = flag("PPC_RADIX_MMU").value_or(true);
        c.b = flag("PPC_64S_HASH_MMU").value_or(true);
        if (!c.a && !c.b) c = {}; // impossible config: keep both
        return c;
    }
    // Whether absent symbols are known to be off: a .config kconfig wrote, or one evaluated from a
    // kernel tree's Kconfig (the evaluation writes the same header). A tree whose Kconfig was not
    // evaluated (no top Kconfig, unknown arch) gives only its version: absent symbols stay guesses.
    bool complete_config() const { return cfg_.header_version.has_value(); }
    void note_assumed_inputs();
    bool resolve_arch();
    bool resolve_version();
    void resolve_bits();
    bool resolve_page_size();
    void unselected_page_shift(const std::vector<const rules::PageSizeRow*>& rows, int& shift,
                               std::string& rule, const char*& source,
                               std::vector<StepInput>& inputs);
    void cross_check_page_size(int shift);
    void resolve_huge_pages();
    void resolve_max_order();
    int max_order_raw(const kconfig::Entry* e, const rules::MaxOrderKconfigRow* kc, int def,
                      std::optional<std::pair<int, int>> range, const std::string& where_defined,
                      const char* spelling, std::vector<StepInput>& inputs);
    void check_section_size(const kconfig::Entry* e, int mpo);
    void resolve_page_block_option();
    void resolve_pageblock_order();
    std::optional<OrderRange> pageblock_operand(rules::Operand o);
    void resolve_cma_alignment();
    void resolve_cma();
    void resolve_default_cma();
    void resolve_image();
};

} // namespace cmalign::kernel::detail
