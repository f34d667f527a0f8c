// The dma-buf system heap's chunk plan for one allocation
// (drivers/dma-buf/heaps/system_heap.c system_heap_allocate(), alloc_largest_available()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/core/version.hpp"

namespace cmalign::calc {

struct HeapInput {
    KernelVersion version;
    std::uint64_t page_size = 4096;
    int max_page_order = 10;            // inclusive; alloc_pages() above it returns NULL
    std::uint64_t size = 0;             // the ioctl's len, before PAGE_ALIGN
    std::optional<int> available_order; // blocks above this order are exhausted
};

struct HeapChunk {
    int order = 0;
    std::uint64_t bytes = 0; // PAGE_SIZE << order
    std::uint64_t count = 0;
    bool reclaim = false;  // may enter direct reclaim with this version's gfp flags
    bool available = true; // false: above --available-order or the max page order
};

struct HeapPlan {
    std::uint64_t page_size = 0;
    std::uint64_t requested = 0;
    std::uint64_t total_bytes = 0; // PAGE_ALIGN(requested)
    std::vector<int> orders;       // {8, 4, 0}
    std::vector<HeapChunk> chunks; // one per order, count 0 included
    std::uint64_t sg_entries = 0;
    std::vector<std::string> notes;   // why an order is skipped, the version's gfp flags
    std::vector<std::string> sources; // kernel files and version ranges used
};

// nullopt and `error` set for a size the ioctl refuses (0 after PAGE_ALIGN, or overflowing).
std::optional<HeapPlan> compute_heap(const HeapInput& input, std::string& error);

} // namespace cmalign::calc
