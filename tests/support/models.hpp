// Kernel models written out by hand for tests (values from kernel-facts.md §10, computed by the
// compiler from the real 6.12.117 headers), so checks can be tested without the Kconfig layer.
#pragma once

#include "cmalign/kernel/model.hpp"

namespace cmalign::test {

inline kernel::Model arm64_612(std::uint64_t page_size = 16384) {
    kernel::Model m;
    m.version = *KernelVersion::parse("6.12.117");
    m.arch = kernel::Arch::arm64;
    m.page_size = page_size;
    m.page_shift = page_size == 4096 ? 12 : page_size == 16384 ? 14 : 16;
    m.max_page_order = page_size == 4096 ? 10 : page_size == 16384 ? 11 : 13;
    m.pageblock_order = page_size == 4096 ? 9 : m.max_page_order;
    m.cma_min_alignment_bytes = page_size << *m.pageblock_order;
    m.hugetlb = m.thp = m.cma = m.dma_cma = true;
    m.cma_areas = 20;
    return m;
}

} // namespace cmalign::test
