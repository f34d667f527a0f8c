// The graft of a board onto QEMU's virt tree (boot/graft.hpp) and kernel image headers
// (boot/image.hpp), on hand-made inputs: no QEMU needed. The booted truth is tests/boot/run.sh.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <zlib.h>

#include "cmalign/boot/graft.hpp"
#include "cmalign/boot/image.hpp"
#include "cmalign/dt/dtb.hpp"
#include "cmalign/internal/boot/qemu.hpp"
#include "cmalign/reserved/regions.hpp"
#include "support/dt_builder.hpp"

extern "C" {
#include <libfdt.h>
}

using namespace cmalign;
using namespace cmalign::test;

namespace {

// A virt-like tree: 2/2 root, one memory node covering QEMU's RAM, /chosen, one device.
std::vector<std::uint8_t> fake_virt() {
    std::vector<std::uint8_t> buf(8192);
    void* fdt = buf.data();
    REQUIRE(fdt_create_empty_tree(fdt, static_cast<int>(buf.size())) == 0);
    fdt_setprop_u32(fdt, 0, "#address-cells", 2);
    fdt_setprop_u32(fdt, 0, "#size-cells", 2);
    int mem = fdt_add_subnode(fdt, 0, "memory@40000000");
    fdt_setprop_string(fdt, mem, "device_type", "memory");
    const std::uint8_t reg[] = {0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0};
    fdt_setprop(fdt, mem, "reg", reg, sizeof reg);
    int uart = fdt_add_subnode(fdt, 0, "pl011@9000000");
    fdt_setprop_string(fdt, uart, "compatible", "arm,pl011");
    fdt_add_subnode(fdt, 0, "chosen");
    fdt_pack(fdt);
    buf.resize(fdt_totalsize(fdt));
    return buf;
}

dt::Tree board_1_1(std::uint32_t dram) {
    dt::Tree t;
    t.input = "board.dts";
    t.root =
        node("", {cells("#address-cells", {1}), cells("#size-cells", {1})},
             {node("memory@0", {str("device_type", {"memory"}), cells("reg", {dram, 0x20000000})}),
              node("reserved-memory",
                   {cells("#address-cells", {1}), cells("#size-cells", {1}), flag("ranges")},
                   {node("fixed@8000000",
                         {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                          cells("reg", {dram + 0x08000000, 0x400000}), cells("phandle", {1})}),
                    node("dyn", {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                                 cells("size", {0x400000}), cells("alignment", {0x400000}),
                                 cells("alloc-ranges", {dram, 0x10000000})})}),
              node("chosen", {str("bootargs", {"console=ttyS0 cma=32M quiet"})})});
    return t;
}

std::uint64_t be64_at(const void* p) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v = (v << 8) | b[i];
    return v;
}

} // namespace

TEST_CASE("graft: banks moved by 1 GiB into virt's window, 1/1 cells re-encoded as 2/2") {
    auto board = board_1_1(0); // DRAM at 0: below virt's RAM (from 1 GiB)
    auto rs = reserved::read(board);
    Diagnostics diags;
    boot::GraftOptions options;
    options.image_size = 40u << 20;
    auto g = boot::graft(fake_virt(), board, rs, options, diags);
    REQUIRE_MESSAGE(g, (diags.items().empty() ? "" : diags.items()[0].message));
    CHECK(g->shift == (std::int64_t{1} << 30));
    CHECK(g->ram_base == 0x40000000u);
    CHECK(g->ram_size == 0x20000000u);
    REQUIRE(!g->notes.empty());
    CHECK(g->notes[0].find("moved by +1 GiB") != std::string::npos);

    Diagnostics read;
    auto tree = dt::parse_dtb(g->dtb, "grafted.dtb", read);
    REQUIRE(tree);
    // virt's memory node is gone, the board's bank is there, moved.
    CHECK(tree->find("/memory@40000000") != nullptr);
    CHECK(
        tree->root.children.end() ==
        std::find_if(tree->root.children.begin(), tree->root.children.end(), [](const dt::Node& n) {
            return n.name == "memory@40000000" && n.find_property("reg")->value.size() != 16;
        }));
    const auto* fixed = tree->find("/reserved-memory/fixed@8000000");
    REQUIRE(fixed);
    const auto* reg = fixed->find_property("reg");
    REQUIRE(reg->value.size() == 16);
    CHECK(be64_at(reg->value.data()) == 0x48000000u);
    CHECK(be64_at(reg->value.data() + 8) == 0x400000u);
    CHECK(fixed->find_property("phandle") == nullptr); // would collide with virt's
    const auto* dyn = tree->find("/reserved-memory/dyn");
    REQUIRE(dyn);
    CHECK(dyn->find_property("size")->value.size() == 8);
    CHECK(be64_at(dyn->find_property("alignment")->value.data()) == 0x400000u);
    CHECK(be64_at(dyn->find_property("alloc-ranges")->value.data()) == 0x40000000u);
    CHECK(tree->find("/reserved-memory")->find_property("#address-cells")->u32() == 2u);
    // Children keep the board's order (the kernel inits them in tree order).
    REQUIRE(tree->find("/reserved-memory")->children.size() == 2);
    CHECK(tree->find("/reserved-memory")->children[0].name == "fixed@8000000");
    // The command line: console, panic=-1, and only the board's CMA parameters.
    CHECK(g->bootargs == "console=ttyAMA0 earlycon panic=-1 ignore_loglevel cma=32M");
    CHECK(tree->find("/pl011@9000000") != nullptr); // virt's devices stay
    // The kernel and DTB avoid the reservations and the alloc-ranges: the first free 2 MiB
    // slot after them.
    CHECK(g->kernel_address % (2u << 20) == 0);
    CHECK(g->kernel_address >= 0x50000000u);
    CHECK(g->dtb_address >= g->kernel_address + (40u << 20));
    CHECK(g->stub.size() == 40);
}

TEST_CASE("graft: a board inside the window is not moved; no room for the kernel is an error") {
    auto board = board_1_1(0x40000000);
    auto rs = reserved::read(board);
    Diagnostics diags;
    boot::GraftOptions options;
    options.image_size = 40u << 20;
    auto g = boot::graft(fake_virt(), board, rs, options, diags);
    REQUIRE(g);
    CHECK(g->shift == 0);
    options.image_size = 600u << 20; // more than the 512 MiB bank
    Diagnostics none;
    CHECK_FALSE(boot::graft(fake_virt(), board, rs, options, none));
    REQUIRE(none.has_errors());
    CHECK(none.items()[0].message.find("no ") == 0);
    options.image_size = 40u << 20;
    options.arch = kernel::Arch::x86_64;
    Diagnostics x86;
    CHECK_FALSE(boot::graft(fake_virt(), board, rs, options, x86));
    CHECK(x86.items()[0].message.find("x86_64") != std::string::npos);
}

TEST_CASE("graft for 32-bit arm: a 128 MiB region for the decompressed kernel, an A32 stub") {
    auto board = board_1_1(0x40000000); // reservations at +128 MiB and the alloc-ranges at 0
    auto rs = reserved::read(board);
    Diagnostics diags;
    boot::GraftOptions options;
    options.arch = kernel::Arch::arm;
    options.image_size = 6u << 20; // a zImage
    auto g = boot::graft(fake_virt(), board, rs, options, diags);
    REQUIRE_MESSAGE(g, (diags.items().empty() ? "" : diags.items()[0].message));
    // The kernel takes PHYS_OFFSET from where it runs and ignores the RAM below it, so it runs
    // in the lowest bank's first 128 MiB (alloc-ranges there are no obstacle: memblock
    // allocates around the kernel, as on the board); the zImage goes above 32 MiB of room for
    // the decompressed kernel, then the DTB, then the stub.
    CHECK(g->kernel_address == 0x40000000u + (32u << 20));
    CHECK(g->dtb_address == g->kernel_address + (8u << 20));
    CHECK(g->stub_address == g->dtb_address + (1u << 20));
    REQUIRE(g->stub.size() == 28);
    auto word = [&](std::size_t i) {
        return std::uint32_t{g->stub[i]} | std::uint32_t{g->stub[i + 1]} << 8 |
               std::uint32_t{g->stub[i + 2]} << 16 | std::uint32_t{g->stub[i + 3]} << 24;
    };
    CHECK(word(0) == 0xe3a00000u);  // mov r0, #0
    CHECK(word(8) == 0xe59f2004u);  // ldr r2, [pc, #4]: the word at 20
    CHECK(word(12) == 0xe59ff004u); // ldr pc, [pc, #4]: the word at 24
    CHECK(word(20) == g->dtb_address);
    CHECK(word(24) == g->kernel_address);
    // A reservation where the kernel has to run: no faithful boot, and the error says why.
    auto low = board_1_1(0x40000000);
    low.root.children[1].children.push_back(
        node("carveout@42000000", {cells("reg", {0x42000000, 0x100000}), flag("no-map")}));
    auto low_rs = reserved::read(low);
    Diagnostics blocked;
    CHECK_FALSE(boot::graft(fake_virt(), low, low_rs, options, blocked));
    REQUIRE(blocked.has_errors());
    CHECK(blocked.items()[0].message.find("first 128 MiB of the lowest bank") != std::string::npos);
    // riscv: OpenSBI and the Image sit at fixed places (RAM base, + 2 MiB); here the board's
    // alloc-ranges (moved by 1 GiB to 0x80000000) cover them.
    options.arch = kernel::Arch::riscv;
    Diagnostics riscv;
    CHECK_FALSE(boot::graft(fake_virt(), board, rs, options, riscv));
    REQUIRE(riscv.has_errors());
    CHECK(riscv.items()[0].message.find("OpenSBI and the kernel at 0x80000000..") !=
          std::string::npos);
    CHECK(riscv.items()[0].message.find("a reservation covers 0x80000000..0x90000000") !=
          std::string::npos);
}

TEST_CASE("graft for riscv64: OpenSBI's entry, the DTB below 3 GiB outside the banks") {
    dt::Tree t;
    t.input = "board.dts";
    t.root =
        node("", {cells("#address-cells", {2}), cells("#size-cells", {2})},
             {node("memory@80000000",
                   {str("device_type", {"memory"}), cells("reg", {0, 0x80000000, 0, 0x20000000})}),
              node("reserved-memory",
                   {cells("#address-cells", {2}), cells("#size-cells", {2}), flag("ranges")},
                   {node("pool@90000000", {str("compatible", {"shared-dma-pool"}), flag("reusable"),
                                           cells("reg", {0, 0x90000000, 0, 0x400000})})})});
    auto rs = reserved::read(t);
    Diagnostics diags;
    boot::GraftOptions options;
    options.arch = kernel::Arch::riscv;
    options.image_size = 36u << 20;
    auto g = boot::graft(fake_virt(), t, rs, options, diags);
    REQUIRE_MESSAGE(g, (diags.items().empty() ? "" : diags.items()[0].message));
    CHECK(g->shift == 0);
    CHECK(g->kernel_address == 0x80200000u);
    CHECK(g->ram_size == 0x20000000u + (2u << 20)); // 2 MiB more than the bank: the DTB's
    CHECK(g->dtb_address == 0xa0000000u);
    CHECK(g->stub.empty());
    CHECK(g->notes.empty());
}

TEST_CASE("kernel images: arm64 header, gzip wrapper, embedded configuration") {
    // An arm64 Image header (arch/arm64/booting.rst) with 16K pages, a banner and an IKCONFIG.
    std::vector<std::uint8_t> image(0x200, 0);
    image[8] = 0;                // text_offset 0
    image[16 + 2] = 0x40;        // image_size 0x400000
    image[24] = 2 << 1 | 1 << 3; // flags: 16K pages, placement anywhere
    std::memcpy(image.data() + 0x38, "ARM\x64", 4);
    std::string banner = "Linux version 6.12.117+deb12-arm64-16k (debian-kernel@lists) #1 SMP\n";
    image.insert(image.end(), banner.begin(), banner.end());
    std::string config = "CONFIG_ARM64_16K_PAGES=y\nCONFIG_CMA=y\n";
    std::vector<std::uint8_t> gz(256);
    {
        z_stream s{};
        REQUIRE(deflateInit2(&s, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
        s.next_in = reinterpret_cast<Bytef*>(config.data());
        s.avail_in = static_cast<uInt>(config.size());
        s.next_out = gz.data();
        s.avail_out = static_cast<uInt>(gz.size());
        REQUIRE(deflate(&s, Z_FINISH) == Z_STREAM_END);
        gz.resize(gz.size() - s.avail_out);
        deflateEnd(&s);
    }
    std::string st = "IKCFG_ST", ed = "IKCFG_ED";
    image.insert(image.end(), st.begin(), st.end());
    image.insert(image.end(), gz.begin(), gz.end());
    image.insert(image.end(), ed.begin(), ed.end());

    auto dir = std::filesystem::temp_directory_path() / "cmalign-image-test";
    std::filesystem::create_directories(dir);
    auto write = [&](const std::string& name, const std::vector<std::uint8_t>& bytes) {
        std::ofstream(dir / name, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()),
                   static_cast<std::streamsize>(bytes.size()));
        return (dir / name).string();
    };
    Diagnostics diags;
    auto plain = boot::read_kernel_image(write("Image", image), diags);
    REQUIRE(plain);
    CHECK(plain->arch == kernel::Arch::arm64);
    CHECK(plain->page_size == 16384);
    CHECK(plain->image_size == 0x400000u);
    REQUIRE(plain->banner);
    CHECK(plain->banner->rfind("Linux version 6.12.117+deb12-arm64-16k", 0) == 0);
    REQUIRE(plain->config);
    CHECK(*plain->config == config);

    // The same, gzip'ed (Image.gz).
    std::vector<std::uint8_t> wrapped(image.size() + 1024);
    uLongf len = static_cast<uLongf>(wrapped.size());
    {
        z_stream s{};
        REQUIRE(deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
        s.next_in = image.data();
        s.avail_in = static_cast<uInt>(image.size());
        s.next_out = wrapped.data();
        s.avail_out = static_cast<uInt>(len);
        REQUIRE(deflate(&s, Z_FINISH) == Z_STREAM_END);
        wrapped.resize(wrapped.size() - s.avail_out);
        deflateEnd(&s);
    }
    auto gzipped = boot::read_kernel_image(write("Image.gz", wrapped), diags);
    REQUIRE(gzipped);
    CHECK(gzipped->format == "arm64 Image in gzip");
    CHECK(gzipped->bytes == image);

    // Not a kernel: a located error, no crash.
    Diagnostics bad;
    CHECK_FALSE(boot::read_kernel_image(write("junk", std::vector<std::uint8_t>(100, 7)), bad));
    REQUIRE(bad.has_errors());
    CHECK(bad.items()[0].message.find("not a kernel image") == 0);
    std::filesystem::remove_all(dir);
}

TEST_CASE("run_process: output captured, a hung process killed at the deadline") {
    auto ok = boot::run_process({"/bin/sh", "-c", "echo hello; echo oops >&2"}, 10);
    CHECK(ok.started);
    CHECK(ok.exit_status == 0);
    CHECK(ok.output.find("hello") != std::string::npos);
    CHECK(ok.output.find("oops") != std::string::npos);
    auto hung = boot::run_process({"/bin/sleep", "30"}, 0.5);
    CHECK(hung.timed_out);
    CHECK(hung.seconds < 5);
    auto stop = boot::run_process({"/bin/sh", "-c", "echo 'Kernel panic - not syncing'; sleep 30"},
                                  20, "Kernel panic - not syncing", 0.3);
    CHECK_FALSE(stop.timed_out);
    CHECK(stop.seconds < 5);
}
