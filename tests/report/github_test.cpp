// --format github: workflow commands escaped as GitHub's toolkit escapes them.
#include <doctest/doctest.h>

#include <vector>

#include "cmalign/report/report.hpp"

using namespace cmalign;

TEST_CASE("findings become ::error/::warning/::notice workflow commands") {
    std::vector<Diagnostic> ds(3);
    ds[0].severity = Severity::error;
    ds[0].where = {"boards/soc.dtsi", 24, 16};
    ds[0].check = "cma-size-alignment";
    ds[0].message = "size 0x400000 is not a multiple of 0x2000000";
    ds[0].node = "/reserved-memory/vdec-pool";
    ds[1].severity = Severity::warning;
    ds[1].where = {"b.dts", 3, 0};
    ds[1].check = "overlap";
    ds[1].message = "overlaps";
    ds[2].severity = Severity::note;
    ds[2].where = {"c.dts", 0, 0};
    ds[2].message = "read";
    CHECK(report::github(ds) ==
          "::error file=boards/soc.dtsi,line=24,col=16,title=cma-size-alignment::size 0x400000 is "
          "not a multiple of 0x2000000 (/reserved-memory/vdec-pool)\n"
          "::warning file=b.dts,line=3,title=overlap::overlaps\n"
          "::notice file=c.dts,title=cmalign::read\n");
}

TEST_CASE("data escapes % CR LF; properties also : and ,") {
    Diagnostic d;
    d.where = {"dir,with:odd%name.dts", 1, 2};
    d.check = "cell-overflow";
    d.message = "100% of\r\nit: a, b";
    CHECK(report::github(std::vector<Diagnostic>{d}) ==
          "::error file=dir%2Cwith%3Aodd%25name.dts,line=1,col=2,title=cell-overflow::100%25 "
          "of%0D%0Ait: a, b\n");
}

TEST_CASE("a finding shared by several boards is annotated once") {
    Diagnostic d;
    d.where = {"soc.dtsi", 5, 1};
    d.check = "cma-size-alignment";
    d.message = "m";
    auto a = d, b = d;
    a.input = "a.dts";
    b.input = "b.dts";
    CHECK(report::github(std::vector<Diagnostic>{a, b}) ==
          "::error file=soc.dtsi,line=5,col=1,title=cma-size-alignment::m\n");
}
