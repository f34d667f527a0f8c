// The default CMA area (cma= or CONFIG_CMA_SIZE_*) on hand-made boards: its size after the
// kernel's rounding, where memblock puts it below the arch's limit, and cma-default-area's error
// when it has no room. The booted figures are in docs/boot-check.md.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cmalign/checks/checks.hpp"
#include "cmalign/core/interval.hpp"
#include "support/dt_builder.hpp"
#include "support/findings.hpp"
#include "support/models.hpp"

using namespace cmalign;
using namespace cmalign::test;
using Outcome = checks::DefaultArea::Outcome;

namespace {

constexpr std::uint64_t mib = std::uint64_t{1} << 20;

kernel::Model with_default_area(kernel::Model m, std::uint64_t mbytes) {
    kernel::DefaultCmaConfig d;
    d.mbytes = mbytes;
    d.zone_dma = d.zone_dma32 = true;
    // Debian 6.12's and 7.2's arm64: 52-bit physical addresses, PAGE_EXTENSION, KFENCE without
    // its boot-time pool (CONFIG_KFENCE_SAMPLE_INTERVAL=0).
    d.phys_addr_bits = 52;
    d.page_extension = true;
    d.kfence = true;
    d.kfence_sample_ms = 0;
    m.default_cma = d;
    return m;
}

std::vector<Diagnostic> errors(const checks::Result& r) {
    std::vector<Diagnostic> out;
    for (const auto& d : r.diagnostics)
        if (d.check == "cma-default-area") out.push_back(d);
    return out;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

dt::Node no_map(std::string name, std::uint64_t base, std::uint64_t size) {
    return node(
        std::move(name),
        {cells("reg", {static_cast<std::uint32_t>(base >> 32), static_cast<std::uint32_t>(base),
                       static_cast<std::uint32_t>(size >> 32), static_cast<std::uint32_t>(size)}),
         flag("no-map")});
}

} // namespace

TEST_CASE("default CMA area: CONFIG_CMA_SIZE_MBYTES rounded to the CMA alignment, at the top") {
    // 16K pages: 32 MiB alignment, so 16 MiB becomes 32 MiB; arm64 6.12 with 1 GiB of RAM at
    // 0x40000000: ZONE_DMA ends at the end of RAM, the area goes to its top.
    auto r = checks::run(board({}), with_default_area(arm64_612(16384), 16), {});
    REQUIRE(r.default_area);
    const auto& a = *r.default_area;
    CHECK(a.outcome == Outcome::created);
    CHECK(a.requested == 16 * mib);
    CHECK(a.size == 32 * mib);
    CHECK(a.limit == 0x80000000);
    CHECK(a.base == std::optional<std::uint64_t>(0x7e000000));
    REQUIRE(a.lines.size() == 1);
    CHECK(a.lines[0] == "cma: Reserved 32 MiB at 0x000000007e000000 on node -1");
    CHECK(errors(r).empty());
}

TEST_CASE("default CMA area: 64K pages round 32 MiB to 512 MiB, which a no-map region blocks") {
    auto m = with_default_area(arm64_612(65536), 32);
    auto free_board = checks::run(board({}), m, {});
    REQUIRE(free_board.default_area);
    CHECK(free_board.default_area->outcome == Outcome::created);
    CHECK(free_board.default_area->size == 512 * mib);
    CHECK(free_board.default_area->base == std::optional<std::uint64_t>(0x60000000));
    // 1 MiB of firmware at 0x70000000 leaves no 512 MiB-aligned 512 MiB of free RAM.
    auto r = checks::run(board({no_map("fw@70000000", 0x70000000, mib)}), m, {});
    REQUIRE(r.default_area);
    CHECK(r.default_area->outcome == Outcome::failed);
    REQUIRE(r.default_area->lines.size() == 1);
    CHECK(r.default_area->lines[0] == "cma: Failed to reserve 512 MiB on node -1");
    auto e = errors(r);
    REQUIRE(e.size() == 1);
    CHECK(e[0].severity == Severity::error);
    CHECK(e[0].node == "/memory@40000000");
    CHECK(contains(e[0].message, "CONFIG_CMA_SIZE_MBYTES=32"));
    CHECK(contains(e[0].message, "0x20000000 (512 MiB) after alignment"));
    CHECK(contains(e[0].message, "\"cma: Failed to reserve 512 MiB on node -1\""));
}

TEST_CASE("default CMA area: the tree's dma-ranges bound arm64's ZONE_DMA and so the area") {
    auto t = board({});
    // A bus whose DMA reaches CPU addresses 0x40000000..0x4fffffff only.
    t.root.children.push_back(
        node("soc", {cells("#address-cells", {2}), cells("#size-cells", {2}), flag("ranges"),
                     cells("dma-ranges", {0, 0, 0, 0x40000000, 0, 0x10000000})}));
    auto small = checks::run(t, with_default_area(arm64_612(4096), 64), {});
    REQUIRE(small.default_area);
    CHECK(small.reservations.dma_max_cpu_address == std::optional<std::uint64_t>(0x4fffffff));
    CHECK(small.default_area->limit == 0x50000000);
    CHECK(small.default_area->base == std::optional<std::uint64_t>(0x50000000 - 64 * mib));
    // 256 MiB do not fit below 0x50000000 beside the kernel image (assumed at 0x40000000).
    auto big = checks::run(t, with_default_area(arm64_612(4096), 256), {});
    REQUIRE(big.default_area);
    CHECK(big.default_area->outcome == Outcome::failed);
    CHECK(errors(big).size() == 1);
}

TEST_CASE("default CMA area: a linux,cma-default pool replaces it, cma=0 asks for none") {
    auto pool = cma_pool("linux,cma", 32 * mib);
    pool.properties.push_back(flag("linux,cma-default"));
    auto m = with_default_area(arm64_612(4096), 16);
    auto r = checks::run(board({pool}), m, {});
    REQUIRE(r.default_area);
    CHECK(r.default_area->outcome == Outcome::dt_pool);
    CHECK(r.default_area->dt_pool == "/reserved-memory/linux,cma");
    // A pool the kernel rejects (no-map) leaves the configured area to be reserved.
    auto rejected = pool;
    rejected.properties.push_back(flag("no-map"));
    auto r2 = checks::run(board({rejected}), m, {});
    CHECK(r2.default_area->outcome == Outcome::created);
    checks::Options o;
    o.bootargs = "cma=0";
    auto none = checks::run(board({}), m, o);
    CHECK(none.default_area->outcome == Outcome::none);
    CHECK(errors(none).empty());
}

TEST_CASE("default CMA area: no slot left, and the lines of the later mm/cma.c") {
    auto m = with_default_area(arm64_612(4096), 16);
    m.cma_areas = 2;
    auto r = checks::run(board({cma_pool("a", 4 * mib), cma_pool("b", 4 * mib)}), m, {});
    REQUIRE(r.default_area);
    CHECK(r.default_area->outcome == Outcome::failed);
    CHECK(r.default_area->lines ==
          std::vector<std::string>{"cma: Not enough slots for CMA reserved regions!"});
    CHECK(errors(r).size() == 1);
    // 7.2 prints the size it was asked for, not the aligned one, and no node.
    auto m72 = with_default_area(arm64_612(16384), 16);
    m72.version = *KernelVersion::parse("7.2.13");
    auto r72 = checks::run(board({}), m72, {});
    REQUIRE(r72.default_area);
    CHECK(r72.default_area->size == 32 * mib);
    CHECK(r72.default_area->lines ==
          std::vector<std::string>{"cma: Reserved 16 MiB at 0x000000007e000000"});
}

TEST_CASE("default CMA area: what cmdline-cma reports about cma= is not reported twice") {
    auto m = with_default_area(arm64_612(4096), 16);
    checks::Options o;
    // 3 MiB rounded to 4 MiB no longer ends at cma='s own limit: cmdline-cma says so.
    o.bootargs = "cma=3M@0x80000000";
    auto r = checks::run(board({}), m, o);
    REQUIRE(r.default_area);
    CHECK(r.default_area->outcome == Outcome::failed);
    CHECK(r.default_area->reported_by_cmdline_check);
    CHECK(errors(r).empty());
    // Past the end of RAM but within cma='s own limit: only the kernel's limit (the end of
    // memblock) refuses it, which cmdline-cma does not look at.
    o.bootargs = "cma=64M@0x90000000";
    auto beyond = checks::run(board({}), m, o);
    REQUIRE(beyond.default_area);
    CHECK(beyond.default_area->outcome == Outcome::failed);
    CHECK_FALSE(beyond.default_area->reported_by_cmdline_check);
    auto e = errors(beyond);
    REQUIRE(e.size() == 1);
    CHECK(e[0].node.empty()); // --bootargs: no /chosen to point at
    CHECK(contains(e[0].message, "\"cma: Size (0x0000000004000000) of region at "
                                 "0x0000000090000000 exceeds limit (0x0000000080000000)\""));
}

TEST_CASE("default CMA area: arm64's page tables and memmap come first, at the top") {
    // 16K pages, 128 MiB sections: 0.6 MiB of page tables and 0.5 MiB of section roots at the
    // top, then the 256 MiB memmap buffer aligned to 32 MiB below them, of which only the bottom
    // 4 MiB stays: the area (32 MiB) goes right below the top 32 MiB block, as booted on
    // 6.12-arm64-16k.
    auto m = with_default_area(arm64_612(16384), 16);
    m.section_size_bits = 27;
    auto r = checks::run(board({}), m, {});
    REQUIRE(r.default_area);
    CHECK(r.default_area->base == std::optional<std::uint64_t>(0x7c000000));
    // 4K pages: 2 MiB of PTE tables for 1 GiB (and 68 KiB more), 2 MiB of section roots
    // (2^25 sections at 128 per root), then 8 sections x 2 MiB of memmap, all kept.
    auto m4 = with_default_area(arm64_612(4096), 64);
    m4.section_size_bits = 27;
    auto r4 = checks::run(board({}), m4, {});
    REQUIRE(r4.default_area);
    CHECK(r4.default_area->base == std::optional<std::uint64_t>(0x7aa00000));
    // 7.2.13 calls sparse_init() from free_area_init(), after the area: only the tables.
    m4.version = *KernelVersion::parse("7.2.13");
    auto r72 = checks::run(board({}), m4, {});
    REQUIRE(r72.default_area);
    CHECK(r72.default_area->base == std::optional<std::uint64_t>(0x7bc00000));
    // KFENCE with a sample interval takes its 2 MiB pool ((255 + 1) * 2 pages) first.
    auto kfence = m4;
    kfence.default_cma->kfence_sample_ms = 100;
    auto rk = checks::run(board({}), kfence, {});
    REQUIRE(rk.default_area);
    CHECK(rk.default_area->base == std::optional<std::uint64_t>(0x7ba00000));
    // 512 MiB of no-map memory is not in the linear map: 1 MiB of PTE tables less.
    auto rn = checks::run(board({no_map("carve@50000000", 0x50000000, 512 * mib)}), m4, {});
    REQUIRE(rn.default_area);
    CHECK(rn.default_area->base == std::optional<std::uint64_t>(0x7be00000));
}

TEST_CASE("default CMA area: a linux,cma-default pool cma= overrides takes no room from 6.19") {
    // 2 GiB asked for in 1 GiB of RAM. 6.12.117 allocates the node before rmem_cma_setup()
    // bypasses it, so the allocation fails first; 6.19 (__reserved_mem_alloc_size() asks
    // cma_skip_dt_default_reserved_mem()) and 7.2.13 (rmem_cma_validate(): -EBUSY) skip the node
    // before memblock is asked, so it cannot lack room.
    auto pool = cma_pool("linux,cma", 2048 * mib);
    pool.properties.push_back(flag("linux,cma-default"));
    checks::Options o;
    o.bootargs = "cma=16M";
    auto m612 = with_default_area(arm64_612(4096), 64);
    CHECK(findings_of(checks::run(board({pool}), m612, o), "dynamic-no-room").size() == 1);
    for (const char* version : {"6.19.1", "7.2.13"}) {
        CAPTURE(version);
        auto m = m612;
        m.version = *KernelVersion::parse(version);
        auto r = checks::run(board({pool}), m, o);
        CHECK(findings_of(r, "dynamic-no-room").empty());
        REQUIRE(r.default_area);
        CHECK(r.default_area->outcome == Outcome::created);
        CHECK(r.default_area->size == 16 * mib);
        // Without cma= the same node is allocated and fails for want of room.
        CHECK(findings_of(checks::run(board({pool}), m, {}), "dynamic-no-room").size() == 1);
    }
}

TEST_CASE("default CMA area: a static linux,cma-default pool cma= overrides leaves its memory") {
    // 7.2.13: the pool over the top 512 MiB is never reserved, so cma=512M fits at the top; on
    // 6.12.117 rmem_cma_setup() bypasses it after it was reserved and frees it again (the same
    // room), and with no-map on 7.2.13 __rmem_cma_verify_node() returns -ENODEV first: the
    // region stays reserved no-map and the area has no room.
    auto pool = cma_static("linux,cma@60000000", 0x60000000, 512 * mib);
    pool.properties.push_back(flag("linux,cma-default"));
    checks::Options o;
    o.bootargs = "cma=512M";
    auto m = with_default_area(arm64_612(4096), 64);
    m.version = *KernelVersion::parse("7.2.13");
    auto r = checks::run(board({pool}), m, o);
    REQUIRE(r.default_area);
    CHECK(r.default_area->outcome == Outcome::created);
    CHECK(r.default_area->base == std::optional<std::uint64_t>(0x60000000));
    auto no_map_pool = pool;
    no_map_pool.properties.push_back(flag("no-map"));
    auto r2 = checks::run(board({no_map_pool}), m, o);
    REQUIRE(r2.default_area);
    CHECK(r2.default_area->outcome == Outcome::failed);
}

TEST_CASE("default CMA area: CONFIG_CMA_SIZE_SEL_* from memblock_phys_mem_size()") {
    // kernel/dma/contiguous.c (5.10.223 to 7.2.13) cma_early_percent_memory():
    // (PHYS_PFN(memblock_phys_mem_size()) * CONFIG_CMA_SIZE_PERCENTAGE / 100) << PAGE_SHIFT, and
    // dma_contiguous_reserve() takes it alone (SEL_PERCENTAGE) or min()/max() with size_bytes.
    // Two banks of 1 GiB and 512 MiB: 393216 pages of 4 KiB, 10 % = 39321 pages.
    auto t = board({});
    t.root.children.push_back(
        node("memory@c0000000",
             {str("device_type", {"memory"}), cells("reg", {0, 0xc0000000, 0, 0x20000000})}));
    using Selection = kernel::DefaultCmaConfig::Selection;
    const std::uint64_t ten_percent = std::uint64_t{39321} * 4096; // 153.6 MiB
    struct Case {
        Selection selection;
        std::uint64_t mbytes;
        std::uint64_t requested;
    };
    for (const auto& c :
         {Case{Selection::percentage, 0, ten_percent}, Case{Selection::min, 64, 64 * mib},
          Case{Selection::min, 256, ten_percent}, Case{Selection::max, 64, ten_percent},
          Case{Selection::max, 256, 256 * mib}}) {
        auto m = with_default_area(arm64_612(4096), c.mbytes);
        m.default_cma->selection = c.selection;
        m.default_cma->percentage = 10;
        auto r = checks::run(t, m, {});
        REQUIRE(r.default_area);
        CAPTURE(c.mbytes);
        CHECK(r.default_area->requested == c.requested);
        // Rounded up to the 2 MiB CMA alignment of 4K pages: 153.6 MiB becomes 154 MiB.
        CHECK(r.default_area->size == (c.requested + 2 * mib - 1) / (2 * mib) * (2 * mib));
    }
    // 16K pages: 98304 pages, 10 % = 9830 pages of 16 KiB, then 32 MiB alignment: 160 MiB.
    auto m16 = with_default_area(arm64_612(16384), 0);
    m16.default_cma->selection = Selection::percentage;
    m16.default_cma->percentage = 10;
    auto r16 = checks::run(t, m16, {});
    REQUIRE(r16.default_area);
    CHECK(r16.default_area->requested == std::uint64_t{9830} * 16384);
    CHECK(r16.default_area->size == 160 * mib);
}

TEST_CASE("default CMA area: on arm and riscv from 6.12 it takes a slot before the static pools") {
    // Three slots; two dynamic pools, then (arm, 7.2.13) the default area in arm_memblock_init(),
    // then the static pools from unflatten_device_tree(): both static pools find no slot. arm64
    // sets the area up last: the first static pool takes the third slot, the area finds none.
    std::vector<dt::Node> pools{cma_pool("dyn0", 4 * mib), cma_pool("dyn1", 4 * mib),
                                cma_static("fixed@60000000", 0x60000000, 4 * mib),
                                cma_static("fixed@64000000", 0x64000000, 4 * mib)};
    auto slotless = [](const checks::Result& r) {
        std::vector<std::string> out;
        for (const auto& d : r.diagnostics)
            if (d.check == "cma-areas" && d.severity == Severity::error) out.push_back(d.node);
        return out;
    };
    auto arm64 = with_default_area(arm64_612(4096), 16);
    arm64.version = *KernelVersion::parse("7.2.13");
    arm64.cma_areas = 3;
    auto r64 = checks::run(board(pools), arm64, {});
    REQUIRE(r64.default_area);
    CHECK(r64.default_area->outcome == Outcome::failed);
    CHECK(slotless(r64) == std::vector<std::string>{"/reserved-memory/fixed@64000000"});
    auto arm = arm64;
    arm.arch = kernel::Arch::arm;
    arm.phys_addr_64bit = false;
    arm.cma_min_alignment_bytes = 4 * mib; // PAGE_SIZE << MAX_PAGE_ORDER 10
    auto r = checks::run(board(pools), arm, {});
    REQUIRE(r.default_area);
    CHECK(r.default_area->outcome == Outcome::created);
    CHECK(slotless(r) == std::vector<std::string>{"/reserved-memory/fixed@60000000",
                                                  "/reserved-memory/fixed@64000000"});
    const auto e = findings_of(r, "cma-areas");
    REQUIRE_FALSE(e.empty());
    CHECK(contains(e[0].message, "4 CMA pools and the default CMA area"));
    // 6.1.192 set every node up in early_init_fdt_scan_reserved_mem(), before the area.
    arm.version = *KernelVersion::parse("6.1.192");
    auto old = checks::run(board(pools), arm, {});
    CHECK(old.default_area->outcome == Outcome::failed);
    CHECK(slotless(old) == std::vector<std::string>{"/reserved-memory/fixed@64000000"});
}

TEST_CASE("default CMA area: what is reserved after the dynamic nodes still holds its room") {
    // A 4 MiB dynamic pool, then the 16 MiB area (2 MiB CMA alignment), both top-down from the
    // end of RAM at 0x80000000.
    auto m = with_default_area(arm64_612(4096), 16);
    // /memreserve/ over the top 4 MiB: 6.12.117's early_init_fdt_scan_reserved_mem() reserves it
    // after fdt_scan_reserved_mem() placed the pool (which then lies over it); 6.1.192 before.
    auto t = board({cma_pool("pool", 4 * mib)});
    t.memreserve.push_back({0x7fc00000, 4 * mib, {}});
    auto r612 = checks::run(t, m, {});
    REQUIRE(r612.default_area);
    CHECK(r612.default_area->base == std::optional<std::uint64_t>(0x7ec00000));
    auto m61 = m;
    m61.version = *KernelVersion::parse("6.1.192");
    auto r61 = checks::run(t, m61, {});
    REQUIRE(r61.default_area);
    CHECK(r61.default_area->base == std::optional<std::uint64_t>(0x7e800000));
    // riscv reserves the DTB after the scan (setup_bootmem()): booted on 7.2.13, a dynamic pool
    // went over QEMU's DTB in the top 2 MiB and the area below both.
    auto rv = m;
    rv.arch = kernel::Arch::riscv;
    rv.version = *KernelVersion::parse("7.2.13");
    checks::Options o;
    o.early_reservations = std::vector<checks::EarlyReservation>{
        {Interval::of(0x7fe00000, 0x10000), "the DTB", false, "", true}};
    auto r = checks::run(board({cma_pool("pool", 4 * mib)}), rv, o);
    REQUIRE(r.default_area);
    CHECK(r.default_area->base == std::optional<std::uint64_t>(0x7ec00000));
    o.early_reservations->front().after_dynamic_nodes = false; // as arm64 and arm reserve it
    auto before = checks::run(board({cma_pool("pool", 4 * mib)}), rv, o);
    REQUIRE(before.default_area);
    CHECK(before.default_area->base == std::optional<std::uint64_t>(0x7ea00000));
}
