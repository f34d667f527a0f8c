// derive(): the Deriver's order of steps, the arch, version and bitness steps, and the note on
// assumed inputs. Every version or arch fact comes from the rule tables (rules.cpp); the few arch
// quirks Kconfig spells outside them (powerpc's boot-time MMU, mips huge page support) are
// written where they are used and say so.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "cmalign/internal/kernel/arch.hpp"
#include "cmalign/internal/kernel/deriver.hpp"
#include "cmalign/kernel/versions.hpp"

namespace cmalign::kernel::detail {

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

std::string source_text(const char* file, const VersionRange& versions, const char* note) {
    std::string s = fmt::format("{} ({}", file, versions.str());
    std::string read;
    for (const auto& tree : read_trees())
        if (versions.contains(tree))
            read += fmt::format("{}{}", read.empty() ? "" : ", ", tree.str());
    if (!read.empty()) s += fmt::format("; read in {}", read);
    if (note && *note) s += fmt::format("; {}", note);
    return s + ")";
}

std::optional<OrderRange> order_of(const rules::OrderSpec& spec, int page_shift,
                                   RuntimeChoices open) {
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
                                  "cmalign models {}",
                                  *cfg_.header_arch, arch_names_list("and")));
            return false;
        }
        // The header says "x86" for 32- and 64-bit builds alike.
        if (*a == Arch::x86 && (flag("X86_64").value_or(false) || flag("64BIT").value_or(false)))
            a = Arch::x86_64;
        m_.arch = *a;
        return true;
    }
    if (auto found = arch_from_symbols([&](const char* symbol) { return flag(symbol); })) {
        const auto* e = entry(found->symbol);
        m_.arch = found->arch;
        assume(fmt::format("architecture not given: {} from CONFIG_{}={} ({})",
                           to_string(found->arch), e->name, e->value, place(e->where)));
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
    if (auto outside = outside_modelled_range(*v)) { // the policy every command shares
        if (outside->error) {
            error({}, outside->message);
            return false;
        }
        warn({}, outside->message);
        assume(fmt::format("kernel {} treated with the rules of {}", v->str(),
                           newest_modelled_version().str()));
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
    } else if (auto b = flag(info.bits_symbol)) {
        is_64bit_ = *b;
    } else if (auto b32 = flag(info.bits32_symbol)) {
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
        if (auto b = flag("PPC_BOOK3S_64")) {
            facts_["PPC_BOOK3S_64"] = *b;
        } else {
            bool book3s = is_64bit_ && !flag("PPC_BOOK3E_64").value_or(false);
            facts_["PPC_BOOK3S_64"] = book3s;
            if (is_64bit_)
                assume(fmt::format("CONFIG_PPC_BOOK3S_64 not set: assuming {}",
                                   book3s ? "a Book3S-64 (POWER) kernel" : "a Book3E-64 kernel"));
        }
        // PPC_E500 was called PPC_FSL_BOOK3E before v6.2.
        if (!cfg_.contains("PPC_E500") && flag("PPC_FSL_BOOK3E").value_or(false))
            facts_["PPC_E500"] = true;
    }
    if (m_.arch == Arch::x86 && flag("HIGHMEM64G").value_or(false)) facts_["X86_PAE"] = true;
    if (m_.arch == Arch::mips && !cfg_.contains("CPU_SUPPORTS_HUGEPAGES")) {
        facts_["CPU_SUPPORTS_HUGEPAGES"] = is_64bit_;
        assume(fmt::format("CONFIG_CPU_SUPPORTS_HUGEPAGES not set: assuming the CPU {} huge pages "
                           "(as 64-bit MIPS CPUs do)",
                           is_64bit_ ? "supports" : "does not support"));
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

bool Deriver::run_steps() {
    if (!resolve_arch()) return false;
    if (!resolve_version()) return false;
    resolve_bits();
    if (!resolve_page_size()) return false;
    resolve_huge_pages();
    resolve_max_order();
    resolve_page_block_option();
    resolve_pageblock_order();
    if (failed_) return false;
    resolve_cma();
    if (failed_) return false;
    resolve_image();
    note_assumed_inputs();
    return true;
}

void Deriver::report_not_bool() {
    for (const auto& name : not_bool_) {
        const auto& e = *cfg_.find(name);
        // scripts/kconfig/confdata.c conf_set_sym_val() (6.1, 6.12): a bool/tristate value
        // must start with y, m or n. From a file that is kconfig's warning; given on the command
        // line or in a request it is a mistake that would change the answer, so an error.
        auto message = fmt::format("CONFIG_{}={}: a bool symbol takes y, m or n; kconfig prints "
                                   "\"symbol value '{}' invalid for {}\" and keeps the default",
                                   e.name, e.value, e.value, e.name);
        if (e.where.file == "--set")
            error(e.where, std::move(message));
        else
            warn(e.where, std::move(message));
    }
}

std::optional<Model> Deriver::run() {
    bool ok = run_steps();
    report_not_bool();
    if (!ok || failed_) return std::nullopt;
    return std::move(m_);
}

} // namespace cmalign::kernel::detail

namespace cmalign::kernel {

std::optional<Model> derive(const kconfig::Config& config, const Options& options,
                            Diagnostics& diags) {
    detail::Deriver d(config, options, diags);
    return d.run();
}

} // namespace cmalign::kernel
