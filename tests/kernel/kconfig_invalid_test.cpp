// Invalid int values (CONFIG_PAGE_BLOCK_ORDER=abc): the message kconfig prints and the value it
// uses instead, checked by hand (scripts/kconfig/symbol.c sym_string_valid(), S_INT) and against
// the real kconfig of the 6.12 tree (`make olddefconfig` out of tree).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <unistd.h>

#include "cmalign/kconfig/config.hpp"
#include "support/kernel.hpp"

using namespace cmalign;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> warnings_of(const Diagnostics& d) {
    std::vector<std::string> out;
    for (const auto& i : d.items())
        if (i.severity == Severity::warning) out.push_back(i.message);
    return out;
}

bool any_has(const std::vector<std::string>& list, const std::string& part) {
    for (const auto& s : list)
        if (s.find(part) != std::string::npos) return true;
    return false;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

TEST_CASE("kconfig int values: what sym_string_valid() rejects keeps the default") {
    // arm64 6.16: PAGE_BLOCK_ORDER (range 1..ARCH_FORCE_MAX_ORDER, default the max order 10).
    for (const char* bad : {"abc", "0x8", "08", "8k", "-", ""}) {
        CAPTURE(bad);
        Diagnostics d;
        auto m = test::calc("arm64", "6.16", {{"PAGE_BLOCK_ORDER", bad}}, &d);
        REQUIRE(m);
        REQUIRE(m->page_block_order_option);
        CHECK(*m->page_block_order_option == 10);
        CHECK(any_has(warnings_of(d),
                      std::string("symbol value '") + bad + "' invalid for PAGE_BLOCK_ORDER"));
        CHECK(any_has(warnings_of(d), "keeps the default: 10"));
    }
    // Valid ints are taken.
    Diagnostics ok;
    auto m = test::calc("arm64", "6.16", {{"PAGE_BLOCK_ORDER", "8"}}, &ok);
    REQUIRE(m);
    CHECK(*m->page_block_order_option == 8);
    CHECK_FALSE(any_has(warnings_of(ok), "invalid for"));
    // CMA_AREAS (6.12: MAX_CMA_AREAS = CONFIG_CMA_AREAS, default 8 without NUMA... as modelled).
    Diagnostics d2;
    auto base = test::calc("arm64", "6.12", {{"CMA", "y"}, {"DMA_CMA", "y"}}, &d2);
    Diagnostics d3;
    auto hexed =
        test::calc("arm64", "6.12", {{"CMA", "y"}, {"DMA_CMA", "y"}, {"CMA_AREAS", "0x10"}}, &d3);
    REQUIRE(base);
    REQUIRE(hexed);
    CHECK(hexed->cma_areas == base->cma_areas);
    CHECK(any_has(warnings_of(d3), "symbol value '0x10' invalid for CMA_AREAS"));
}

TEST_CASE("kconfig int values: the real kconfig of 6.12 says and does the same") {
    const fs::path tree = fs::path(CMALIGN_KERNEL_SRC_DIR) / "linux-source-6.12";
    REQUIRE_MESSAGE(fs::is_directory(tree / "scripts/kconfig"),
                    "the 6.12 tree is test material: scripts/kernel-sources extracts it");
    if (std::system("command -v make >/dev/null && command -v gcc >/dev/null && "
                    "command -v flex >/dev/null && command -v bison >/dev/null") != 0) {
        FAIL("make, gcc, flex and bison are needed to run the kernel's kconfig");
    }
    const fs::path out =
        fs::temp_directory_path() / ("cmalign-kconfig-invalid-" + std::to_string(getpid()));
    fs::remove_all(out);
    fs::create_directories(out);
    const std::string make =
        "make -s -C '" + tree.string() + "' O='" + out.string() + "' ARCH=arm64 ";
    REQUIRE(std::system((make + "defconfig >/dev/null 2>&1").c_str()) == 0);
    // The defconfig's CMA_AREAS line, made invalid.
    std::string config = slurp(out / ".config");
    config = std::regex_replace(config, std::regex("\nCONFIG_CMA_AREAS=[0-9]+\n"),
                                "\nCONFIG_CMA_AREAS=0x10\n");
    REQUIRE(config.find("CONFIG_CMA_AREAS=0x10") != std::string::npos);
    std::ofstream(out / ".config") << config;
    REQUIRE(std::system((make + "olddefconfig >'" + (out / "log").string() + "' 2>&1").c_str()) ==
            0);
    const std::string log = slurp(out / "log");
    CHECK(log.find("warning: symbol value '0x10' invalid for CMA_AREAS") != std::string::npos);
    std::smatch kept;
    const std::string after = slurp(out / ".config");
    REQUIRE(std::regex_search(after, kept, std::regex("\nCONFIG_CMA_AREAS=([0-9]+)\n")));

    // Ours, on the invalid .config (the kernel tree evaluates what it leaves open).
    kconfig::Config cfg;
    Diagnostics d;
    REQUIRE(kconfig::read_fragment(config, ".config", cfg, d));
    kernel::Options options;
    auto m = kernel::derive(cfg, options, d);
    REQUIRE(m);
    CHECK(m->cma_areas == std::stoi(kept[1].str()));
    CHECK(any_has(warnings_of(d), "symbol value '0x10' invalid for CMA_AREAS"));
    fs::remove_all(out);
}
