// Where the checks take the kernel image to lie when nobody says: from the configuration first
// (XIP, no MMU, a fixed RAM start, TEXT_OFFSET), then the arch's usual place and a generic
// kernel's size; a dynamic-no-room finding that only the assumed image makes is a warning that
// says what was assumed, one that no kernel leaves room for stays an error.
#include <doctest/doctest.h>

#include <string>

#include "cmalign/checks/checks.hpp"
#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"
#include "support/dt_builder.hpp"

using namespace cmalign;
using namespace cmalign::test;

namespace {

kernel::Model image_model(const std::string& text, kernel::Arch arch) {
    Diagnostics diags;
    kconfig::Config config;
    REQUIRE(kconfig::read_fragment(text, "board_defconfig", config, diags));
    kernel::Options options;
    options.arch = arch;
    options.version = KernelVersion::parse("6.12");
    auto model = kernel::derive(config, options, diags);
    REQUIRE(model);
    return *model;
}

// stm32f746-disco's memory and pool (arch/arm/boot/dts/st/stm32f746-disco.dts, 6.12.117): 8 MiB
// of SDRAM at 0xc0000000 and a 512 KiB no-map linux,cma placed by size.
dt::Tree disco_board(std::uint32_t pool_size = 0x80000) {
    dt::Node pool = node("linux,cma", {str("compatible", {"shared-dma-pool"}), flag("no-map"),
                                       cells("size", {pool_size})});
    dt::Tree t = board({pool}, 1, 1);
    for (auto& p : t.root.children.front().properties)
        if (p.name == "reg") p = cells("reg", {0xc0000000, 0x800000});
    return t;
}

std::vector<Diagnostic> no_room_findings(const dt::Tree& t, const kernel::Model& m) {
    std::vector<Diagnostic> out;
    for (const auto& d : checks::run(t, m, {}).diagnostics)
        if (d.check == "dynamic-no-room") out.push_back(d);
    return out;
}

bool says(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

const std::string stm32_lines = "# CONFIG_MMU is not set\nCONFIG_ARCH_STM32=y\n"
                                "CONFIG_DRAM_BASE=0xc0000000\nCONFIG_XIP_KERNEL=y\n"
                                "CONFIG_XIP_PHYS_ADDR=0x08008000\n";

} // namespace

TEST_CASE("the configuration places the kernel: XIP keeps only data and bss in RAM") {
    auto m = image_model(stm32_lines, kernel::Arch::arm);
    CHECK(m.image.xip == true);
    CHECK(m.image.mmu == false);
    CHECK(m.image.xip_phys_addr == 0x08008000u);
    REQUIRE(m.image.phys_offset);
    CHECK(*m.image.phys_offset == 0xc0000000u);
    CHECK(m.image.phys_offset_symbol == "CONFIG_DRAM_BASE");
    const auto t = disco_board();
    const auto early = checks::assumed_early_reservations(checks::run(t, m, {}).reservations, m);
    REQUIRE(early.size() == 1);
    // The data at DRAM_BASE + TEXT_OFFSET, no swapper_pg_dir without an MMU, 2 MiB assumed.
    CHECK(early[0].span.begin == 0xc0008000u);
    CHECK(early[0].span.end == 0xc0208000u);
    CHECK(early[0].assumed);
    CHECK(says(early[0].basis, "CONFIG_XIP_KERNEL=y: the text runs from flash at 0x8008000"));
    CHECK(says(early[0].basis, "CONFIG_DRAM_BASE 0xc0000000"));
    CHECK(says(early[0].basis, "board_defconfig:4"));
    // The 512 KiB pool finds room beside it.
    CHECK(no_room_findings(t, m).empty());
}

TEST_CASE("a generic kernel's size that the board's RAM cannot hold makes a warning, not an "
          "error") {
    // Without XIP the 29 MiB generic image is assumed in 8 MiB of RAM: the pool fits once the
    // assumption is left out, so the finding rests on it alone.
    auto m =
        image_model("# CONFIG_MMU is not set\nCONFIG_DRAM_BASE=0xc0000000\n", kernel::Arch::arm);
    auto f = no_room_findings(disco_board(), m);
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == Severity::warning);
    CHECK(says(f[0].message, "the kernel image assumed at 0xc0008000..0xc1d08000"));
    CHECK(says(f[0].message, "a generic kernel's size 29 MiB"));
    CHECK(says(f[0].message, "(no MMU: no page tables)"));
    CHECK(says(f[0].message, "so only that assumption makes this finding"));
    // A pool the RAM cannot hold beside any kernel is lost whatever the kernel: an error.
    auto big = no_room_findings(disco_board(0x900000), image_model(stm32_lines, kernel::Arch::arm));
    REQUIRE(big.size() == 1);
    CHECK(big[0].severity == Severity::error);
    CHECK(says(big[0].message, "it does not fit even without them"));
}

TEST_CASE("a RAM start the configuration fixes outside the board's RAM is not believed") {
    // stm32_defconfig of 6.12 has DRAM_BASE=0x90000000; the F7 discovery boards' SDRAM is at
    // 0xc0000000, so a kernel for them is built with its own: the start of their RAM is taken.
    auto m = image_model("# CONFIG_MMU is not set\nCONFIG_DRAM_BASE=0x90000000\n"
                         "CONFIG_XIP_KERNEL=y\n",
                         kernel::Arch::arm);
    const auto t = disco_board();
    const auto early = checks::assumed_early_reservations(checks::run(t, m, {}).reservations, m);
    REQUIRE(early.size() == 1);
    CHECK(early[0].span.begin == 0xc0008000u);
    CHECK(says(early[0].basis, "CONFIG_DRAM_BASE 0x90000000 is not in the board's RAM"));
}

TEST_CASE("TEXT_OFFSET, the MMU's page tables and LPAE from the configuration") {
    // arch/arm/Makefile: textofs-$(CONFIG_ARCH_MESON) := 0x00208000; head.S: swapper_pg_dir
    // 16 KiB below the text, 20 KiB with LPAE.
    auto m = image_model("CONFIG_MMU=y\nCONFIG_ARCH_MESON=y\n", kernel::Arch::arm);
    CHECK(m.image.text_offset == 0x208000u);
    CHECK(m.image.text_offset_symbol == "CONFIG_ARCH_MESON");
    dt::Tree t = board({}, 1, 1);
    auto early = checks::assumed_early_reservations(checks::run(t, m, {}).reservations, m);
    REQUIRE(early.size() == 1);
    CHECK(early[0].span.begin == 0x40208000u - 0x4000u);
    CHECK(early[0].span.end == 0x40208000u + (29u << 20));
    CHECK(says(early[0].basis, "TEXT_OFFSET 0x208000 (CONFIG_ARCH_MESON=y)"));
    auto lpae = image_model("CONFIG_MMU=y\nCONFIG_ARM_LPAE=y\n", kernel::Arch::arm);
    early = checks::assumed_early_reservations(checks::run(t, lpae, {}).reservations, lpae);
    REQUIRE(early.size() == 1);
    CHECK(early[0].span.begin == 0x40008000u - 0x5000u);
}

TEST_CASE("riscv without an MMU runs at its link address, without OpenSBI below it") {
    // nommu_k210_defconfig (6.12.117): no MMU, M-mode, PAGE_OFFSET 0x80000000.
    auto m = image_model("# CONFIG_MMU is not set\nCONFIG_PAGE_OFFSET=0x80000000\n",
                         kernel::Arch::riscv);
    dt::Tree t = board({}, 2, 2);
    for (auto& p : t.root.children.front().properties)
        if (p.name == "reg") p = cells("reg", {0, 0x80000000, 0, 0x800000});
    auto early = checks::assumed_early_reservations(checks::run(t, m, {}).reservations, m);
    REQUIRE(early.size() == 1);
    CHECK(early[0].what == "the kernel image");
    CHECK(early[0].span.begin == 0x80000000u);
    CHECK(says(early[0].basis, "CONFIG_PAGE_OFFSET 0x80000000"));
    // With an MMU: OpenSBI's 2 MiB, then the image.
    auto s = image_model("CONFIG_MMU=y\n", kernel::Arch::riscv);
    CHECK(checks::assumed_early_reservations(checks::run(t, s, {}).reservations, s).size() == 2);
}

TEST_CASE("an initrd in /chosen is reserved first and known, not assumed") {
    auto m = image_model("CONFIG_MMU=y\n", kernel::Arch::arm);
    dt::Tree t = board({}, 1, 1);
    t.root.children.push_back(node("chosen", {cells("linux,initrd-start", {0x48000100}),
                                              cells("linux,initrd-end", {0x48200100})}));
    auto early = checks::assumed_early_reservations(checks::run(t, m, {}).reservations, m);
    REQUIRE(early.size() == 2);
    CHECK(early[0].what == "the initrd");
    CHECK(!early[0].assumed);
    // Page-rounded outwards, as reserve_initrd_mem() reserves it.
    CHECK(early[0].span.begin == 0x48000000u);
    CHECK(early[0].span.end == 0x48201000u);
    CHECK(early[1].assumed);
}

TEST_CASE("linux,usable-memory-range places a crash kernel's image in it") {
    auto m = image_model("CONFIG_MMU=y\n", kernel::Arch::arm64);
    dt::Tree t = board({}, 2, 2);
    t.root.children.push_back(
        node("chosen", {cells("linux,usable-memory-range", {0, 0x60000000, 0, 0x10000000})}));
    auto early = checks::assumed_early_reservations(checks::run(t, m, {}).reservations, m);
    REQUIRE(early.size() == 1);
    CHECK(early[0].span.begin == 0x60000000u);
    CHECK(says(early[0].basis, "linux,usable-memory-range"));
}
