#include <doctest/doctest.h>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/size.hpp"
#include "cmalign/core/version.hpp"

using namespace cmalign;

TEST_CASE("parse_size accepts every spelling docs/cli.md lists") {
    CHECK(parse_size("4194304") == 4194304u);
    CHECK(parse_size("0x400000") == 4194304u);
    CHECK(parse_size("4M") == 4194304u);
    CHECK(parse_size("4MiB") == 4194304u);
    CHECK(parse_size("4 MiB") == 4194304u);
    CHECK(parse_size("SZ_4M") == 4194304u);
    CHECK(parse_size("32K") == 32768u);
    CHECK(parse_size("1G") == (1ull << 30));
    CHECK(parse_size("2T") == (2ull << 40));
}

TEST_CASE("parse_size rejects what is not a size") {
    CHECK_FALSE(parse_size(""));
    CHECK_FALSE(parse_size("M"));
    CHECK_FALSE(parse_size("4X"));
    CHECK_FALSE(parse_size("0x10M"));
    CHECK_FALSE(parse_size("-4M"));
    CHECK_FALSE(parse_size("99999999999999999999"));
    CHECK_FALSE(parse_size("17000000000T")); // overflows 64 bits after the shift
}

TEST_CASE("format_size is exact") {
    CHECK(format_size(2u << 20) == "2 MiB");
    CHECK(format_size(512ull << 20) == "512 MiB");
    CHECK(format_size(4096) == "4 KiB");
    CHECK(format_size((3u << 20) + 1) == "3145729 B");
    CHECK(format_size(0) == "0 B");
}

TEST_CASE("round_up") {
    CHECK(round_up(4u << 20, 32u << 20) == (32u << 20));
    CHECK(round_up(64u << 20, 32u << 20) == (64u << 20));
    CHECK(round_up(0, 4096) == 0u);
    CHECK_FALSE(round_up(UINT64_MAX, 4096));
    CHECK_FALSE(round_up(1, 0));
}

TEST_CASE("kernel versions parse and order") {
    auto v = KernelVersion::parse("6.12.117");
    REQUIRE(v);
    CHECK(v->major == 6);
    CHECK(v->minor == 12);
    CHECK(v->patch == 117);
    CHECK(v->str() == "6.12.117");
    CHECK(KernelVersion::parse("6.16")->str() == "6.16");
    CHECK(KernelVersion::parse("6.1.0-android14-11")->minor == 1);
    CHECK(KernelVersion::parse("v5.10")->major == 5);
    CHECK_FALSE(KernelVersion::parse("6"));
    CHECK_FALSE(KernelVersion::parse("6.x"));
    CHECK_FALSE(KernelVersion::parse("six.1"));
    CHECK(*KernelVersion::parse("6.9") < *KernelVersion::parse("6.10"));
    CHECK(*KernelVersion::parse("6.12") == *KernelVersion::parse("6.12.0"));
}

TEST_CASE("version ranges cover their ends") {
    VersionRange r{5, 18, 6, 9};
    CHECK(r.contains(*KernelVersion::parse("5.18")));
    CHECK(r.contains(*KernelVersion::parse("6.9.12")));
    CHECK_FALSE(r.contains(*KernelVersion::parse("5.17.15")));
    CHECK_FALSE(r.contains(*KernelVersion::parse("6.10")));
    CHECK(r.str() == "v5.18–v6.9");
    CHECK(VersionRange{6, 17}.str() == "≥ v6.17");
}

TEST_CASE("gcc-style diagnostics") {
    Diagnostic d =
        make_diagnostic(Severity::error, {"a.dtsi", 12, 5}, "bad size", "cma-size-alignment");
    CHECK(format_gcc(d) == "a.dtsi:12:5: error: bad size [cma-size-alignment]");
    d.where = {"x.config", 3, 0};
    d.check.clear();
    d.severity = Severity::warning;
    CHECK(format_gcc(d) == "x.config:3: warning: bad size");
    Diagnostics sink;
    sink.warning({}, "w");
    CHECK_FALSE(sink.has_errors());
    sink.error({}, "e");
    CHECK(sink.has_errors());
    CHECK(sink.count(Severity::warning) == 1);
}
