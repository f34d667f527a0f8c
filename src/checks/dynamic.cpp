// Where memblock places the dynamic nodes (a `size`, no `reg`), and the check of the nodes it
// finds no room for.
//
// drivers/of/of_reserved_mem.c (read in 5.10.223, 6.1.192, 6.12.117, 7.2.13): every static node
// is reserved first; then each dynamic node asks memblock_phys_alloc_range(size, align, start,
// end) (5.10: memblock_find_in_range() + memblock_reserve()) for a block inside RAM that nothing
// holds yet — the kernel image, the DTB, /memreserve/, static nodes and the dynamic nodes placed
// before it. A reusable shared-dma-pool without no-map has its alignment raised to the CMA
// alignment first, so on 16K or 64K pages a row of small pools needs far more RAM than their
// sizes add up to. The order: until 6.11 fdt_init_reserved_mem() sorts the saved nodes by
// (base, size), dynamic ones at (0, 0), and allocates and sets each up in that order; from 6.12
// fdt_scan_reserved_mem() allocates them in tree order, each set up right after its allocation.
// A pool that its init function rejects is freed at once (memblock_phys_free()), so the nodes
// after it may take its memory; a no-map one stays reserved.
#include <algorithm>

#include <fmt/format.h>

#include "cmalign/core/interval.hpp"
#include "cmalign/internal/core/amount.hpp"
#include "cmalign/internal/kernel/reserved_mem.hpp"
#include "internal.hpp"

namespace cmalign::checks {

using reserved::Kind;
using reserved::Region;

namespace {

constexpr std::uint64_t mib = std::uint64_t{1} << 20;

// Debian's generic 7.2 kernels (linux-binary-7.2.13), image plus bss as the kernel reserves it
// (_stext.._end): arm64 header image_size 47.0 MiB (4K) and 47.6 MiB (16K); armmp and
// armmp-lpae 24.6 and 28.7 MiB (the zImage's size tag: decompressed size + bss); riscv64 35.6
// MiB. Rounded up, so a board kernel (usually smaller) leaves more room, never less.
constexpr std::uint64_t assumed_arm64_image = 48 * mib;
constexpr std::uint64_t assumed_arm_image = 29 * mib;
constexpr std::uint64_t assumed_riscv_image = 36 * mib;

// memblock's round_up()/round_down() are bit masks (include/linux/math.h): an alignment that is
// not a power of two gives what the masks give (alignment-not-power-of-2 reports it).
std::uint64_t mask_down(std::uint64_t x, std::uint64_t align) {
    return x & ~(align - 1);
}
std::uint64_t mask_up(std::uint64_t x, std::uint64_t align) {
    return x == 0 ? 0 : ((x - 1) | (align - 1)) + 1;
}

} // namespace

// memblock's free ranges: RAM minus everything reserved, lowest first.
std::vector<Interval> free_spans(const IntervalSet& ram, const IntervalSet& taken) {
    std::vector<Interval> out;
    const auto& busy = taken.spans();
    for (const auto& span : ram.spans()) {
        std::uint64_t at = span.begin;
        for (const auto& b : busy) {
            if (b.end <= at || b.begin >= span.end) continue;
            if (b.begin > at) out.push_back({at, b.begin});
            at = std::max(at, b.end);
            if (at >= span.end) break;
        }
        if (at < span.end) out.push_back({at, span.end});
    }
    return out;
}

// memblock_find_in_range_node() (mm/memblock.c): start raised to PAGE_SIZE, each free range
// clamped to [start, end); top-down takes the highest aligned block, bottom-up the lowest.
// 0 is failure, as the kernel reads it.
std::uint64_t memblock_find(const std::vector<Interval>& spans, std::uint64_t size,
                            std::uint64_t align, std::uint64_t start, std::uint64_t end,
                            std::uint64_t page_size, bool bottom_up) {
    start = std::max(start, page_size);
    end = std::max(start, end);
    auto clamp = [&](std::uint64_t v) { return std::min(std::max(v, start), end); };
    if (bottom_up) {
        for (const auto& s : spans) {
            std::uint64_t lo = clamp(s.begin), hi = clamp(s.end);
            std::uint64_t cand = mask_up(lo, align);
            if (cand >= lo && cand < hi && hi - cand >= size) return cand;
        }
        return 0;
    }
    for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        std::uint64_t lo = clamp(it->begin), hi = clamp(it->end);
        if (hi < size) continue;
        std::uint64_t cand = mask_down(hi - size, align);
        if (cand >= lo) return cand;
    }
    return 0;
}

namespace {

bool is_dynamic_node(const Region& r) {
    return r.dynamic && !r.disabled && r.accepted_by_parser && r.size && *r.size > 0;
}

// What memblock holds before the first dynamic node: the early reservations, /memreserve/ and
// every static node (all its reg tuples, unless the kernel reserves only the first).
IntervalSet taken_before_dynamic(const Context& ctx, bool with_assumed) {
    IntervalSet taken;
    for (const auto& e : ctx.early)
        if (with_assumed || !e.assumed) taken.add(e.span);
    for (const auto& m : ctx.reservations.memreserve)
        taken.add(Interval::of(m.address, m.size));
    for (const auto& r : ctx.reservations.regions) {
        if (r.disabled || !r.accepted_by_parser || r.reg.empty()) continue;
        for (std::size_t i = 0; i < r.reg.size(); ++i) {
            if (i > 0 && r.extra_tuples_unreserved) break;
            taken.add(Interval::of(r.reg[i].base, r.reg[i].size));
        }
    }
    return taken;
}

} // namespace

// The permutation lib/sort.c's sort() (the bottom-up heapsort of v5.2 on; read in 5.10.223 and
// 6.1.192) leaves `keys` in: not stable, so equal keys come out in an order only the algorithm
// itself tells.
std::vector<std::size_t>
kernel_sort_order(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& keys) {
    std::vector<std::size_t> at(keys.size());
    for (std::size_t i = 0; i < at.size(); ++i)
        at[i] = i;
    auto cmp = [&](std::size_t x, std::size_t y) {
        return keys[at[x]] < keys[at[y]] ? -1 : keys[at[y]] < keys[at[x]] ? 1 : 0;
    };
    std::size_t n = at.size(), a = n / 2;
    if (a == 0) return at;
    for (;;) {
        if (a) {
            --a; // building the heap: sift down a
        } else if (--n) {
            std::swap(at[0], at[n]); // sorting: the root goes to n
        } else {
            break;
        }
        std::size_t b = a, c = 0, d = 0;
        for (; c = 2 * b + 1, (d = c + 1) < n;)
            b = cmp(c, d) >= 0 ? c : d;
        if (d == n) b = c;
        while (b != a && cmp(a, b) >= 0)
            b = (b - 1) / 2;
        c = b;
        while (b != a) {
            b = (b - 1) / 2;
            std::swap(at[b], at[c]);
        }
    }
    return at;
}

bool cma_rejects_before_slot(const Context& ctx, const Region& r, std::uint64_t base) {
    if (r.no_map) return true;
    if (r.cma_default && ctx.reservations.cma_cmdline) return true; // "bypass …, using cmdline"
    auto facts = alignment_facts(ctx.model);
    return facts.exact && r.size && ((base | *r.size) % *facts.exact) != 0;
}

bool alloc_ranges_hold(const Context& ctx, const Region& r, std::uint64_t align) {
    return std::any_of(r.alloc_ranges.begin(), r.alloc_ranges.end(), [&](const auto& a) {
        const auto w = alloc_window(ctx.model, a);
        auto start = round_up(w.begin, align);
        return start && *start <= w.end && w.end - *start >= r.size.value_or(0);
    });
}

bool alloc_ranges_overlap_ram(const Context& ctx, const Region& r) {
    const IntervalSet ram = ram_of(ctx.reservations.memory);
    return std::any_of(r.alloc_ranges.begin(), r.alloc_ranges.end(), [&](const auto& a) {
        return ram.largest_piece_within(alloc_window(ctx.model, a)) >= r.size.value_or(0);
    });
}

std::vector<const Region*> saved_order(const Context& ctx) {
    std::vector<const Region*> out;
    const auto& regions = ctx.reservations.regions;
    // MAX_RESERVED_REGIONS (64 in every version read) bounds the array: 6.12+ skips dynamic nodes
    // past it, older kernels every node saved past it (reserved-regions-limit reports both).
    constexpr std::size_t max_reserved_regions = 64;
    if (kernel::reserved_mem_rules(ctx.model.version).restructured) {
        for (const auto& r : regions)
            if (is_dynamic_node(r) && out.size() < max_reserved_regions) out.push_back(&r);
        for (const auto& r : regions)
            if (!r.disabled && r.accepted_by_parser && !r.reg.empty()) out.push_back(&r);
        return out;
    }
    std::vector<const Region*> saved;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> keys;
    for (const auto& r : regions) {
        if (r.disabled || !r.accepted_by_parser || saved.size() == max_reserved_regions) continue;
        if (!r.reg.empty()) {
            keys.emplace_back(r.reg.front().base, r.reg.front().size);
        } else if (r.dynamic) {
            keys.emplace_back(0, 0);
        } else {
            continue;
        }
        saved.push_back(&r);
    }
    for (auto i : kernel_sort_order(keys))
        out.push_back(saved[i]);
    return out;
}

std::vector<DynamicPlacement> place_dynamic(const Context& ctx, bool with_assumed) {
    std::vector<DynamicPlacement> out;
    const auto& res = ctx.reservations;
    if (res.memory.empty()) return out; // outside-memory's business: no RAM to place in
    const IntervalSet ram = ram_of(res.memory);
    IntervalSet taken = taken_before_dynamic(ctx, with_assumed);
    const auto facts = alignment_facts(ctx.model);
    const auto& rules = kernel::reserved_mem_rules(ctx.model.version);
    const std::uint64_t page = ctx.model.page_size ? ctx.model.page_size : 4096;
    const std::uint64_t cache_line = 64; // SMP_CACHE_BYTES (L1_CACHE_BYTES: 64 on arm64/riscv)
    const std::uint64_t anywhere = ctx.model.phys_addr_64bit ? ~0ULL : 0xffffffffULL;
    int slots = 0;
    std::vector<Interval> placed; // reserved_mem[] entries with a size (6.12+: dynamic ones)
    for (const Region* r : saved_order(ctx)) {
        if (!is_dynamic_node(*r)) continue;
        DynamicPlacement p;
        p.region = r;
        std::uint64_t align = r->alignment.value_or(0);
        const bool cma = r->shared_dma_pool && r->reusable && !r->no_map && ctx.model.cma;
        if (cma && facts.exact) align = std::max(align, *facts.exact);
        p.align = align ? align : cache_line;
        const std::uint64_t size = *r->size;
        const auto spans = free_spans(ram, taken);
        std::uint64_t base = 0;
        if (r->alloc_ranges.empty()) {
            base = memblock_find(spans, size, p.align, 0, anywhere, page, false);
        } else {
            for (const auto& range : r->alloc_ranges) {
                const Interval window = alloc_window(ctx.model, range);
                // __reserved_mem_alloc_in_range() (6.12+): bottom-up when the window starts at
                // a region already placed, top-down when it ends at one, else memblock's way.
                bool up = false, down = false;
                if (rules.restructured)
                    for (const auto& q : placed) {
                        up = up || (window.begin >= q.begin && window.begin <= q.end);
                        down = down || (window.end >= q.begin && window.end <= q.end);
                    }
                base = memblock_find(spans, size, p.align, window.begin, window.end, page,
                                     up && !down);
                if (base) break;
            }
        }
        if (!base) {
            out.push_back(p);
            continue;
        }
        p.base = base;
        const Interval block = Interval::of(base, size);
        taken.add(block);
        placed.push_back(block);
        // Set up at once: a rejected pool is freed before the next node is placed.
        bool freed = false;
        if (r->kind == Kind::cma) {
            bool rejected = cma_rejects_before_slot(ctx, *r, base);
            if (!rejected && ctx.model.cma_areas > 0 && ++slots > ctx.model.cma_areas)
                rejected = true;
            const bool declined_enodev =
                rules.declined_is_enodev &&
                (r->no_map || (r->cma_default && ctx.reservations.cma_cmdline));
            freed = rejected && !r->no_map && !declined_enodev;
        }
        if (freed) {
            p.freed = true;
            IntervalSet rebuilt = taken_before_dynamic(ctx, with_assumed);
            placed.pop_back();
            for (const auto& q : out)
                if (q.base && !q.freed) rebuilt.add(Interval::of(*q.base, *q.region->size));
            taken = rebuilt;
        }
        out.push_back(p);
    }
    return out;
}

std::vector<EarlyReservation> assumed_early_reservations(const reserved::Reservations& reservations,
                                                         const kernel::Model& model) {
    std::vector<EarlyReservation> out;
    std::optional<std::uint64_t> first;
    for (const auto& bank : reservations.memory)
        if (bank.range.size && (!first || bank.range.base < *first)) first = bank.range.base;
    if (!first) return out;
    const std::uint64_t two_mib = 2 * mib;
    auto add = [&](std::uint64_t base, std::uint64_t size, const char* what) {
        out.push_back({Interval::of(base, size), what, true});
    };
    switch (model.arch) {
    case kernel::Arch::arm64:
        // booting.rst: the Image at a 2 MiB boundary (text_offset 0 since 5.10's headers).
        add(mask_up(*first, two_mib), assumed_arm64_image, "the kernel image");
        break;
    case kernel::Arch::arm:
        // swapper_pg_dir (16 KiB below the text) and the kernel at PAGE_OFFSET + TEXT_OFFSET.
        add(*first + 0x4000, assumed_arm_image + 0x4000, "the kernel image");
        break;
    case kernel::Arch::riscv:
        // OpenSBI's firmware at the start of RAM, the kernel at the next 2 MiB boundary.
        add(mask_up(*first, two_mib), two_mib, "OpenSBI's firmware");
        add(mask_up(*first, two_mib) + two_mib, assumed_riscv_image, "the kernel image");
        break;
    default:
        break;
    }
    return out;
}

namespace entries {

void check_dynamic_no_room(const Context& ctx, Findings& out) {
    const auto placements = place_dynamic(ctx, true);
    std::vector<DynamicPlacement> without_assumed;
    const bool any_assumed =
        std::any_of(ctx.early.begin(), ctx.early.end(), [](const auto& e) { return e.assumed; });
    const auto facts = alignment_facts(ctx.model);
    for (const auto& p : placements) {
        if (p.base) continue;
        const Region& r = *p.region;
        // cma-alloc-ranges reports a pool no window could hold even in empty RAM, outside-memory
        // a window that no RAM fills to the size.
        if (!r.alloc_ranges.empty() &&
            ((r.kind == Kind::cma && facts.exact && !alloc_ranges_hold(ctx, r, p.align)) ||
             !alloc_ranges_overlap_ram(ctx, r)))
            continue;
        // What holds the RAM it needed, in words.
        std::uint64_t earlier = 0;
        int earlier_count = 0;
        for (const auto& q : placements) {
            if (&q == &p) break;
            if (q.base && !q.freed) {
                earlier += *q.region->size;
                ++earlier_count;
            }
        }
        std::string held;
        if (earlier_count)
            held = fmt::format("{} dynamic node{} placed before it hold{} {}", earlier_count,
                               earlier_count == 1 ? "" : "s", earlier_count == 1 ? "s" : "",
                               amount(earlier));
        // What boot-check knows was reserved first (the DTB where QEMU put it, the real image):
        // named, as it may be what took the room.
        std::string known;
        for (const auto& e : ctx.early)
            if (!e.assumed)
                known += fmt::format("{}{} at {:#x}..{:#x}",
                                     known.empty() ? "; reserved before it: " : ", ", e.what,
                                     e.span.begin, e.span.end);
        std::string assumed;
        if (any_assumed) {
            if (without_assumed.empty()) without_assumed = place_dynamic(ctx, false);
            bool fits_without =
                std::any_of(without_assumed.begin(), without_assumed.end(),
                            [&](const auto& q) { return q.region == &r && q.base.has_value(); });
            for (const auto& e : ctx.early)
                if (e.assumed)
                    assumed +=
                        fmt::format("{}{} assumed at {:#x}..{:#x}", assumed.empty() ? "" : ", ",
                                    e.what, e.span.begin, e.span.end);
            assumed = fmt::format(
                "; {} (the arch's usual load address and a generic kernel's size{})", assumed,
                fits_without ? ": it fits only without them, so a smaller kernel may leave room; "
                               "boot-check with the board's kernel knows"
                             : "");
        }
        const bool cma = r.kind == Kind::cma;
        const bool raised =
            cma && facts.exact && p.align == *facts.exact && r.alignment.value_or(0) < p.align;
        // "Print allocation/reservation failures as error" (v6.0) added the size.
        const std::string printed =
            ctx.model.version >= KernelVersion{6, 0, 0}
                ? fmt::format("failed to allocate memory for node '{}': size {} MiB", r.name,
                              *r.size >> 20)
                : fmt::format("failed to allocate memory for node '{}'", r.name);
        out.add(
            Severity::error, r.size_ref ? r.size_ref->where : r.where, r.path,
            fmt::format("{} on {}: memblock finds no free block of {} at an alignment of {}{}{} "
                        "in RAM{}{}: the kernel prints \"OF: reserved mem: {}\" and {}",
                        r.name, kernel_name(ctx.model), amount(*r.size), amount(p.align),
                        raised ? " (the CMA alignment)" : "",
                        r.alloc_ranges.empty() ? "" : " inside its alloc-ranges",
                        held.empty() ? "" : " (" + held + ")", known + assumed, printed,
                        cma ? "creates no pool" : "reserves nothing for it"));
    }
}

extern const CheckInfo dynamic_no_room{
    "dynamic-no-room", Severity::error, true,
    "a dynamic node (size, no reg) must fit in the RAM left by the kernel, static nodes and the "
    "dynamic nodes placed before it, at its alignment",
    check_dynamic_no_room};

} // namespace entries

} // namespace cmalign::checks
