// The default CMA area (cma= or CONFIG_CMA_SIZE_*): what the kernel does with it after the tree's
// reservations, and the check of an area it cannot create.
//
// kernel/dma/contiguous.c dma_contiguous_reserve(limit) (5.10.223, 6.1.192, 6.12.117): cma=
// (size_cmdline, base, limit) wins; else, unless a linux,cma-default pool already became the
// default area (rmem_cma_setup() ran earlier, from early_init_fdt_scan_reserved_mem()), the size
// CONFIG_CMA_SIZE_* selects. mm/cma.c cma_declare_contiguous_nid() then checks the slots, aligns
// base and size up and the limit down to CMA_MIN_ALIGNMENT_BYTES, refuses what exceeds the limit
// (or the end of memblock), and asks memblock for the block: bottom-up from 4 GiB first where the
// version does (kernel/default_cma.hpp), then highmem first on a 32-bit kernel with highmem, then
// top-down below the limit.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "cmalign/core/interval.hpp"
#include "cmalign/internal/core/amount.hpp"
#include "cmalign/internal/kernel/default_cma.hpp"
#include "cmalign/internal/kernel/reserved_mem.hpp"
#include "internal.hpp"

namespace cmalign::checks {

using reserved::Kind;
using reserved::Region;
using Outcome = DefaultArea::Outcome;

const char* to_string(Outcome outcome) {
    switch (outcome) {
    case Outcome::created:
        return "created";
    case Outcome::failed:
        return "failed";
    case Outcome::none:
        return "none";
    case Outcome::dt_pool:
        return "dt-pool";
    case Outcome::no_call:
        return "no-call";
    case Outcome::unknown:
        return "unknown";
    }
    return "unknown";
}

namespace {

constexpr std::uint64_t four_gib = std::uint64_t{1} << 32;

// The CMA pools that get a MAX_CMA_AREAS slot, in the order rmem_cma_setup() sees them.
// On arm and riscv from 6.12 only the dynamic ones: the static ones are set up after the area.
std::vector<const Region*> slot_holders(const Context& ctx) {
    std::vector<const Region*> out;
    const auto limit = static_cast<std::size_t>(std::max(ctx.model.cma_areas, 0));
    const bool before_static = kernel::default_cma_before_static_setup(ctx.model);
    for (const Region* r : entries::cma_setup_order(ctx)) {
        if (entries::rejected_before_slot(ctx, *r) || (before_static && !r->dynamic)) continue;
        if (limit > 0 && out.size() == limit) break;
        out.push_back(r);
    }
    return out;
}

// What memblock holds when dma_contiguous_reserve() runs: the early reservations, /memreserve/,
// every static node but the CMA pools the kernel turned down and freed, and the dynamic nodes
// placed and not freed.
IntervalSet taken_at_default_area(const Context& ctx, const std::vector<const Region*>& holders) {
    IntervalSet taken;
    const auto& rs = ctx.reservations;
    const auto& rules = kernel::reserved_mem_rules(ctx.model.version);
    for (const auto& e : ctx.early)
        taken.add(e.span);
    for (const auto& m : rs.memreserve)
        taken.add(Interval::of(m.address, m.size));
    // A static pool set up after the area (arm, riscv from 6.12) is still reserved when the
    // area is placed, whatever its fate.
    const bool before_static = kernel::default_cma_before_static_setup(ctx.model);
    auto freed = [&](const Region& r) {
        if (r.kind != Kind::cma || before_static) return false;
        if (std::find(holders.begin(), holders.end(), &r) != holders.end()) return false;
        const bool declined_enodev =
            rules.declined_is_enodev && (r.no_map || (r.cma_default && rs.cma_cmdline));
        return !r.no_map && !declined_enodev;
    };
    for (const auto& r : rs.regions) {
        if (r.disabled || !r.accepted_by_parser || r.reg.empty() || freed(r) ||
            skipped_for_cmdline_cma(ctx, r))
            continue;
        for (std::size_t i = 0; i < r.reg.size(); ++i) {
            if (i > 0 && r.extra_tuples_unreserved) break;
            taken.add(Interval::of(r.reg[i].base, r.reg[i].size));
        }
    }
    for (const auto& p : place_dynamic(ctx))
        if (p.base && !p.freed) taken.add(Interval::of(*p.base, *p.region->size));
    return taken;
}

std::string free_words(const std::vector<Interval>& spans, std::uint64_t limit) {
    std::uint64_t largest = 0;
    for (const auto& s : spans)
        if (s.begin < limit) largest = std::max(largest, std::min(s.end, limit) - s.begin);
    return fmt::format("the largest free piece below it is {}", amount(largest));
}

} // namespace

std::optional<DefaultArea> default_area(const Context& ctx) {
    const auto& m = ctx.model;
    const auto& rs = ctx.reservations;
    if (!m.cma || !m.dma_cma || !m.default_cma) return std::nullopt;
    DefaultArea a;
    const IntervalSet ram = ram_of(rs.memory);
    kernel::DefaultCmaBoard board;
    if (!ram.empty()) {
        board.ram_start = ram.spans().front().begin;
        board.ram_end = ram.top();
    }
    board.dma_max_cpu_address = rs.dma_max_cpu_address;
    const auto limit_rule = kernel::default_cma_limit(m, board);
    a.limit_words = limit_rule.words;
    if (limit_rule.no_area) {
        a.outcome = Outcome::no_call;
        a.reason = limit_rule.words;
        return a;
    }
    const auto& cmd = rs.cma_cmdline;
    const bool from_cmdline = cmd && cmd->has_value; // bare "cma" leaves size_cmdline at -1
    std::uint64_t base = 0, cmd_limit = 0;
    bool fixed = false;
    const auto holders = slot_holders(ctx);
    if (from_cmdline) {
        a.source = DefaultArea::Source::cmdline;
        a.asked = "cma=" + cmd->text;
        a.requested = cmd->size;
        base = cmd->base.value_or(0);
        cmd_limit = cmd->limit.value_or(0);
        fixed = cmd->fixed;
    } else {
        a.asked = kernel::default_cma_config_words(m);
        for (const Region* r : holders)
            if (r->cma_default) a.dt_pool = r->path; // the last one set up wins
        if (!a.dt_pool.empty()) {
            a.outcome = Outcome::dt_pool;
            a.reason = fmt::format("the linux,cma-default pool {} is the default CMA area, so "
                                   "dma_contiguous_reserve() reserves none",
                                   a.dt_pool);
            return a;
        }
        std::optional<std::uint64_t> total;
        if (!ram.empty()) {
            total = 0;
            for (const auto& s : ram.spans())
                *total += s.end - s.begin;
        }
        const auto size = kernel::default_cma_config_size(m, total);
        if (!size) {
            a.reason = "the size is a share of the RAM and the tree has no /memory";
            return a;
        }
        a.requested = *size;
    }
    if (a.requested == 0) {
        a.outcome = Outcome::none;
        a.reason = fmt::format("{} asks for 0 bytes", a.asked);
        return a;
    }
    if (!m.cma_min_alignment_bytes) {
        a.reason = "CMA_MIN_ALIGNMENT_BYTES is decided at boot";
        return a;
    }
    if (ram.empty()) {
        a.reason = "the tree has no /memory";
        return a;
    }
    const std::uint64_t align = *m.cma_min_alignment_bytes;
    a.alignment = align;
    a.arch_limit = limit_rule.limit;
    const auto& rules = kernel::default_cma_rules(m.version);
    // min_not_zero(limit_cmdline, limit), or `limit_cmdline ?: limit` where the version has it.
    std::uint64_t limit = limit_rule.limit;
    if (from_cmdline && cmd_limit)
        limit = rules.cmdline_limit_replaces || !limit ? cmd_limit : std::min(cmd_limit, limit);
    auto fail = [&](std::string reason, std::vector<std::string> lines) {
        a.outcome = Outcome::failed;
        a.reason = std::move(reason);
        a.lines = std::move(lines);
        return a;
    };
    // The size the lines print: the aligned one, or what was asked where the wrapper prints.
    const auto failed_line = [&](std::uint64_t size) {
        return kernel::default_cma_failed_line(m, rules.wrapper_prints_asked_size ? a.requested
                                                                                  : size);
    };
    // cma_declare_contiguous_nid(): the slot first, before any line of its own.
    if (m.cma_areas > 0 && holders.size() >= static_cast<std::size_t>(m.cma_areas)) {
        std::vector<std::string> lines{"cma: Not enough slots for CMA reserved regions!"};
        if (rules.wrapper_prints_asked_size) lines.push_back(failed_line(a.requested));
        return fail(fmt::format("the tree's {} CMA pools hold all {} MAX_CMA_AREAS slots",
                                holders.size(), m.cma_areas),
                    std::move(lines));
    }
    if (fixed && base % align != 0) {
        a.reported_by_cmdline_check = true;
        return fail(
            fmt::format("the fixed base {} is not a multiple of {}", hex(base), amount(align)),
            {fmt::format("cma: Region at {} must be aligned to {} bytes", pa(base, m),
                         pa(align, m)),
             failed_line(a.requested)});
    }
    const auto aligned_base = round_up(base, align);
    const auto size = round_up(a.requested, align);
    if (!aligned_base || !size) return fail("the size overflows when aligned", {});
    base = *aligned_base;
    a.size = *size;
    limit &= ~(align - 1);
    if (base == 0) fixed = false;
    if (fixed) a.fixed = base;
    const auto highmem = kernel::highmem_start(m, board);
    if (fixed && highmem && base < *highmem && base + a.size > *highmem)
        return fail(fmt::format("the fixed area {}+{} crosses the start of highmem {}", hex(base),
                                hex(a.size), hex(*highmem)),
                    {fmt::format("cma: Region at {} defined on low/high memory boundary ({})",
                                 pa(base, m), pa(*highmem, m)),
                     failed_line(a.size)});
    const std::uint64_t memblock_end = ram.top();
    if (limit == 0 || limit > memblock_end) limit = memblock_end;
    a.limit = limit;
    if (base + a.size > limit) {
        // cmdline-cma says this already when cma= alone (its limit or the end of RAM) refuses it.
        if (from_cmdline) {
            std::uint64_t own = cmd_limit & ~(align - 1);
            if (own == 0) own = memblock_end;
            a.reported_by_cmdline_check = base + a.size > own;
        }
        return fail(fmt::format("{}+{} exceeds the limit {} ({})", hex(base), hex(a.size),
                                hex(limit), a.limit_words),
                    {fmt::format("cma: Size ({}) of region at {} exceeds limit ({})", pa(a.size, m),
                                 pa(base, m), pa(limit, m)),
                     failed_line(a.size)});
    }
    IntervalSet taken = taken_at_default_area(ctx, holders);
    const std::uint64_t page = m.page_size ? m.page_size : 4096;
    // The arch's own early allocations come first, top-down wherever they fit.
    if (m.section_size_bits) {
        std::uint64_t total = 0;
        std::set<std::uint64_t> sections;
        for (const auto& s : ram.spans()) {
            total += s.end - s.begin;
            for (std::uint64_t at = s.begin >> *m.section_size_bits;
                 at <= (s.end - 1) >> *m.section_size_bits; ++at)
                sections.insert(at);
        }
        // The linear map leaves out what memblock marks no-map (map_mem()'s for_each_mem_range()).
        IntervalSet no_map;
        for (const auto& r : ctx.reservations.regions)
            if (r.no_map && !r.disabled && r.accepted_by_parser)
                for (const auto& reg : r.reg)
                    no_map.add(Interval::of(reg.base, reg.size));
        for (const auto& p : place_dynamic(ctx))
            if (p.base && !p.freed && p.region->no_map)
                no_map.add(Interval::of(*p.base, *p.region->size));
        std::uint64_t mapped = total;
        for (const auto& s : ram.spans())
            for (const auto& n : no_map.spans())
                if (overlaps(s, n)) mapped -= std::min(s.end, n.end) - std::max(s.begin, n.begin);
        for (const auto& e : kernel::allocations_before_default_cma(m, mapped, sections.size())) {
            const std::uint64_t at = memblock_find(free_spans(ram, taken), e.size, e.align, 0,
                                                   ~std::uint64_t{0}, page, false);
            if (at && e.kept) taken.add(Interval::of(at, e.kept));
        }
    }
    const auto spans = free_spans(ram, taken);
    if (fixed) {
        const bool busy = std::any_of(taken.spans().begin(), taken.spans().end(), [&](auto& t) {
            return overlaps(t, Interval::of(base, a.size));
        });
        if (busy)
            return fail(
                fmt::format("{}+{} overlaps memory already reserved", hex(base), hex(a.size)),
                {failed_line(a.size)});
        a.base = base;
    } else {
        std::uint64_t addr = 0;
        using BottomUp = kernel::DefaultCmaRules::BottomUp;
        if (rules.bottom_up != BottomUp::never && m.phys_addr_64bit) {
            const std::uint64_t key =
                rules.bottom_up == BottomUp::when_memblock_end_allows ? memblock_end : limit;
            if (key >= four_gib + a.size)
                addr = memblock_find(spans, a.size, align, four_gib, limit, page, true);
        }
        if (!addr && highmem && base < *highmem && limit > *highmem) {
            addr = memblock_find(spans, a.size, align, *highmem, limit, page, false);
            limit = *highmem;
        }
        if (!addr) addr = memblock_find(spans, a.size, align, base, limit, page, false);
        if (!addr)
            return fail(fmt::format("memblock finds no free block of {} at {} below {} ({}): {}",
                                    amount(a.size), amount(align), hex(a.limit), a.limit_words,
                                    free_words(spans, a.limit)),
                        {failed_line(a.size)});
        a.base = addr;
    }
    a.outcome = Outcome::created;
    a.lines = {kernel::default_cma_reserved_line(
        m, rules.wrapper_prints_asked_size ? a.requested : a.size, *a.base)};
    return a;
}

namespace entries {

void check_cma_default_area(const Context& ctx, Findings& out) {
    const auto area = default_area(ctx);
    if (!area) return;
    const auto& rs = ctx.reservations;
    const auto& m = ctx.model;
    Location where;
    std::string node;
    if (area->source == DefaultArea::Source::cmdline) {
        where = rs.bootargs_where;
        node = rs.bootargs_from_option ? "" : "/chosen";
    } else if (!rs.memory.empty()) {
        where = rs.memory.front().where;
        node = rs.memory.front().path;
    }
    if (!where.known()) where = Location{rs.input, 0, 0};
    if (area->outcome == Outcome::failed && !area->reported_by_cmdline_check) {
        std::string printed;
        for (const auto& line : area->lines)
            printed += fmt::format("{}\"{}\"", printed.empty() ? "" : ", then ", line);
        out.add(Severity::error, where, node,
                fmt::format("the default CMA area ({}{}) cannot be created on {}: {}; the kernel "
                            "prints {} and drivers without a pool of their own get no CMA memory",
                            area->asked,
                            area->size && area->size != area->requested
                                ? fmt::format(", {} after alignment to {}", amount(area->size),
                                              amount(area->alignment))
                                : std::string{},
                            kernel_name(m), area->reason, printed));
    }
}

extern const CheckInfo cma_default_area{
    "cma-default-area", Severity::error, true,
    "the default CMA area (cma= or CONFIG_CMA_SIZE_*) must fit below its limit beside the tree's "
    "reservations",
    check_cma_default_area};

} // namespace entries

} // namespace cmalign::checks
