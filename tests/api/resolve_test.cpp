// resolve_config_options(): the kernel tree and arch found without asking.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "cmalign/api.hpp"
#include "cmalign/internal/run_inputs.hpp"

using namespace cmalign;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

// The least a directory needs to be a kernel tree: a top Makefile with VERSION and PATCHLEVEL,
// and a Kconfig.
struct FakeTree {
    fs::path root;
    FakeTree() {
        root = fs::temp_directory_path() / ("cmalign-resolve-" + std::to_string(::getpid()));
        fs::remove_all(root);
        write(root / "Makefile",
              "# SPDX-License-Identifier: GPL-2.0\nVERSION = 6\nPATCHLEVEL = 12\n"
              "SUBLEVEL = 3\nEXTRAVERSION =\n");
        write(root / "Kconfig", "mainmenu \"fake\"\n");
        write(root / "arch/arm64/configs/defconfig", "CONFIG_ARM64_16K_PAGES=y\n");
        write(root / "arch/x86/configs/x86_64_defconfig", "CONFIG_SMP=y\n");
        write(root / "arch/x86/configs/i386_defconfig", "CONFIG_SMP=y\n");
        write(root / "arch/mips/boot/dts/ingenic/board.dts", "/dts-v1/;\n/ {};\n");
        write(root / "kernel/configs/16k.config", "CONFIG_ARM64_16K_PAGES=y\n");
    }
    ~FakeTree() { fs::remove_all(root); }
};

ResolveEnvironment env_at(const fs::path& cwd, std::optional<std::string> arch = std::nullopt) {
    return ResolveEnvironment{cwd.string(), std::move(arch)};
}

std::size_t notes(const Diagnostics& d) {
    return d.count(Severity::note);
}

} // namespace

TEST_CASE("a directory is a kernel tree only with VERSION, PATCHLEVEL and Kconfig") {
    FakeTree t;
    CHECK(cmalign::detail::find_kernel_tree((t.root / "arch/arm64/configs/defconfig").string()) ==
          t.root.string());
    CHECK(cmalign::detail::find_kernel_tree((t.root / "arch/mips/boot/dts").string()) ==
          t.root.string());
    fs::remove(t.root / "Kconfig");
    CHECK_FALSE(
        cmalign::detail::find_kernel_tree((t.root / "arch/arm64/configs/defconfig").string()));
    write(t.root / "Kconfig", "");
    write(t.root / "Makefile", "VERSION = 6\n# no patchlevel\n");
    CHECK_FALSE(cmalign::detail::find_kernel_tree(t.root.string()));
}

TEST_CASE("the tree and arch come from a config path inside a tree, in one note") {
    FakeTree t;
    ConfigOptions given;
    given.config_files = {"arch/arm64/configs/defconfig"}; // relative to the cwd
    Diagnostics d;
    auto out = resolve_config_options(given, {}, d, env_at(t.root));
    REQUIRE(out.kernel_tree);
    CHECK(*out.kernel_tree == t.root.string());
    REQUIRE(out.arch);
    CHECK(*out.arch == "arm64");
    REQUIRE(notes(d) == 1); // one line says both
    auto text = d.items()[0].message;
    CHECK(text.find(t.root.string()) != std::string::npos);
    CHECK(text.find("arch arm64") != std::string::npos);

    SUBCASE("idempotent: a second pass adds nothing") {
        Diagnostics again;
        auto twice = resolve_config_options(out, {}, again, env_at(t.root));
        CHECK(notes(again) == 0);
        CHECK(twice.kernel_tree == out.kernel_tree);
        CHECK(twice.arch == out.arch);
    }
}

TEST_CASE("what the user gave is kept") {
    FakeTree t;
    ConfigOptions given;
    given.config_files = {(t.root / "arch/arm64/configs/defconfig").string()};
    given.arch = "arm";
    given.kernel_tree = "/somewhere/else";
    Diagnostics d;
    auto out = resolve_config_options(given, {}, d, env_at("/"));
    CHECK(*out.arch == "arm");
    CHECK(*out.kernel_tree == "/somewhere/else");
    CHECK(notes(d) == 0);
}

TEST_CASE("arch from a DTS path arch/<arch>/boot/dts, then from ARCH") {
    FakeTree t;
    ConfigOptions given;
    given.config_files = {(t.root / "kernel/configs/16k.config").string()}; // names no arch
    Diagnostics d;
    auto out = resolve_config_options(
        given, {(t.root / "arch/mips/boot/dts/ingenic/board.dts").string()}, d, env_at("/"));
    CHECK(out.arch == std::optional<std::string>("mips"));
    Diagnostics dir_diags; // a directory of boards, as `check arch/mips/boot/dts` gets it
    CHECK(resolve_config_options(given, {(t.root / "arch/mips/boot/dts").string()}, dir_diags,
                                 env_at("/"))
              .arch == std::optional<std::string>("mips"));

    Diagnostics d2;
    auto from_env = resolve_config_options(given, {}, d2, env_at("/", "riscv"));
    CHECK(from_env.arch == std::optional<std::string>("riscv"));
    CHECK(d2.items().back().message.find("ARCH in the environment") != std::string::npos);

    Diagnostics d3;
    auto bad_env = resolve_config_options(given, {}, d3, env_at("/", "um"));
    CHECK_FALSE(bad_env.arch); // not an arch cmalign models: ignored, and said
    bool said = false;
    for (const auto& n : d3.items())
        said = said || n.message.find("ARCH=um") != std::string::npos;
    CHECK(said);
}

TEST_CASE("arch/x86/configs: the file name tells 32 from 64 bits") {
    FakeTree t;
    using Case = std::pair<const char*, const char*>;
    for (auto [file, arch] : {Case{"x86_64_defconfig", "x86_64"}, Case{"i386_defconfig", "x86"}}) {
        ConfigOptions given;
        given.config_files = {(t.root / "arch/x86/configs" / file).string()};
        Diagnostics d;
        CHECK(resolve_config_options(given, {}, d, env_at("/")).arch ==
              std::optional<std::string>(arch));
    }
}

TEST_CASE("a .config with kconfig's header names its arch itself") {
    FakeTree t;
    write(t.root / "arch/arm/configs/full.config",
          "#\n# Automatically generated file; DO NOT EDIT.\n# Linux/arm64 6.12.3 Kernel "
          "Configuration\n#\nCONFIG_ARM64=y\n");
    ConfigOptions given;
    given.config_files = {(t.root / "arch/arm/configs/full.config").string()};
    Diagnostics d;
    CHECK_FALSE(resolve_config_options(given, {}, d, env_at("/")).arch);
}

TEST_CASE("outside any tree nothing is found and nothing is said") {
    ConfigOptions given;
    given.config_files = {"/dev/null"};
    Diagnostics d;
    auto out = resolve_config_options(given, {}, d, env_at("/"));
    CHECK_FALSE(out.kernel_tree);
    CHECK_FALSE(out.arch);
    CHECK(d.items().empty());
}

TEST_CASE("the real Debian trees are found from any file inside them") {
    fs::path root = fs::path(CMALIGN_KERNEL_SRC_DIR) / "linux-source-6.12";
    if (!fs::exists(root / "Makefile")) {
        if (std::getenv("CI")) FAIL("no kernel tree at " << root << " (scripts/kernel-sources)");
        MESSAGE("skipped: " << root << " not found");
        return;
    }
    auto dts = root / "arch/arm64/boot/dts/qcom/sdm845-db845c.dts";
    CHECK(cmalign::detail::find_kernel_tree(dts.string()) == root.string());
    ConfigOptions given;
    given.config_files = {"arch/arm64/configs/defconfig"};
    Diagnostics d;
    auto out = resolve_config_options(given, {dts.string()}, d, env_at(root));
    CHECK(out.kernel_tree == std::optional<std::string>(root.string()));
    CHECK(out.arch == std::optional<std::string>("arm64"));
    auto version = kernel_tree_version(*out.kernel_tree, d);
    REQUIRE(version);
    CHECK(version->major == 6);
    CHECK(version->minor == 12);
}
