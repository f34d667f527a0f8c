// /reserved-memory, /memory, /memreserve/ and /chosen/bootargs read exactly as the kernel reads
// them (drivers/of/of_reserved_mem.c and drivers/of/fdt.c, v6.1–v6.12): cells of the ROOT's
// #address-cells/#size-cells (default 1/1), values composed big-endian into a u64 (cells beyond
// two shift out the high bits), `alignment` read with #address-cells.
//
// This layer states facts; checks/ judges them. It knows nothing about kernel configs: the two
// facts it needs from one (is CMA built in?) come in through ReadOptions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/dt/tree.hpp"

namespace cmalign::reserved {

enum class Kind {
    cma,        // shared-dma-pool + reusable (+ !no-map) and CMA will take it
    coherent,   // shared-dma-pool without reusable (kernel/dma/coherent.c)
    restricted, // restricted-dma-pool (kernel/dma/swiotlb.c)
    static_,    // any other reservation ("static" in JSON)
    inactive,   // disabled node, ignored /reserved-memory, or a CMA pool CMA cannot take
};
const char* to_string(Kind kind);

struct Range {
    std::uint64_t base = 0;
    std::uint64_t size = 0;
    friend bool operator==(const Range&, const Range&) = default;
};

// One number read from a property: which property, which bytes of its value, and where it was
// written (the chunks covering those bytes), so `fix` can rewrite exactly that number.
struct ValueRef {
    std::string property;    // "reg", "size", "alignment", "alloc-ranges"
    std::size_t offset = 0;  // byte offset in the property value
    std::size_t length = 0;  // bytes (cells * 4)
    std::uint64_t value = 0; // as the kernel composes it (u64, high bits shifted out)
    bool overflowed = false; // more than 2 cells with non-zero high cells: the kernel drops them
    Location where;          // where the number is written (chunk location, else the property)
    std::vector<dt::ValueChunk> chunks; // chunks of the property covering [offset, offset+length)
};

// A property whose length the kernel rejects (or a tuple count it ignores).
struct LengthProblem {
    std::string property;
    std::size_t length = 0;      // bytes found
    std::size_t expected = 0;    // bytes expected (exact length, or the tuple size for lists)
    bool tuple_multiple = false; // expected is a tuple size: the length must be a multiple of it
    Location where;
    bool ignored = false; // read as absent, silently (addr_size_helpers semantics)
};

struct Region {
    std::string input; // the file named on the command line
    std::string path;  // "/reserved-memory/linux,cma"
    std::string name;  // "linux,cma"
    Location where;    // the node
    std::vector<std::string> compatible;

    Kind kind = Kind::static_;
    std::string inactive_reason;        // why kind is inactive (empty otherwise)
    Kind declared_kind = Kind::static_; // what it would be with CMA on and the node active

    bool disabled = false; // status is not "okay"/"ok"
    bool reusable = false;
    bool no_map = false;
    bool cma_default = false; // linux,cma-default
    bool dma_default = false; // linux,dma-default
    bool shared_dma_pool = false;

    // Static placement (first reg tuple, the one the kernel keeps as the rmem region).
    std::optional<std::uint64_t> base;
    std::optional<ValueRef> base_ref;
    // Size: first reg tuple's size, or the `size` property of a dynamic node.
    std::optional<std::uint64_t> size;
    std::optional<ValueRef> size_ref;
    std::optional<std::uint64_t> alignment; // `alignment` property (dynamic nodes)
    std::optional<ValueRef> alignment_ref;
    std::vector<Range> alloc_ranges;
    std::vector<Range> reg; // every reg tuple (all are reserved; only the first becomes the rmem)
    std::vector<ValueRef> reg_refs; // base,size,base,size,… of every tuple

    bool dynamic = false; // no reg, has size: placed by memblock at boot
    // False when the kernel skips the node before any init function sees it (invalid reg/size/
    // alignment/alloc-ranges length, nothing to reserve). Such a region is never a pool.
    bool accepted_by_parser = true;
    std::vector<LengthProblem> length_problems;
    bool multi_tuple_dropped = false; // addr_size_helpers: reg has several tuples, no region kept
    bool extra_tuples_unreserved = false; // first_reg_tuple_only: tuples after the first are free
    std::vector<ValueRef> overflowed_values; // values with > 2 cells whose high bits are lost
};

struct MemoryBank {
    std::string path;
    Location where;
    Range range;
};

// The `cma=` kernel parameter, parsed as kernel/dma/contiguous.c early_cma() does (memparse).
struct CmaCmdline {
    std::string text;       // the value after "cma=" (empty when given bare as "cma")
    bool has_value = false; // "cma" without "=" makes the kernel print "Config string not provided"
    std::uint64_t size = 0;
    std::optional<std::uint64_t> base;
    std::optional<std::uint64_t> limit;
    bool fixed = false;   // base given and (no limit, or base + size == limit)
    std::string trailing; // characters memparse did not consume (ignored by the kernel)
    int occurrences = 1;  // cma= given several times: the last one wins
};

// memparse() of lib/cmdline.c: simple_strtoull(base 0: 0x hex, 0 octal) + K/M/G/T/P/E suffix.
// Returns the value and how many characters were consumed (0 when no digits).
struct MemparseResult {
    std::uint64_t value = 0;
    std::size_t consumed = 0;
};
MemparseResult memparse(std::string_view text);

// Splits a command line as the kernel's next_arg() does (spaces separate, double quotes group).
std::vector<std::pair<std::string, std::optional<std::string>>>
split_cmdline(std::string_view line);

// Finds `cma=` (the last one wins, as early_param calls early_cma() for each).
std::optional<CmaCmdline> parse_cma_cmdline(std::string_view bootargs);

struct BootParams; // bootargs.hpp

struct ReadOptions {
    std::optional<std::string> bootargs; // --bootargs: overrides /chosen/bootargs
    bool cma_enabled = true;             // CONFIG_CMA
    bool dma_cma_enabled = true;         // CONFIG_DMA_CMA (rmem_cma_setup is built)
    bool sparc = false;                  // root cell defaults are 2/1 on SPARC, 1/1 elsewhere
    // ≥ v6.19 [likely] (of_flat_dt_get_addr_size_prop(), "consolidate duplicate code"): a reg or
    // alloc-ranges whose length is not a multiple of the tuple counts as absent, silently, and
    // only nodes whose reg has exactly one tuple become regions.
    bool addr_size_helpers = false;
    // ≥ v7.2 [likely] ("only support one <base size> entry in reg property"): a reg with several
    // tuples keeps the node with its first tuple; only that tuple is reserved.
    bool first_reg_tuple_only = false;
};

struct Reservations {
    std::string input;

    // Root cells as the kernel uses them (dt_root_addr_cells / dt_root_size_cells).
    std::uint32_t address_cells = 1;
    std::uint32_t size_cells = 1;
    bool address_cells_defaulted = false;
    bool size_cells_defaulted = false;
    Location root_where;

    // /reserved-memory itself.
    bool has_reserved_memory = false;
    std::string reserved_memory_path = "/reserved-memory";
    Location reserved_memory_where;
    std::optional<std::uint32_t> rm_address_cells; // nullopt: absent or not one cell
    std::optional<std::uint32_t> rm_size_cells;
    Location rm_address_cells_where;
    Location rm_size_cells_where;
    bool rm_has_ranges = false;
    bool rm_format_ok = false; // __reserved_mem_check_root() passes; else the kernel ignores it all

    std::vector<Region> regions; // document order
    std::vector<MemoryBank> memory;
    std::vector<dt::MemReserve> memreserve;
    // The lowest end (inclusive) of the CPU addresses the tree's dma-ranges reach
    // (of_dma_get_max_cpu_address(NULL)); nullopt when no node has a non-empty dma-ranges.
    std::optional<std::uint64_t> dma_max_cpu_address;

    std::optional<std::string> bootargs; // effective command line
    Location bootargs_where;             // /chosen/bootargs property (unknown for --bootargs)
    bool bootargs_from_option = false;
    std::optional<CmaCmdline> cma_cmdline;
    // /chosen linux,initrd-start/-end (drivers/of/fdt.c early_init_dt_check_for_initrd()): the
    // arch reserves it before /reserved-memory. linux,usable-memory-range (kdump, 5.10–7.2):
    // where a crash kernel's RAM lies, the image with it.
    std::optional<Range> initrd;
    Location initrd_where;
    std::optional<Range> usable_memory_range;
    Location usable_memory_range_where;
    // cma_pernuma=, numa_cma=, pcp_batch_scale_max=, transparent_hugepage= (bootargs.hpp);
    // Set whenever there is a command line.
    std::shared_ptr<const BootParams> boot_params;
};

// of_dma_get_max_cpu_address(NULL) of the tree (src/reserved/dma_ranges.cpp).
std::optional<std::uint64_t> dma_max_cpu_address(const dt::Node& root);

// Never fails: every oddity is recorded as a fact for checks/ to judge.
Reservations read(const dt::Tree& tree, const ReadOptions& options = {});

// Reads `cells` big-endian cells at `offset` of `prop` as of_read_number() does.
ValueRef read_value(const dt::Property& prop, std::size_t offset, std::uint32_t cells);

} // namespace cmalign::reserved
