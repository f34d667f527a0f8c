// `cmalign map`: the layout of the README's example board and of a sparse synthetic board, and
// their text and SVG renderings. The PNG rendering (rsvg-convert) is checked in
// tests/python/test_map.py.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cmalign/internal/map/map_json.hpp"
#include "cmalign/map/map.hpp"
#include "cmalign/run_map.hpp"

using namespace cmalign;

namespace {

constexpr std::uint64_t MiB = 1024 * 1024;

std::string example(const char* rel) {
    return std::string(CMALIGN_SOURCE_DIR) + "/examples/" + rel;
}

MapOutcome map_of(const std::string& board, const std::string& config) {
    MapRequest r;
    r.input = board;
    r.config.config_files = {config};
    return run_map(r);
}

const map::Block* find(const map::Layout& l, std::string_view label) {
    for (const auto* list : {&l.placed, &l.dynamic})
        for (const auto& b : *list)
            if (b.label == label) return &b;
    return nullptr;
}

// Display columns of UTF-8 text whose characters are one column wide.
std::size_t columns(std::string_view s) {
    std::size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++n;
    return n;
}

std::string temp_file(const std::string& name, const std::string& text) {
    auto dir = std::filesystem::temp_directory_path() / "cmalign-map-test";
    std::filesystem::create_directories(dir);
    auto path = dir / name;
    std::ofstream(path) << text;
    return path.string();
}

} // namespace

TEST_CASE("map of the example board on the 16K kernel: both CMA pools rejected") {
    auto out = map_of(example("boards/seed-board.dts"), example("configs/arm64-16k.config"));
    REQUIRE(out.errors.empty());
    REQUIRE(out.layout);
    const auto& l = *out.layout;
    CHECK(out.exit_code() == ExitCode::findings);
    CHECK(l.alignment == 32 * MiB);
    REQUIRE(l.banks.size() == 1);
    CHECK(l.banks[0].base == 0x40000000);
    CHECK(l.banks[0].size == 1024 * MiB);

    // camera-pool: 16 MiB at 0x50000000, written with a macro: rejected, fix cannot rewrite it.
    const auto* camera = find(l, "camera-pool@50000000");
    REQUIRE(camera);
    CHECK(camera->kind == "cma");
    CHECK(camera->base == 0x50000000);
    CHECK(camera->size == 16 * MiB);
    CHECK(camera->status == map::Status::rejected);
    CHECK(camera->size_aligned == false);
    CHECK(camera->base_aligned == true); // 0x50000000 = 40 × 32 MiB
    CHECK_FALSE(camera->fixed_size);
    CHECK_FALSE(camera->fix_blocked.empty());

    // vdec-pool: dynamic 4 MiB, rejected; fix writes 32 MiB.
    const auto* vdec = find(l, "vdec-pool");
    REQUIRE(vdec);
    CHECK_FALSE(vdec->base);
    CHECK(vdec->status == map::Status::rejected);
    CHECK(vdec->fixed_size == 32 * MiB);

    // firmware: static no-map, fine.
    const auto* fw = find(l, "firmware@4f000000");
    REQUIRE(fw);
    CHECK(fw->kind == "static");
    CHECK(fw->no_map);
    CHECK(fw->status == map::Status::ok);
}

TEST_CASE("map of the example board on the 4K kernel: nothing rejected") {
    auto out = map_of(example("boards/seed-board.dts"), example("configs/arm64-4k.config"));
    REQUIRE(out.layout);
    CHECK(out.exit_code() == ExitCode::clean);
    for (const auto* list : {&out.layout->placed, &out.layout->dynamic})
        for (const auto& b : *list) {
            CAPTURE(b.label);
            CHECK(b.status != map::Status::rejected);
            CHECK_FALSE(b.fixed_size);
        }
}

TEST_CASE("text rendering fits 80 columns and names every block") {
    auto out = map_of(example("boards/seed-board.dts"), example("configs/arm64-16k.config"));
    REQUIRE(out.layout);
    std::string text = map::render_text(*out.layout);
    std::istringstream in(text);
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) {
        CAPTURE(line);
        CHECK(columns(line) <= 80);
        ++lines;
    }
    CHECK(lines > 8);
    for (const char* s :
         {"camera-pool@50000000", "vdec-pool", "firmware@4f000000", "memory@40000000", "0x50000000",
          "CMA alignment 32 MiB", "fix: size 4 MiB → 32 MiB", "✗"})
        CHECK_MESSAGE(text.find(s) != std::string::npos, s);
    // The strip marks the rejected pool.
    CHECK(text.find('X') != std::string::npos);
    // Narrower terminals are honoured too.
    std::istringstream narrow(map::render_text(*out.layout, 60));
    while (std::getline(narrow, line))
        CHECK(columns(line) <= 60);
}

TEST_CASE("SVG rendering: labels, colours, legend") {
    auto out = map_of(example("boards/seed-board.dts"), example("configs/arm64-16k.config"));
    REQUIRE(out.layout);
    std::string svg = map::render_svg(*out.layout);
    CHECK(svg.rfind("<?xml", 0) == 0);
    CHECK(svg.find("</svg>") != std::string::npos);
    for (const char* s : {">camera-pool@50000000<", ">vdec-pool — 4 MiB", ">Legend<",
                          "rejected by the kernel", "fix: size 4 MiB → 32 MiB", "0x50000000",
                          "CMA grid: multiples of 32 MiB", "fill=\"#d62728\""})
        CHECK_MESSAGE(svg.find(s) != std::string::npos, s);
    auto json = map::to_json(*out.layout);
    CHECK(json["cma_alignment_bytes"] == 32 * MiB);
    CHECK(json["summary"]["errors"].get<int>() >= 2);
}

TEST_CASE("a sparse board: broken axis for the hole, small entries stay visible") {
    // 1 GiB at 1 GiB and 2 GiB at 34 GiB, a 4 KiB /memreserve/, a 1 MiB no-map region and a
    // 64 MiB CMA pool in the high bank; two overlapping reservations share the address range.
    auto board = temp_file("sparse.dts", R"(/dts-v1/;
/memreserve/ 0x40001000 0x1000;
/ {
	#address-cells = <2>;
	#size-cells = <2>;
	memory@40000000 { device_type = "memory"; reg = <0x0 0x40000000 0x0 0x40000000>; };
	memory@880000000 { device_type = "memory"; reg = <0x8 0x80000000 0x0 0x80000000>; };
	reserved-memory {
		#address-cells = <2>;
		#size-cells = <2>;
		ranges;
		tee@40100000 { reg = <0x0 0x40100000 0x0 0x100000>; no-map; };
		big@880000000 { compatible = "shared-dma-pool"; reusable;
			reg = <0x8 0x80000000 0x0 0x4000000>; };
		other@882000000 { reg = <0x8 0x82000000 0x0 0x1000000>; };
	};
};
)");
    MapRequest r;
    r.input = board;
    r.config.arch = "arm64";
    r.config.kernel_version = "6.12";
    r.config.sets = {"CONFIG_ARM64_4K_PAGES=y", "CONFIG_CMA=y", "CONFIG_DMA_CMA=y",
                     "CONFIG_HUGETLBFS=y"};
    auto out = run_map(r);
    REQUIRE(out.errors.empty());
    REQUIRE(out.layout);
    const auto& l = *out.layout;
    CHECK(l.banks.size() == 2);
    bool gap = false;
    for (const auto& s : l.axis)
        if (s.gap && s.begin == 0x80000000 && s.end == 0x880000000) gap = true;
    CHECK(gap);
    // The 4 KiB entry gets at least a whole axis unit; the 30 GiB hole no more than two.
    const auto* mr = find(l, "/memreserve/ 1");
    REQUIRE(mr);
    CHECK(l.y(0x40002000) - l.y(0x40001000) >= 1.0);
    CHECK(l.y(0x880000000) - l.y(0x80000000) <=
          2.0 + 1e-9); // the sum of heights, in floating point
    // Overlapping reservations stand in different lanes.
    const auto* big = find(l, "big@880000000");
    const auto* other = find(l, "other@882000000");
    REQUIRE(big);
    REQUIRE(other);
    CHECK(big->lane != other->lane);
    CHECK(l.lanes == 2);
    // The kernel prints "OVERLAP DETECTED!" and keeps both: a warning on the later node.
    CHECK(other->status == map::Status::warning);
    CHECK(big->status == map::Status::ok);
    std::string svg = map::render_svg(l);
    CHECK(svg.find("not in /memory") != std::string::npos);
    CHECK(svg.find(">/memreserve/ 1<") != std::string::npos);
}

TEST_CASE("map works on a v4.19 kernel (16K pages without THP: 16 MiB)") {
    MapRequest r;
    r.input = example("boards/seed-board.dts");
    r.config.arch = "arm64";
    r.config.kernel_version = "4.19";
    r.config.sets = {"CONFIG_ARM64_16K_PAGES=y", "CONFIG_CMA=y", "CONFIG_DMA_CMA=y"};
    auto out = run_map(r);
    REQUIRE(out.layout);
    // FORCE_MAX_ZONEORDER 11 (no THP) → 16K << max(10, 10) = 16 MiB: the 16 MiB camera pool fits,
    // the 4 MiB video pool does not.
    CHECK(out.layout->alignment == 16 * MiB);
    const auto* camera = find(*out.layout, "camera-pool@50000000");
    const auto* vdec = find(*out.layout, "vdec-pool");
    REQUIRE(camera);
    REQUIRE(vdec);
    CHECK(camera->status == map::Status::ok);
    CHECK(vdec->status == map::Status::rejected);
    CHECK(vdec->fixed_size == 16 * MiB);
}

TEST_CASE("map: unreadable board is an input error") {
    MapRequest r;
    r.input = temp_file("broken.dts", "/dts-v1/;\n/ { reg = <1 2; };\n");
    r.config.arch = "arm64";
    r.config.kernel_version = "6.12";
    auto out = run_map(r);
    CHECK_FALSE(out.errors.empty());
    CHECK(out.exit_code() == ExitCode::input_error);
}
