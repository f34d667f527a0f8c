// Named checks over the reservations of one device tree, judged against one kernel Model.
//
// Modelled on dtc's checks.c: each check is a named entry {name, default severity, description,
// function, prerequisite} declared next to its function (src/checks/{format,cma,placement,
// cmdline}.cpp); src/checks/registry.cpp lists them in the order they run. `-W name` /
// `-Wno-name` / `-E name` / `-Eno-name` enable, disable and promote them as dtc does. Every finding
// says what the kernel at hand will print and do, and carries a FixHint when there is a mechanical
// fix. Only what the kernel rejects (a pool lost, a node ignored) is an error; doubtful or cosmetic
// things are warnings or notes.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/interval.hpp"
#include "cmalign/dt/tree.hpp"
#include "cmalign/kernel/model.hpp"
#include "cmalign/reserved/regions.hpp"

namespace cmalign::checks {

// Memory the kernel has reserved in memblock before it reads /reserved-memory: its own image
// (with its bss), the DTB, an initrd. Dynamic nodes are allocated around it.
struct EarlyReservation {
    Interval span;
    std::string what;     // "the kernel image"
    bool assumed = false; // not known: placed and sized from the configuration and defaults
    // Why there and that big, in words: what the configuration said and what was assumed.
    std::string basis = {};
    // Reserved after the dynamic nodes are placed and before the default CMA area: riscv's
    // setup_bootmem() reserves the DTB after early_init_fdt_scan_reserved_mem() (5.10.223 to
    // 7.2.13, arch/riscv/mm/init.c).
    bool after_dynamic_nodes = false;
};

// What every check reads.
struct Context {
    const reserved::Reservations& reservations;
    const kernel::Model& model;
    std::span<const EarlyReservation> early = {};
};

// Collects the findings of one check; the runner stamps check name, input and applies options.
class Findings {
public:
    void add(Severity severity, Location where, std::string node, std::string message,
             std::vector<FixHint> fix = {});
    std::vector<Diagnostic>& items() { return items_; }

private:
    std::vector<Diagnostic> items_;
};

using CheckFunction = void (*)(const Context&, Findings&);

// A condition a check needs, as dtc's prerequisites: where it does not hold the check does not
// run, because another check already reports why (e.g. "reserved-memory well formed": when the
// kernel ignores /reserved-memory, reserved-memory-format says so and node checks keep quiet).
struct Prerequisite {
    const char* name;
    bool (*holds)(const Context&);
};

struct CheckInfo {
    const char* name;
    Severity severity; // the most severe level the check reports by default
    bool enabled_by_default;
    const char* description; // one line, for --help, SARIF rules and docs
    CheckFunction function;
    const Prerequisite* prerequisite = nullptr; // none: the check always runs when enabled
};

// The registry, in the order checks run.
std::span<const CheckInfo> registry();
const CheckInfo* find_check(std::string_view name);

// One command-line switch, in order (later ones win, as in dtc).
struct Switch {
    enum class Kind { enable_warning, disable_warning, enable_error, disable_error };
    Kind kind;
    std::string check; // a check name, or "all"
};

struct Options {
    std::vector<Switch> switches;
    bool werror = false;                 // warnings make the run fail (exit status), not renamed
    std::optional<std::string> bootargs; // overrides /chosen/bootargs
    // Where the kernel image, DTB and initrd lie (boot-check knows them); nullopt: the arch's
    // usual place and a generic kernel's size are assumed (assumed_early_reservations()).
    std::optional<std::vector<EarlyReservation>> early_reservations;
};

// Parses "-W name", "-Wno-name", "-E name", "-Eno-name" style values: `flag` is "W" or "E",
// `value` the rest ("no-overlap", "overlap"). nullopt and an error when the name is unknown.
std::optional<Switch> parse_switch(char flag, std::string_view value, Diagnostics& diags);

// Level a check runs at after the switches: `enabled` false = disabled; `promote_to_error` = every
// finding becomes an error.
struct Level {
    bool enabled = true;
    bool promote_to_error = false;
};
Level level_of(const CheckInfo& check, const Options& options);

// The default CMA area (cma= or CONFIG_CMA_SIZE_*) as the kernel sets it up at boot, after the
// tree's reservations: kernel/dma/contiguous.c dma_contiguous_reserve() and mm/cma.c
// cma_declare_contiguous_nid() (src/checks/default_area.cpp).
struct DefaultArea {
    enum class Source { cmdline, config };
    enum class Outcome {
        created, // "cma: Reserved N MiB at …"
        failed,  // "cma: Failed to reserve N MiB" (or only an earlier line of why)
        none,    // size 0: nothing asked
        dt_pool, // a linux,cma-default pool the kernel created is the default area
        no_call, // the arch never reserves one (powerpc)
        unknown, // the CMA alignment or the size is decided at boot, or no /memory
    };
    Source source = Source::config;
    Outcome outcome = Outcome::unknown;
    std::string asked;                  // "cma=64M" / "CONFIG_CMA_SIZE_MBYTES=16"
    std::uint64_t requested = 0;        // bytes asked
    std::uint64_t size = 0;             // after ALIGN(size, CMA_MIN_ALIGNMENT_BYTES)
    std::uint64_t alignment = 0;        // CMA_MIN_ALIGNMENT_BYTES
    std::optional<std::uint64_t> fixed; // cma=SIZE@BASE with base + size == limit: exactly there
    std::uint64_t arch_limit = 0;       // what the arch passes to dma_contiguous_reserve()
    std::uint64_t limit = 0;            // the limit in force (aligned down, memblock end)
    std::string limit_words;            // how the arch limit came about
    std::optional<std::uint64_t> base;  // created: where memblock puts it (estimate)
    std::string reason;                 // failed / none / unknown / no_call: why
    std::vector<std::string> lines;     // what the kernel prints, in order
    std::string dt_pool;                // dt_pool: the node's path
    // Where the area is placed (or refused) cmdline-cma already reports: the cma= value itself.
    bool reported_by_cmdline_check = false;
};
const char* to_string(DefaultArea::Outcome outcome);

struct Result {
    reserved::Reservations reservations;
    std::optional<DefaultArea> default_area; // nullopt without CONFIG_DMA_CMA
    std::vector<Diagnostic> diagnostics;     // input problems first, then checks in registry order
    std::size_t count(Severity s) const;
    // Exit status 1 material: an error, or a warning under --werror.
    bool failed(bool werror) const;
};

// How reserved::read must read a tree for this kernel (CMA facts, version-dependent parsing).
// Everything that reads reservations for a Model (check, fix, suggest) should use this.
reserved::ReadOptions read_options(const kernel::Model& model,
                                   std::optional<std::string> bootargs = std::nullopt);

// What the checks take the kernel to have reserved before /reserved-memory when nobody says
// where the image lies: first what the configuration says (an XIP kernel keeps only data and
// bss in RAM, a RAM start and TEXT_OFFSET fixed at build time, no MMU), then the arch's usual
// place: arm64 and riscv64 load the image at the lowest 2 MiB boundary of the first bank
// (riscv64: above OpenSBI's 2 MiB), 32-bit arm decompresses it to the start of RAM +
// TEXT_OFFSET; sizes are those of Debian's generic kernels of 7.2 (image and bss), larger than
// most board kernels. Each is `assumed`: a finding that needs it is a warning saying so. An
// initrd in /chosen is known, not assumed. Empty of assumed ones for other arches.
std::vector<EarlyReservation> assumed_early_reservations(const reserved::Reservations& reservations,
                                                         const kernel::Model& model);

// Runs every enabled check on the reservations.
Result run(reserved::Reservations reservations, const kernel::Model& model, const Options& options);
// Reads the tree (reserved::read with the model's CMA facts) and runs the checks.
Result run(const dt::Tree& tree, const kernel::Model& model, const Options& options);

// The default CMA area of this board on this kernel (nullopt without CONFIG_CMA/DMA_CMA).
std::optional<DefaultArea> default_area(const Context& ctx);

// The CMA alignment the model gives, or the largest/smallest possible when decided at boot.
struct AlignmentFacts {
    std::optional<std::uint64_t> exact;    // CMA_MIN_ALIGNMENT_BYTES
    std::optional<std::uint64_t> smallest; // when decided at boot: page_size << min order
    std::optional<std::uint64_t> largest;  // when decided at boot: page_size << max order
};
AlignmentFacts alignment_facts(const kernel::Model& model);

} // namespace cmalign::checks
