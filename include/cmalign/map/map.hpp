// `cmalign map`: a picture of a board's physical memory for one kernel configuration.
//
// build() joins what the other layers already know — the reservations as the kernel reads them
// (reserved/), the findings of the checks (checks/), the edits `fix` would make (fix/) and the
// CMA alignment of the model (kernel/) — into a Layout; it judges nothing itself. The renderers
// draw a Layout: an SVG picture, a compact terminal picture that fits 80 columns, and JSON.
//
// Address axis: real memory maps are sparse (a few MiB of firmware in GiB of RAM, banks GiB
// apart), so the axis is piecewise: every start and end of a bank or reservation cuts it, each
// piece gets a height that grows with the log of its length (small regions stay visible, big
// ones stay bigger), and stretches outside every bank shrink to a fixed broken-axis gap. Labels
// always print the true addresses and sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/checks/checks.hpp"
#include "cmalign/fix/fix.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::map {

// What the kernel does with a block, as the checks say.
enum class Status {
    ok,       // no finding
    warning,  // a warning-level finding (the kernel prints something)
    rejected, // an error-level finding: the kernel will not set it up as written
    inactive, // disabled node, or a pool CMA cannot take
};
const char* to_string(Status s);

struct Block {
    std::string label;                 // node name ("camera-pool@50000000") or "/memreserve/ 1"
    std::string path;                  // DT path; empty for /memreserve/ entries
    std::string kind;                  // reserved::to_string(Kind) or "memreserve"
    std::optional<std::uint64_t> base; // nullopt: placed by the kernel at boot (dynamic)
    std::uint64_t size = 0;
    bool no_map = false;
    bool reusable = false;
    Status status = Status::ok;
    std::string reason; // the first error (else warning) message of the checks, if any
    // CMA pools only: whether base and size are multiples of the alignment.
    std::optional<bool> base_aligned;
    std::optional<bool> size_aligned;
    // What `fix` would write (fix::plan_fixes), or why it cannot.
    std::optional<std::uint64_t> fixed_size;
    std::string fix_blocked;
    int lane = 0; // column of the picture, so overlapping blocks stand side by side
};

struct Bank {
    std::string label; // "memory@40000000" (with "#2" for a second reg tuple)
    std::uint64_t base = 0;
    std::uint64_t size = 0;
};

// One piece of the address axis: [begin, end) drawn `height` units tall.
struct Segment {
    std::uint64_t begin = 0;
    std::uint64_t end = 0; // exclusive; may be 2^64 - 1 at the very top of the space
    bool in_memory = false;
    bool gap = false; // outside every bank and every block: drawn as a broken axis
    double height = 0;
};

struct Layout {
    std::string input;
    std::string arch;
    std::string kernel_version;
    std::uint64_t page_size = 0;
    std::optional<std::uint64_t> alignment; // CMA_MIN_ALIGNMENT_BYTES (or the largest at boot)
    bool alignment_at_boot = false;         // pageblock_order decided at boot
    std::string alignment_rule;             // the model's derivation step for the alignment
    std::vector<Bank> banks;
    std::vector<Block> placed;  // blocks with a base, by base
    std::vector<Block> dynamic; // blocks placed at boot, in document order
    std::vector<Segment> axis;  // covers every bank and placed block (with fixed sizes)
    int lanes = 1;
    std::vector<std::string> notes; // why a block is not drawn, facts the picture cannot show
    std::size_t errors = 0;
    std::size_t warnings = 0;

    // The y of `address` in axis units (0 at the first segment's begin). Addresses outside the
    // axis clamp to its ends.
    double y(std::uint64_t address) const;
    double height() const;
};

// `result` is checks::run() on the board; `plan` is fix::plan_fixes() (or plan_dtb_fixes())
// with fix::required_alignment(model), when the model gives an alignment.
Layout build(const std::string& input, const checks::Result& result, const kernel::Model& model,
             const std::optional<fix::Plan>& plan);

// The compact terminal picture; no line is wider than `columns` (at least 60).
std::string render_text(const Layout& layout, int columns = 80);
// The same picture in plain ASCII (a terminal whose locale is not UTF-8): box and mark glyphs
// replaced by ASCII look-alikes (│ |, ┌ └ +, ✓ +, ✗ X, ■ #, ▒ m, · ., → ->, ≈ ~, … ...).
std::string to_ascii(std::string_view text);

// A standalone SVG 1.1 document, labelled, with a legend.
std::string render_svg(const Layout& layout);

} // namespace cmalign::map
