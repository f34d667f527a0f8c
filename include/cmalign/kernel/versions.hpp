// Which kernel versions and page sizes the model covers, and how a configuration is moved to
// another version or page size the way that version's Kconfig would see it (`check --sweep-*`).
//
// Everything here comes from the rule tables (rules.hpp): which releases exist between the
// oldest and newest modelled version, where a rule row starts, which symbols form the arch's
// page size choice, and which spelling of a versioned symbol a release has.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/version.hpp"
#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::kernel {

// The newest kernel whose rules the tool models; used when nothing says which kernel.
KernelVersion newest_modelled_version();
// The oldest kernel the tables cover.
KernelVersion oldest_modelled_version();

// The one policy for a kernel version outside the modelled range, shared by every command
// (derive() for check/calc/fix/…, table_version() for `table`): older than the oldest modelled
// version is an error, since the tables do not reach back and every number would be a guess; newer
// than the newest is a warning, and the newest rules are used, assumed unchanged (a new kernel is
// usually checked before cmalign models it). nullopt inside the range (major.minor: 7.2.13 is
// inside a range that ends at 7.2).
struct OutsideModelledRange {
    bool error;          // older than the oldest (else: newer than the newest)
    std::string message; // "kernel 4.4 is older than the oldest modelled version (4.19)"
};
std::optional<OutsideModelledRange> outside_modelled_range(const KernelVersion& version);

// The kernel trees the rule tables were checked against, line by line (Debian's
// linux-source-5.10, -6.1, -6.12 and -7.2): a row whose range holds one of them names it as the
// tree it was read in.
std::span<const KernelVersion> read_trees();

// Every release (major.minor) from oldest_modelled_version() to newest_modelled_version(),
// oldest first: v4.19, v4.20, v5.0 … v5.19, v6.0 … v6.19, v7.0 … v7.2.
std::vector<KernelVersion> modelled_versions();

// Releases where a rule of `arch` changes (the first version of a table row that differs from
// the row before), oldest first. A sweep over these sees every change the model knows.
std::vector<KernelVersion> rule_boundaries(Arch arch);
// True when `later` is a later kernel than `earlier` and no rule of `arch` changes between
// their releases (patch levels ignored): a sweep's neighbouring cells then agree by
// construction.
bool same_rules(Arch arch, const KernelVersion& earlier, const KernelVersion& later);

// "6.1,6.6,6.12", "6.1..6.18" (every modelled release in between, both ends included),
// "boundaries" (rule_boundaries()), "all"; entries may mix. Versions with a patch level
// ("6.12.117") are kept as given. nullopt and an error on a malformed or unmodelled version.
std::optional<std::vector<KernelVersion>> parse_version_list(std::string_view text, Arch arch,
                                                             Diagnostics& diags);

// One option of the arch's page size choice in a version.
struct PageSizeChoice {
    int page_shift = 0;
    std::uint64_t page_size = 0;
    const char* symbol = nullptr; // nullptr: the arch has this one size only
};
std::vector<PageSizeChoice> page_size_choices(Arch arch, const KernelVersion& version);
// The symbols Kconfig derives from the page size choice and recomputes when it changes: the
// generic PAGE_SIZE_<n>KB of arch/Kconfig (≥ v6.10) that are not members of the arch's choice,
// and PAGE_SHIFT. A configuration moved to another page size drops them.
std::vector<std::string> derived_page_size_symbols(Arch arch, const KernelVersion& version);

// The Kconfig value of the max-order symbol (FORCE_MAX_ZONEORDER / ARCH_FORCE_MAX_ORDER) that
// gives the inclusive max page order `max_page_order` in `version`: one more where MAX_ORDER
// counts one past the largest order (≤ v6.3, include/linux/mmzone.h).
int max_order_kconfig_value(const KernelVersion& version, int max_page_order);

// "4K,16K,64K", "16384", "all" (every size the arch offers in some modelled version). nullopt
// and an error on a size that is not a power of two or that the arch never offers.
std::optional<std::vector<int>> parse_page_size_list(std::string_view text, Arch arch,
                                                     Diagnostics& diags);

// How one sweep cell's configuration differs from the one given.
struct Retarget {
    // --set assignments that switch the page size choice as a fragment must ("CONFIG_X=y" for
    // the chosen option, "=n" for the other members, and the generic symbols Kconfig derives).
    std::vector<std::string> sets;
    // Symbols the version's Kconfig does not have and would drop (olddefconfig), removed.
    std::vector<std::string> dropped;
    // One line per change, for the matrix and the JSON entry.
    std::vector<std::string> notes;
    // Empty when the version does not offer the page size.
    std::string unavailable;
};

// The configuration `config` of kernel `own_version` (nullopt: unknown) as kernel `version`
// with page size 1 << page_shift (nullopt: unchanged) would read it. Symbols renamed or added
// in other versions (CONFIG_PAGE_BLOCK_ORDER before v6.16 / as of v6.17, the max order's
// FORCE_MAX_ZONEORDER / ARCH_FORCE_MAX_ORDER) are dropped or reported ignored; a symbol is kept
// as written in the configuration's own version (a vendor kernel may have backported it).
Retarget retarget(const kconfig::Config& config, Arch arch, const KernelVersion& version,
                  std::optional<int> page_shift, std::optional<KernelVersion> own_version);

// Applies a Retarget: the sets (as --set would) and the drops.
bool apply_retarget(const Retarget& change, kconfig::Config& config, Diagnostics& diags);

} // namespace cmalign::kernel
