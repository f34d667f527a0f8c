// The fragment reader on hand-written input: values, comments, errors with exact places, merging.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "cmalign/kconfig/config.hpp"

using cmalign::Diagnostic;
using cmalign::Diagnostics;
using cmalign::Location;
using cmalign::Severity;
using cmalign::kconfig::Config;

namespace {

struct Parsed {
    Config config;
    Diagnostics diags;
    bool ok = false;
};

Parsed parse(std::string_view text, const std::string& file = "t.config") {
    Parsed p;
    p.ok = cmalign::kconfig::read_fragment(text, file, p.config, p.diags);
    return p;
}

std::vector<Diagnostic> of_severity(const Diagnostics& d, Severity s) {
    std::vector<Diagnostic> out;
    for (const auto& item : d.items())
        if (item.severity == s) out.push_back(item);
    return out;
}

std::filesystem::path temp_dir() {
    auto dir = std::filesystem::temp_directory_path() /
               ("cmalign-kconfig-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir;
}

std::string write_file(const std::string& name, std::string_view text) {
    auto path = temp_dir() / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
}

} // namespace

TEST_CASE("values of every kind and where they were written") {
    Parsed p = parse("CONFIG_A=y\n"
                     "CONFIG_B=m\n"
                     "CONFIG_C=n\n"
                     "CONFIG_D=123\n"
                     "CONFIG_E=-5\n"
                     "CONFIG_F=0x1f\n"
                     "CONFIG_G=\"plain text\"\n"
                     "CONFIG_H=\"say \\\"hi\\\" \\\\ there\"\n"
                     "CONFIG_I=\"\"\n"
                     "# CONFIG_J is not set\n");
    CHECK(p.ok);
    CHECK(p.diags.items().empty());
    CHECK(p.config.entries().size() == 10);
    CHECK(p.config.get_string("A") == "y");
    CHECK(p.config.get_string("CONFIG_B") == "m");
    CHECK(p.config.get_string("C") == "n");
    CHECK(p.config.get_int("D") == 123);
    CHECK(p.config.get_int("E") == -5);
    CHECK(p.config.get_int("F") == 31);
    const auto* g = p.config.find("CONFIG_G");
    REQUIRE(g != nullptr);
    CHECK(g->quoted);
    CHECK(g->value == "plain text");
    CHECK(p.config.find("H")->value == "say \"hi\" \\ there");
    CHECK(p.config.find("I")->quoted);
    CHECK(p.config.find("I")->value.empty());
    const auto* j = p.config.find("J");
    REQUIRE(j != nullptr);
    CHECK(j->value == "n");
    CHECK_FALSE(j->quoted);
    CHECK(j->where == Location{"t.config", 10, 1});
    CHECK(p.config.find("F")->where == Location{"t.config", 6, 1});
    CHECK(p.config.find("A")->name == "A");
}

TEST_CASE("comments, blank lines, trailing text and a missing final newline") {
    Parsed p = parse("#\n"
                     "# Automatically generated file; DO NOT EDIT.\n"
                     "\n"
                     "# CONFIG_X=y is only a comment here\n"
                     "CONFIG_A=y   \n"
                     "CONFIG_S=\"v\"\t \n"
                     "CONFIG_LAST=7");
    CHECK(p.ok);
    CHECK(p.diags.items().empty());
    CHECK_FALSE(p.config.contains("X"));
    CHECK(p.config.get_string("A") == "y");
    CHECK(p.config.get_string("S") == "v");
    CHECK(p.config.get_int("LAST") == 7);
    CHECK(p.config.find("LAST")->where.line == 7);
    CHECK(p.config.assignments().size() == 3);
}

TEST_CASE("CRLF line endings read like LF; the last line keeps its CR") {
    Parsed lf = parse("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_S=\"x y\"\nCONFIG_C=0x10\n");
    Parsed crlf =
        parse("CONFIG_A=y\r\n# CONFIG_B is not set\r\nCONFIG_S=\"x y\"\r\nCONFIG_C=0x10\r\n");
    CHECK(crlf.ok);
    CHECK(crlf.diags.items().empty());
    REQUIRE(crlf.config.entries().size() == lf.config.entries().size());
    for (const auto& [name, entry] : lf.config.entries()) {
        const auto* other = crlf.config.find(name);
        REQUIRE(other != nullptr);
        CHECK(other->value == entry.value);
        CHECK(other->quoted == entry.quoted);
        CHECK(other->where == entry.where);
    }
    // getline_stripped() drops "\r" only before "\n": "5\r" is no int (for any type).
    Parsed last = parse("CONFIG_CMA_AREAS=5\r");
    CHECK_FALSE(last.config.contains("CMA_AREAS"));
    REQUIRE(last.diags.items().size() == 1);
    CHECK(last.diags.items()[0].check == "config-invalid-value");
    // A UTF-8 byte-order mark is skipped with a warning; columns still count its bytes.
    Parsed bom = parse("\xEF\xBB\xBF# Linux/arm64 6.12.117 Kernel Configuration\nCONFIG_A=y\n");
    CHECK(bom.ok);
    CHECK(bom.config.header_arch == "arm64");
}

namespace {
// The single warning of a one-line input, as "line:col check".
std::string warning_place(std::string_view line) {
    Parsed p = parse(line);
    if (!p.ok || p.diags.items().size() != 1 || p.diags.items()[0].severity != Severity::warning)
        return "no single warning";
    const auto& w = p.diags.items()[0];
    return std::to_string(w.where.line) + ":" + std::to_string(w.where.column) + " " + w.check;
}
} // namespace

TEST_CASE("lines kconfig ignores or rejects: a warning at the exact byte, never an error") {
    CHECK(warning_place("CONFIG_FOO") == "1:11 config-ignored-line");      // no '=': past the name
    CHECK(warning_place("CONFIG_=1") == "1:8 config-ignored-line");        // no name
    CHECK(warning_place("FOO=y") == "1:1 config-ignored-line");            // no CONFIG_ prefix
    CHECK(warning_place("CONFIG_S=\"abc") == "1:10 config-invalid-value"); // unterminated
    CHECK(warning_place("CONFIG_S=\"abc\\\"") == "1:10 config-invalid-value");
    CHECK(warning_place("CONFIG_S=\"abc\\") == "1:10 config-invalid-value");
    CHECK(warning_place("CONFIG_X = y") == "1:9 config-ignored-line"); // the name is "X "
    CHECK(warning_place("CONFIG_X= y") == "1:10 config-invalid-value");
    CHECK(warning_place("  CONFIG_X=y") == "1:3 config-ignored-line"); // unexpected data
    CHECK(warning_place("   ") == "1:1 config-ignored-line");
    CHECK(warning_place("CONFIG_X=") == "1:10 config-invalid-value"); // empty value
    CHECK(warning_place("CONFIG_X=5 # five") == "1:10 config-invalid-value");
    CHECK(warning_place("CONFIG_FOO-BAR=y") == "1:11 config-ignored-line");
    CHECK(warning_place("CONFIG_-X=y") == "1:8 config-ignored-line");
    CHECK(warning_place("hello world") == "1:1 config-ignored-line");
    CHECK(warning_place("CONFIG_X=ff") == "1:10 config-type-assumed"); // hex without 0x
    CHECK(warning_place(std::string_view("CONFIG_X=\"a\0b\"", 15)) == "1:10 config-invalid-value");
    Parsed p = parse("CONFIG_A=y\nCONFIG_FOO\nCONFIG_B=2\nFOO=y\nCONFIG_S=\"open\nCONFIG_C=n\n");
    CHECK(p.ok);
    CHECK(of_severity(p.diags, Severity::error).empty());
    CHECK(of_severity(p.diags, Severity::warning).size() == 3);
    CHECK(p.config.entries().size() == 3);
    CHECK(cmalign::format_gcc(p.diags.items()[0]).rfind("t.config:2:11: warning: ", 0) == 0);
}

TEST_CASE("lines kconfig reads without a word are read so, without a word") {
    // confdata.c conf_set_sym_val(): a bool/tristate value is its first character, a string
    // ends at its closing quote, the C string at a NUL byte.
    Parsed p = parse("CONFIG_PCIE_DW=y CONFIG_PCIE_DW_HOST=y\n"
                     "CONFIG_B=nope\n"
                     "CONFIG_T=m # module\n"
                     "CONFIG_S=\"a \\\"b\\\" \\\\ \\x\" and the rest\n" +
                     std::string("CONFIG_N=y\0junk\n", 16) + "CONFIG_E=\"\"\n");
    CHECK(p.ok);
    CHECK(p.diags.items().empty());
    CHECK(p.config.get_string("PCIE_DW") == "y");
    CHECK_FALSE(p.config.contains("PCIE_DW_HOST"));
    CHECK(p.config.get_string("B") == "n");
    CHECK(p.config.get_string("T") == "m");
    CHECK(p.config.get_string("S") == "a \"b\" \\ x");
    CHECK(p.config.get_string("N") == "y");
    CHECK(p.config.find("E")->quoted);
}

TEST_CASE("a value kconfig rejects keeps the earlier one (types cmalign knows)") {
    Parsed p = parse("CONFIG_TRANSPARENT_HUGEPAGE=y\n"
                     "CONFIG_TRANSPARENT_HUGEPAGE=m\n"
                     "CONFIG_TRANSPARENT_HUGEPAGE=N\n"
                     "CONFIG_CMA_AREAS=7\n"
                     "CONFIG_CMA_AREAS=19 # more\n"
                     "# CONFIG_CMA_AREAS is not set\n"
                     "CONFIG_CMDLINE=\"console=ttyS0\"\n"
                     "CONFIG_CMDLINE=console=ttyAMA0\n");
    CHECK(p.ok);
    CHECK(p.config.get_bool("TRANSPARENT_HUGEPAGE") == true);
    CHECK(p.config.get_int("CMA_AREAS") == 7);
    CHECK(p.config.get_string("CMDLINE") == "console=ttyS0");
    auto warnings = of_severity(p.diags, Severity::warning);
    REQUIRE(warnings.size() == 5);
    CHECK(warnings[0].where == Location{"t.config", 2, 29});
    CHECK(warnings[0].check == "config-invalid-value");
    CHECK(warnings[0].message ==
          "kconfig warns \"symbol value 'm' invalid for TRANSPARENT_HUGEPAGE\" and ignores the "
          "line; CONFIG_TRANSPARENT_HUGEPAGE keeps y from t.config:1");
    CHECK(warnings[2].message.find("symbol value '19 # more' invalid for CMA_AREAS") !=
          std::string::npos);
    CHECK(warnings[3].message.find("symbol value 'n' invalid for CMA_AREAS") != std::string::npos);
    CHECK(warnings[4].check == "config-ignored-value");
    CHECK(warnings[4].message.find("without a word") != std::string::npos);
    CHECK(warnings[4].message.find("keeps \"console=ttyS0\" from t.config:7") != std::string::npos);
    // Every line is kept for an evaluation to replay with the tree's types.
    CHECK(p.config.assignments().size() == 8);
}

TEST_CASE("'is not set' look-alikes: ignored with a warning; forms older kconfig read") {
    // cns3420vb_defconfig in 6.1 has "#CONFIG_ARCH_MULTI_V7 is not set": confdata.c requires
    // "# " and skips it as a comment.
    Parsed p = parse("CONFIG_X=y\n"
                     "#CONFIG_X is not set\n"
                     "#  CONFIG_Y  is not set\n"
                     "# CONFIG_Z is not set  \n"
                     "# CONFIG_W is not set, see below\n"
                     "#\tCONFIG_V is not set\n");
    CHECK(p.ok);
    auto warnings = of_severity(p.diags, Severity::warning);
    REQUIRE(warnings.size() == 5);
    for (const auto& w : warnings)
        CHECK(w.check == "config-ignored-line");
    CHECK(warnings[0].where == Location{"t.config", 2, 1});
    CHECK(warnings[2].message.find("before 6.8") != std::string::npos);
    CHECK(warnings[4].message.find("before 6.0") != std::string::npos);
    CHECK(p.config.get_string("X") == "y");
    for (const char* name : {"Y", "Z", "W", "V"})
        CHECK_FALSE(p.config.contains(name));
    // Kept for a 5.10 or 6.1 tree, whose kconfig reads them.
    CHECK(p.config.assignments().size() == 4);
}

TEST_CASE("the kernel configuration header") {
    SUBCASE("current form") {
        Parsed p = parse("#\n# Automatically generated file; DO NOT EDIT.\n"
                         "# Linux/arm64 6.12.117 Kernel Configuration\n#\nCONFIG_A=y\n");
        CHECK(p.config.header_arch == "arm64");
        CHECK(p.config.header_version == "6.12.117");
    }
    SUBCASE("versions with suffixes, older kernels") {
        CHECK(parse("# Linux/arm64 5.10.0 Kernel Configuration\n").config.header_version ==
              "5.10.0");
        CHECK(parse("# Linux/x86 6.12.0-rc3 Kernel Configuration\n").config.header_version ==
              "6.12.0-rc3");
        Parsed android = parse("# Linux/arm64 6.1.0-android14-11 Kernel Configuration\r\n");
        CHECK(android.config.header_arch == "arm64");
        CHECK(android.config.header_version == "6.1.0-android14-11");
        Parsed old = parse("# Linux kernel version: 2.6.18\n");
        CHECK_FALSE(old.config.header_arch.has_value());
        CHECK(old.config.header_version == "2.6.18");
    }
    SUBCASE("not a header") {
        CHECK_FALSE(parse("# Linux/arm64 Kernel Configuration\n").config.header_version);
        CHECK_FALSE(parse("# Linux/arm64 6.1 Kernel Config\n").config.header_version);
        CHECK_FALSE(parse("#Linux/arm64 6.1 Kernel Configuration\n").config.header_version);
    }
    SUBCASE("the first file that has one wins") {
        Config c;
        Diagnostics d;
        cmalign::kconfig::read_fragment("CONFIG_A=y\n", "frag", c, d);
        CHECK_FALSE(c.header_version);
        cmalign::kconfig::read_fragment("# Linux/riscv 6.1.55 Kernel Configuration\n", "one", c, d);
        cmalign::kconfig::read_fragment("# Linux/arm64 6.12.1 Kernel Configuration\n", "two", c, d);
        CHECK(c.header_arch == "riscv");
        CHECK(c.header_version == "6.1.55");
    }
}

TEST_CASE("merging: later wins, a different value warns naming both places") {
    Config c;
    Diagnostics d;
    REQUIRE(cmalign::kconfig::read_fragment(
        "CONFIG_A=y\nCONFIG_B=5\n# CONFIG_C is not set\nCONFIG_S=\"x\"\n", "base.config", c, d));
    REQUIRE(cmalign::kconfig::read_fragment("CONFIG_A=y\n\nCONFIG_B=6\nCONFIG_C=n\nCONFIG_S=x\n",
                                            "frag.config", c, d));
    // A: same value, C: "n" both ways, so only B was redefined; kconfig takes the unquoted
    // S=x for no type, so S keeps "x".
    auto warnings = of_severity(d, Severity::warning);
    REQUIRE(warnings.size() == 2); // B, and S's value
    const Diagnostic* b = nullptr;
    for (const auto& w : warnings)
        if (w.message.find("CONFIG_B") != std::string::npos) b = &w;
    REQUIRE(b != nullptr);
    CHECK(b->check == "config-redefined");
    CHECK(b->where == Location{"frag.config", 3, 1});
    CHECK(b->message.find("base.config:2") != std::string::npos);
    CHECK(b->message.find("frag.config:3") != std::string::npos);
    CHECK(c.get_int("B") == 6);
    CHECK(c.find("B")->where == Location{"frag.config", 3, 1});
    CHECK(c.find("C")->where == Location{"frag.config", 4, 1});
    CHECK(c.find("S")->quoted);
    REQUIRE(c.redefinitions().size() == 1);
    CHECK(c.redefinitions()[0].before.value == "5");
    CHECK(c.redefinitions()[0].after.value == "6");

    // Within one file too (conf_read_simple warns "override: reassigning to symbol").
    Parsed same_file = parse("CONFIG_X=1\nCONFIG_X=2\n");
    auto w2 = of_severity(same_file.diags, Severity::warning);
    REQUIRE(w2.size() == 1);
    CHECK(w2[0].message.find("t.config:1") != std::string::npos);
    CHECK(w2[0].message.find("t.config:2") != std::string::npos);
    CHECK(same_file.config.get_int("X") == 2);
}

TEST_CASE("--set applies last, overrides files silently but is recorded") {
    Config c;
    Diagnostics d;
    REQUIRE(cmalign::kconfig::read_fragment("CONFIG_A=y\nCONFIG_N=3\n", "f", c, d));
    CHECK(cmalign::kconfig::apply_set("CONFIG_A=n", c, d));
    CHECK(cmalign::kconfig::apply_set("N=0x20", c, d));
    CHECK(cmalign::kconfig::apply_set("CONFIG_CMDLINE=console=ttyS0 root=/dev/vda", c, d));
    CHECK(cmalign::kconfig::apply_set("CONFIG_Q=\"quoted \\\"x\\\"\"", c, d));
    CHECK(cmalign::kconfig::apply_set("CONFIG_T=Y", c, d));
    CHECK(d.items().empty());
    CHECK(c.get_bool("A") == false);
    CHECK(c.find("A")->where.file == "--set");
    CHECK(c.get_int("N") == 32);
    CHECK(c.find("CMDLINE")->quoted);
    CHECK(c.find("CMDLINE")->value == "console=ttyS0 root=/dev/vda");
    CHECK(c.find("Q")->value == "quoted \"x\"");
    CHECK(c.get_bool("T") == true);
    REQUIRE(c.redefinitions().size() == 2);
    CHECK(c.redefinitions()[0].before.where == Location{"f", 1, 1});
    CHECK(c.redefinitions()[0].after.where.file == "--set");

    // Two --set that disagree: that one is worth a warning.
    CHECK(cmalign::kconfig::apply_set("CONFIG_A=m", c, d));
    REQUIRE(d.items().size() == 1);
    CHECK(d.items()[0].check == "config-redefined");

    Diagnostics bad;
    CHECK_FALSE(cmalign::kconfig::apply_set("CONFIG_FOO", c, bad));
    CHECK_FALSE(cmalign::kconfig::apply_set("=1", c, bad));
    CHECK_FALSE(cmalign::kconfig::apply_set("CONFIG_X=", c, bad));
    CHECK_FALSE(cmalign::kconfig::apply_set("CONFIG_X=\"open", c, bad));
    CHECK_FALSE(cmalign::kconfig::apply_set("CONFIG_X-Y=1", c, bad));
    REQUIRE(bad.items().size() == 5);
    for (const auto& e : bad.items()) {
        CHECK(e.severity == Severity::error);
        CHECK(e.where.file == "--set");
    }
    CHECK(bad.items()[0].message.find("CONFIG_FOO") != std::string::npos);
}

TEST_CASE("load(): files in order, then sets; unreadable files are located errors") {
    auto base = write_file("base.config", "# Linux/arm64 6.12.117 Kernel Configuration\n"
                                          "CONFIG_ARM64_4K_PAGES=y\nCONFIG_CMA_AREAS=7\n");
    auto frag = write_file("frag.config", "# CONFIG_ARM64_4K_PAGES is not set\n"
                                          "CONFIG_ARM64_16K_PAGES=y\n");
    auto missing = (temp_dir() / "does-not-exist.config").string();
    Config c;
    Diagnostics d;
    CHECK_FALSE(cmalign::kconfig::load({base, missing, frag, temp_dir().string()},
                                       {"CONFIG_CMA_AREAS=19"}, c, d));
    auto errors = of_severity(d, Severity::error);
    REQUIRE(errors.size() == 2);
    CHECK(errors[0].where == Location{missing, 0, 0});
    CHECK(errors[0].message.find("No such file") != std::string::npos);
    CHECK(errors[1].where.file == temp_dir().string());
    CHECK(c.get_bool("ARM64_4K_PAGES") == false);
    CHECK(c.get_bool("ARM64_16K_PAGES") == true);
    CHECK(c.get_int("CMA_AREAS") == 19);
    CHECK(c.header_arch == "arm64");
    CHECK(of_severity(d, Severity::warning).size() == 1); // 4K_PAGES y → n; the --set is silent

    Config good;
    Diagnostics none;
    CHECK(cmalign::kconfig::load({base, frag}, {}, good, none));
    std::filesystem::remove_all(temp_dir());
}

TEST_CASE("a symbol whose own name starts with CONFIG_") {
    Parsed p = parse("CONFIG_CONFIG_=y\nCONFIG_CONFIG_=n\nCONFIG_CONFIG_X=1\n");
    CHECK(p.ok);
    REQUIRE(p.config.find("CONFIG_") != nullptr);
    CHECK(p.config.find("CONFIG_")->value == "n");
    CHECK(p.config.find("CONFIG_CONFIG_X")->value == "1");
    CHECK(p.diags.items().size() == 1); // the redefinition
}

TEST_CASE("get_int and get_bool") {
    Parsed p = parse("CONFIG_D=42\nCONFIG_Z=0\nCONFIG_NEG=-2147483648\nCONFIG_H=0X7FFF\n"
                     "CONFIG_BIG=0xffffffffffffffff\nCONFIG_MAX=9223372036854775807\n"
                     "CONFIG_MIN=-9223372036854775808\nCONFIG_OVER=9223372036854775808\n"
                     "CONFIG_Q=\"12\"\nCONFIG_Y=y\nCONFIG_M=m\n# CONFIG_N is not set\n");
    CHECK(p.config.get_int("D") == 42);
    CHECK(p.config.get_int("Z") == 0);
    CHECK(p.config.get_int("NEG") == -2147483648LL);
    CHECK(p.config.get_int("H") == 0x7fff);
    CHECK_FALSE(p.config.get_int("BIG")); // does not fit a long long
    CHECK(p.config.get_int("MAX") == std::numeric_limits<long long>::max());
    CHECK(p.config.get_int("MIN") == std::numeric_limits<long long>::min());
    CHECK_FALSE(p.config.get_int("OVER"));
    CHECK_FALSE(p.config.get_int("Q")); // kconfig rejects a quoted int
    CHECK_FALSE(p.config.get_int("Y"));
    CHECK_FALSE(p.config.get_int("ABSENT"));
    CHECK(p.config.get_bool("Y") == true);
    CHECK(p.config.get_bool("M") == true);
    CHECK(p.config.get_bool("CONFIG_N") == false);
    CHECK_FALSE(p.config.get_bool("D"));
    CHECK_FALSE(p.config.get_bool("ABSENT"));
}

TEST_CASE("hostile input: huge lines, NUL, invalid UTF-8, random bytes, a million lines") {
    SUBCASE("a 2 MB string value and a 2 MB garbage line") {
        std::string big(2 << 20, 'a');
        Parsed p = parse("CONFIG_S=\"" + big + "\"\nCONFIG_G=" + big + " x\n");
        CHECK(p.config.find("S")->value.size() == big.size());
        auto warnings = of_severity(p.diags, Severity::warning);
        REQUIRE(warnings.size() == 1); // no type takes "aaa... x"
        CHECK(warnings[0].where == Location{"t.config", 2, 10});
        CHECK(warnings[0].message.size() < 400); // never echoes the megabytes
        CHECK_FALSE(p.config.contains("G"));
        Parsed unterminated = parse("CONFIG_S=\"" + big);
        CHECK(of_severity(unterminated.diags, Severity::warning).size() == 1);
        CHECK_FALSE(unterminated.config.contains("S"));
    }
    SUBCASE("invalid UTF-8 is kept byte for byte") {
        Parsed p = parse("CONFIG_S=\"\xff\xfe\xc3\"\n");
        CHECK(p.ok);
        CHECK(p.config.find("S")->value == "\xff\xfe\xc3");
    }
    SUBCASE("random bytes never crash, never stop the reading, always give located warnings") {
        std::mt19937 rng(1234);
        const std::string alphabet =
            std::string("CONFIG_=\"\\# \t\r\nxyz019-", 22) + std::string("\0\xff\x80", 3);
        for (int round = 0; round < 300; ++round) {
            std::string text;
            int length = static_cast<int>(rng() % 200);
            for (int i = 0; i < length; ++i)
                text += alphabet[rng() % alphabet.size()];
            Parsed p = parse(text);
            int lines = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
            for (const auto& item : p.diags.items()) {
                CHECK(item.where.line >= 1);
                CHECK(item.where.line <= lines);
                CHECK(item.where.column >= 1);
            }
            CHECK(p.ok);
            CHECK_FALSE(p.diags.has_errors());
        }
    }
    SUBCASE("a million lines, every one read and located") {
#ifdef NDEBUG
        const int line_count = 1'000'000;
#else
        const int line_count = 200'000; // unoptimised X3 is ~30x slower; keep the suite fast
#endif
        std::string text;
        text.reserve(static_cast<std::size_t>(line_count) * 20);
        for (int i = 0; i < line_count; ++i) {
            int symbol = i % 5000; // each symbol repeats with its own value: no warnings
            text += (symbol % 3 == 0) ? "# CONFIG_S" : "CONFIG_S";
            text += std::to_string(symbol);
            text += (symbol % 3 == 0) ? " is not set\n" : "=y\n";
        }
        auto start = std::chrono::steady_clock::now();
        Parsed p = parse(text);
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
        MESSAGE(line_count << " lines: " << ms << " ms");
        CHECK(p.ok);
        CHECK(p.diags.items().empty());
        CHECK(p.config.entries().size() == 5000);
        CHECK(p.config.find("S4999")->where.line == line_count);
        // The time is printed, not asserted: speed goals live in bench/ (bench/kconfig-read.sh),
        // and a timed check fails under valgrind or on a loaded machine for no fault of ours.
    }
}

TEST_CASE("a vendor BSP-style defconfig reads without an error, warned where kconfig warns") {
    // examples/configs/vendor-bsp_defconfig: `make ARCH=arm64 olddefconfig` reads every line of
    // it (tests/differential/config-reader compares the whole result with the kernel's).
    Config c;
    Diagnostics d;
    const std::string path = CMALIGN_SOURCE_DIR "/examples/configs/vendor-bsp_defconfig";
    REQUIRE(cmalign::kconfig::read_fragment_file(path, c, d));
    CHECK_FALSE(d.has_errors());
    std::vector<int> warned;
    for (const auto& item : d.items())
        warned.push_back(item.where.line);
    // "#CONFIG_DEBUG_INFO is not set", "CONFIG_CMA_SIZE_MBYTES=64 # ...", "  CONFIG_MMC=y".
    CHECK(warned == std::vector<int>{16, 34, 47});
    CHECK(c.get_string("PCIE_DW") == "y"); // "CONFIG_PCIE_DW=y CONFIG_PCIE_DW_HOST=y"
    CHECK_FALSE(c.contains("PCIE_DW_HOST"));
    CHECK_FALSE(c.contains("CMA_SIZE_MBYTES"));
    CHECK_FALSE(c.contains("MMC"));
    CHECK(c.get_string("USB_DWC3") == "y"); // a trailing tab
    CHECK(c.get_string("CMDLINE") == "console=ttyFIQ0 earlycon=uart8250,mmio32,0xfe660000 ");
    CHECK(c.get_bool("TRANSPARENT_HUGEPAGE") == true);
}
