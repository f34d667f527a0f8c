// The /reserved-memory parsing rules per kernel version (kernel/reserved_mem.hpp).
#include "cmalign/kernel/reserved_mem.hpp"

#include <array>

#include "cmalign/kernel/rules.hpp"

namespace cmalign::kernel {
namespace {

constexpr std::array<ReservedMemRules, 3> rows{{
    {rules::until(6, 11), "OF: fdt: ", false, false,
     "drivers/of/fdt.c __reserved_mem_reserve_reg(), drivers/of/of_reserved_mem.c (6.1.192)"},
    {rules::between(6, 12, 6, 18), "OF: reserved mem: ", true, false,
     "drivers/of/of_reserved_mem.c fdt_scan_reserved_mem_reg_nodes() (v6.13 restructure, "
     "backported to 6.12.y; 6.12.117)"},
    {rules::since(6, 19), "OF: reserved mem: ", true, true,
     "drivers/of/of_reserved_mem.c with of_flat_dt_get_addr_size_prop() (≥ v6.19 [likely])"},
}};

} // namespace

bool coherent_pool_needs_no_map(Arch arch) {
    return rules::info(arch).coherent_needs_no_map;
}

std::span<const ReservedMemRules> reserved_mem_rows() {
    return rows;
}

const ReservedMemRules& reserved_mem_rules(const KernelVersion& version) {
    return *rules::find(reserved_mem_rows(), version);
}

} // namespace cmalign::kernel
