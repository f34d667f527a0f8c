// derive(): walks the rule tables of rules.cpp for one arch and kernel version and records
// every step. No version or arch knowledge lives here; it all comes from the tables.
#include "cmalign/kernel/model.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "cmalign/kernel/report.hpp"
#include "cmalign/kernel/rules.hpp"

namespace cmalign::kernel {

const char* to_string(Arch a) {
    return rules::info(a).name;
}

std::optional<Arch> parse_arch(std::string_view name) {
    std::string n(name);
    std::transform(n.begin(), n.end(), n.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    static const std::map<std::string, Arch, std::less<>> aliases = {
        {"arm64", Arch::arm64},
        {"aarch64", Arch::arm64},
        {"arm", Arch::arm},
        {"armhf", Arch::arm},
        {"armel", Arch::arm},
        {"armv7", Arch::arm},
        {"x86_64", Arch::x86_64},
        {"amd64", Arch::x86_64},
        {"x64", Arch::x86_64},
        {"x86", Arch::x86},
        {"i386", Arch::x86},
        {"i686", Arch::x86},
        {"x86_32", Arch::x86},
        {"ia32", Arch::x86},
        {"riscv", Arch::riscv},
        {"riscv64", Arch::riscv},
        {"riscv32", Arch::riscv},
        {"powerpc", Arch::powerpc},
        {"ppc", Arch::powerpc},
        {"ppc64", Arch::powerpc},
        {"ppc64le", Arch::powerpc},
        {"powerpc64", Arch::powerpc},
        {"ppc64el", Arch::powerpc},
        {"loongarch", Arch::loongarch},
        {"loongarch64", Arch::loongarch},
        {"mips", Arch::mips},
        {"mips64", Arch::mips},
        {"mipsel", Arch::mips},
        {"mips64el", Arch::mips},
    };
    if (auto it = aliases.find(n); it != aliases.end()) return it->second;
    return std::nullopt;
}

const std::vector<Arch>& all_arches() {
    static const std::vector<Arch> arches = {Arch::arm64,     Arch::arm,   Arch::x86_64,
                                             Arch::x86,       Arch::riscv, Arch::powerpc,
                                             Arch::loongarch, Arch::mips};
    return arches;
}

namespace {

// An int symbol's value as kconfig accepts it (scripts/kconfig/symbol.c sym_string_valid(),
// S_INT, 6.1 and 6.12): optional '-', decimal digits, no leading zero, no "0x". Anything else is
// "symbol value '…' invalid for …" and the symbol keeps its default. Every symbol derive() reads
// this way is an int.
std::optional<long long> parse_int(std::string_view text) {
    std::string_view digits = text;
    if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
    if (digits.empty() || (digits.front() == '0' && digits.size() > 1)) return std::nullopt;
    long long v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    // Every value derive() reads is an order or a count: anything beyond int is not one.
    if (v > std::numeric_limits<int>::max() || v < std::numeric_limits<int>::min())
        return std::nullopt;
    return v;
}

// What kconfig prints for an int value it rejects (scripts/kconfig/confdata.c
// conf_set_sym_val(), 6.1 and 6.12).
std::string kconfig_invalid(const kconfig::Entry& e) {
    return fmt::format("CONFIG_{}={}: kconfig prints \"symbol value '{}' invalid for {}\" (an "
                       "int is decimal digits, no leading zero) and keeps the default",
                       e.name, e.value, e.value, e.name);
}

std::string place(const Location& where) {
    if (!where.known()) return "assumed";
    return where.line > 0 ? fmt::format("{}:{}", where.file, where.line) : where.file;
}

std::string source_text(const char* file, const VersionRange& versions, const char* note = "") {
    std::string s = fmt::format("{} ({}", file, versions.str());
    if (note && *note) s += fmt::format("; {}", note);
    return s + ")";
}

template <class Row> const Row* find_row(std::span<const Row> rows, const KernelVersion& v) {
    for (const auto& r : rows)
        if (r.versions.contains(v)) return &r;
    return nullptr;
}

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
                                   RuntimeChoices open = {}) {
    using K = rules::OrderSpec::Kind;
    auto pick = [&](int a, int b) {
        if (open.a && !open.b) return OrderRange{a, a, true};
        if (open.b && !open.a) return OrderRange{b, b, true};
        return OrderRange{std::min(a, b), std::max(a, b), true};
    };
    switch (spec.kind) {
    case K::none:
        return std::nullopt;
    case K::page_shift_minus_3:
        return OrderRange{page_shift - 3, page_shift - 3, false};
    case K::fixed_shift:
        return OrderRange{spec.a - page_shift, spec.a - page_shift, false};
    case K::runtime_shifts:
        return pick(spec.a - page_shift, spec.b - page_shift);
    case K::runtime_orders:
        return pick(spec.a, spec.b);
    }
    return std::nullopt;
}

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

    std::optional<bool> lookup(std::string_view symbol) const {
        if (auto it = facts_.find(symbol); it != facts_.end()) return it->second;
        return cfg_.get_bool(symbol);
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
        c.a = cfg_.get_bool("PPC_RADIX_MMU").value_or(true);
        c.b = cfg_.get_bool("PPC_64S_HASH_MMU").value_or(true);
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
    void resolve_huge_pages();
    void resolve_max_order();
    void resolve_page_block_option();
    void resolve_pageblock_order();
    void resolve_cma();
};

// A prompt-less max order whose value is the arch default for a *different* page size, set in
// another file than the page size choice: a .config written before a fragment switched the page
// size (`-c 4k.config -c 16k.frag`). olddefconfig would recompute it, so it is not a vendor
// setting.
bool Deriver::stale_default(const rules::MaxOrderKconfigRow& kc, int value,
                            const kconfig::Entry& e) const {
    if (!page_size_entry_ || page_size_entry_->where.file == e.where.file) return false;
    for (const auto& r : rules::page_sizes()) {
        if (r.arch != m_.arch || !r.versions.contains(m_.version) || r.page_shift == m_.page_shift)
            continue;
        for (const auto& d : kc.defaults) {
            if (d.when.page_shift != 0 && d.when.page_shift != r.page_shift) continue;
            bool terms = std::all_of(d.when.terms.begin(), d.when.terms.end(), [&](const auto& t) {
                return lookup(t.symbol).value_or(false) == t.want;
            });
            if (!terms) continue;
            if (d.value == value) return true;
            break; // the first default that applies to that page size is its default
        }
    }
    return false;
}

bool Deriver::resolve_arch() {
    if (options_.arch) {
        m_.arch = *options_.arch;
        if (cfg_.header_arch) {
            auto h = parse_arch(*cfg_.header_arch);
            bool same = h && (*h == m_.arch || (*h == Arch::x86 && m_.arch == Arch::x86_64));
            if (!same)
                warn({}, fmt::format("the config header says {}, --arch says {}: using {}",
                                     *cfg_.header_arch, to_string(m_.arch), to_string(m_.arch)));
        }
        return true;
    }
    if (cfg_.header_arch) {
        auto a = parse_arch(*cfg_.header_arch);
        if (!a) {
            error({}, fmt::format("unsupported architecture '{}' (from the config header); "
                                  "cmalign models arm64, arm, x86_64, x86, riscv, powerpc, "
                                  "loongarch and mips",
                                  *cfg_.header_arch));
            return false;
        }
        // The header says "x86" for 32- and 64-bit builds alike.
        if (*a == Arch::x86 &&
            (cfg_.get_bool("X86_64").value_or(false) || cfg_.get_bool("64BIT").value_or(false)))
            a = Arch::x86_64;
        m_.arch = *a;
        return true;
    }
    for (const auto& row : rules::arch_symbols()) {
        const auto* e = entry(row.symbol);
        if (!e || !cfg_.get_bool(row.symbol).value_or(false)) continue;
        if (row.also && cfg_.get_bool(row.also->symbol).value_or(false) != row.also->want) continue;
        m_.arch = row.arch;
        assume(fmt::format("architecture not given: {} from CONFIG_{}={} ({})", to_string(row.arch),
                           e->name, e->value, place(e->where)));
        return true;
    }
    error({}, "cannot tell the architecture: give --arch, or a .config with its "
              "\"# Linux/<arch> <version> Kernel Configuration\" header or CONFIG_<ARCH>=y");
    return false;
}

bool Deriver::resolve_version() {
    std::optional<KernelVersion> v = options_.version;
    if (v && cfg_.header_version) {
        auto h = KernelVersion::parse(*cfg_.header_version);
        if (h && (h->major != v->major || h->minor != v->minor))
            warn({}, fmt::format("the config header says {}, --kernel-version says {}: using the "
                                 "rules of {}",
                                 *cfg_.header_version, v->str(), v->str()));
    }
    if (!v && cfg_.header_version) {
        v = KernelVersion::parse(*cfg_.header_version);
        if (!v)
            warn({}, fmt::format("cannot read the kernel version '{}' of the config header",
                                 *cfg_.header_version));
    }
    if (!v && options_.tree_version) v = options_.tree_version;
    if (!v) {
        v = newest_modelled_version();
        assume(fmt::format("kernel version not given: using the newest modelled, {}", v->str()));
    }
    m_.version = *v;
    if (*v < oldest_modelled_version()) {
        error({}, fmt::format("kernel {} is older than the oldest modelled version ({})", v->str(),
                              oldest_modelled_version().str()));
        return false;
    }
    if (newest_modelled_version() < *v) {
        auto newest = newest_modelled_version();
        warn({}, fmt::format("kernel {} is newer than the newest modelled version ({}): its rules "
                             "are assumed unchanged",
                             v->str(), newest.str()));
        assume(fmt::format("kernel {} treated with the rules of {}", v->str(), newest.str()));
    }
    const auto& info = rules::info(m_.arch);
    if (!info.versions.contains(*v)) {
        error({}, fmt::format("{} has no {} kernel ({} only)", v->str(), info.name,
                              info.versions.str()));
        return false;
    }
    return true;
}

void Deriver::resolve_bits() {
    const auto& info = rules::info(m_.arch);
    if (info.is_64bit) {
        is_64bit_ = *info.is_64bit;
    } else if (auto b = cfg_.get_bool(info.bits_symbol)) {
        is_64bit_ = *b;
    } else if (auto b32 = cfg_.get_bool(info.bits32_symbol)) {
        is_64bit_ = !*b32;
    } else {
        is_64bit_ = info.default_64bit;
        assume(fmt::format("CONFIG_{} not set: assuming a {}-bit {} kernel", info.bits_symbol,
                           is_64bit_ ? 64 : 32, info.name));
    }
    facts_["64BIT"] = is_64bit_;
    if (m_.arch == Arch::powerpc) {
        facts_["PPC64"] = is_64bit_;
        facts_["PPC32"] = !is_64bit_;
        if (auto b = cfg_.get_bool("PPC_BOOK3S_64")) {
            facts_["PPC_BOOK3S_64"] = *b;
        } else {
            bool book3s = is_64bit_ && !cfg_.get_bool("PPC_BOOK3E_64").value_or(false);
            facts_["PPC_BOOK3S_64"] = book3s;
            if (is_64bit_)
                assume(fmt::format("CONFIG_PPC_BOOK3S_64 not set: assuming {}",
                                   book3s ? "a Book3S-64 (POWER) kernel" : "a Book3E-64 kernel"));
        }
        // PPC_E500 was called PPC_FSL_BOOK3E before v6.2.
        if (!cfg_.contains("PPC_E500") && cfg_.get_bool("PPC_FSL_BOOK3E").value_or(false))
            facts_["PPC_E500"] = true;
    }
    if (m_.arch == Arch::x86 && cfg_.get_bool("HIGHMEM64G").value_or(false))
        facts_["X86_PAE"] = true;
    if (m_.arch == Arch::mips && !cfg_.contains("CPU_SUPPORTS_HUGEPAGES")) {
        facts_["CPU_SUPPORTS_HUGEPAGES"] = is_64bit_;
        assume(fmt::format("CONFIG_CPU_SUPPORTS_HUGEPAGES not set: assuming the CPU {} huge pages "
                           "(as 64-bit MIPS CPUs do)",
                           is_64bit_ ? "supports" : "does not support"));
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
            if (cfg_.get_bool(r->symbol).value_or(false))
                selected.emplace_back(r, entry(r->symbol));
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
            // The arch's choice is not in the config: the generic symbols Kconfig derives from it
            // (≥ v6.10) still say which it was.
            for (const auto& g : rules::generic_page_sizes()) {
                if (!cfg_.get_bool(g.symbol).value_or(false)) continue;
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
                    rule =
                        fmt::format("choice default CONFIG_{} → PAGE_SHIFT {}", r->symbol, shift);
                    source = r->source;
                    assume(fmt::format("no page size selected: using the {} default CONFIG_{} "
                                       "({} KiB pages, {})",
                                       to_string(m_.arch), r->symbol, (1 << shift) / 1024,
                                       r->source));
                    break;
                }
            }
        }
    }
    if (shift == 0) {
        error({}, "cannot tell the page size");
        return false;
    }
    m_.page_shift = shift;
    m_.page_size = std::uint64_t{1} << shift;

    // Cross-check the symbols Kconfig derives from the choice (≥ v6.10); a stale value left by
    // an earlier file is recomputed by olddefconfig, so it only earns a warning.
    if (page_size_entry_) {
        for (const auto& g : rules::generic_page_sizes()) {
            const auto* e = entry(g.symbol);
            if (e && e != page_size_entry_ && cfg_.get_bool(g.symbol).value_or(false) &&
                g.page_shift != shift)
                warn(e->where,
                     fmt::format("CONFIG_{}=y disagrees with CONFIG_{}={}: Kconfig "
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
    for (const auto& r : rules::huge_geometry()) {
        if (r.arch == m_.arch && r.versions.contains(m_.version) && holds(r.when)) {
            geometry_ = &r;
            break;
        }
    }
    bool hugetlb_possible = geometry_ && geometry_->hugetlb.kind != rules::OrderSpec::Kind::none;
    bool thp_possible = geometry_ && geometry_->pmd.kind != rules::OrderSpec::Kind::none;

    // HUGETLB_PAGE is `def_bool HUGETLBFS` (fs/Kconfig): HUGETLBFS is what users set.
    hugetlb_entry_ = entry("HUGETLBFS");
    if (!hugetlb_entry_) hugetlb_entry_ = entry("HUGETLB_PAGE");
    bool hugetlb_wanted = false;
    if (hugetlb_entry_) {
        hugetlb_wanted = cfg_.get_bool(hugetlb_entry_->name).value_or(false);
    } else {
        assume("CONFIG_HUGETLBFS not set: Kconfig default n (fs/Kconfig), so no HugeTLB pages");
    }
    if (hugetlb_wanted && !hugetlb_possible) {
        warn(hugetlb_entry_->where,
             fmt::format("CONFIG_{}=y but this {} configuration has no HugeTLB support ({}): "
                         "Kconfig drops it",
                         hugetlb_entry_->name, to_string(m_.arch),
                         geometry_ ? geometry_->source : "no rule"));
    }
    m_.hugetlb = hugetlb_wanted && hugetlb_possible;

    thp_entry_ = entry("TRANSPARENT_HUGEPAGE");
    bool thp_wanted = false;
    if (thp_entry_) {
        thp_wanted = cfg_.get_bool("TRANSPARENT_HUGEPAGE").value_or(false);
    } else {
        assume("CONFIG_TRANSPARENT_HUGEPAGE not set: Kconfig default n (mm/Kconfig)");
    }
    if (thp_wanted && !thp_possible) {
        warn(thp_entry_->where,
             fmt::format("CONFIG_TRANSPARENT_HUGEPAGE=y but this {} configuration has no "
                         "HAVE_ARCH_TRANSPARENT_HUGEPAGE ({}): Kconfig drops it",
                         to_string(m_.arch), geometry_ ? geometry_->source : "no rule"));
    }
    bool rt = cfg_.get_bool("PREEMPT_RT").value_or(false);
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

    std::vector<StepInput> hin;
    if (hugetlb_entry_)
        hin.push_back(input(*hugetlb_entry_));
    else
        hin.push_back(assumed("HUGETLBFS", "n"));
    step("hugetlb", m_.hugetlb ? 1 : 0,
         hugetlb_possible ? "HUGETLB_PAGE = HUGETLBFS (def_bool)"
                          : "HUGETLB_PAGE = n (the arch does not select ARCH_SUPPORTS_HUGETLBFS)",
         source_text("fs/Kconfig", rules::all_versions()), std::move(hin));
    std::vector<StepInput> tin;
    if (thp_entry_)
        tin.push_back(input(*thp_entry_));
    else
        tin.push_back(assumed("TRANSPARENT_HUGEPAGE", "n"));
    step("thp", m_.thp ? 1 : 0,
         thp_possible ? "TRANSPARENT_HUGEPAGE, depends on HAVE_ARCH_TRANSPARENT_HUGEPAGE && "
                        "!PREEMPT_RT"
                      : "TRANSPARENT_HUGEPAGE = n (no HAVE_ARCH_TRANSPARENT_HUGEPAGE)",
         source_text("mm/Kconfig", rules::all_versions()), std::move(tin));
}

void Deriver::resolve_max_order() {
    definition_ = find_row(rules::max_order_definitions(), m_.version);
    const rules::MaxOrderKconfigRow* kc = nullptr;
    for (const auto& r : rules::max_order_kconfig()) {
        if (r.arch == m_.arch && r.versions.contains(m_.version)) {
            kc = &r;
            break;
        }
    }
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
    int raw = def;
    std::vector<StepInput> inputs;
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

    // mmzone.h: "#error Allocator MAX_ORDER exceeds SECTION_SIZE" (SPARSEMEM only).
    bool sparsemem =
        rules::info(m_.arch).always_sparsemem || cfg_.get_bool("SPARSEMEM").value_or(false);
    for (const auto& s : rules::section_sizes()) {
        if (s.arch != m_.arch || !s.versions.contains(m_.version) || !holds(s.when)) continue;
        m_.section_size_bits = s.bits;
        if (sparsemem && mpo + m_.page_shift > s.bits)
            warn(e ? e->where : Location{},
                 fmt::format("max order {} + PAGE_SHIFT {} exceeds SECTION_SIZE_BITS {} ({}): "
                             "such a kernel does not build (\"Allocator MAX_ORDER exceeds "
                             "SECTION_SIZE\", include/linux/mmzone.h)",
                             mpo, m_.page_shift, s.bits, s.source),
                 "kernel-config-range");
        break;
    }

    std::string rule = fmt::format(fmt::runtime(definition_->rule), fmt::arg("sym", spelling));
    std::string source = source_text(definition_->source, definition_->versions);
    if (kc && kc->symbol) source += "; " + where_defined;
    step("max_page_order", mpo, std::move(rule), std::move(source), std::move(inputs));
}

void Deriver::resolve_page_block_option() {
    const auto* row = find_row(rules::page_block_options(), m_.version);
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

void Deriver::resolve_pageblock_order() {
    using C = rules::PageblockCase;
    using O = rules::Operand;
    bool variable =
        geometry_ && (geometry_->hugetlb.kind == rules::OrderSpec::Kind::runtime_shifts ||
                      geometry_->hugetlb.kind == rules::OrderSpec::Kind::runtime_orders);
    C which = m_.hugetlb ? (variable ? C::hugetlb_variable : C::hugetlb_fixed)
              : m_.thp   ? C::thp_only
                         : C::neither;
    const rules::PageblockRow* row = nullptr;
    for (const auto& r : rules::pageblock_rules())
        if (r.versions.contains(m_.version) && r.which == which) row = &r;
    if (!row) {
        error({}, fmt::format("no pageblock rule for {}", m_.version.str()));
        return;
    }

    auto operand = [&](O o) -> std::optional<OrderRange> {
        if (o == O::max_order && pbo_backport_) o = O::page_block_option;
        switch (o) {
        case O::hugetlb_order: {
            auto r = order_of(geometry_->hugetlb, m_.page_shift, mmu_choices());
            step("hugetlb_page_order",
                 r && !r->runtime ? std::optional<long long>(r->lo) : std::nullopt,
                 r && r->runtime
                     ? fmt::format("{} → {}..{}", geometry_->hugetlb.formula, r->lo, r->hi)
                     : geometry_->hugetlb.formula,
                 source_text(geometry_->source, geometry_->versions),
                 page_size_entry_ ? std::vector<StepInput>{input(*page_size_entry_)}
                                  : std::vector<StepInput>{});
            return r;
        }
        case O::pmd_order: {
            auto r = order_of(geometry_->pmd, m_.page_shift, mmu_choices());
            step("hpage_pmd_order",
                 r && !r->runtime ? std::optional<long long>(r->lo) : std::nullopt,
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
    };
    auto a = operand(row->formula.a);
    std::optional<OrderRange> b;
    if (row->formula.min_with) b = operand(*row->formula.min_with);
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

    // CMA alignment.
    const auto* cma = find_row(rules::cma_alignment_rules(), m_.version);
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
            m_.page_size, *cma_order, human_bytes(*m_.cma_min_alignment_bytes),
            m_.pageblock_order_range->first, m_.pageblock_order_range->second, m_.max_page_order);
    else if (m_.cma_min_alignment_bytes)
        cma_rule += fmt::format(" = {} << {} = {}", m_.page_size, *cma_order,
                                human_bytes(*m_.cma_min_alignment_bytes));
    else if (m_.pageblock_order_range) {
        auto [lo, hi] = *m_.pageblock_order_range;
        if (cma->max_with_max_order) {
            lo = std::max(lo, m_.max_page_order);
            hi = std::max(hi, m_.max_page_order);
        }
        cma_rule += fmt::format(" → {}..{} once pageblock_order is set at boot (PAGE_SIZE until "
                                "then, for code that runs before sparse_init())",
                                human_bytes(m_.page_size << lo), human_bytes(m_.page_size << hi));
    }
    step("cma_min_alignment_bytes",
         m_.cma_min_alignment_bytes
             ? std::optional<long long>(static_cast<long long>(*m_.cma_min_alignment_bytes))
             : std::nullopt,
         std::move(cma_rule), source_text(cma->source, cma->versions, cma->note), {});
}

void Deriver::resolve_cma() {
    // A full .config (kconfig's header) or a Kconfig evaluation lists every visible symbol, so an
    // absent CMA there is n. A defconfig or fragment leaves CMA and DMA_CMA to Kconfig, where
    // `select` often turns them on (drivers/gpu/drm/etnaviv/Kconfig: select DMA_CMA): assuming n
    // would hide every finding on a CMA pool, so they are assumed y (issue 7, item 5).
    std::vector<StepInput> inputs;
    bool complete = complete_config();
    if (const auto* e = entry("CMA")) {
        m_.cma = cfg_.get_bool("CMA").value_or(false);
        inputs.push_back(input(*e));
    } else if (complete) {
        m_.cma = false;
        inputs.push_back(assumed("CMA", "n"));
        assume("CONFIG_CMA not set: Kconfig default n (mm/Kconfig), so the kernel creates no CMA "
               "areas");
    } else {
        m_.cma = true;
        m_.cma_assumed = true;
        inputs.push_back(assumed("CMA", "y"));
        assume("CONFIG_CMA not in the inputs (a defconfig or fragment): assumed y, so that "
               "reusable shared-dma-pool regions are checked as CMA pools");
    }
    if (m_.cma) {
        if (const auto* e = entry("DMA_CMA")) {
            m_.dma_cma = cfg_.get_bool("DMA_CMA").value_or(false);
            inputs.push_back(input(*e));
        } else if (complete) {
            m_.dma_cma = false;
            assume("CONFIG_DMA_CMA not set: Kconfig default n (kernel/dma/Kconfig), so "
                   "shared-dma-pool regions do not become CMA areas");
        } else {
            m_.dma_cma = true;
            m_.dma_cma_assumed = true;
            inputs.push_back(assumed("DMA_CMA", "y"));
            assume("CONFIG_DMA_CMA not in the inputs (a defconfig or fragment): assumed y, so "
                   "that reusable shared-dma-pool regions are checked as CMA pools");
        }
    }
    if (auto b = cfg_.get_bool("DMA_DECLARE_COHERENT"))
        m_.dma_declare_coherent = *b;
    else if (complete)
        m_.dma_declare_coherent = false;
    const auto* row = find_row(rules::cma_areas_rules(), m_.version);
    if (m_.cma) {
        int areas = 0;
        const auto* e = entry("CMA_AREAS");
        if (e && parse_int(e->value)) {
            areas = static_cast<int>(*parse_int(e->value));
            inputs.push_back(input(*e));
        } else {
            bool numa = cfg_.get_bool("NUMA").value_or(false);
            areas = numa ? row->default_numa : row->default_uma;
            if (e) warn(e->where, fmt::format("{}: {}", kconfig_invalid(*e), areas));
            inputs.push_back(assumed("CMA_AREAS", std::to_string(areas)));
            assume(
                fmt::format("CONFIG_CMA_AREAS not set: using its default {} ({}; mm/Kconfig, {})",
                            areas, numa ? "NUMA" : "no NUMA", row->versions.str()));
        }
        m_.cma_areas = row->plus + areas;
    } else {
        m_.cma_areas = 0;
    }
    step("cma_areas", m_.cma_areas, m_.cma ? row->rule : "MAX_CMA_AREAS = 0 (no CONFIG_CMA)",
         source_text(row->source, row->versions, row->note), std::move(inputs));

    // phys_addr_t: PHYS_ADDR_T_64BIT = 64BIT || ARCH_PHYS_ADDR_T_64BIT (mm/Kconfig).
    if (auto b = cfg_.get_bool("PHYS_ADDR_T_64BIT")) {
        m_.phys_addr_64bit = *b;
    } else {
        m_.phys_addr_64bit = is_64bit_ || lookup("ARM_LPAE").value_or(false) ||
                             lookup("X86_PAE").value_or(false) ||
                             lookup("PHYS_64BIT").value_or(false) ||
                             lookup("ARCH_PHYS_ADDR_T_64BIT").value_or(false);
    }
}

// One note, once per configuration, when a defconfig or fragment left deciding symbols to
// assumptions: which ones and how to get the exact answer.
void Deriver::note_assumed_inputs() {
    if (complete_config()) return;
    std::vector<std::string> guesses;
    for (const auto& done : m_.derivation)
        for (const auto& in : done.inputs) {
            if (in.where.known()) continue;
            auto text = fmt::format("{}={}", in.symbol, in.value);
            if (std::find(guesses.begin(), guesses.end(), text) == guesses.end())
                guesses.push_back(std::move(text));
        }
    if (guesses.empty()) return;
    std::string list;
    for (const auto& a : guesses)
        list += (list.empty() ? "" : ", ") + a;
    Diagnostic d;
    d.severity = Severity::note;
    d.check = "kernel-config-assumed";
    d.message = fmt::format(
        "the configuration is a defconfig or fragment and no kernel tree was given: assumed {}{}; "
        "for the values the kernel's Kconfig gives, pass --kernel-tree <linux source> (or run "
        "inside the tree)",
        list,
        m_.cma_assumed || m_.dma_cma_assumed
            ? fmt::format(" ({} assumed on, so reusable shared-dma-pool regions are checked as "
                          "CMA pools)",
                          m_.cma_assumed ? "CMA and DMA_CMA" : "DMA_CMA")
            : std::string());
    m_.diagnostics.push_back(d);
    diags_.add(std::move(d));
}

std::optional<Model> Deriver::run() {
    if (!resolve_arch()) return std::nullopt;
    if (!resolve_version()) return std::nullopt;
    resolve_bits();
    if (!resolve_page_size()) return std::nullopt;
    resolve_huge_pages();
    resolve_max_order();
    resolve_page_block_option();
    resolve_pageblock_order();
    if (failed_) return std::nullopt;
    resolve_cma();
    if (failed_) return std::nullopt;
    note_assumed_inputs();
    return std::move(m_);
}

} // namespace

std::optional<Model> derive(const kconfig::Config& config, const Options& options,
                            Diagnostics& diags) {
    Deriver d(config, options, diags);
    return d.run();
}

} // namespace cmalign::kernel
