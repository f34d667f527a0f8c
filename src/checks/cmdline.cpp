// The checks of the kernel command line: cma= and the other memory parameters it names.
#include "internal.hpp"

#include <fmt/format.h>

#include "cmalign/core/interval.hpp"
#include "cmalign/internal/core/amount.hpp"
#include "cmalign/internal/kernel/calc_rules.hpp"
#include "cmalign/internal/kernel/reserved_mem.hpp"
#include "cmalign/reserved/bootargs.hpp"

namespace cmalign::checks::entries {

using reserved::Kind;
using reserved::Region;

// cmdline-params: cma_pernuma=, numa_cma= (kernel/dma/contiguous.c), pcp_batch_scale_max= (not
// upstream), transparent_hugepage= (mm/huge_memory.c). Shared with `cmalign pcp`.

void check_cmdline_params(const Context& ctx, Findings& out) {
    const auto& rs = ctx.reservations;
    if (!rs.boot_params) return;
    const auto& bp = *rs.boot_params;
    Location where = rs.bootargs_where;
    if (!where.known()) where = Location{rs.input, 0, 0};
    std::string node = rs.bootargs_from_option ? std::string{} : std::string{"/chosen"};
    if (bp.pcp_batch_scale_max_text) {
        out.add(Severity::warning, where, node,
                fmt::format("pcp_batch_scale_max={} is not an upstream kernel parameter (an RFC of "
                            "Nov 2024, not merged): the kernel passes it to init and keeps "
                            "CONFIG_PCP_BATCH_SCALE_MAX; set that option instead",
                            *bp.pcp_batch_scale_max_text));
    }
    if (bp.cma_pernuma_text && !bp.cma_pernuma_trailing.empty())
        out.add(Severity::warning, where, node,
                fmt::format("cma_pernuma={}: the kernel ignores the trailing \"{}\"",
                            *bp.cma_pernuma_text, bp.cma_pernuma_trailing));
    if (bp.numa_cma_text) {
        if (kernel::calc_rules::find(kernel::calc_rules::Topic::numa_cma_params, ctx.model.version)
                .variant == 0)
            out.add(Severity::warning, where, node,
                    fmt::format("numa_cma={}: {} has no numa_cma= (added with CONFIG_DMA_NUMA_CMA "
                                "in v6.5 [likely]); only cma_pernuma= exists",
                                *bp.numa_cma_text, kernel_name(ctx.model)));
        else if (!bp.numa_cma_ignored.empty())
            out.add(Severity::warning, where, node,
                    fmt::format("numa_cma={}: early_numa_cma() stops at \"{}\" and ignores the "
                                "rest silently (expected NODE:SIZE[,NODE:SIZE...])",
                                *bp.numa_cma_text, bp.numa_cma_ignored));
    }
    if (bp.transparent_hugepage && !bp.transparent_hugepage_valid)
        out.add(Severity::warning, where, node,
                fmt::format("transparent_hugepage={}: the kernel prints \"transparent_hugepage= "
                            "cannot parse, ignored\"",
                            *bp.transparent_hugepage));
}

extern const CheckInfo cmdline_params{
    "cmdline-params", Severity::warning, true,
    "cma_pernuma=, numa_cma=, transparent_hugepage= problems, and the non-upstream "
    "pcp_batch_scale_max=",
    check_cmdline_params};

// cmdline-cma: kernel/dma/contiguous.c early_cma(), dma_contiguous_reserve(), rmem_cma_setup();
// mm/cma.c cma_declare_contiguous_nid().

void check_cmdline_cma(const Context& ctx, Findings& out) {
    const auto& rs = ctx.reservations;
    if (!rs.cma_cmdline) return;
    const auto& cma = *rs.cma_cmdline;
    const auto& m = ctx.model;
    Location where = rs.bootargs_where;
    if (!where.known()) where = Location{rs.input, 0, 0};
    std::string node = rs.bootargs_from_option ? std::string{} : std::string{"/chosen"};
    if (!cma.has_value) {
        out.add(Severity::warning, where, node,
                "`cma` without a value: the kernel prints \"cma: Config string not provided\" and "
                "ignores it");
        return;
    }
    if (!cma.trailing.empty())
        out.add(
            Severity::warning, where, node,
            fmt::format("cma={}: the kernel ignores the trailing \"{}\"", cma.text, cma.trailing));
    if (cma.occurrences > 1)
        out.add(Severity::note, where, node,
                fmt::format("cma= is given {} times; the last one (cma={}) wins", cma.occurrences,
                            cma.text));
    // A DT linux,cma-default pool loses against cma=.
    if (m.cma && m.dma_cma) {
        for (const auto& r : rs.regions) {
            if (r.kind != Kind::cma || !r.cma_default) continue;
            const auto& rules = kernel::reserved_mem_rules(m.version);
            std::string words =
                rules.declined_is_enodev
                    // ≥ v7.1: rmem_cma_validate() (kernel/dma/contiguous.c, pr_fmt "") refuses
                    // the node before it is reserved, so the memory stays with Linux.
                    ? fmt::format("{} prints \"Skipping dt linux,cma-default node in favor for "
                                  "\\\"cma=\\\" kernel param.\" and does not reserve it",
                                  kernel_name(m))
                    : rules.addr_size_helpers
                          ? fmt::format(
                                "{} prints \"OF: reserved mem: Skipping dt linux,cma-default for "
                                "\\\"cma=\\\" kernel param.\" and does not reserve it",
                                kernel_name(m))
                          : fmt::format(
                                "{} prints \"Reserved memory: bypass {} node, using cmdline CMA "
                                "params instead\" and \"OF: reserved mem: node {} compatible "
                                "matching fail\", then frees the region",
                                kernel_name(m), r.name, r.name);
            out.add(Severity::warning, r.where, r.path,
                    fmt::format("cma={} on the command line overrides the linux,cma-default pool "
                                "{}: {}",
                                cma.text, r.name, words));
        }
    }
    if (cma.size == 0) {
        out.add(Severity::note, where, node,
                fmt::format("cma={} asks for 0 bytes: no default CMA area is created", cma.text));
        return;
    }
    auto facts = alignment_facts(m);
    if (!facts.exact) return;
    std::uint64_t align = *facts.exact;
    std::uint64_t base = cma.base.value_or(0);
    std::uint64_t limit = cma.limit.value_or(0);
    if (cma.fixed && base % align != 0) {
        out.add(Severity::error, where, node,
                fmt::format("cma={}: the fixed base {} is not a multiple of {}: the kernel prints "
                            "\"cma: Region at {} must be aligned to {} bytes\" and creates no "
                            "default CMA area",
                            cma.text, hex(base), alignment_words(m, align), pa(base, m),
                            pa(align, m)));
        return;
    }
    auto size = round_up(cma.size, align);
    auto aligned_base = round_up(base, align);
    if (!size || !aligned_base) return;
    if (*size != cma.size)
        out.add(Severity::note, where, node,
                fmt::format("cma={}: the size {} is rounded up to {} ({})", cma.text,
                            amount(cma.size), amount(*size), alignment_words(m, align)));
    limit &= ~(align - 1);
    if (limit == 0) {
        // Only the memblock end bounds it; we know it when /memory is in the tree.
        limit = ram_of(rs.memory).top();
    }
    if (limit != 0 && Interval::of(*aligned_base, *size).end > limit)
        out.add(Severity::error, where, node,
                fmt::format("cma={}: after alignment to {} the area {}+{} exceeds the limit {}: "
                            "the kernel prints \"cma: Size ({}) of region at {} exceeds limit "
                            "({})\" and creates no default CMA area",
                            cma.text, amount(align), hex(*aligned_base), hex(*size), hex(limit),
                            pa(*size, m), pa(*aligned_base, m), pa(limit, m)));
}

extern const CheckInfo cmdline_cma{
    "cmdline-cma", Severity::error, true,
    "problems of the cma= kernel parameter, and linux,cma-default pools it overrides",
    check_cmdline_cma};

} // namespace cmalign::checks::entries
