// Each check on hand-made trees, one case that must fire and one that must not; the registry
// and its -W/-E switches; the check_tree() entry point.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include <fmt/format.h>

#include "cmalign/checks/checks.hpp"
#include "support/dt_builder.hpp"
#include "support/findings.hpp"
#include "support/models.hpp"

using namespace cmalign;
using namespace cmalign::test;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

checks::Result check_tree(const dt::Tree& t, const kernel::Model& m, checks::Options o = {}) {
    return checks::run(t, m, o);
}

} // namespace

TEST_CASE("cma-size-alignment: a 4 MiB pool is lost on 16K pages and fine on 4K") {
    auto t = board({cma_pool("cma_test_reserve", 4u << 20, 24)});
    auto r16 = check_tree(t, arm64_612(16384));
    auto f = findings_of(r16, "cma-size-alignment");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error);
    CHECK(f[0].node == "/reserved-memory/cma_test_reserve");
    CHECK(f[0].input == "board.dts");
    CHECK(f[0].where == Location{"board.dts", 24, 21}); // the non-zero low cell
    CHECK(contains(f[0].message, "Reserved memory: incorrect alignment of CMA region"));
    CHECK(contains(f[0].message, "node cma_test_reserve compatible matching fail"));
    CHECK(contains(f[0].message, "32 MiB"));
    REQUIRE(f[0].fix.size() == 1);
    CHECK(f[0].fix[0].property == "size");
    CHECK(f[0].fix[0].old_value == 4u << 20);
    CHECK(f[0].fix[0].new_value == 32u << 20); // smallest multiple of 32 MiB not below 4 MiB

    CHECK(findings_of(check_tree(t, arm64_612(4096)), "cma-size-alignment").empty());
    // 40 MiB on 16K pages rounds up to 64 MiB.
    auto t40 = board({cma_pool("p", 40u << 20)});
    auto f40 = findings_of(check_tree(t40, arm64_612(16384)), "cma-size-alignment");
    REQUIRE(f40.size() == 1);
    CHECK(f40[0].fix.at(0).new_value == 64u << 20);
}

TEST_CASE("cma-size-alignment when the kernel decides the alignment at boot") {
    auto m = arm64_612(65536);
    m.arch = kernel::Arch::powerpc;
    m.pageblock_order.reset();
    m.cma_min_alignment_bytes.reset();
    m.pageblock_order_range = std::pair{5, 8}; // 2 MiB (radix) .. 16 MiB (hash)
    auto small = board({cma_pool("p", 1u << 20)});
    auto f = findings_of(check_tree(small, m), "cma-size-alignment");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error); // below even the smallest possible alignment
    auto mid = board({cma_pool("p", 4u << 20)});
    auto g = findings_of(check_tree(mid, m), "cma-size-alignment");
    REQUIRE(g.size() == 1);
    CHECK(g[0].severity == Severity::warning); // fine on radix, lost on hash
    CHECK(g[0].fix.at(0).new_value == 16u << 20);
    CHECK(findings_of(check_tree(board({cma_pool("p", 16u << 20)}), m), "cma-size-alignment")
              .empty());
    m.pageblock_order_range.reset();
    auto h = findings_of(check_tree(mid, m), "cma-size-alignment");
    REQUIRE(h.size() == 1);
    CHECK(h[0].severity == Severity::note);
}

TEST_CASE("cma-base-alignment: only a static base can be misaligned") {
    auto bad = board({cma_static("pool@41000000", 0x41000000, 32u << 20, 9)});
    auto f = findings_of(check_tree(bad, arm64_612(16384)), "cma-base-alignment");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error);
    CHECK(f[0].where == Location{"board.dts", 9, 21});
    CHECK(f[0].fix.empty()); // a base is never moved
    CHECK(contains(f[0].message, "0x40000000"));
    CHECK(contains(f[0].message, "0x42000000"));
    auto good = board({cma_static("pool@42000000", 0x42000000, 32u << 20)});
    CHECK(check_tree(good, arm64_612(16384)).diagnostics.empty());
    // A dynamic pool's base is aligned by the kernel itself.
    CHECK(findings_of(check_tree(board({cma_pool("p", 32u << 20)}), arm64_612(16384)),
                      "cma-base-alignment")
              .empty());
}

TEST_CASE("reserved-memory-format: cells unlike the root's, with the version's prefix") {
    auto t = board({cma_pool("linux,cma", 32u << 20)});
    auto* rm = const_cast<dt::Node*>(t.find("/reserved-memory"));
    *rm->find_property("#address-cells") = cells("#address-cells", {1}, 5);
    auto f = findings_of(check_tree(t, arm64_612(16384)), "reserved-memory-format");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error);
    CHECK(f[0].where.line == 5);
    CHECK(contains(f[0].message,
                   "\"OF: reserved mem: Reserved memory: unsupported node format, ignoring\""));
    CHECK(contains(f[0].message, "#address-cells is 1, the root's is 2"));
    auto m61 = arm64_612(16384);
    m61.version = *KernelVersion::parse("6.1.192");
    CHECK(contains(findings_of(check_tree(t, m61), "reserved-memory-format").at(0).message,
                   "\"OF: fdt: Reserved memory: unsupported node format"));
    // Ignored pools are not judged further.
    CHECK(findings_of(check_tree(t, arm64_612(16384)), "cma-size-alignment").empty());
    CHECK(findings_of(check_tree(board({cma_pool("p", 32u << 20)}), arm64_612(16384)),
                      "reserved-memory-format")
              .empty());
}

TEST_CASE("property-length: the kernel's message for each property") {
    auto bad_reg = node("r@1", {cells("reg", {0, 0x50000000, 0}, 7)});
    auto f = findings_of(check_tree(board({bad_reg}), arm64_612()), "property-length");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error);
    CHECK(contains(f[0].message, "invalid reg property in 'r@1', skipping node."));
    CHECK(f[0].where.line == 7);

    auto bad_size = node("p", {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                               cells("size", {0x2000000})});
    auto g = findings_of(check_tree(board({bad_size}), arm64_612()), "property-length");
    REQUIRE(g.size() == 1);
    CHECK(contains(g[0].message, "invalid size property in 'p' node."));

    CHECK(findings_of(check_tree(board({cma_pool("p", 32u << 20)}), arm64_612()), "property-length")
              .empty());

    auto disabled = bad_reg;
    disabled.properties.push_back(str("status", {"disabled"}));
    CHECK(findings_of(check_tree(board({disabled}), arm64_612()), "property-length").empty());

    auto multi =
        node("m@1", {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                     cells("reg", {0, 0x42000000, 0, 0x2000000, 0, 0x46000000, 0, 0x2000000})});
    auto h = findings_of(check_tree(board({multi}), arm64_612()), "property-length");
    REQUIRE(h.size() == 1);
    CHECK(h[0].severity == Severity::warning);
    CHECK(contains(h[0].message, "ignores 1 regions in node 'm@1'"));
}

TEST_CASE("zero-size") {
    auto z = node("z@1", {cells("reg", {0, 0x50000000, 0, 0})});
    auto f = findings_of(check_tree(board({z}), arm64_612()), "zero-size");
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "failed to reserve memory for node 'z@1'"));
    CHECK(findings_of(
              check_tree(board({node("n@1", {cells("reg", {0, 0x50000000, 0, 1})})}), arm64_612()),
              "zero-size")
              .empty());
}

TEST_CASE("reusable-no-map") {
    auto both = cma_pool("both", 32u << 20);
    both.properties.push_back(flag("no-map"));
    auto f = findings_of(check_tree(board({both}), arm64_612()), "reusable-no-map");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error);
    CHECK(contains(f[0].message, "node both compatible matching fail"));
    CHECK(findings_of(check_tree(board({cma_pool("p", 32u << 20)}), arm64_612()), "reusable-no-map")
              .empty());
    auto other =
        node("o@1", {flag("reusable"), flag("no-map"), cells("reg", {0, 0x50000000, 0, 0x1000})});
    auto g = findings_of(check_tree(board({other}), arm64_612()), "reusable-no-map");
    REQUIRE(g.size() == 1);
    // Not a pool: the kernel only lists it ("… nomap reusable o@1"), nothing is lost.
    CHECK(g[0].severity == Severity::note);
}

TEST_CASE("reusable-no-map from v7.1: both handlers decline with -ENODEV, the region stays") {
    auto both = cma_pool("both", 32u << 20);
    both.properties.push_back(flag("no-map"));
    auto at = [&](const char* version) {
        auto m = arm64_612();
        m.version = *KernelVersion::parse(version);
        auto f = findings_of(check_tree(board({both}), m), "reusable-no-map");
        REQUIRE(f.size() == 1);
        CHECK(f[0].severity == Severity::error);
        return f[0].message;
    };
    // 5.10.223 … 7.0: -EINVAL from rmem_cma_setup() and rmem_dma_setup(): memory given back.
    for (const char* old : {"5.10", "6.1", "6.12", "7.0"}) {
        CAPTURE(old);
        auto message = at(old);
        CHECK(contains(message, "node both compatible matching fail"));
        CHECK(contains(message, "gives the memory back"));
        CHECK_FALSE(contains(message, "-ENODEV"));
    }
    // 7.1, 7.2 (7.2.13 kernel/dma/contiguous.c __rmem_cma_verify_node(), coherent.c): -ENODEV
    // is "no handler": no error message, the region stays reserved as no-map.
    for (const char* now : {"7.1", "7.2", "7.2.13"}) {
        CAPTURE(now);
        auto message = at(now);
        CHECK(contains(message, "-ENODEV"));
        CHECK(contains(message, "nomap reusable both"));
        CHECK(contains(message, "stays reserved as no-map"));
        CHECK_FALSE(contains(message, "compatible matching fail"));
        CHECK_FALSE(contains(message, "gives the memory back"));
    }
}

TEST_CASE("cma-disabled from v7.1: rmem_dma_setup() declines reusable, the memory stays reserved") {
    auto m = arm64_612();
    m.dma_cma = false;
    m.dma_declare_coherent = true;
    m.version = *KernelVersion::parse("7.2");
    auto f = findings_of(check_tree(board({cma_pool("linux,cma", 32u << 20)}), m), "cma-disabled");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error);
    CHECK(contains(f[0].message, "-ENODEV"));
    CHECK(contains(f[0].message, "stays reserved"));
    CHECK_FALSE(contains(f[0].message, "compatible matching fail"));
    m.version = *KernelVersion::parse("7.0");
    auto old =
        findings_of(check_tree(board({cma_pool("linux,cma", 32u << 20)}), m), "cma-disabled");
    REQUIRE(old.size() == 1);
    CHECK(contains(old[0].message, "frees the memory"));
}

TEST_CASE("a multi-tuple reg from v7.2: only the first tuple is reserved, the node is kept") {
    auto multi = node("fw@42000000",
                      {cells("reg", {0, 0x42000000, 0, 0x200000, 0, 0x46000000, 0, 0x200000})});
    auto m = arm64_612();
    m.version = *KernelVersion::parse("7.2");
    auto r = check_tree(board({multi}), m);
    REQUIRE(r.reservations.regions.size() == 1);
    const auto& region = r.reservations.regions.at(0);
    CHECK(region.accepted_by_parser);
    CHECK_FALSE(region.multi_tuple_dropped);
    CHECK(region.extra_tuples_unreserved);
    auto f = findings_of(r, "property-length");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error);
    CHECK(contains(f[0].message, "OF: reserved mem: Reserved memory: node 'fw@42000000' has 2 "
                                 "<base size> entries, only the first is used"));
    // 7.0: every tuple is reserved but the node is dropped (of_flat_dt_get_addr_size()).
    m.version = *KernelVersion::parse("7.0");
    auto old = check_tree(board({multi}), m);
    CHECK(old.reservations.regions.at(0).multi_tuple_dropped);
    CHECK_FALSE(old.reservations.regions.at(0).extra_tuples_unreserved);
}

TEST_CASE("coherent-no-map: arm needs no-map on a coherent pool") {
    auto pool = node("dma@50000000", {str("compatible", {"shared-dma-pool"}),
                                      cells("reg", {0x50000000, 0x100000})});
    auto m = arm64_612(4096);
    m.arch = kernel::Arch::arm;
    auto f = findings_of(check_tree(board({pool}, 1, 1), m), "coherent-no-map");
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "Reserved memory: regions without no-map are not yet supported"));
    CHECK(findings_of(check_tree(board({pool}, 1, 1), arm64_612(4096)), "coherent-no-map").empty());
    pool.properties.push_back(flag("no-map"));
    CHECK(findings_of(check_tree(board({pool}, 1, 1), m), "coherent-no-map").empty());
}

TEST_CASE("overlap") {
    auto a = node("a@50000000", {cells("reg", {0, 0x50000000, 0, 0x200000})});
    auto b = node("b@50100000", {cells("reg", {0, 0x50100000, 0, 0x200000})});
    auto c = node("c@50300000", {cells("reg", {0, 0x50300000, 0, 0x100000})}); // touches b's end
    auto f = findings_of(check_tree(board({a, b, c}), arm64_612()), "overlap");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::warning);
    CHECK(f[0].node == "/reserved-memory/b@50100000");
    CHECK(contains(f[0].message, "OVERLAP DETECTED!"));
    CHECK(contains(f[0].message,
                   "a@50000000 (0x0000000050000000--0x0000000050200000) overlaps with "
                   "b@50100000 (0x0000000050100000--0x0000000050300000)"));
    CHECK(findings_of(check_tree(board({a, c}), arm64_612()), "overlap").empty());

    auto t = board({cma_static("cma@42000000", 0x42000000, 32u << 20)});
    t.memreserve.push_back({0x42100000, 0x1000, {}});
    auto g = findings_of(check_tree(t, arm64_612()), "overlap");
    REQUIRE(g.size() == 1);
    CHECK(contains(g[0].message, "/memreserve/"));

    // Two identical CMA pools both become areas: the boot dies or runs on corrupted.
    auto twins = board({cma_static("p@60000000", 0x60000000, 32u << 20),
                        cma_static("q@60000000", 0x60000000, 32u << 20)});
    auto h = findings_of(check_tree(twins, arm64_612()), "overlap");
    REQUIRE(h.size() == 1);
    CHECK(h[0].severity == Severity::error);
    CHECK(contains(h[0].message, "a kernel BUG in the list checks"));
    CHECK(contains(h[0].message, "the boot dies")); // what boot-truth counts as a prediction
}

TEST_CASE("overlap: a no-map region over memory already reserved is refused") {
    auto pool = cma_static("ovla0@60000000", 0x60000000, 32u << 20);
    auto nomap =
        node("ovlb0@60000000", {cells("reg", {0, 0x60000000, 0, 128u << 20}), flag("no-map")});
    auto f = findings_of(check_tree(board({pool, nomap}), arm64_612()), "overlap");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error);
    CHECK(f[0].node == "/reserved-memory/ovlb0@60000000");
    CHECK(contains(f[0].message, "\"OF: reserved mem: Reserved memory: failed to reserve memory "
                                 "for node 'ovlb0@60000000': base 0x0000000060000000, size 128 "
                                 "MiB\""));
    // The other order: the no-map region is reserved first and the pool only overlaps it.
    auto g = findings_of(check_tree(board({nomap, pool}), arm64_612()), "overlap");
    REQUIRE(g.size() == 1);
    CHECK(g[0].severity == Severity::warning);
    // Outside RAM: refused by 5.10, not from v5.13 [likely] (only over RAM).
    auto far_pool = cma_static("p@96000000", 0x96000000, 32u << 20);
    auto far_nomap =
        node("n@96000000", {cells("reg", {0, 0x96000000, 0, 128u << 20}), flag("no-map")});
    auto old_kernel = arm64_612();
    old_kernel.version = *KernelVersion::parse("5.10.223");
    auto o = findings_of(check_tree(board({far_pool, far_nomap}), old_kernel), "overlap");
    REQUIRE(o.size() == 1);
    CHECK(contains(o[0].message, "OF: fdt: Reserved memory: failed to reserve memory"));
    auto n = findings_of(check_tree(board({far_pool, far_nomap}), arm64_612()), "overlap");
    REQUIRE(n.size() == 1);
    CHECK(n[0].severity == Severity::warning);
}

TEST_CASE("outside-memory") {
    auto out = cma_static("cma@90000000", 0x90000000, 32u << 20); // RAM is 0x40000000..0x80000000
    auto f = findings_of(check_tree(board({out}), arm64_612()), "outside-memory");
    REQUIRE(f.size() == 1);
    // Beyond the end of RAM the boot dies (booted on the suite's kernels).
    CHECK(f[0].severity == Severity::error);
    CHECK(contains(f[0].message, "lies beyond the end of RAM (0x80000000)"));
    CHECK(contains(f[0].message, "the boot dies"));
    auto crossing = cma_static("cma@7f000000", 0x7f000000, 32u << 20);
    auto fc = findings_of(check_tree(board({crossing}), arm64_612()), "outside-memory");
    REQUIRE(fc.size() == 1);
    CHECK(fc[0].severity == Severity::error);
    CHECK(contains(fc[0].message, "crosses the end of RAM"));
    // In a hole between two banks: the area is only not activated (mm/cma.c
    // cma_activate_area(), 6.1 and 6.12).
    auto holed = board({cma_static("cma@8a000000", 0x8a000000, 32u << 20)});
    holed.root.children.push_back(
        node("memory@90000000",
             {str("device_type", {"memory"}), cells("reg", {0, 0x90000000, 0, 0x10000000})}));
    auto fh = findings_of(check_tree(holed, arm64_612()), "outside-memory");
    REQUIRE(fh.size() == 1);
    CHECK(fh[0].severity == Severity::warning);
    CHECK(contains(fh[0].message, "cma: CMA area cma@8a000000 could not be activated"));
    CHECK(findings_of(
              check_tree(board({cma_static("cma@42000000", 0x42000000, 32u << 20)}), arm64_612()),
              "outside-memory")
              .empty());
    auto firmware = node("fw@f0000000", {flag("no-map"), cells("reg", {0, 0xf0000000, 0, 0x1000})});
    CHECK(findings_of(check_tree(board({firmware}), arm64_612()), "outside-memory").empty());

    auto ranged = cma_pool("r", 64u << 20);
    ranged.properties.push_back(cells("alloc-ranges", {0, 0x7e000000, 0, 0x10000000}));
    auto g = findings_of(check_tree(board({ranged}), arm64_612()), "outside-memory");
    REQUIRE(g.size() == 1);                  // only 32 MiB of that range is RAM
    CHECK(g[0].severity == Severity::error); // the pool is lost on this tree's memory
    auto fits = cma_pool("r", 32u << 20);
    fits.properties.push_back(cells("alloc-ranges", {0, 0x7e000000, 0, 0x10000000}));
    CHECK(findings_of(check_tree(board({fits}), arm64_612()), "outside-memory").empty());
}

TEST_CASE("outside-memory: non-CMA regions outside RAM are what the kernel expects") {
    // vexpress vram@18000000 and stm32mp15 SRAM pools: coherent, no-map, outside /memory.
    auto vram = node("vram@18000000", {str("compatible", {"shared-dma-pool"}), flag("no-map"),
                                       cells("reg", {0, 0x18000000, 0, 0x800000})});
    auto carve = node("mcuram@30000000", {cells("reg", {0, 0x30000000, 0, 0x40000})});
    auto restricted = node("r@20000000", {str("compatible", {"restricted-dma-pool"}),
                                          cells("reg", {0, 0x20000000, 0, 0x400000})});
    auto t = board({vram, carve, restricted});
    auto r = check_tree(t, arm64_612());
    CHECK(findings_of(r, "outside-memory").empty());
    CHECK(findings_of(r, "outside-memory-device").empty()); // off by default
    CHECK(r.count(Severity::warning) == 0);
    checks::Options on;
    on.switches.push_back({checks::Switch::Kind::enable_warning, "outside-memory-device"});
    auto notes = findings_of(check_tree(t, arm64_612(), on), "outside-memory-device");
    REQUIRE(notes.size() == 3);
    for (const auto& n : notes) {
        CHECK(n.severity == Severity::note);
        CHECK(contains(n.message, "prints nothing"));
    }
    // A pool across two adjacent banks is inside RAM.
    auto two = board({cma_static("cma@7f000000", 0x7f000000, 32u << 20)});
    two.root.children[0].properties[1] =
        cells("reg", {0, 0x40000000, 0, 0x40000000, 0, 0x80000000, 0, 0x10000000});
    REQUIRE(two.root.children[0].name.rfind("memory", 0) == 0);
    CHECK(findings_of(check_tree(two, arm64_612()), "outside-memory").empty());
}

TEST_CASE("cma-areas") {
    auto m = arm64_612();
    m.cma_areas = 2;
    auto three =
        board({cma_pool("a", 32u << 20), cma_pool("b", 32u << 20), cma_pool("c", 32u << 20)});
    auto f = findings_of(check_tree(three, m), "cma-areas");
    REQUIRE(f.size() == 2);
    CHECK(f[0].severity == Severity::error);
    CHECK(f[0].node == "/reserved-memory/c");
    CHECK(contains(f[0].message, "cma: Not enough slots for CMA reserved regions!"));
    // The default area finds no slot either (booted: "cma: Failed to reserve … MiB").
    CHECK(f[1].severity == Severity::warning);
    CHECK(f[1].node == "/reserved-memory/b");
    CHECK(contains(f[1].message, "the first 2 of 3 CMA pools fill all 2 MAX_CMA_AREAS slots"));
    auto two = board({cma_pool("a", 32u << 20), cma_pool("b", 32u << 20)});
    auto g = findings_of(check_tree(two, m), "cma-areas");
    REQUIRE(g.size() == 1);
    CHECK(g[0].severity == Severity::warning);
    CHECK(findings_of(check_tree(board({cma_pool("a", 32u << 20)}), m), "cma-areas").empty());
}

TEST_CASE("cma-disabled") {
    auto m = arm64_612();
    m.dma_cma = false;
    auto t = board({cma_pool("linux,cma", 32u << 20)});
    auto f = findings_of(check_tree(t, m), "cma-disabled");
    REQUIRE(f.size() == 1);
    // A pool the kernel does not create is an error whatever the reason.
    CHECK(f[0].severity == Severity::error);
    CHECK(contains(f[0].message, "CONFIG_DMA_CMA is not set"));
    // Unknown DMA_DECLARE_COHERENT: both outcomes of __reserved_mem_init_node() are named.
    CHECK(contains(f[0].message, "with CONFIG_DMA_DECLARE_COHERENT=y"));
    CHECK(contains(f[0].message, "\"OF: reserved mem: node linux,cma compatible matching fail\""));
    m.dma_declare_coherent = true; // rmem_dma_setup() returns -EINVAL for reusable: freed
    auto freed = findings_of(check_tree(t, m), "cma-disabled");
    REQUIRE(freed.size() == 1);
    CHECK(contains(freed[0].message, "frees the memory"));
    CHECK_FALSE(contains(freed[0].message, "stays reserved"));
    m.dma_declare_coherent = false; // no handler at all: -ENOENT, kept but unusable
    auto kept = findings_of(check_tree(t, m), "cma-disabled");
    REQUIRE(kept.size() == 1);
    CHECK(contains(kept[0].message, "stays reserved"));
    CHECK_FALSE(contains(kept[0].message, "compatible matching fail"));
    m.cma = false;
    auto no_cma = findings_of(check_tree(t, m), "cma-disabled");
    REQUIRE(no_cma.size() == 1);
    CHECK(contains(no_cma[0].message, "CONFIG_CMA is not set"));
    m.cma = true;
    auto r = check_tree(t, m);
    CHECK(r.reservations.regions.at(0).kind == reserved::Kind::inactive);
    CHECK(findings_of(r, "cma-size-alignment").empty());
    CHECK(findings_of(check_tree(t, arm64_612()), "cma-disabled").empty());
}

TEST_CASE("cmdline-cma") {
    auto m4k = arm64_612(4096); // 2 MiB alignment
    auto with_args = [](std::string args) {
        auto t = board({});
        t.root.children.push_back(node("chosen", {str("bootargs", {std::move(args)})}));
        return t;
    };
    SUBCASE("size rounded up past a fixed limit") {
        auto f = findings_of(check_tree(with_args("cma=3M@0x80000000"), m4k), "cmdline-cma");
        REQUIRE(f.size() == 2);
        CHECK(f[0].severity == Severity::note); // 3 MiB → 4 MiB
        CHECK(f[1].severity == Severity::error);
        CHECK(contains(f[1].message, "exceeds limit"));
        CHECK(f[1].node == "/chosen");
    }
    SUBCASE("misaligned fixed base") {
        auto f = findings_of(check_tree(with_args("cma=64M@0x80100000"), m4k), "cmdline-cma");
        REQUIRE(f.size() == 1);
        CHECK(f[0].severity == Severity::error);
        CHECK(contains(
            f[0].message,
            "cma: Region at 0x0000000080100000 must be aligned to 0x0000000000200000 bytes"));
    }
    SUBCASE("a plain size is fine") {
        CHECK(findings_of(check_tree(with_args("console=ttyS0 cma=64M"), m4k), "cmdline-cma")
                  .empty());
    }
    SUBCASE("cma= overrides a linux,cma-default pool") {
        auto pool = cma_pool("linux,cma", 32u << 20);
        pool.properties.push_back(flag("linux,cma-default"));
        auto t = board({pool});
        checks::Options o;
        o.bootargs = "cma=64M";
        auto f = findings_of(check_tree(t, m4k, o), "cmdline-cma");
        REQUIRE(f.size() == 1);
        CHECK(f[0].severity == Severity::warning);
        CHECK(contains(f[0].message,
                       "Reserved memory: bypass linux,cma node, using cmdline CMA params instead"));
        auto m619 = m4k;
        m619.version = *KernelVersion::parse("6.19");
        CHECK(contains(findings_of(check_tree(t, m619, o), "cmdline-cma").at(0).message,
                       "Skipping dt linux,cma-default"));
        // v7.1: rmem_cma_validate() refuses the node before it is reserved (7.2.13 contiguous.c).
        auto m72 = m4k;
        m72.version = *KernelVersion::parse("7.2");
        auto skipped = findings_of(check_tree(t, m72, o), "cmdline-cma").at(0).message;
        CHECK(contains(skipped, "\"Skipping dt linux,cma-default node in favor for \\\"cma=\\\" "
                                "kernel param.\""));
        CHECK_FALSE(contains(skipped, "OF: reserved mem: Skipping"));
        CHECK(findings_of(check_tree(t, m4k), "cmdline-cma").empty());
        // Bypassed before its alignment is looked at (booted: "bypass", no "incorrect
        // alignment"): a 1 MiB default pool gets the override only, without cma= the error.
        auto odd = cma_pool("linux,cma", 1u << 20);
        odd.properties.push_back(flag("linux,cma-default"));
        CHECK(findings_of(check_tree(board({odd}), m4k, o), "cma-size-alignment").empty());
        CHECK(findings_of(check_tree(board({odd}), m4k), "cma-size-alignment").size() == 1);
    }
    SUBCASE("bare cma and zero") {
        CHECK(contains(findings_of(check_tree(with_args("cma"), m4k), "cmdline-cma").at(0).message,
                       "Config string not provided"));
        auto z = findings_of(check_tree(with_args("cma=0"), m4k), "cmdline-cma");
        REQUIRE(z.size() == 1);
        CHECK(z[0].severity == Severity::note);
    }
}

TEST_CASE("cell-overflow") {
    dt::Tree t;
    t.input = "x.dts";
    t.root = node("", {cells("#address-cells", {3}), cells("#size-cells", {1})},
                  {node("reserved-memory",
                        {cells("#address-cells", {3}), cells("#size-cells", {1}), flag("ranges")},
                        {node("r@1", {cells("reg", {1, 0, 0x50000000, 0x1000})})})});
    auto f = findings_of(check_tree(t, arm64_612()), "cell-overflow");
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "0x50000000"));
    auto m32 = arm64_612();
    m32.phys_addr_64bit = false;
    auto high = board({cma_static("cma@100000000", 0x100000000ull, 32u << 20)});
    auto g = findings_of(check_tree(high, m32), "cell-overflow");
    REQUIRE(g.size() == 1);
    CHECK(contains(g[0].message, "32-bit phys_addr_t"));
    CHECK(findings_of(check_tree(high, arm64_612()), "cell-overflow").empty());
}

TEST_CASE("alignment-cells and alignment-not-power-of-2") {
    auto pool = node("p", {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                           cells("size", {0x2000000}), cells("alignment", {0, 0x300000})});
    auto r = check_tree(board({pool}, 2, 1), arm64_612());
    REQUIRE(findings_of(r, "alignment-cells").size() == 1);
    REQUIRE(findings_of(r, "alignment-not-power-of-2").size() == 1);
    auto even = node("p", {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                           cells("size", {0, 0x2000000}), cells("alignment", {0, 0x400000})});
    auto r2 = check_tree(board({even}), arm64_612());
    CHECK(findings_of(r2, "alignment-cells").empty());
    CHECK(findings_of(r2, "alignment-not-power-of-2").empty());
}

TEST_CASE("the registry holds the check names of docs/checks.md") {
    for (const char* name : {"cma-size-alignment", "cma-base-alignment", "reserved-memory-format",
                             "property-length", "reusable-no-map", "overlap", "outside-memory",
                             "cma-areas", "cma-disabled", "cmdline-cma", "cell-overflow"}) {
        const auto* c = checks::find_check(name);
        REQUIRE_MESSAGE(c, name);
        CHECK(std::string(c->description).size() > 10);
        CHECK(static_cast<bool>(c->function));
    }
    CHECK(checks::find_check("no-such-check") == nullptr);
    // Names are unique.
    auto all = checks::registry();
    for (std::size_t i = 0; i < all.size(); ++i)
        for (std::size_t j = i + 1; j < all.size(); ++j)
            CHECK(std::string(all[i].name) != all[j].name);
}

TEST_CASE("-W/-Wno/-E switches as dtc") {
    Diagnostics diags;
    auto off = checks::parse_switch('W', "no-overlap", diags);
    REQUIRE(off);
    CHECK(off->kind == checks::Switch::Kind::disable_warning);
    CHECK(off->check == "overlap");
    CHECK_FALSE(checks::parse_switch('W', "no-such", diags));
    CHECK(diags.has_errors());

    auto a = node("a@50000000", {cells("reg", {0, 0x50000000, 0, 0x200000})});
    auto b = node("b@50100000", {cells("reg", {0, 0x50100000, 0, 0x200000})});
    auto t = board({a, b});
    checks::Options disabled;
    disabled.switches.push_back(*off);
    CHECK(findings_of(check_tree(t, arm64_612(), disabled), "overlap").empty());

    checks::Options promoted;
    Diagnostics d2;
    promoted.switches.push_back(*checks::parse_switch('E', "overlap", d2));
    auto f = findings_of(check_tree(t, arm64_612(), promoted), "overlap");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error);

    checks::Options none;
    none.switches.push_back(*checks::parse_switch('W', "no-all", d2));
    CHECK(check_tree(t, arm64_612(), none).diagnostics.empty());
    none.switches.push_back(*checks::parse_switch('E', "overlap", d2)); // -E enables it again
    CHECK(findings_of(check_tree(t, arm64_612(), none), "overlap").size() == 1);

    auto plain = check_tree(t, arm64_612());
    CHECK(plain.count(Severity::warning) == 1);
    CHECK_FALSE(plain.failed(false));
    CHECK(plain.failed(true)); // --werror
}

TEST_CASE("a clean board has no findings") {
    auto t =
        board({cma_pool("linux,cma", 64u << 20), cma_static("cma@44000000", 0x44000000, 32u << 20),
               node("fw@50000000", {flag("no-map"), cells("reg", {0, 0x50000000, 0, 0x100000})})});
    auto r = check_tree(t, arm64_612(16384));
    CHECK(r.diagnostics.empty());
    CHECK(r.reservations.regions.size() == 3);
}

TEST_CASE("reserved-regions-limit: 64 slots, counted as the kernel version does") {
    std::vector<dt::Node> many;
    for (std::uint32_t i = 0; i < 65; ++i)
        many.push_back(
            node("r@" + std::to_string(i),
                 {flag("no-map"), cells("reg", {0, 0x50000000 + i * 0x1000, 0, 0x1000})}));
    many.push_back(cma_pool("linux,cma", 32u << 20)); // node 66, dynamic
    auto m61 = arm64_612();
    m61.version = *KernelVersion::parse("6.1.192");
    auto f = findings_of(check_tree(board(many), m61), "reserved-regions-limit");
    REQUIRE(f.size() == 2); // r@64 and linux,cma
    CHECK(f[0].node == "/reserved-memory/r@64");
    CHECK(f[0].severity == Severity::warning);
    CHECK(f[1].severity == Severity::error); // a pool that never gets set up
    CHECK(contains(f[1].message, "not enough space for all defined regions."));
    // 6.12.117 sizes the array to the static nodes; only dynamic ones are bounded.
    CHECK(findings_of(check_tree(board(many), arm64_612()), "reserved-regions-limit").empty());
    std::vector<dt::Node> dynamic;
    for (int i = 0; i < 65; ++i)
        dynamic.push_back(cma_pool("p" + std::to_string(i), 32u << 20));
    auto g = findings_of(check_tree(board(dynamic), arm64_612()), "reserved-regions-limit");
    REQUIRE(g.size() == 1);
    CHECK(contains(g[0].message, "too many defined dynamic regions, skip 'p64'"));
}

TEST_CASE("cma-alloc-ranges: the range must hold the size at the raised alignment") {
    // 64 MiB in [0x41000000, 0x45000000): room for 64 MiB, but no 32 MiB-aligned 64 MiB block
    // (0x42000000 + 64 MiB = 0x46000000 is past the end).
    auto tight = cma_pool("tight", 64u << 20);
    tight.properties.push_back(cells("alloc-ranges", {0, 0x41000000, 0, 0x4000000}));
    auto f = findings_of(check_tree(board({tight}), arm64_612(16384)), "cma-alloc-ranges");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error);
    CHECK(contains(f[0].message, "failed to allocate memory for node 'tight': size 64 MiB"));
    // With 4K pages (2 MiB alignment) the same range works.
    CHECK(findings_of(check_tree(board({tight}), arm64_612(4096)), "cma-alloc-ranges").empty());
    // A second, roomier range is enough.
    auto two = tight;
    two.properties.back() =
        cells("alloc-ranges", {0, 0x41000000, 0, 0x4000000, 0, 0x48000000, 0, 0x8000000});
    CHECK(findings_of(check_tree(board({two}), arm64_612(16384)), "cma-alloc-ranges").empty());
}

TEST_CASE("property-length with the ≥ 6.19 helpers: wrong lengths are silently absent") {
    auto m7 = arm64_612();
    m7.version = *KernelVersion::parse("7.0");
    // A bad reg next to a size: the node becomes dynamic and is still a pool.
    auto both = cma_pool("p", 32u << 20);
    both.properties.push_back(cells("reg", {0, 0x42000000, 0}));
    auto r = check_tree(board({both}), m7);
    auto f = findings_of(r, "property-length");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::warning);
    CHECK(contains(f[0].message, "placed dynamically"));
    CHECK(r.reservations.regions.at(0).kind == reserved::Kind::cma);
    CHECK(r.reservations.regions.at(0).dynamic);
    // The same node on 6.12 is skipped with the kernel's message.
    auto old = findings_of(check_tree(board({both}), arm64_612()), "property-length");
    REQUIRE(old.size() == 1);
    CHECK(old[0].severity == Severity::error);
    CHECK(contains(old[0].message, "invalid reg property in 'p', skipping node."));
    // A multi-tuple CMA pool is never recorded.
    auto multi =
        node("m@1", {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                     cells("reg", {0, 0x42000000, 0, 0x2000000, 0, 0x46000000, 0, 0x2000000})});
    auto g = findings_of(check_tree(board({multi}), m7), "property-length");
    REQUIRE(g.size() == 1);
    CHECK(g[0].severity == Severity::error);
    CHECK(contains(g[0].message, "no pool is created"));
    // A bad alloc-ranges no longer rejects the node.
    auto ranged = cma_pool("r", 32u << 20);
    ranged.properties.push_back(cells("alloc-ranges", {0, 0x40000000, 0}));
    auto h = check_tree(board({ranged}), m7);
    REQUIRE(findings_of(h, "property-length").size() == 1);
    CHECK(findings_of(h, "property-length")[0].severity == Severity::warning);
    CHECK(h.reservations.regions.at(0).kind == reserved::Kind::cma);
}

TEST_CASE("cma-default: more than one linux,cma-default pool") {
    auto a = cma_pool("a", 32u << 20);
    a.properties.push_back(flag("linux,cma-default"));
    auto b = cma_static("b@44000000", 0x44000000, 32u << 20);
    b.properties.push_back(flag("linux,cma-default"));
    auto f = findings_of(check_tree(board({a, b}), arm64_612()), "cma-default");
    REQUIRE(f.size() == 1);
    CHECK(f[0].node == "/reserved-memory/b@44000000");
    CHECK(findings_of(check_tree(board({a}), arm64_612()), "cma-default").empty());
    auto disabled = b;
    disabled.properties.push_back(str("status", {"disabled"}));
    CHECK(findings_of(check_tree(board({a, disabled}), arm64_612()), "cma-default").empty());
}

TEST_CASE("read_options follows the model") {
    auto m = arm64_612();
    m.dma_cma = false;
    auto o = checks::read_options(m, std::string("cma=64M"));
    CHECK(o.cma_enabled);
    CHECK_FALSE(o.dma_cma_enabled);
    CHECK(o.bootargs == std::string("cma=64M"));
    CHECK_FALSE(o.addr_size_helpers);
    m.version = *KernelVersion::parse("7.0");
    CHECK(checks::read_options(m).addr_size_helpers);
}

TEST_CASE("the alignment is explained by the formula that produced it") {
    auto t = board({cma_pool("p", 2u << 20)});
    auto m = arm64_612(4096);
    CHECK(findings_of(check_tree(t, m), "cma-size-alignment").empty());
    // 5.15: CMA_MIN_ALIGNMENT = PAGE_SIZE << max(MAX_ORDER - 1, pageblock_order) = 4 MiB.
    m.version = *KernelVersion::parse("5.15");
    m.cma_min_alignment_bytes = 4u << 20;
    auto f = findings_of(check_tree(t, m), "cma-size-alignment");
    REQUIRE(f.size() == 1);
    CHECK(contains(f[0].message, "PAGE_SIZE 4 KiB << max order 10"));
    CHECK_FALSE(contains(f[0].message, "pageblock_order 9"));
}

TEST_CASE("restricted-pool: the handler needs v5.15 and CONFIG_DMA_RESTRICTED_POOL") {
    auto pool = node("restricted@50000000", {str("compatible", {"restricted-dma-pool"}),
                                             cells("reg", {0, 0x50000000, 0, 0x400000})});
    auto m = arm64_612(4096);
    m.dma_restricted_pool = true;
    CHECK(findings_of(check_tree(board({pool}), m), "restricted-pool").empty());

    // Not set in a complete .config: the region stays reserved, no pool, no error printed.
    m.dma_restricted_pool = false;
    auto f = findings_of(check_tree(board({pool}), m), "restricted-pool");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error);
    CHECK(contains(f[0].message, "CONFIG_DMA_RESTRICTED_POOL is not set"));
    CHECK(contains(f[0].message, "\"… map non-reusable restricted@50000000\""));
    // Not in the inputs: Kconfig's default n, said so, never "no findings".
    m.dma_restricted_pool.reset();
    auto g = findings_of(check_tree(board({pool}), m), "restricted-pool");
    REQUIRE(g.size() == 1);
    CHECK(contains(g[0].message, "not in the inputs"));

    // 5.10 has no handler whatever the configuration; 6.1 prints no listing line.
    m.dma_restricted_pool = true;
    m.version = *KernelVersion::parse("5.10.223");
    auto old = findings_of(check_tree(board({pool}), m), "restricted-pool");
    REQUIRE(old.size() == 1);
    CHECK(contains(old[0].message, "v5.15"));
    CHECK(contains(old[0].message, "nothing at all"));
    m.version = *KernelVersion::parse("6.1");
    CHECK(findings_of(check_tree(board({pool}), m), "restricted-pool").empty());

    // With the handler, reusable/no-map/linux,*-default make it return -EINVAL.
    pool.properties.push_back(flag("reusable"));
    pool.properties.push_back(flag("no-map"));
    auto r = check_tree(board({pool}), m);
    auto h = findings_of(r, "restricted-pool");
    REQUIRE(h.size() == 1);
    CHECK(contains(h[0].message, "`reusable` and `no-map`"));
    CHECK(contains(h[0].message, "node restricted@50000000 compatible matching fail"));
    CHECK(findings_of(r, "reusable-no-map").empty()); // not also a note that nothing is lost
}

TEST_CASE("arm-dma-remap: arm 6.12+ remaps a reusable pool's 2 MiB PMDs before checking it") {
    // Debian's 7.2 armmp: 4 KiB pages, pageblock_order 11, CMA alignment 8 MiB.
    auto m = arm64_612(4096);
    m.arch = kernel::Arch::arm;
    m.version = *KernelVersion::parse("7.2.13");
    m.max_page_order = m.pageblock_order.emplace(11);
    m.cma_min_alignment_bytes = 8u << 20;
    m.hugetlb = m.thp = false;

    // A static pool off a 2 MiB boundary at both ends, in lowmem: the span before its base and
    // after its end is named, and the base is where the finding points.
    auto odd = cma_static("odd@5fa20000", 0x5fa20000, 0x401000, 7);
    auto f = findings_of(check_tree(board({odd}), m), "arm-dma-remap");
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::error);
    CHECK(contains(f[0].message, "does not start on a 2 MiB boundary"));
    CHECK(contains(f[0].message, "0x5fa00000..0x5fa1ffff and 0x5fe21000..0x5fffffff"));
    CHECK(contains(f[0].message, "hangs early"));
    // It is rejected too (8 MiB alignment): both findings, on the same node.
    CHECK(findings_of(check_tree(board({odd}), m), "cma-base-alignment").size() == 1);

    // A dynamic pool: its base is aligned, its size is not a 2 MiB multiple.
    auto dynamic = cma_pool("dyn", 3u << 20);
    auto d = findings_of(check_tree(board({dynamic}), m), "arm-dma-remap");
    REQUIRE(d.size() == 1);
    CHECK(contains(d[0].message, "does not end on a 2 MiB boundary"));

    // On 2 MiB boundaries (even when rejected for the 8 MiB alignment): nothing to tear down.
    CHECK(findings_of(check_tree(board({cma_static("ok@50200000", 0x50200000, 6u << 20)}), m),
                      "arm-dma-remap")
              .empty());
    // Above 768 MiB of RAM (VMSPLIT_3G's lowmem) it may be highmem, which is not remapped.
    auto high = findings_of(
        check_tree(board({cma_static("high@72000000", 0x72000000, 0x10000)}), m), "arm-dma-remap");
    REQUIRE(high.size() == 1);
    CHECK(high[0].severity == Severity::warning);
    CHECK(contains(high[0].message, "highmem"));

    // 7.1+: rmem_cma_fixup() skips no-map (the node is declined before any fixup).
    auto no_map = odd;
    no_map.properties.push_back(flag("no-map"));
    CHECK(findings_of(check_tree(board({no_map}), m), "arm-dma-remap").empty());
    // 6.12 (the restructure, before the ops): every reusable shared-dma-pool, no-map included.
    m.version = *KernelVersion::parse("6.12.117");
    CHECK(findings_of(check_tree(board({no_map}), m), "arm-dma-remap").size() == 1);
    // 6.1 runs the fixup only for pools rmem_cma_setup() accepted: aligned, nothing to say.
    m.version = *KernelVersion::parse("6.1.192");
    CHECK(findings_of(check_tree(board({odd}), m), "arm-dma-remap").empty());
    // Two overlapping pools, both on 2 MiB boundaries: the second remap hits BUG_ON() in
    // vm_area_add_early(). 6.1 queues only accepted (8 MiB-aligned) pools, and two of those
    // that overlap hang it the same way.
    m.version = *KernelVersion::parse("7.2.13");
    auto first = cma_static("a@5e800000", 0x5e800000, 4u << 20);
    auto second = cma_static("b@5ea00000", 0x5ea00000, 16u << 20);
    auto o = findings_of(check_tree(board({first, second}), m), "arm-dma-remap");
    REQUIRE(o.size() == 1);
    CHECK(o[0].node == "/reserved-memory/b@5ea00000");
    CHECK(contains(o[0].message, "BUG_ON() in vm_area_add_early()"));
    m.version = *KernelVersion::parse("6.1.192");
    CHECK(findings_of(check_tree(board({first, second}), m), "arm-dma-remap").empty());
    auto aligned_a = cma_static("a@50000000", 0x50000000, 16u << 20);
    auto aligned_b = cma_static("b@50800000", 0x50800000, 16u << 20);
    CHECK(findings_of(check_tree(board({aligned_a, aligned_b}), m), "arm-dma-remap").size() == 1);
    // 7.2: a rejected dynamic pool on 2 MiB boundaries is freed where the default CMA area goes
    // next (overlapping remaps); more queued pools than MAX_CMA_AREAS overflow dma_mmu_remap[].
    m.version = *KernelVersion::parse("7.2.13");
    // (All RAM lowmem: 512 MiB, so the default area goes where the pool was.)
    auto small = [](std::vector<dt::Node> regions) {
        auto t = board(std::move(regions));
        t.root.children[0].properties[1] = cells("reg", {0, 0x40000000, 0, 0x20000000});
        return t;
    };
    auto freed = findings_of(check_tree(small({cma_pool("four", 4u << 20)}), m), "arm-dma-remap");
    REQUIRE(freed.size() == 1);
    CHECK(contains(freed[0].message, "is placed next: the two remaps overlap"));
    CHECK(
        findings_of(check_tree(small({cma_pool("eight", 8u << 20)}), m), "arm-dma-remap").empty());
    // 1 GiB: the default area lands in highmem, which is not remapped (booted: no hang).
    CHECK(findings_of(check_tree(board({cma_pool("four", 4u << 20)}), m), "arm-dma-remap").empty());
    std::vector<dt::Node> many;
    for (int i = 0; i < 21; ++i)
        many.push_back(cma_pool("p" + std::to_string(i), 8u << 20));
    // 21 accepted pools, 20 slots: the last is freed under the default area (an error), and
    // dma_mmu_remap[] overflows (a warning).
    auto slots = findings_of(check_tree(small(many), m), "arm-dma-remap");
    REQUIRE(slots.size() == 2);
    CHECK(slots[0].severity == Severity::warning);
    CHECK(contains(slots[0].message, "writes past the array"));
    CHECK(slots[1].node == "/reserved-memory/p20");
    CHECK(contains(slots[1].message, "no MAX_CMA_AREAS slot is left"));
    many.resize(19);
    CHECK(findings_of(check_tree(small(many), m), "arm-dma-remap").empty());
    // Without CONFIG_DMA_CMA arm has no fixup at all; arm64 has none either.
    m.version = *KernelVersion::parse("7.2.13");
    m.dma_cma = false;
    CHECK(findings_of(check_tree(board({odd}), m), "arm-dma-remap").empty());
    CHECK(findings_of(check_tree(board({odd}), arm64_612(4096)), "arm-dma-remap").empty());
}

TEST_CASE("cma-areas: which pools find no slot follows the kernel's order of setting them up") {
    std::vector<dt::Node> pools;
    for (int i = 0; i < 22; ++i)
        pools.push_back(cma_pool("many" + std::to_string(i), 4u << 20));
    auto lost = [&](const kernel::Model& m) {
        std::set<std::string> nodes;
        for (const auto& f : findings_of(check_tree(board(pools), m), "cma-areas"))
            if (f.severity == Severity::error) nodes.insert(f.node);
        return nodes;
    };
    auto m = arm64_612(4096);
    m.cma_areas = 20;
    // 6.12+: in tree order, so the last two.
    CHECK(lost(m) == std::set<std::string>{"/reserved-memory/many20", "/reserved-memory/many21"});
    // 5.10/6.1 sort reserved_mem[] with lib/sort.c's heapsort first; the dynamic nodes are all
    // at (0, 0) then, and the heapsort leaves the first one last (booted: both kernels lose
    // many0 and many21).
    m.version = *KernelVersion::parse("6.1.192");
    CHECK(lost(m) == std::set<std::string>{"/reserved-memory/many0", "/reserved-memory/many21"});
}

TEST_CASE("arm-section-split: a no-map hole after a 1 MiB section inside one 2 MiB PMD") {
    auto m = arm64_612(4096);
    m.arch = kernel::Arch::arm;
    m.version = *KernelVersion::parse("7.2.13");
    m.phys_addr_64bit = false; // no LPAE
    auto hole = [](std::uint64_t base, std::uint64_t size) {
        return node(fmt::format("hole@{:x}", base),
                    {cells("reg", {0, static_cast<std::uint32_t>(base), 0,
                                   static_cast<std::uint32_t>(size)}),
                     flag("no-map")});
    };
    // Booted on 7.2 armmp: these two hang, the next two boot.
    for (auto [base, size] : {std::pair{0x4e100000u, 0x10000u}, std::pair{0x45300000u, 0x8000u}}) {
        auto f = findings_of(check_tree(board({hole(base, size)}), m), "arm-section-split");
        REQUIRE(f.size() == 1);
        CHECK(f[0].severity == Severity::error);
        CHECK(contains(f[0].message, "BUG_ON(pmd_bad())"));
    }
    CHECK(findings_of(check_tree(board({hole(0x4e100000, 0x100000)}), m), "arm-section-split")
              .empty());
    CHECK(
        findings_of(check_tree(board({hole(0x45200000, 0x8000)}), m), "arm-section-split").empty());
    // LPAE maps 2 MiB sections: nothing to split.
    m.phys_addr_64bit = true;
    CHECK(findings_of(check_tree(board({hole(0x4e100000, 0x10000)}), m), "arm-section-split")
              .empty());
}

TEST_CASE("alloc-ranges as a 32-bit phys_addr_t holds them: the low 32 bits") {
    // Booted on 7.2 armmp: <0x1 0x30000000 0x0 0x20000000> is [0x30000000, 0x50000000) there,
    // so a 16 MiB pool is created at 0x4f000000 in 1 GiB of RAM at 0x40000000.
    auto m = arm64_612(4096);
    m.arch = kernel::Arch::arm;
    m.version = *KernelVersion::parse("7.2.13");
    m.cma_min_alignment_bytes = 8u << 20;
    m.phys_addr_64bit = false;
    auto pool = cma_pool("ranged", 16u << 20);
    pool.properties.push_back(cells("alloc-ranges", {1, 0x30000000, 0, 0x20000000}));
    auto r = check_tree(board({pool}), m);
    CHECK(findings_of(r, "outside-memory").empty());
    CHECK(findings_of(r, "cma-alloc-ranges").empty());
    m.phys_addr_64bit = true; // LPAE: above 4 GiB, where this board has no RAM
    CHECK(findings_of(check_tree(board({pool}), m), "outside-memory").size() == 1);
}

namespace {

// board() with `mib` MiB of RAM at 0x40000000.
dt::Tree board_with_ram(std::vector<dt::Node> regions, std::uint32_t mib) {
    auto t = board(std::move(regions));
    for (auto& p : t.root.children.front().properties)
        if (p.name == "reg") p = cells("reg", {0, 0x40000000, 0, mib << 20});
    return t;
}

std::set<std::string> nodes_of(const std::vector<Diagnostic>& ds) {
    std::set<std::string> out;
    for (const auto& d : ds)
        out.insert(d.node);
    return out;
}

} // namespace

TEST_CASE("dynamic-no-room: 22 pools grown to the 32 MiB CMA alignment in 512 MiB of RAM") {
    // Booted (fix's output of a generated layout on Debian's 6.12 and 7.2 16K kernels, 47.6 MiB
    // image at 0x40200000): many0..many13 are created, the rest "failed to allocate memory".
    std::vector<dt::Node> pools;
    for (int i = 0; i < 22; ++i)
        pools.push_back(cma_pool("many" + std::to_string(i), 32u << 20));
    auto t = board_with_ram(pools, 512);
    auto r = check_tree(t, arm64_612(16384));
    auto f = findings_of(r, "dynamic-no-room");
    std::set<std::string> expected;
    for (int i = 14; i < 22; ++i)
        expected.insert("/reserved-memory/many" + std::to_string(i));
    CHECK(nodes_of(f) == expected);
    REQUIRE(f.size() == 8);
    // many14 and many15 fit once the assumed 48 MiB image is left out (two more 32 MiB blocks):
    // only the assumption makes those findings, so they are warnings that say so; the six after
    // them find no room beside any kernel.
    CHECK(f[0].severity == Severity::warning);
    CHECK(f[1].severity == Severity::warning);
    for (std::size_t i = 2; i < f.size(); ++i)
        CHECK(f[i].severity == Severity::error);
    CHECK(contains(f[0].message, "so only that assumption makes this finding"));
    CHECK(contains(f[0].message, "a generic kernel's size 48 MiB"));
    CHECK(contains(f[2].message, "it does not fit even without them"));
    CHECK(contains(f[0].message, "failed to allocate memory for node 'many14': size 32 MiB"));
    CHECK(contains(f[0].message, "14 dynamic nodes placed before it hold 0x1c000000 (448 MiB)"));
    CHECK(contains(f[0].message, "the kernel image assumed at 0x40000000..0x43000000"));
    CHECK(contains(f[0].message, "the CMA alignment"));
    // The pools memblock could not place ask for no CMA slot: cma-areas has nothing to say.
    CHECK(findings_of(r, "cma-areas").empty());

    // Told where the kernel is (boot-check knows): 47.6 MiB at 0x40200000 ends in the second
    // 32 MiB block, as the assumption does.
    checks::Options known;
    known.early_reservations = std::vector<checks::EarlyReservation>{
        {Interval::of(0x40200000, 0x2f9f000), "the kernel image", false}};
    auto k = findings_of(check_tree(t, arm64_612(16384), known), "dynamic-no-room");
    CHECK(nodes_of(k) == expected);
    CHECK(!contains(k.at(0).message, "assumed"));
    // What was known to be reserved first is named (boot-check: the DTB where QEMU put it).
    CHECK(contains(k.at(0).message,
                   "reserved before it: the kernel image at 0x40200000..0x4319f000"));
    // Nothing reserved early: two more blocks, two more pools.
    known.early_reservations->clear();
    auto n = findings_of(check_tree(t, arm64_612(16384), known), "dynamic-no-room");
    CHECK(n.size() == 6);
    CHECK(!n.empty());
    CHECK(n.front().node == "/reserved-memory/many16");

    // On 4K pages (2 MiB alignment) 22 × 32 MiB = 704 MiB fit in 1 GiB, not in 512 MiB.
    CHECK(findings_of(check_tree(board_with_ram(pools, 1024), arm64_612(4096)), "dynamic-no-room")
              .empty());
    auto four = findings_of(check_tree(t, arm64_612(4096)), "dynamic-no-room");
    CHECK(four.size() == 8); // (512 - 48) / 32 = 14.5: 14 fit
}

TEST_CASE("dynamic-no-room: a rejected pool is freed before the next node is placed") {
    // 301 MiB is off the 2 MiB CMA alignment of 4K pages: rmem_cma_setup() rejects it right
    // after its allocation and memblock_phys_free() gives it back, so the second pool fits.
    auto odd = cma_pool("odd", 301u << 20);
    auto next = cma_pool("next", 300u << 20);
    auto m = arm64_612(4096);
    CHECK(findings_of(check_tree(board_with_ram({odd, next}, 512), m), "dynamic-no-room").empty());
    // no-map: refused too, but the memory stays reserved (memblock_clear_nomap() only).
    auto nomap = odd;
    nomap.properties.push_back(flag("no-map"));
    auto f = findings_of(check_tree(board_with_ram({nomap, next}, 512), m), "dynamic-no-room");
    REQUIRE(f.size() == 1);
    CHECK(f[0].node == "/reserved-memory/next");
    // 5.10 prints the older message, without the size.
    m.version = *KernelVersion::parse("5.10.223");
    auto g = findings_of(check_tree(board_with_ram({cma_pool("big", 600u << 20)}, 512), m),
                         "dynamic-no-room");
    REQUIRE(g.size() == 1);
    CHECK(contains(g[0].message, "failed to allocate memory for node 'big'\""));
    // …and sets the two dynamic nodes up in its heapsort's order: `next` first, so `odd`
    // (no-map, refused but kept reserved) is the one without room.
    auto h510 = findings_of(check_tree(board_with_ram({nomap, next}, 512), m), "dynamic-no-room");
    REQUIRE(h510.size() == 1);
    CHECK(h510[0].node == "/reserved-memory/odd");
    // Other dynamic nodes count too: a plain no-map region of 400 MiB leaves no room for 300.
    auto plain = node("plain", {cells("size", {0, 400u << 20}), flag("no-map")});
    auto h = findings_of(check_tree(board_with_ram({plain, next}, 512), arm64_612(4096)),
                         "dynamic-no-room");
    REQUIRE(h.size() == 1);
    CHECK(h[0].node == "/reserved-memory/next");
}

TEST_CASE("cma-areas: pools rejected for their alignment ask for no slot") {
    // 21 pools, the first off the CMA alignment: 20 aligned ones ask, 20 slots, none lost.
    std::vector<dt::Node> pools{cma_pool("odd", 3u << 20)};
    for (int i = 0; i < 20; ++i)
        pools.push_back(cma_pool("p" + std::to_string(i), 2u << 20));
    auto m = arm64_612(4096);
    auto errors = [&](const std::vector<Diagnostic>& ds) {
        return std::count_if(ds.begin(), ds.end(),
                             [](const Diagnostic& d) { return d.severity == Severity::error; });
    };
    CHECK(errors(findings_of(check_tree(board(pools), m), "cma-areas")) == 0);
    pools.push_back(cma_pool("p20", 2u << 20));
    auto f = findings_of(check_tree(board(pools), m), "cma-areas");
    REQUIRE(errors(f) == 1);
    CHECK(f[0].node == "/reserved-memory/p20");
    CHECK(contains(f[0].message, "21 CMA pools ask for a slot but MAX_CMA_AREAS is 20"));
}
