// dma-buf system heap chunk plans, derived by hand from system_heap.c (orders {8, 4, 0}, greedy,
// never going back up) and dma-heap.c (PAGE_ALIGN, zero length → -EINVAL).
#include <doctest/doctest.h>

#include "cmalign/calc/heap.hpp"

using namespace cmalign;
using namespace cmalign::calc;

namespace {

HeapPlan plan(std::uint64_t size, std::uint64_t page_size, int major, int minor,
              std::optional<int> available = std::nullopt, int max_order = 10) {
    HeapInput in;
    in.version = KernelVersion{major, minor, 0, false};
    in.page_size = page_size;
    in.max_page_order = max_order;
    in.size = size;
    in.available_order = available;
    std::string error;
    auto p = compute_heap(in, error);
    REQUIRE_MESSAGE(p, error);
    return *p;
}

std::uint64_t count(const HeapPlan& p, int order) {
    for (const auto& c : p.chunks)
        if (c.order == order) return c.count;
    FAIL("no such order");
    return 0;
}

bool reclaim(const HeapPlan& p, int order) {
    for (const auto& c : p.chunks)
        if (c.order == order) return c.reclaim;
    FAIL("no such order");
    return false;
}

constexpr std::uint64_t MiB = 1 << 20;

} // namespace

TEST_CASE("10 MiB on 4K pages: ten order-8 (1 MiB) chunks") {
    auto p = plan(10 * MiB, 4096, 6, 12);
    CHECK(p.orders == std::vector<int>{8, 4, 0});
    CHECK(count(p, 8) == 10);
    CHECK(count(p, 4) == 0);
    CHECK(count(p, 0) == 0);
    CHECK(p.sg_entries == 10);
    CHECK(p.total_bytes == 10 * MiB);
    REQUIRE(p.chunks.size() == 3); // one entry per order, count 0 included
    CHECK(p.chunks[0].bytes == MiB);
    CHECK(p.chunks[1].bytes == 64 * 1024);
    CHECK(p.chunks[2].bytes == 4096);
}

TEST_CASE("10 MiB on 16K pages: two order-8 (4 MiB) and eight order-4 (256 KiB) chunks") {
    // 10 MiB - 2 * 4 MiB = 2 MiB = 8 * 256 KiB.
    auto p = plan(10 * MiB, 16384, 6, 12, std::nullopt, 11);
    CHECK(count(p, 8) == 2);
    CHECK(count(p, 4) == 8);
    CHECK(count(p, 0) == 0);
    CHECK(p.sg_entries == 10);
    CHECK(p.chunks[0].bytes == 4 * MiB);
    CHECK(p.chunks[1].bytes == 256 * 1024);
    CHECK(p.chunks[2].bytes == 16384);
}

TEST_CASE("order 4 may reclaim on 6.1 (MID_ORDER_GFP), not from 6.4 on") {
    auto p61 = plan(10 * MiB, 4096, 6, 1);
    CHECK_FALSE(reclaim(p61, 8));
    CHECK(reclaim(p61, 4));
    CHECK(reclaim(p61, 0));
    auto p63 = plan(10 * MiB, 4096, 6, 3);
    CHECK(reclaim(p63, 4));
    auto p64 = plan(10 * MiB, 4096, 6, 4);
    CHECK_FALSE(reclaim(p64, 4));
    auto p612 = plan(10 * MiB, 4096, 6, 12);
    CHECK_FALSE(reclaim(p612, 8));
    CHECK_FALSE(reclaim(p612, 4));
    CHECK(reclaim(p612, 0));
}

TEST_CASE("page rounding and remainders") {
    // 1 byte → one page.
    auto one = plan(1, 4096, 6, 12);
    CHECK(one.total_bytes == 4096);
    CHECK(count(one, 0) == 1);
    CHECK(one.sg_entries == 1);
    // 1 MiB + 4 KiB + 1 byte → PAGE_ALIGN → 1 MiB + 8 KiB: one order 8, two order 0.
    auto odd = plan(MiB + 4096 + 1, 4096, 6, 12);
    CHECK(odd.total_bytes == MiB + 8192);
    CHECK(count(odd, 8) == 1);
    CHECK(count(odd, 4) == 0);
    CHECK(count(odd, 0) == 2);
    // One byte short of 1 MiB is page-aligned up to 1 MiB: one order-8 chunk.
    auto one_short = plan(MiB - 1, 4096, 6, 12);
    CHECK(one_short.total_bytes == MiB);
    CHECK(count(one_short, 8) == 1);
    CHECK(one_short.sg_entries == 1);
    // One page short of 1 MiB (255 pages): 15 order-4 chunks (240 pages) + 15 order-0 pages.
    auto short_of = plan(MiB - 4096, 4096, 6, 12);
    CHECK(count(short_of, 8) == 0);
    CHECK(count(short_of, 4) == 15);
    CHECK(count(short_of, 0) == 15);
    CHECK(short_of.sg_entries == 30);
}

TEST_CASE("--available-order: the order never goes back up") {
    // Order 8 exhausted: 10 MiB in 64 KiB chunks = 160.
    auto p = plan(10 * MiB, 4096, 6, 12, 7);
    CHECK(count(p, 8) == 0);
    CHECK(count(p, 4) == 160);
    CHECK(p.chunks[0].available == false);
    // Order 4 exhausted too: 2560 pages.
    auto q = plan(10 * MiB, 4096, 6, 12, 3);
    CHECK(count(q, 4) == 0);
    CHECK(count(q, 0) == 2560);
    CHECK(q.sg_entries == 2560);
    // Order 8 itself available.
    CHECK(count(plan(10 * MiB, 4096, 6, 12, 8), 8) == 10);
}

TEST_CASE("orders above the max page order fail and fall back") {
    // A kernel whose largest order is 7 (e.g. ARCH_FORCE_MAX_ORDER=7 on arm, 6.12 numbering).
    auto p = plan(2 * MiB, 4096, 6, 12, std::nullopt, 7);
    CHECK(count(p, 8) == 0);
    CHECK(count(p, 4) == 32);
}

TEST_CASE("a zero size is refused as the ioctl refuses it") {
    HeapInput in;
    in.version = KernelVersion{6, 12, 0, false};
    in.size = 0;
    std::string error;
    CHECK_FALSE(compute_heap(in, error));
    CHECK(error.find("EINVAL") != std::string::npos);
    in.size = ~std::uint64_t{0}; // PAGE_ALIGN wraps
    CHECK_FALSE(compute_heap(in, error));
}

TEST_CASE("v5.10: the system heap allocates order-0 pages only") {
    // 5.10.223 drivers/dma-buf/heaps/system_heap.c: alloc_page(GFP_KERNEL | __GFP_ZERO) per page.
    // 10 MiB on 4K pages: 2560 order-0 pages, one scatterlist entry each.
    auto p = plan(10 * MiB, 4096, 5, 10);
    REQUIRE(p.chunks.size() == 1);
    CHECK(p.chunks[0].order == 0);
    CHECK(count(p, 0) == 2560);
    CHECK(p.sg_entries == 2560);
    CHECK(reclaim(p, 0));
    // v5.11 brought orders {8, 4, 0}: ten order-8 chunks.
    auto q = plan(10 * MiB, 4096, 5, 11);
    CHECK(count(q, 8) == 10);
    CHECK(q.sg_entries == 10);
}
