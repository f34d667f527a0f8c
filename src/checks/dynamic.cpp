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
// An XIP kernel keeps only its data and bss in RAM; nothing in the inputs says how much. Boards
// built that way are small (stm32_defconfig, nommu riscv): 2 MiB is taken, said as assumed.
constexpr std::uint64_t assumed_xip_ram = 2 * mib;

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
// every static node (all its reg tuples, unless the kernel reserves only the first). From the
// v6.13 restructure (6.12.y) early_init_fdt_scan_reserved_mem() (drivers/of/fdt.c, read in
// 6.12.117 and 7.2.13) reserves the /memreserve/ entries after fdt_scan_reserved_mem() has
// placed the dynamic nodes; 5.10.223 and 6.1.192 reserve them first.
IntervalSet taken_before_dynamic(const Context& ctx, bool with_assumed) {
    IntervalSet taken;
    for (const auto& e : ctx.early)
        if ((with_assumed || !e.assumed) && !e.after_dynamic_nodes) taken.add(e.span);
    if (!kernel::reserved_mem_rules(ctx.model.version).restructured)
        for (const auto& m : ctx.reservations.memreserve)
            taken.add(Interval::of(m.address, m.size));
    for (const auto& r : ctx.reservations.regions) {
        if (r.disabled || !r.accepted_by_parser || r.reg.empty() || skipped_for_cmdline_cma(ctx, r))
            continue;
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

bool skipped_for_cmdline_cma(const Context& ctx, const Region& r) {
    const auto& cmd = ctx.reservations.cma_cmdline;
    if (!r.cma_default || !cmd || !cmd->has_value || !ctx.model.dma_cma) return false;
    const auto& rules = kernel::reserved_mem_rules(ctx.model.version);
    // kernel/dma/contiguous.c __rmem_cma_verify_node() (7.2.13): -ENODEV for a node that is not
    // reusable or is no-map comes first, and the other shared-dma-pool handler takes it.
    if (rules.declined_is_enodev) return r.shared_dma_pool && r.reusable && !r.no_map;
    // drivers/of/of_reserved_mem.c (6.19): any node with linux,cma-default.
    return rules.addr_size_helpers;
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
        if (!is_dynamic_node(*r) || skipped_for_cmdline_cma(ctx, *r)) continue;
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

namespace {

// The RAM the kernel runs from, and why there: /chosen's usable range (a crash kernel), else the
// start of RAM the configuration fixes when the board has RAM there, else the first bank.
struct KernelRam {
    std::uint64_t start = 0;
    std::string why;
};

KernelRam kernel_ram(const reserved::Reservations& reservations, const kernel::Model& model,
                     std::uint64_t first) {
    const IntervalSet ram = ram_of(reservations.memory);
    if (const auto& usable = reservations.usable_memory_range;
        usable && ram.covers(Interval::of(usable->base, 1)))
        return {usable->base, fmt::format("the start of /chosen's linux,usable-memory-range {:#x}",
                                          usable->base)};
    const auto& image = model.image;
    if (image.phys_offset) {
        if (ram.covers(Interval::of(*image.phys_offset, 1)))
            return {*image.phys_offset, fmt::format("the RAM start {} {:#x}",
                                                    image.phys_offset_symbol, *image.phys_offset)};
        return {first, fmt::format("the start of RAM {:#x} ({} {:#x} is not in the board's "
                                   "RAM: a kernel for this board is built with its own)",
                                   first, image.phys_offset_symbol, *image.phys_offset)};
    }
    return {first, fmt::format("the start of RAM {:#x}", first)};
}

// "(CONFIG_XIP_KERNEL=y (stm32_defconfig:24), …)" or "".
std::string config_lines(const kernel::Model& model) {
    std::string out;
    for (const auto& line : model.image.said)
        out += (out.empty() ? "" : ", ") + line;
    return out.empty() ? out : "; from " + out;
}

} // namespace

std::vector<EarlyReservation> assumed_early_reservations(const reserved::Reservations& reservations,
                                                         const kernel::Model& model) {
    std::vector<EarlyReservation> out;
    // An initrd the tree names is reserved first wherever it is (page-rounded: arm64's
    // arm64_memblock_init(), init/initramfs.c reserve_initrd_mem() on arm and riscv).
    if (const auto& initrd = reservations.initrd) {
        const std::uint64_t page = model.page_size ? model.page_size : 4096;
        const std::uint64_t begin = mask_down(initrd->base, page);
        out.push_back({Interval{begin, mask_up(initrd->base + initrd->size, page)}, "the initrd",
                       false, "/chosen's linux,initrd-start/-end"});
    }
    std::optional<std::uint64_t> first;
    for (const auto& bank : reservations.memory)
        if (bank.range.size && (!first || bank.range.base < *first)) first = bank.range.base;
    if (!first) return out;
    const std::uint64_t two_mib = 2 * mib;
    const auto& image = model.image;
    const bool xip = image.xip.value_or(false);
    const bool no_mmu = image.mmu && !*image.mmu;
    const KernelRam at = kernel_ram(reservations, model, *first);
    const std::string said = config_lines(model);
    auto add = [&](std::uint64_t base, std::uint64_t size, const char* what, std::string basis) {
        out.push_back({Interval::of(base, size), what, true, std::move(basis)});
    };
    // An XIP kernel runs its text from flash: memblock reserves _sdata.._end only
    // (arch/arm/include/asm/memory.h KERNEL_START; arch/riscv/mm/init.c setup_bootmem()).
    const std::string xip_size =
        fmt::format("its data and bss (CONFIG_XIP_KERNEL=y: the text runs from flash{}), "
                    "assumed {}",
                    image.xip_phys_addr ? fmt::format(" at {:#x}", *image.xip_phys_addr) : "",
                    format_size(assumed_xip_ram));
    switch (model.arch) {
    case kernel::Arch::arm64:
        // booting.rst: the Image at any 2 MiB boundary (text_offset 0 since 5.10's headers).
        add(mask_up(at.start, two_mib), assumed_arm64_image, "the kernel image",
            fmt::format("at the lowest 2 MiB boundary from {} (an arm64 Image loads at any 2 "
                        "MiB boundary{}), a generic kernel's size {}{}",
                        at.why, image.relocatable.value_or(false) ? " and relocates itself" : "",
                        format_size(assumed_arm64_image), said));
        break;
    case kernel::Arch::arm: {
        // The image (XIP: its data) at PHYS_OFFSET + TEXT_OFFSET (vmlinux.lds.S,
        // vmlinux-xip.lds.S); with an MMU swapper_pg_dir lies right below it (head.S:
        // PG_DIR_SIZE 16 KiB, 20 KiB with LPAE; reserved by arm_mm_memblock_reserve()).
        const std::uint64_t text = at.start + image.text_offset;
        const std::uint64_t pg_dir = no_mmu ? 0 : image.lpae ? 0x5000 : 0x4000;
        const std::uint64_t size = xip ? assumed_xip_ram : assumed_arm_image;
        const std::string offset = fmt::format(
            "TEXT_OFFSET {:#x}{}", image.text_offset,
            image.text_offset_symbol.empty() ? ""
                                             : fmt::format(" ({}=y)", image.text_offset_symbol));
        add(text - pg_dir, size + pg_dir, "the kernel image",
            fmt::format(
                "at {} + {}{}, {}{}", at.why, offset,
                pg_dir ? fmt::format(" with swapper_pg_dir's {} below it", format_size(pg_dir))
                       : " (no MMU: no page tables)",
                xip ? xip_size
                    : fmt::format("a generic kernel's size {}", format_size(assumed_arm_image)),
                said));
        break;
    }
    case kernel::Arch::riscv:
        if (xip || no_mmu) {
            // XIP: data at PHYS_RAM_BASE; no MMU: M-mode or above the SBI at its link address.
            const bool linked =
                !xip && image.link_address &&
                ram_of(reservations.memory).covers(Interval::of(*image.link_address, 1));
            const std::uint64_t base = linked ? *image.link_address : at.start;
            add(base, xip ? assumed_xip_ram : assumed_riscv_image, "the kernel image",
                fmt::format("at {}, {}{}",
                            linked ? fmt::format("its link address CONFIG_PAGE_OFFSET {:#x} (no "
                                                 "MMU)",
                                                 base)
                                   : at.why,
                            xip ? xip_size
                                : fmt::format("a generic kernel's size {}",
                                              format_size(assumed_riscv_image)),
                            said));
            break;
        }
        // OpenSBI's firmware at the start of RAM, the kernel at the next 2 MiB boundary.
        add(mask_up(at.start, two_mib), two_mib, "OpenSBI's firmware",
            fmt::format("at the lowest 2 MiB boundary from {} (fw_jump's usual place)", at.why));
        add(mask_up(at.start, two_mib) + two_mib, assumed_riscv_image, "the kernel image",
            fmt::format("right above it, a generic kernel's size {}{}",
                        format_size(assumed_riscv_image), said));
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
        // What was assumed rather than given, and whether the finding needs it: a pool that
        // fits once the assumed reservations are left out is lost only beside the assumed
        // kernel, so it is a warning that says what was assumed (a smaller kernel, or one
        // elsewhere, leaves room); one that does not fit even then is lost beside any kernel.
        std::string assumed;
        Severity severity = Severity::error;
        if (any_assumed) {
            if (without_assumed.empty()) without_assumed = place_dynamic(ctx, false);
            const bool fits_without =
                std::any_of(without_assumed.begin(), without_assumed.end(),
                            [&](const auto& q) { return q.region == &r && q.base.has_value(); });
            std::string list;
            for (const auto& e : ctx.early)
                if (e.assumed)
                    list += fmt::format("{}{} assumed at {:#x}..{:#x}{}", list.empty() ? "" : "; ",
                                        e.what, e.span.begin, e.span.end,
                                        e.basis.empty() ? "" : " (" + e.basis + ")");
            if (fits_without) {
                severity = Severity::warning;
                assumed = fmt::format(
                    "; {}: it fits once they are left out, so only that assumption makes this "
                    "finding (--kernel-image BASE,SIZE gives the kernel's real place, boot-check "
                    "with the board's kernel knows)",
                    list);
            } else {
                assumed = fmt::format("; {}: it does not fit even without them", list);
            }
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
            severity, r.size_ref ? r.size_ref->where : r.where, r.path,
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
