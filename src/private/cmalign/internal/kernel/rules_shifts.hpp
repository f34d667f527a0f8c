// Shorthands the rule tables (rules*.cpp) write their rows with. Private to src/kernel.
#pragma once

#include "cmalign/internal/kernel/rules.hpp"

namespace cmalign::kernel::rules::rows {

using K = OrderSpec::Kind;
// PAGE_SHIFT of 4K, 8K, 16K, 32K, 64K and 256K pages.
constexpr int k4 = 12, k8 = 13, k16 = 14, k32 = 15, k64 = 16, k256 = 18;

} // namespace cmalign::kernel::rules::rows
