// How the checks word what the kernel prints: versions, %pa addresses, alignments, lost pools.
// The messages quote what the kernel prints (Debian 6.1.192 / 6.12.117 trees).
#include <fmt/format.h>

#include "cmalign/internal/core/amount.hpp"
#include "cmalign/internal/kernel/reserved_mem.hpp"
#include "internal.hpp"

namespace cmalign::checks {

std::string kernel_name(const kernel::Model& m) {
    return fmt::format("{} {}", kernel::to_string(m.arch), m.version.str());
}

std::string pa(std::uint64_t value, const kernel::Model& m) {
    return m.phys_addr_64bit ? fmt::format("0x{:016x}", value)
                             : fmt::format("0x{:08x}", static_cast<std::uint32_t>(value));
}

const char* parse_prefix(const kernel::Model& m) {
    return kernel::reserved_mem_rules(m.version).log_prefix;
}

std::string alignment_words(const kernel::Model& m, std::uint64_t alignment) {
    // Name the formula only when it is the one that produced the number: ≥ v5.19 uses
    // PAGE_SIZE << pageblock_order, earlier kernels PAGE_SIZE << max(MAX_ORDER - 1,
    // pageblock_order).
    if (m.pageblock_order && *m.pageblock_order < 64 &&
        m.page_size << *m.pageblock_order == alignment)
        return fmt::format("the CMA alignment {:#x} ({} = PAGE_SIZE {} << pageblock_order {}) "
                           "of {}",
                           alignment, format_size(alignment), format_size(m.page_size),
                           *m.pageblock_order, kernel_name(m));
    if (m.max_page_order > 0 && m.max_page_order < 64 &&
        m.page_size << m.max_page_order == alignment)
        return fmt::format("the CMA alignment {:#x} ({} = PAGE_SIZE {} << max order {}) of {}",
                           alignment, format_size(alignment), format_size(m.page_size),
                           m.max_page_order, kernel_name(m));
    return fmt::format("the CMA alignment {} of {}", amount(alignment), kernel_name(m));
}

std::string rejected_pool_words(const reserved::Region& r) {
    return fmt::format("the kernel prints \"Reserved memory: incorrect alignment of CMA region\" "
                       "and \"OF: reserved mem: node {} compatible matching fail\", then frees the "
                       "region: the pool is lost",
                       r.name);
}

bool active(const reserved::Region& r) {
    return r.kind != reserved::Kind::inactive;
}

Interval alloc_window(const kernel::Model& m, const reserved::Range& range) {
    auto whole = Interval::of(range.base, range.size);
    if (m.phys_addr_64bit) return whole;
    const std::uint64_t start = whole.begin & 0xffffffffu, end = whole.end & 0xffffffffu;
    return {start, std::max(start, end)};
}

IntervalSet ram_of(const std::vector<reserved::MemoryBank>& banks) {
    IntervalSet ram;
    for (const auto& b : banks)
        ram.add(Interval::of(b.range.base, b.range.size));
    return ram;
}

} // namespace cmalign::checks
