// Boot parameters shared by check and pcp (reserved/bootargs.hpp).
#include <doctest/doctest.h>

#include "cmalign/reserved/bootargs.hpp"

using namespace cmalign::reserved;

TEST_CASE("pcp_batch_scale_max=: the RFC's semantics, 0–6, larger clamps to 6") {
    auto b = parse_boot_params("console=ttySC0 pcp_batch_scale_max=0 root=/dev/mmcblk0p2");
    REQUIRE(b.pcp_batch_scale_max_text);
    CHECK(*b.pcp_batch_scale_max_text == "0");
    CHECK(b.pcp_batch_scale_max == 0);
    CHECK_FALSE(b.pcp_batch_scale_max_clamped);
    auto big = parse_boot_params("pcp_batch_scale_max=9");
    CHECK(big.pcp_batch_scale_max == 6);
    CHECK(big.pcp_batch_scale_max_clamped);
    CHECK(parse_boot_params("pcp_batch_scale_max=6").pcp_batch_scale_max == 6);
    CHECK_FALSE(parse_boot_params("pcp_batch_scale_max=6").pcp_batch_scale_max_clamped);
    CHECK_FALSE(parse_boot_params("pcp_batch_scale_max=x").pcp_batch_scale_max);
    CHECK_FALSE(parse_boot_params("pcp_batch_scale_max").pcp_batch_scale_max);
    // The last one wins.
    CHECK(parse_boot_params("pcp_batch_scale_max=1 pcp_batch_scale_max=3").pcp_batch_scale_max ==
          3);
    CHECK_FALSE(parse_boot_params("console=ttyS0").pcp_batch_scale_max_text);
}

TEST_CASE("cma=, cma_pernuma= and numa_cma= as kernel/dma/contiguous.c reads them") {
    auto b = parse_boot_params("cma=64M@0x80000000 cma_pernuma=16M numa_cma=0:32M,1:64M");
    REQUIRE(b.cma);
    CHECK(b.cma->size == 64u << 20);
    CHECK(b.cma->base == 0x80000000u);
    REQUIRE(b.cma_pernuma_text);
    CHECK(b.cma_pernuma == 16u << 20);
    CHECK(b.cma_pernuma_trailing.empty());
    REQUIRE(b.numa_cma.size() == 2);
    CHECK(b.numa_cma[0].node == 0);
    CHECK(b.numa_cma[0].size == 32u << 20);
    CHECK(b.numa_cma[1].node == 1);
    CHECK(b.numa_cma[1].size == 64u << 20);
    CHECK(b.numa_cma_ignored.empty());
    // early_numa_cma() stops silently at the first entry without "N:".
    auto bad = parse_boot_params("numa_cma=0:32M;1:64M");
    REQUIRE(bad.numa_cma.size() == 1);
    CHECK(bad.numa_cma_ignored == ";1:64M");
    auto bad2 = parse_boot_params("numa_cma=32M");
    CHECK(bad2.numa_cma.empty());
    CHECK(bad2.numa_cma_ignored == "32M");
    // memparse ignores what follows the number.
    CHECK(parse_boot_params("cma_pernuma=16Mx").cma_pernuma_trailing == "x");
}

TEST_CASE("transparent_hugepage=") {
    CHECK(parse_boot_params("transparent_hugepage=never").transparent_hugepage_valid);
    CHECK_FALSE(parse_boot_params("transparent_hugepage=sometimes").transparent_hugepage_valid);
    CHECK(*parse_boot_params("transparent_hugepage=madvise").transparent_hugepage == "madvise");
}
