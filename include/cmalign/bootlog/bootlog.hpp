// Boot logs (dmesg, dmesg -T, journalctl -k, serial console captures) read for the lines the
// kernel prints about /reserved-memory and CMA.
//
// The message formats are the kernel's own format strings (v6.1 and v6.12 trees), with their
// pr_fmt prefixes: "OF: reserved mem: " (drivers/of/of_reserved_mem.c), "OF: fdt: "
// (drivers/of/fdt.c), "cma: " (mm/cma.c, kernel/dma/contiguous.c before its rmem part), none
// (the rmem part of kernel/dma/contiguous.c, kernel/dma/coherent.c), "software IO TLB: "
// (kernel/dma/swiotlb.c). Whatever precedes a message on its line (timestamps, "kernel:",
// syslog priorities, a capture tool's clock) is ignored, as are CR and ANSI colour codes.
// This layer reads text; tying lines to device tree nodes is explain's job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/core/version.hpp"

namespace cmalign::bootlog {

enum class Event {
    // drivers/of/of_reserved_mem.c ("OF: reserved mem: ")
    initialized_node,     // "initialized node %s, compatible id %s"
    matching_fail,        // "node %s compatible matching fail"
    region_listed,        // "%pa..%pa (%lu KiB) %s %s %s" (v6.12)
    failed_to_allocate,   // "failed to allocate memory for node '%s': size %lu MiB"
    invalid_size,         // "invalid size property in '%s' node."
    invalid_alignment,    // "invalid alignment property in '%s' node."
    invalid_alloc_ranges, // "invalid alloc-ranges property in '%s', skipping node."
    too_many_dynamic,     // "too many defined dynamic regions, skip '%s'" (v6.12)
    not_enough_space,     // "not enough space for all defined regions."
    overlap_detected,     // "OVERLAP DETECTED!" (first line of the message)
    overlap_pair,         // "%s (%pa--%pa) overlaps with %s (%pa--%pa)" (second line)
    // drivers/of/fdt.c ("OF: fdt: ", v6.1) or of_reserved_mem.c (v6.12)
    failed_to_reserve,  // "Reserved memory: failed to reserve memory for node '%s': base %pa, …"
    invalid_reg,        // "Reserved memory: invalid reg property in '%s', skipping node."
    unsupported_format, // "Reserved memory: unsupported node format, ignoring"
    no_reserved_memory, // "Reserved memory: No reserved-memory node in the DT" (v6.12)
    only_first_reg, // "Reserved memory: node '%s' has %d <base size> entries, only the first …"
                    // (v7.2)
    // A linux,cma-default pool that cma= replaces, never reserved: "OF: reserved mem: Skipping dt
    // linux,cma-default for \"cma=\" kernel param." (v6.19–v7.0), "Skipping dt linux,cma-default
    // node in favor for \"cma=\" kernel param." (kernel/dma/contiguous.c, v7.1). Names no node:
    // it is about the board's linux,cma-default pool.
    skipping_cma_default,
    // kernel/dma/contiguous.c, rmem part (no prefix)
    bypass_cmdline,      // "Reserved memory: bypass %s node, using cmdline CMA params instead"
    incorrect_alignment, // "Reserved memory: incorrect alignment of CMA region"
    unable_to_setup,     // "Reserved memory: unable to setup CMA region"
    created_cma_pool,    // "Reserved memory: created CMA memory pool at %pa, size %ld MiB"
    // kernel/dma/coherent.c (no prefix)
    created_dma_pool,      // "Reserved memory: created DMA memory pool at %pa, size %ld MiB"
    coherent_needs_no_map, // "Reserved memory: regions without no-map are not yet supported"
    coherent_init_failed,  // "Reserved memory: failed to init DMA memory pool at %pa, size %zd MiB"
    // kernel/dma/swiotlb.c ("software IO TLB: ")
    created_restricted_pool, // "Reserved memory: created restricted DMA pool at %pa, size %ld MiB"
    // mm/cma.c ("cma: ")
    not_enough_slots,   // "Not enough slots for CMA reserved regions!"
    not_activated,      // "CMA area %s could not be activated"
    cmdline_reserved,   // "Reserved %ld MiB at %pa" (v6.1) / "… on node %d" (v6.12) /
                        // "Reserved %lu MiB in %d range%s" (v7.2, no base)
    cmdline_failed,     // "Failed to reserve %ld MiB" (v6.1) / "… on node %d" (v6.12)
    cmdline_misaligned, // "Region at %pa must be aligned to %pa bytes"
    cmdline_size_limit, // "Size (%pa) of region at %pa exceeds limit (%pa)"
    cmdline_boundary,   // "Region at %pa defined on low/high memory boundary (%pa)"
};

// "initialized-node": the name used in JSON and docs.
const char* to_string(Event event);
// The kernel source file that prints it ("drivers/of/of_reserved_mem.c").
const char* source_of(Event event);
// True for lines that name no node: the kernel prints them from an init function whose node
// the next "initialized node"/"compatible matching fail" line names.
bool names_no_node(Event event);

struct Message {
    std::size_t line_number = 0; // 1-based line of the log
    std::string text;            // the whole line as read (CR and colour codes removed)
    std::string message;         // from the kernel's prefix on ("OF: reserved mem: …")
    Event event{};
    std::vector<std::string> nodes;     // node names in the line (two for overlap_pair)
    std::optional<std::uint64_t> base;  // %pa when the line has one
    std::optional<std::uint64_t> bytes; // size in bytes when the line has one (MiB/KiB × unit)
    std::string compatible;             // initialized_node
    // How a line naming no node was tied to one when neither its init line nor its base did
    // ("the only reusable pool check finds misaligned"); empty otherwise.
    std::string matched_by;
};

struct Log {
    std::optional<KernelVersion> version; // from "Linux version 6.12.117-… (…)"
    std::size_t version_line = 0;         // 0 when absent
    std::string version_text;             // the line
    std::vector<Message> messages;        // log order, of the last boot
    std::size_t boots = 0;                // "Linux version" lines seen
    std::size_t lines = 0;
};

// Reads a whole log. Lines that match no known format are skipped; the parse never fails.
Log parse(std::string_view text);

} // namespace cmalign::bootlog
