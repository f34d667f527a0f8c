// Writing a Config: .config text that reads back to the same symbols, and the JSON of docs/json.md.
#include <doctest/doctest.h>

#include <iterator>
#include <random>
#include <string>

#include "cmalign/internal/kconfig/config_json.hpp"
#include "cmalign/internal/kconfig/write.hpp"
#include "cmalign/kconfig/config.hpp"

using cmalign::Diagnostics;
using cmalign::kconfig::Config;

namespace {

void check_same_symbols(const Config& a, const Config& b) {
    REQUIRE(a.entries().size() == b.entries().size());
    for (const auto& pair : a.entries()) {
        const std::string& name = pair.first; // no structured binding: clang 14 cannot capture it
        const auto& entry = pair.second;
        const auto* other = b.find(name);
        REQUIRE_MESSAGE(other != nullptr, name);
        CHECK_MESSAGE(other->value == entry.value, name);
        CHECK_MESSAGE(other->quoted == entry.quoted, name);
    }
    CHECK(a.header_arch == b.header_arch);
    CHECK(a.header_version == b.header_version);
}

} // namespace

TEST_CASE("to_config_text writes what kconfig writes") {
    Config c;
    Diagnostics d;
    REQUIRE(cmalign::kconfig::read_fragment("# Linux/arm64 6.12.117 Kernel Configuration\n"
                                            "CONFIG_B=m\nCONFIG_A=y\n# CONFIG_N is not set\n"
                                            "CONFIG_X=0x1f\nCONFIG_S=\"a \\\"q\\\" \\\\ b\"\n"
                                            "CONFIG_QN=\"n\"\n",
                                            "in", c, d));
    CHECK(cmalign::kconfig::to_config_text(c) == "#\n"
                                                 "# Automatically generated file; DO NOT EDIT.\n"
                                                 "# Linux/arm64 6.12.117 Kernel Configuration\n"
                                                 "#\n"
                                                 "CONFIG_A=y\n"
                                                 "CONFIG_B=m\n"
                                                 "# CONFIG_N is not set\n"
                                                 "CONFIG_QN=\"n\"\n"
                                                 "CONFIG_S=\"a \\\"q\\\" \\\\ b\"\n"
                                                 "CONFIG_X=0x1f\n");
    CHECK(cmalign::kconfig::to_config_text(Config{}).empty());
}

TEST_CASE("write then read gives the same symbols") {
    Config c;
    Diagnostics d;
    REQUIRE(cmalign::kconfig::read_fragment("CONFIG_A=y\r\n# CONFIG_B is not set\n", "one", c, d));
    REQUIRE(
        cmalign::kconfig::apply_set("CONFIG_CMDLINE=console=ttyS0,115200 root=\"/dev/x\"", c, d));
    REQUIRE(cmalign::kconfig::apply_set("CONFIG_BS=\"back\\\\slash\"", c, d));
    REQUIRE(cmalign::kconfig::apply_set("CONFIG_NEG=-17", c, d));
    REQUIRE(cmalign::kconfig::apply_set("CONFIG_BYTES=\"\xff\x01\tz\"", c, d));
    c.header_version = "2.6.18"; // the old heading without arch round-trips too

    std::string text = cmalign::kconfig::to_config_text(c);
    Config again;
    Diagnostics d2;
    CHECK(cmalign::kconfig::read_fragment(text, "written", again, d2));
    CHECK(d2.items().empty());
    check_same_symbols(c, again);
    CHECK(cmalign::kconfig::to_config_text(again) == text);
}

TEST_CASE("values set through the API that are not one word are written as strings") {
    Config c;
    c.set({"SPACED", "a b", false, {"api", 0, 0}});
    c.set({"EMPTY", "", false, {"api", 0, 0}});
    c.set({"HASH", "x#y", false, {"api", 0, 0}});
    std::string text = cmalign::kconfig::to_config_text(c);
    CHECK(text == "CONFIG_EMPTY=\"\"\nCONFIG_HASH=\"x#y\"\nCONFIG_SPACED=\"a b\"\n");
    Config again;
    Diagnostics d;
    CHECK(cmalign::kconfig::read_fragment(text, "w", again, d));
    CHECK(again.get_string("SPACED") == "a b");
    CHECK(again.get_string("EMPTY") == "");
}

TEST_CASE("to_json follows docs/json.md for `cmalign config`") {
    Config c;
    Diagnostics d;
    REQUIRE(cmalign::kconfig::read_fragment(
        "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_O=11\nCONFIG_S=\"x \\\"y\\\"\"\n"
        "CONFIG_BAD=\"\xff\xc3(\xe2\x82\xac\"\n",
        "in", c, d));
    nlohmann::json j = cmalign::kconfig::to_json(c);
    REQUIRE(j.is_object());
    REQUIRE(j.contains("symbols"));
    const auto& s = j["symbols"];
    CHECK(s.size() == 5);
    CHECK(s["CONFIG_A"] == "y");
    CHECK(s["CONFIG_B"] == "n");
    CHECK(s["CONFIG_O"] == "11");
    CHECK(s["CONFIG_S"] == "x \"y\"");
    // Invalid bytes become U+FFFD, valid sequences (the euro sign) stay; dump() must not throw.
    CHECK(s["CONFIG_BAD"] == "\xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac");
    std::string dumped;
    CHECK_NOTHROW(dumped = j.dump());
    CHECK(nlohmann::json::parse(dumped) == j);
}

TEST_CASE("property: whatever reads without errors reads back the same after writing") {
    // Random lines built from the pieces the grammar cares about; 3000 inputs in well under a
    // second (a 200k-input sanitizer run of the same loop found a null dereference once).
    std::mt19937 rng(7);
    const std::string pieces[] = {"CONFIG_",
                                  "=",
                                  "\"",
                                  "\\",
                                  "#",
                                  " ",
                                  "\t",
                                  "\r",
                                  "\n",
                                  "y",
                                  "0x",
                                  "-",
                                  "1",
                                  "A_B",
                                  "is not set",
                                  "# CONFIG_",
                                  "\xff",
                                  "\xc3",
                                  "\n# CONFIG_X is not set\n",
                                  "\nCONFIG_S=\"q\\\"\"\n"};
    int accepted = 0;
    for (int round = 0; round < 3000; ++round) {
        std::string text;
        int pieces_in_text = static_cast<int>(rng() % 30);
        for (int i = 0; i < pieces_in_text; ++i)
            text += pieces[rng() % std::size(pieces)];
        Config c;
        Diagnostics d;
        bool ok = cmalign::kconfig::read_fragment(text, "f", c, d);
        REQUIRE(ok == !d.has_errors());
        std::string written = cmalign::kconfig::to_config_text(c);
        Config again;
        Diagnostics d2;
        REQUIRE_MESSAGE(cmalign::kconfig::read_fragment(written, "w", again, d2), written);
        REQUIRE(again.entries().size() == c.entries().size());
        for (const auto& [name, entry] : c.entries()) {
            auto other = again.entries().find(name);
            REQUIRE(other != again.entries().end());
            CHECK(other->second.value == entry.value);
        }
        CHECK_NOTHROW((void)cmalign::kconfig::to_json(c).dump());
        accepted += !c.entries().empty();
    }
    MESSAGE(accepted << " of 3000 random inputs set at least one symbol");
    CHECK(accepted > 300); // the generator does produce valid assignments
}
