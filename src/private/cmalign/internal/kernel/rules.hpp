// The kernel's rules for page size, max order, pageblock_order and CMA alignment, as data.
//
// Every table row is keyed by kernel version range (and arch where it matters) and names the
// kernel source file it was read from. derive() (src/kernel/derive*.cpp) walks these rows; it
// holds no version or arch knowledge of its own. Facts come from the Debian 6.1.192 / 6.12.117
// kernel trees and mainline history (docs/architecture.md); boundaries not confirmed in a tagged
// tree say [likely] in `note`.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "cmalign/core/version.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::kernel::rules {

constexpr VersionRange all_versions() {
    return {0, 0, 99, 99};
}
constexpr VersionRange since(int major, int minor) {
    return {major, minor, 99, 99};
}
constexpr VersionRange until(int major, int minor) {
    return {0, 0, major, minor};
}
constexpr VersionRange between(int first_major, int first_minor, int last_major, int last_minor) {
    return {first_major, first_minor, last_major, last_minor};
}

// The one lookup of every version-keyed table: the first row whose range holds `v` and that
// `also` accepts (same arch, same pageblock case, ...); nullptr when none does. The rows of one
// key never overlap (tests/kernel/rules_find_test.cpp checks every table), so the first match is
// the only one. Where several rows of one key may match on purpose, the order of the table is the
// precedence and the table says so ("first matching row wins": huge_geometry(), section_sizes(),
// the `When` lists of a row), as Kconfig takes the first `default` whose condition holds.
template <class Row, class Also>
const Row* find(std::span<const Row> rows, const KernelVersion& v, Also also) {
    for (const auto& r : rows)
        if (r.versions.contains(v) && also(r)) return &r;
    return nullptr;
}
template <class Row> const Row* find(std::span<const Row> rows, const KernelVersion& v) {
    return find(rows, v, [](const Row&) { return true; });
}
// For the tables whose rows carry an arch.
template <class Row> const Row* find(std::span<const Row> rows, Arch arch, const KernelVersion& v) {
    return find(rows, v, [arch](const Row& r) { return r.arch == arch; });
}

// A Kconfig-style condition: every term must hold, and the page size must match when given.
// `symbol` has no CONFIG_ prefix. Symbols derive() knows better than the config (64BIT,
// TRANSPARENT_HUGEPAGE, PAGE_SIZE_16KB, ...) are looked up in its derived facts first.
struct Term {
    const char* symbol;
    bool want = true;
};
struct When {
    int page_shift = 0; // 0: any page size
    std::vector<Term> terms;
};

// One option of the arch's page size choice (or the only size, when `symbol` is nullptr).
struct PageSizeRow {
    Arch arch;
    VersionRange versions;
    const char* symbol; // "ARM64_16K_PAGES"
    int page_shift;
    std::optional<When> default_if; // the first row whose condition holds is the choice default
    const char* source;
};

// Where the max order comes from in Kconfig: FORCE_MAX_ZONEORDER (≤ v6.0) or
// ARCH_FORCE_MAX_ORDER (≥ v6.1). Values are raw Kconfig numbers (exclusive ≤ v6.3).
struct CondValue {
    When when;
    int value;
};
struct CondRange {
    When when;
    int lo;
    int hi;
};
struct MaxOrderKconfigRow {
    Arch arch;
    VersionRange versions;
    const char* symbol; // nullptr: the arch does not define it (generic default applies)
    bool prompt;        // users can set it (upstream)
    std::vector<CondValue> defaults; // first match wins, as in Kconfig
    std::vector<CondRange> ranges;   // first match wins, as in Kconfig
    std::vector<CondValue>
        vendor_largest; // `table`'s "largest allowed" where upstream has no prompt
    const char* source;
    const char* note; // "" or a caveat ("[likely]", "[unverified]")
};

// include/linux/mmzone.h: how the Kconfig value becomes the (inclusive) max order.
struct MaxOrderDefinitionRow {
    VersionRange versions;
    bool exclusive;       // MAX_ORDER counts one past the largest order (≤ v6.3)
    int generic_default;  // raw value when the arch defines no symbol
    const char* rule;     // "MAX_PAGE_ORDER = CONFIG_ARCH_FORCE_MAX_ORDER (else 10)"
    const char* mpo_name; // how the version spells the inclusive max order in formulas
    const char* source;
};

// HUGETLB_PAGE_ORDER or HPAGE_PMD_ORDER of an arch.
struct OrderSpec {
    enum class Kind {
        none,               // not available on this arch/config
        page_shift_minus_3, // PMD_SHIFT - PAGE_SHIFT with 8-byte entries: PAGE_SHIFT - 3
        fixed_shift,        // HPAGE_SHIFT = a: order a - PAGE_SHIFT
        runtime_shifts,     // decided at boot: HPAGE_SHIFT a or b
        runtime_orders,     // decided at boot: order a or b
    };
    Kind kind = Kind::none;
    int a = 0;
    int b = 0;
    const char* formula = "";
};

struct HugeGeometryRow {
    Arch arch;
    VersionRange versions;
    When when;         // first matching row wins
    OrderSpec hugetlb; // none: ARCH_SUPPORTS_HUGETLBFS not selected
    OrderSpec pmd;     // none: HAVE_ARCH_TRANSPARENT_HUGEPAGE not selected
    const char* source;
};

// include/linux/pageblock-flags.h
enum class PageblockCase { hugetlb_variable, hugetlb_fixed, thp_only, neither };
enum class Operand { hugetlb_order, pmd_order, max_order, page_block_option };
struct Formula {
    Operand a;
    std::optional<Operand> min_with; // pageblock_order = min(a, min_with)
};
struct PageblockRow {
    VersionRange versions;
    PageblockCase which;
    Formula formula;
    const char* rule;
    const char* source;
    const char* note;
};

// include/linux/cma.h and its callers.
struct CmaAlignmentRow {
    VersionRange versions;
    bool max_with_max_order; // PAGE_SIZE << max(MPO, pageblock_order)
    const char* rule;
    const char* source;
    const char* note;
};

// CONFIG_PAGE_BLOCK_ORDER (v6.16) / CONFIG_PAGE_BLOCK_MAX_ORDER (≥ v6.17), mm/Kconfig.
struct PageBlockOptionRow {
    VersionRange versions;
    const char* symbol;
    const char* macro; // PAGE_BLOCK_ORDER / PAGE_BLOCK_MAX_ORDER (include/linux/mmzone.h)
    const char* source;
    const char* note;
};
// Both spellings, newest first; a config may carry either (vendor backports, stale configs).
std::span<const char* const> page_block_option_symbols();

// MAX_CMA_AREAS
struct CmaAreasRow {
    VersionRange versions;
    int plus;         // MAX_CMA_AREAS = plus + CONFIG_CMA_AREAS
    int default_numa; // CONFIG_CMA_AREAS default if NUMA
    int default_uma;
    const char* rule;
    const char* source;
    const char* note;
};

// SECTION_SIZE_BITS (arch/*/include/asm/sparsemem.h): mmzone.h's
// `#error Allocator MAX_ORDER exceeds SECTION_SIZE` needs MPO + PAGE_SHIFT <= SECTION_SIZE_BITS.
struct SectionSizeRow {
    Arch arch;
    VersionRange versions;
    When when;
    int bits;
    const char* source;
};

// What kconfig does with a user's int outside the symbol's `range` (scripts/kconfig).
// Up to v6.7 conf_read() forgot the value ("Reset a string value if it's out of range") and the
// default applied; from "kconfig: do not clear SYMBOL_DEF_USER when the value is out of range"
// (Masahiro Yamada, Nov 2023, [likely v6.8]) the value is kept and sym_validate_range() clamps it
// to the nearer bound. The boundary is the kconfig layer's row (kconfig::dialect_rows()).
enum class OutOfRange { use_default, clamp_to_bound };
struct KconfigRangeRow {
    VersionRange versions;
    OutOfRange behaviour;
    const char* source;
    const char* note;
};

// The one table of arches (src/kernel/arch.cpp): every name a user may type for one, the make
// ARCH it stands for (whose arch/<SRCARCH> directory kconfig::srcarch_of() gives, as the top
// Makefile does), the Kconfig symbols that reveal it in a config without a header, its word size,
// its zones and its quirks. Everything else asks this table (parse_arch(), make_arch(),
// arch_dir(), arch_from_symbols(), configured_zones(), derive()).

// A name of an arch as users type it (--arch, ARCH=, a .config header's "Linux/<arch>"), and the
// make ARCH it means.
struct ArchName {
    const char* name;      // lower case
    const char* make_arch; // ARCH= for make (x86's "x86" and "i386" both name the 32-bit arch)
};

// A symbol only the arch's own Kconfig defines: a config that sets it (and `also`) is of the arch.
struct ArchSymbol {
    const char* symbol;
    std::optional<Term> also; // e.g. X86 needs 64BIT to be x86_64
    const char* make_arch;    // the make ARCH such a config was written for
};

struct ArchInfo {
    Arch arch;
    const char* name;                // as docs/cli.md spells it
    std::vector<ArchName> names;     // the name first, then the aliases
    std::vector<ArchSymbol> symbols; // tried in table order, arch by arch: first match wins
    VersionRange versions;           // which kernels have it (loongarch: ≥ v5.19)
    std::optional<bool> is_64bit;    // nullopt: a config choice (64BIT / PPC64)
    const char* bits_symbol;         // the symbol that says 64-bit when is_64bit is nullopt
    const char* bits32_symbol;       // the one that says 32-bit (64BIT has no "is not set" line)
    bool default_64bit;              // assumed when bits_symbol is absent
    bool always_sparsemem;
    // mm/Kconfig: ZONE_DMA "default y if ARM64 || X86"; ZONE_DMA32 "default y if ARM64",
    // selected by x86_64, riscv64 and loongarch.
    bool zone_dma_default;
    bool zone_dma32_default;
    // kernel/dma/coherent.c rmem_dma_setup(): `#ifdef CONFIG_ARM` a non-reusable pool without
    // no-map is refused ("regions without no-map are not yet supported"; 6.1 and 6.12).
    bool coherent_needs_no_map = false;
};

std::span<const PageSizeRow> page_sizes();
// Generic page size symbols (arch/Kconfig, ≥ v6.10) and CONFIG_PAGE_SHIFT: derived by Kconfig
// from the arch's choice, used as a fallback and a cross-check.
std::span<const PageSizeRow> generic_page_sizes();
std::span<const MaxOrderKconfigRow> max_order_kconfig();
std::span<const MaxOrderDefinitionRow> max_order_definitions();
std::span<const HugeGeometryRow> huge_geometry();
std::span<const PageblockRow> pageblock_rules();
std::span<const CmaAlignmentRow> cma_alignment_rules();
std::span<const PageBlockOptionRow> page_block_options();
std::span<const CmaAreasRow> cma_areas_rules();
std::span<const SectionSizeRow> section_sizes();
std::span<const KconfigRangeRow> kconfig_range_rules();
const KconfigRangeRow& kconfig_range_rule(const KernelVersion& version);
std::span<const ArchInfo> arch_infos();

const ArchInfo& info(Arch arch);
// The arch a name (any case) stands for, and the name's row; nullptr when no arch has it.
const ArchInfo* info_of_name(std::string_view name, const ArchName** which = nullptr);

} // namespace cmalign::kernel::rules
