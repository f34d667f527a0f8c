// The reservation model: cells, lengths, kinds, /memory, /chosen/bootargs and cma= exactly as
// the kernel reads them (drivers/of/of_reserved_mem.c, drivers/of/fdt.c, lib/cmdline.c).
#include <doctest/doctest.h>

#include "cmalign/reserved/regions.hpp"
#include "support/dt_builder.hpp"

using namespace cmalign;
using namespace cmalign::test;
using reserved::Kind;

namespace {
reserved::Region only_region(const reserved::Reservations& rs) {
    REQUIRE(rs.regions.size() == 1);
    return rs.regions[0];
}
} // namespace

TEST_CASE("root cells default to 1/1 when the root has none") {
    dt::Tree t;
    t.input = "x.dts";
    t.root = node("", {},
                  {node("reserved-memory",
                        {cells("#address-cells", {1}), cells("#size-cells", {1}), flag("ranges")},
                        {node("pool", {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                                       cells("reg", {0x50000000, 0x400000})})})});
    auto rs = reserved::read(t);
    CHECK(rs.address_cells == 1);
    CHECK(rs.size_cells == 1);
    CHECK(rs.address_cells_defaulted);
    CHECK(rs.size_cells_defaulted);
    CHECK(rs.rm_format_ok);
    const auto& r = only_region(rs);
    CHECK(r.kind == Kind::cma);
    CHECK(r.base == 0x50000000u);
    CHECK(r.size == 0x400000u);

    reserved::ReadOptions sparc;
    sparc.sparc = true; // OF_ROOT_NODE_ADDR_CELLS_DEFAULT is 2 on SPARC
    auto rs2 = reserved::read(t, sparc);
    CHECK(rs2.address_cells == 2);
    CHECK_FALSE(rs2.rm_format_ok); // /reserved-memory says 1, the root default is 2
}

TEST_CASE("values are composed like of_read_number(): cells beyond two shift out") {
    auto p = cells("reg", {0x1, 0x2, 0x3});
    auto v = reserved::read_value(p, 0, 3);
    CHECK(v.value == 0x0000000200000003ull); // the leading 0x1 is lost
    CHECK(v.overflowed);
    auto zero_high = cells("reg", {0x0, 0x2, 0x3});
    auto w = reserved::read_value(zero_high, 0, 3);
    CHECK(w.value == 0x0000000200000003ull);
    CHECK_FALSE(w.overflowed);
    auto one = reserved::read_value(cells("size", {0xffffffff}), 0, 1);
    CHECK(one.value == 0xffffffffull);
}

TEST_CASE("a value keeps the location of the cells it was read from") {
    auto t = board({cma_pool("linux,cma", 0x400000, 27)});
    auto rs = reserved::read(t);
    const auto& r = only_region(rs);
    REQUIRE(r.size_ref);
    CHECK(r.size_ref->property == "size");
    CHECK(r.size_ref->offset == 0);
    CHECK(r.size_ref->length == 8);
    CHECK(r.size_ref->chunks.size() == 2);
    CHECK(r.size_ref->where == Location{"board.dts", 27, 21}); // the non-zero cell
    CHECK(r.dynamic);
    CHECK_FALSE(r.base);

    auto t2 = board({cma_static("pool@50000000", 0x50000000, 0x2000000, 12)});
    const auto& s = only_region(reserved::read(t2));
    REQUIRE(s.base_ref);
    REQUIRE(s.size_ref);
    CHECK(s.base_ref->offset == 0);
    CHECK(s.size_ref->offset == 8);
    CHECK(s.size_ref->where == Location{"board.dts", 12, 43}); // fourth cell's chunk
    // Zero points at the last cell, a value above 4 GiB at its high cell.
    auto zero = reserved::read_value(cells("size", {0, 0}, 3), 0, 2);
    CHECK(zero.where == Location{"board.dts", 3, 21});
    auto big = reserved::read_value(cells("size", {1, 0}, 3), 0, 2);
    CHECK(big.where == Location{"board.dts", 3, 10});
}

TEST_CASE("alignment is read with #address-cells, size with #size-cells") {
    // Root 2/1: size has one cell, alignment two.
    auto pool = node("pool", {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                              cells("size", {0x400000}), cells("alignment", {0x0, 0x400000})});
    auto t = board({pool}, 2, 1);
    const auto& r = only_region(reserved::read(t));
    CHECK(r.accepted_by_parser);
    CHECK(r.alignment == 0x400000u);
    CHECK(r.size == 0x400000u);

    auto bad = node("pool", {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                             cells("size", {0x400000}), cells("alignment", {0x400000})});
    const auto& b = only_region(reserved::read(board({bad}, 2, 1)));
    CHECK_FALSE(b.accepted_by_parser);
    CHECK(b.kind == Kind::inactive);
    REQUIRE(b.length_problems.size() == 1);
    CHECK(b.length_problems[0].property == "alignment");
    CHECK(b.length_problems[0].length == 4);
    CHECK(b.length_problems[0].expected == 8);
}

TEST_CASE("lengths the kernel rejects make the node inactive") {
    SUBCASE("reg not a multiple of the tuple") {
        auto n = node("r@1", {cells("reg", {0, 0x50000000, 0})});
        const auto& r = only_region(reserved::read(board({n})));
        CHECK_FALSE(r.accepted_by_parser);
        CHECK(r.kind == Kind::inactive);
        REQUIRE(r.length_problems.size() == 1);
        CHECK(r.length_problems[0].tuple_multiple);
        CHECK(r.length_problems[0].expected == 16);
    }
    SUBCASE("size of the wrong length") {
        auto n = node("p", {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                            cells("size", {0x400000})});
        const auto& r = only_region(reserved::read(board({n})));
        CHECK(r.kind == Kind::inactive);
        CHECK(r.declared_kind == Kind::cma);
        CHECK(r.length_problems.at(0).property == "size");
    }
    SUBCASE("alloc-ranges not a multiple of the tuple") {
        auto n = cma_pool("p", 0x2000000);
        n.properties.push_back(cells("alloc-ranges", {0, 0x40000000, 0}));
        const auto& r = only_region(reserved::read(board({n})));
        CHECK(r.kind == Kind::inactive);
        CHECK(r.length_problems.at(0).property == "alloc-ranges");
    }
    SUBCASE("well-formed alloc-ranges are kept") {
        auto n = cma_pool("p", 0x2000000);
        n.properties.push_back(cells("alloc-ranges", {0, 0x40000000, 0, 0x20000000}));
        const auto& r = only_region(reserved::read(board({n})));
        CHECK(r.kind == Kind::cma);
        REQUIRE(r.alloc_ranges.size() == 1);
        CHECK(r.alloc_ranges[0] == reserved::Range{0x40000000, 0x20000000});
    }
}

TEST_CASE("kinds") {
    auto coherent = node("c@1", {str("compatible", {"shared-dma-pool"}), flag("no-map"),
                                 cells("reg", {0, 0x50000000, 0, 0x100000})});
    auto restricted = node("r@2", {str("compatible", {"restricted-dma-pool"}),
                                   cells("reg", {0, 0x51000000, 0, 0x100000})});
    auto plain = node("fw@3", {flag("no-map"), cells("reg", {0, 0x52000000, 0, 0x100000})});
    auto disabled = cma_static("d@4", 0x54000000, 0x2000000);
    disabled.properties.push_back(str("status", {"disabled"}));
    auto both = cma_static("b@5", 0x56000000, 0x2000000);
    both.properties.push_back(flag("no-map"));
    auto okay = cma_static("o@6", 0x58000000, 0x2000000);
    okay.properties.push_back(str("status", {"okay"}));
    auto vendor_first = node("v", {str("compatible", {"vendor,pool", "SHARED-DMA-POOL"}),
                                   flag("reusable"), cells("size", {0, 0x2000000})});
    auto rs =
        reserved::read(board({coherent, restricted, plain, disabled, both, okay, vendor_first}));
    REQUIRE(rs.regions.size() == 7);
    CHECK(rs.regions[0].kind == Kind::coherent);
    CHECK(rs.regions[1].kind == Kind::restricted);
    CHECK(rs.regions[2].kind == Kind::static_);
    CHECK(rs.regions[3].kind == Kind::inactive);
    CHECK(rs.regions[3].disabled);
    CHECK(rs.regions[4].kind == Kind::inactive); // reusable + no-map
    CHECK(rs.regions[5].kind == Kind::cma);
    CHECK(rs.regions[6].kind == Kind::cma); // of_compat_cmp() ignores case, any entry matches
    CHECK(reserved::to_string(Kind::static_) == std::string("static"));

    reserved::ReadOptions no_cma;
    no_cma.cma_enabled = false;
    auto rs2 = reserved::read(board({okay}), no_cma);
    CHECK(rs2.regions[0].kind == Kind::inactive);
    CHECK(rs2.regions[0].declared_kind == Kind::cma);
    CHECK(rs2.regions[0].inactive_reason.find("CONFIG_CMA") != std::string::npos);
}

TEST_CASE("/reserved-memory with cells unlike the root's is ignored as a whole") {
    auto t = board({cma_pool("linux,cma", 0x2000000)});
    auto* rm = const_cast<dt::Node*>(t.find("/reserved-memory"));
    REQUIRE(rm);
    *rm->find_property("#size-cells") = cells("#size-cells", {1});
    auto rs = reserved::read(t);
    CHECK(rs.has_reserved_memory);
    CHECK_FALSE(rs.rm_format_ok);
    CHECK(rs.rm_size_cells == 1u);
    CHECK(rs.regions.at(0).kind == Kind::inactive);

    auto t2 = board({cma_pool("linux,cma", 0x2000000)});
    auto* rm2 = const_cast<dt::Node*>(t2.find("/reserved-memory"));
    std::erase_if(rm2->properties, [](const dt::Property& p) { return p.name == "ranges"; });
    CHECK_FALSE(reserved::read(t2).rm_format_ok);
}

TEST_CASE("multi-tuple reg keeps every tuple and uses the first as the region") {
    auto n =
        node("multi@1", {cells("reg", {0, 0x50000000, 0, 0x100000, 0, 0x60000000, 0, 0x200000})});
    const auto& r = only_region(reserved::read(board({n})));
    REQUIRE(r.reg.size() == 2);
    CHECK(r.base == 0x50000000u);
    CHECK(r.size == 0x100000u);
    CHECK(r.reg[1] == reserved::Range{0x60000000, 0x200000});
}

TEST_CASE("/memory banks: device_type memory, available, linux,usable-memory first") {
    auto t = board({});
    t.root.children.push_back(node("memory@80000000", {str("device_type", {"memory"}),
                                                       cells("reg", {0, 0x80000000, 0, 0x10000000}),
                                                       str("status", {"disabled"})}));
    t.root.children.push_back(
        node("memory@90000000",
             {str("device_type", {"memory"}), cells("reg", {0, 0x90000000, 0, 0x10000000}),
              cells("linux,usable-memory", {0, 0x90000000, 0, 0x8000000})}));
    t.root.children.push_back(node("sram@0", {cells("reg", {0, 0, 0, 0x1000})}));
    auto rs = reserved::read(t);
    REQUIRE(rs.memory.size() == 2);
    CHECK(rs.memory[0].range == reserved::Range{0x40000000, 0x40000000});
    CHECK(rs.memory[1].range == reserved::Range{0x90000000, 0x8000000});
}

TEST_CASE("memparse() as lib/cmdline.c") {
    using reserved::memparse;
    CHECK(memparse("64M").value == 64ull << 20);
    CHECK(memparse("64M").consumed == 3);
    CHECK(memparse("0x4000000").value == 0x4000000);
    CHECK(memparse("010").value == 8); // base 0: a leading 0 is octal
    CHECK(memparse("1g").value == 1ull << 30);
    CHECK(memparse("2T").value == 2ull << 40);
    CHECK(memparse("1E").value == 1ull << 60);
    CHECK(memparse("12abc").value == 12);
    CHECK(memparse("12abc").consumed == 2);
    CHECK(memparse("0xg").value == 0); // "0x" without a hex digit: octal "0", stops at 'x'
    CHECK(memparse("0xg").consumed == 1);
    CHECK(memparse("abc").consumed == 0);
    CHECK(memparse("").consumed == 0);
}

TEST_CASE("cma= on the command line") {
    auto a = reserved::parse_cma_cmdline("console=ttyS0 cma=64M@0x80000000 quiet");
    REQUIRE(a);
    CHECK(a->size == 64ull << 20);
    CHECK(a->base == 0x80000000u);
    CHECK(a->limit == 0x80000000u + (64ull << 20));
    CHECK(a->fixed);
    CHECK(a->trailing.empty());

    auto b = reserved::parse_cma_cmdline("cma=64M@0x80000000-0xc0000000");
    REQUIRE(b);
    CHECK(b->limit == 0xc0000000u);
    CHECK_FALSE(b->fixed);

    auto c = reserved::parse_cma_cmdline("cma=16M cma=32M");
    REQUIRE(c);
    CHECK(c->size == 32ull << 20);
    CHECK(c->occurrences == 2);

    auto d = reserved::parse_cma_cmdline("root=/dev/sda \"cma=8M\" -- cma=1G");
    REQUIRE(d);
    CHECK(d->size == 8ull << 20); // quotes stripped; after "--" it is init's
    CHECK(d->occurrences == 1);

    auto e = reserved::parse_cma_cmdline("cma quiet");
    REQUIRE(e);
    CHECK_FALSE(e->has_value);

    CHECK_FALSE(reserved::parse_cma_cmdline("console=ttyS0 xcma=1M"));
    auto f = reserved::parse_cma_cmdline("cma=64Mb");
    REQUIRE(f);
    CHECK(f->trailing == "b");
}

TEST_CASE("bootargs come from /chosen unless overridden") {
    auto t = board({});
    t.root.children.push_back(node("chosen", {str("bootargs", {"console=ttyS0 cma=96M"})}));
    auto rs = reserved::read(t);
    REQUIRE(rs.bootargs);
    CHECK(*rs.bootargs == "console=ttyS0 cma=96M");
    REQUIRE(rs.cma_cmdline);
    CHECK(rs.cma_cmdline->size == 96ull << 20);
    CHECK_FALSE(rs.bootargs_from_option);

    reserved::ReadOptions o;
    o.bootargs = "quiet";
    auto rs2 = reserved::read(t, o);
    CHECK(rs2.bootargs_from_option);
    CHECK_FALSE(rs2.cma_cmdline);
}
