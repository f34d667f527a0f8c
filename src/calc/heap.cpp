#include "cmalign/calc/heap.hpp"

#include <fmt/format.h>

#include "cmalign/internal/kernel/calc_rules.hpp"

namespace cmalign::calc {

namespace rules = kernel::calc_rules;

std::optional<HeapPlan> compute_heap(const HeapInput& in, std::string& error) {
    // drivers/dma-buf/dma-heap.c dma_heap_buffer_alloc(): len = PAGE_ALIGN(len); if (!len)
    // return -EINVAL. PAGE_ALIGN of a value near 2^64 wraps to 0 as well.
    if (in.size == 0) {
        error = "size 0: the DMA_HEAP_IOCTL_ALLOC ioctl returns -EINVAL for a zero length";
        return std::nullopt;
    }
    std::uint64_t len = (in.size + in.page_size - 1) / in.page_size * in.page_size;
    if (len < in.size || len == 0) {
        error = fmt::format("size {} overflows PAGE_ALIGN(): the ioctl returns -EINVAL", in.size);
        return std::nullopt;
    }
    if (in.available_order && *in.available_order < 0) {
        error = "--available-order must be 0 or more";
        return std::nullopt;
    }
    const auto& orders_rule = rules::find(rules::Topic::heap_orders, in.version);
    const auto& gfp_rule = rules::find(rules::Topic::heap_order4_gfp, in.version);

    HeapPlan plan;
    plan.page_size = in.page_size;
    plan.requested = in.size;
    plan.total_bytes = len;
    // ≤ v5.10 the system heap allocates page by page (heap_orders variant 1).
    const bool order0_only = orders_rule.variant == 1;
    if (order0_only) {
        plan.orders = {0};
        plan.sources = {orders_rule.source};
        plan.notes.push_back(orders_rule.rule);
    } else {
        plan.orders = {8, 4, 0};
        plan.sources = {orders_rule.source, gfp_rule.source};
        plan.notes.push_back(gfp_rule.rule);
    }
    for (int order : plan.orders) {
        HeapChunk c;
        c.order = order;
        c.bytes = in.page_size << order;
        // order_flags[]: HIGH_ORDER_GFP clears __GFP_RECLAIM; order 4 used MID_ORDER_GFP before
        // v6.4; order 0 uses LOW_ORDER_GFP (may reclaim).
        c.reclaim = order == 0 || (order == 4 && gfp_rule.variant == 1);
        if (order > in.max_page_order) {
            c.available = false;
            plan.notes.push_back(fmt::format(
                "order {} is above the max page order {}: alloc_pages() returns NULL (no "
                "warning: __GFP_NOWARN) and the heap falls back",
                order, in.max_page_order));
        } else if (in.available_order && order > *in.available_order && order != 0) {
            c.available = false;
            plan.notes.push_back(fmt::format(
                "order {} assumed exhausted (--available-order {}): alloc_pages() fails and a "
                "smaller order is used; later chunks never go above the last chunk's order",
                order, *in.available_order));
        }
        plan.chunks.push_back(c);
    }
    // alloc_largest_available(): the largest order that fits the remainder and is not above the
    // order of the previous chunk. Failed orders are skipped; max_order only goes down.
    std::uint64_t remaining = len;
    int max_order = plan.orders.front();
    for (auto& c : plan.chunks) {
        if (!c.available || c.order > max_order) continue;
        if (remaining < c.bytes) continue;
        c.count = remaining / c.bytes;
        remaining -= c.count * c.bytes;
        max_order = c.order;
    }
    for (const auto& c : plan.chunks)
        plan.sg_entries += c.count; // one scatterlist entry per chunk
    return plan;
}

} // namespace cmalign::calc
