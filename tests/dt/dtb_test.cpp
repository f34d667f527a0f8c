// DTB input: round trip through libfdt's writer, and hostile blobs (truncated, corrupt) that
// must give a located error and never crash.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include <libfdt.h>
}

#include "cmalign/dt/dtb.hpp"

using namespace cmalign;

namespace {

// A small board written with libfdt's sequential-write API (not by our reader's code).
std::vector<std::uint8_t> sample_blob() {
    std::vector<std::uint8_t> buf(4096);
    void* fdt = buf.data();
    REQUIRE(fdt_create(fdt, static_cast<int>(buf.size())) == 0);
    REQUIRE(fdt_add_reservemap_entry(fdt, 0x40000000, 0x10000) == 0);
    REQUIRE(fdt_finish_reservemap(fdt) == 0);
    REQUIRE(fdt_begin_node(fdt, "") == 0);
    REQUIRE(fdt_property_u32(fdt, "#address-cells", 2) == 0);
    REQUIRE(fdt_property_u32(fdt, "#size-cells", 2) == 0);
    REQUIRE(fdt_begin_node(fdt, "reserved-memory") == 0);
    REQUIRE(fdt_property_u32(fdt, "#address-cells", 2) == 0);
    REQUIRE(fdt_property(fdt, "ranges", nullptr, 0) == 0);
    REQUIRE(fdt_begin_node(fdt, "linux,cma") == 0);
    REQUIRE(fdt_property_string(fdt, "compatible", "shared-dma-pool") == 0);
    const std::uint8_t size[] = {0, 0, 0, 0, 0, 0x40, 0, 0};
    REQUIRE(fdt_property(fdt, "size", size, sizeof size) == 0);
    REQUIRE(fdt_end_node(fdt) == 0);
    REQUIRE(fdt_end_node(fdt) == 0);
    REQUIRE(fdt_end_node(fdt) == 0);
    REQUIRE(fdt_finish(fdt) == 0);
    buf.resize(fdt_totalsize(fdt));
    return buf;
}

} // namespace

TEST_CASE("a DTB written by libfdt reads back node by node") {
    auto blob = sample_blob();
    Diagnostics diags;
    auto tree = dt::parse_dtb(blob, "board.dtb", diags);
    REQUIRE(tree);
    CHECK(diags.items().empty());
    CHECK(tree->from_dtb);
    CHECK(tree->input == "board.dtb");
    REQUIRE(tree->memreserve.size() == 1);
    CHECK(tree->memreserve[0].address == 0x40000000);
    CHECK(tree->memreserve[0].size == 0x10000);
    CHECK(tree->root.name.empty());
    CHECK(tree->root.find_property("#size-cells")->u32() == 2u);
    const auto* pool = tree->find("/reserved-memory/linux,cma");
    REQUIRE(pool);
    const auto* size = pool->find_property("size");
    REQUIRE(size);
    CHECK(size->value == std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0x40, 0, 0});
    CHECK(size->where == Location{"board.dtb", 0, 0}); // a DTB has no lines
    const auto* ranges = tree->find("/reserved-memory")->find_property("ranges");
    REQUIRE(ranges);
    CHECK(ranges->value.empty());
}

TEST_CASE("every truncation of a DTB is a located error") {
    auto blob = sample_blob();
    for (std::size_t n = 0; n < blob.size(); ++n) {
        Diagnostics diags;
        std::vector<std::uint8_t> cut(blob.begin(), blob.begin() + static_cast<long>(n));
        auto tree = dt::parse_dtb(cut, "cut.dtb", diags);
        CHECK_FALSE(tree);
        REQUIRE(diags.items().size() == 1);
        const auto& d = diags.items()[0];
        CHECK(d.severity == Severity::error);
        CHECK(d.where.file == "cut.dtb");
        CHECK(d.message.find("offset 0x") != std::string::npos);
        CHECK(format_gcc(d).rfind("cut.dtb: error: ", 0) == 0);
    }
}

TEST_CASE("bad magic and corrupted bytes never crash the reader") {
    auto blob = sample_blob();
    {
        auto bad = blob;
        bad[0] = 0x12;
        Diagnostics diags;
        CHECK_FALSE(dt::parse_dtb(bad, "bad.dtb", diags));
        REQUIRE(diags.items().size() == 1);
        CHECK(diags.items()[0].message.find("magic 0x12") != std::string::npos);
    }
    // Flip bytes everywhere after the magic; each result is either a tree or one located error.
    std::mt19937 rng(12345);
    int rejected = 0;
    for (int round = 0; round < 3000; ++round) {
        auto bad = blob;
        for (int k = 0; k < 1 + round % 4; ++k) {
            std::size_t at = 4 + rng() % (bad.size() - 4);
            bad[at] = static_cast<std::uint8_t>(rng());
        }
        Diagnostics diags;
        auto tree = dt::parse_dtb(bad, "fuzz.dtb", diags);
        if (!tree) {
            ++rejected;
            REQUIRE(diags.items().size() == 1);
            CHECK(diags.items()[0].where.file == "fuzz.dtb");
        } else {
            CHECK(diags.items().empty());
        }
    }
    CHECK(rejected > 0); // the corruption is noticed at least sometimes
}

TEST_CASE("read_dtb reports missing files, directories and oversize files by name") {
    Diagnostics diags;
    CHECK_FALSE(dt::read_dtb("/nonexistent/board.dtb", diags));
    REQUIRE(diags.items().size() == 1);
    CHECK(diags.items()[0].where.file == "/nonexistent/board.dtb");

    Diagnostics dir_diags;
    CHECK_FALSE(dt::read_dtb(std::filesystem::temp_directory_path().string(), dir_diags));
    CHECK(dir_diags.items().size() == 1);

    auto blob = sample_blob();
    auto path = std::filesystem::temp_directory_path() / "cmalign-dtb-test.dtb";
    {
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(blob.data()), static_cast<long>(blob.size()));
    }
    Diagnostics ok_diags;
    auto tree = dt::read_dtb(path.string(), ok_diags, {}, "given-name.dtb");
    REQUIRE(tree);
    CHECK(tree->input == "given-name.dtb");
    dt::DtbOptions tiny;
    tiny.limits.file_bytes = 16;
    Diagnostics big_diags;
    CHECK_FALSE(dt::read_dtb(path.string(), big_diags, tiny));
    CHECK(big_diags.items().size() == 1);
    std::filesystem::remove(path);
}

TEST_CASE("DTB names and magic") {
    CHECK(dt::is_dtb_name("a/b.dtb"));
    CHECK(dt::is_dtb_name("overlay.dtbo"));
    CHECK_FALSE(dt::is_dtb_name("board.dts"));
    auto blob = sample_blob();
    CHECK(dt::has_fdt_magic(blob));
    std::vector<std::uint8_t> text = {'/', 'd', 't', 's'};
    CHECK_FALSE(dt::has_fdt_magic(text));
}
