// Every name of the arch table works wherever the arch's own name does: the
// kernel model's parse_arch(), the Kconfig evaluation's make ARCH and arch/<SRCARCH>, and inside a
// real kernel tree (`calc --arch ppc64el` failed with "has no arch/ppc64el").
#include <doctest/doctest.h>

#include <filesystem>

#include "cmalign/api.hpp"
#include "cmalign/internal/kernel/arch.hpp"
#include "cmalign/internal/kernel/rules.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/kconfig/kconfig_tree.hpp"
#include "support/cli.hpp"
#include "support/material.hpp"

using namespace cmalign;

TEST_CASE("every name and alias of the arch table reaches its arch and its arch directory") {
    for (const auto& info : kernel::rules::arch_infos()) {
        CAPTURE(info.name);
        CHECK(info.names.front().name == std::string(info.name));
        CHECK(kernel::to_string(info.arch) == std::string(info.name));
        for (const auto& alias : info.names) {
            CAPTURE(alias.name);
            CHECK(kernel::parse_arch(alias.name) == info.arch);
            // cmalign::detail::kconfig_arch() hands this to the Kconfig evaluation as make's ARCH.
            ConfigOptions options;
            options.arch = alias.name;
            auto make = cmalign::detail::kconfig_arch(options, kconfig::Config{});
            REQUIRE(make);
            CHECK(*make == kernel::make_arch(alias.name));
            CHECK(kconfig::srcarch_of(*make) == kernel::arch_dir(info.arch));
        }
    }
    CHECK(kernel::make_arch("PPC64EL") == "powerpc");
    CHECK(kernel::make_arch("powerpc64") == "powerpc");
    CHECK(kernel::make_arch("mips64el") == "mips");
    CHECK(kernel::make_arch("i686") == "i386");
    CHECK(kernel::make_arch("x86") == "x86");         // kept: ARCH=x86 lets Kconfig offer 64BIT
    CHECK(kernel::make_arch("sparc64") == "sparc64"); // not modelled: passed through
    CHECK(kernel::arch_dir(kernel::Arch::x86_64) == "x86");
}

TEST_CASE("the arch a directory of a kernel tree and a config's symbols name") {
    CHECK(kernel::arch_of_dir("x86", "i386_defconfig") == kernel::Arch::x86);
    CHECK(kernel::arch_of_dir("x86", "x86_64_defconfig") == kernel::Arch::x86_64);
    CHECK(kernel::arch_of_dir("x86", "ce4100.dts") == kernel::Arch::x86_64);
    CHECK(kernel::arch_of_dir("powerpc", "ppc64_defconfig") == kernel::Arch::powerpc);
    CHECK_FALSE(kernel::arch_of_dir("sparc", "sparc64_defconfig"));

    kconfig::Config config;
    Diagnostics diags;
    REQUIRE(kconfig::load({}, {"CONFIG_X86=y", "CONFIG_X86_32=y"}, config, diags));
    auto found = kernel::arch_from_symbols(config);
    REQUIRE(found);
    CHECK(found->arch == kernel::Arch::x86);
    CHECK(found->make_arch == "i386");
    CHECK(cmalign::detail::kconfig_arch(ConfigOptions{}, config) == "i386");
}

TEST_CASE("--arch ppc64el works inside a real kernel tree as --arch powerpc does" *
          CMALIGN_REAL_MATERIAL(std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12")) {
    using cli_test::run_cli_in;
    const std::string tree = std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12";
    if (!cmalign::test::have_material(tree + "/arch/powerpc/configs/ppc64_defconfig")) return;
    const std::string args =
        " -c arch/powerpc/configs/ppc64_defconfig --kernel-tree " + tree + " --format json";
    auto powerpc = run_cli_in(tree, "calc --arch powerpc" + args);
    REQUIRE(powerpc.exit_code == 0);
    for (const char* alias : {"ppc64el", "powerpc64", "ppc64le", "PPC64"}) {
        CAPTURE(alias);
        auto run = run_cli_in(tree, std::string("calc --arch ") + alias + args);
        CHECK(run.exit_code == 0);
        CHECK(run.out == powerpc.out);
    }
}
