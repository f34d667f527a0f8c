// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel-header oracle probe for cmalign.
 *
 * Compiled in kernel context (external-module single-target build of oracle_probe.s) so that the
 * kernel's own headers and the configured autoconf.h decide every value. Each value is emitted as
 * an assembler string "->NAME <value>" (the scheme of include/linux/kbuild.h DEFINE()), or
 * "->NAME runtime" when the expression is not a compile-time constant (powerpc book3s64 with
 * HUGETLB_PAGE_SIZE_VARIABLE: pageblock_order is a variable set by set_pageblock_order()).
 * Never linked or loaded.
 */
#include <linux/cma.h>
#include <linux/hugetlb.h>
#include <linux/kernel.h>
#include <linux/mm.h> /* includes <linux/huge_mm.h>, which needs mm.h first */
#include <linux/mmzone.h>
#include <linux/pageblock-flags.h>

/* Emit the value as a long long constant; if the expression is not constant, say "runtime". */
#define ORACLE_EMIT(name, expr)                                                                    \
    do {                                                                                           \
        if (__builtin_constant_p(expr))                                                            \
            asm volatile("\n.ascii \"->" name                                                      \
                         " %0\"" ::"i"((long long)(__builtin_constant_p(expr) ? (expr) : 0)));     \
        else                                                                                       \
            asm volatile("\n.ascii \"->" name " runtime\"");                                       \
    } while (0)

void cmalign_oracle_probe(void);
void cmalign_oracle_probe(void) {
    ORACLE_EMIT("PAGE_SHIFT", PAGE_SHIFT);
    ORACLE_EMIT("PAGE_SIZE", PAGE_SIZE);
#ifdef MAX_PAGE_ORDER /* >= v6.8: inclusive */
    ORACLE_EMIT("MAX_PAGE_ORDER", MAX_PAGE_ORDER);
#endif
#ifdef NR_PAGE_ORDERS
    ORACLE_EMIT("NR_PAGE_ORDERS", NR_PAGE_ORDERS);
#endif
#if defined(MAX_ORDER) && !defined(MAX_PAGE_ORDER) /* <= v6.7 (exclusive until v6.4) */
    ORACLE_EMIT("MAX_ORDER", MAX_ORDER);
#endif
#ifdef MAX_ORDER_NR_PAGES
    ORACLE_EMIT("MAX_ORDER_NR_PAGES", MAX_ORDER_NR_PAGES);
#endif
    ORACLE_EMIT("pageblock_order", pageblock_order);
    ORACLE_EMIT("pageblock_nr_pages", pageblock_nr_pages);
#ifdef CMA_MIN_ALIGNMENT_BYTES /* >= v5.17 (include/linux/cma.h) */
    ORACLE_EMIT("CMA_MIN_ALIGNMENT_PAGES", CMA_MIN_ALIGNMENT_PAGES);
    ORACLE_EMIT("CMA_MIN_ALIGNMENT_BYTES", CMA_MIN_ALIGNMENT_BYTES);
#else
    /*
     * <= v5.16 has no macro: rmem_cma_setup() (kernel/dma/contiguous.c) and cma_init_reserved_mem()
     * (mm/cma.c) of v5.10 both write the expression out; compile that same expression.
     */
    ORACLE_EMIT("CMA_ALIGNMENT_INLINE",
                PAGE_SIZE << max_t(unsigned long, MAX_ORDER - 1, pageblock_order));
#endif
#ifdef MAX_CMA_AREAS
    ORACLE_EMIT("MAX_CMA_AREAS", MAX_CMA_AREAS);
#endif
#ifdef CONFIG_TRANSPARENT_HUGEPAGE /* HPAGE_PMD_SHIFT is BUILD_BUG() otherwise */
    ORACLE_EMIT("HPAGE_PMD_ORDER", HPAGE_PMD_ORDER);
#endif
#ifdef CONFIG_HUGETLB_PAGE
    ORACLE_EMIT("HUGETLB_PAGE_ORDER", HUGETLB_PAGE_ORDER);
#endif
#ifdef SECTION_SIZE_BITS
    ORACLE_EMIT("SECTION_SIZE_BITS", SECTION_SIZE_BITS);
#endif
}
