// `cmalign suggest`: configuration changes that make the pools valid without growing them.
//
// Every candidate is a modified kconfig::Config run through kernel::derive(); nothing here knows
// a kernel rule. The knobs tried come from the rule tables (which page sizes the arch offers,
// whether ARCH_FORCE_MAX_ORDER has a prompt, which PAGE_BLOCK_(MAX_)ORDER spelling the version
// has); whether a knob helps, and what alignment results, is always derive()'s answer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"
#include "cmalign/reserved/regions.hpp"

namespace cmalign::fix {

// The largest power of two that divides every CMA pool's size and (static) base: the largest
// CMA alignment under which all of them are valid. nullopt when there is no CMA pool.
std::optional<std::uint64_t> needed_alignment(std::span<const reserved::Reservations> trees);

// The largest power of two dividing `value` (its lowest set bit); 0 for 0.
std::uint64_t largest_power_of_two_dividing(std::uint64_t value);

struct Suggestion {
    std::vector<std::pair<std::string, std::string>> changes; // "CONFIG_X" → "7" / "y" / "n"
    std::uint64_t cma_min_alignment_bytes = 0;
    int pageblock_order = 0;
    std::uint64_t page_size = 0;
    std::string note;     // what it costs, in words
    bool upstream = true; // false: only vendor kernels offer this knob
};

struct SuggestResult {
    std::uint64_t needed_alignment = 0;
    std::optional<std::uint64_t> current_alignment; // of the unmodified configuration
    bool already_valid = false;
    std::vector<Suggestion> suggestions; // best first
    std::vector<std::string> notes;      // e.g. why no configuration of this version helps
};

// nullopt (and errors in diags) when the unmodified configuration cannot be derived.
std::optional<SuggestResult> suggest(const kconfig::Config& config, const kernel::Options& options,
                                     std::uint64_t needed_alignment, Diagnostics& diags);

} // namespace cmalign::fix
