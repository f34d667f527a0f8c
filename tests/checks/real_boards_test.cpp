// Real material: a sample of the arm64 boards of Debian's linux-source-6.12, compiled the way the
// kernel does (cpp + dtc), checked against arm64 6.12 with 4K/16K/64K pages. The expected facts
// come from the board sources (quoted below) and the kernel rule (base and size must be
// multiples of 2/32/512 MiB); sizes are cross-checked with fdtget, an independent reader.
// The full tree (1118 boards) runs in examples/cma_survey (see bench/compile-dtbs.sh).
// SKIPs when the kernel tree, cpp or dtc is absent.
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "cmalign/checks/checks.hpp"
#include "cmalign/dt/dtb.hpp"
#include "cmalign/internal/dt/dts.hpp"
#include "support/models.hpp"

using namespace cmalign;
namespace fs = std::filesystem;

namespace {

const fs::path kernel_tree = fs::path(CMALIGN_KERNEL_SRC_DIR) / "linux-source-6.12";

std::string run_capture(const std::string& command) {
    std::string out;
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    if (!pipe) return out;
    std::array<char, 256> buf{};
    while (fgets(buf.data(), buf.size(), pipe.get()))
        out += buf.data();
    return out;
}

// cpp + dtc exactly as bench/compile-dtbs.sh; returns the DTB path or "" on failure.
std::string compile(const std::string& board, const fs::path& out_dir) {
    fs::path dts_dir = kernel_tree / "arch/arm64/boot/dts";
    fs::path src = dts_dir / (board + ".dts");
    fs::path dtb = out_dir / (fs::path(board).filename().string() + ".dtb");
    fs::path tmp = out_dir / (fs::path(board).filename().string() + ".pp");
    std::string dir = src.parent_path().string();
    std::string cmd = "cpp -nostdinc -undef -D__DTS__ -x assembler-with-cpp -I '" +
                      (kernel_tree / "scripts/dtc/include-prefixes").string() + "' -I '" + dir +
                      "' '" + src.string() + "' -o '" + tmp.string() +
                      "' 2>/dev/null && dtc -I dts " + "-O dtb -q -i '" + dir + "' -o '" +
                      dtb.string() + "' '" + tmp.string() + "' 2>/dev/null";
    if (std::system(cmd.c_str()) != 0) return {};
    return dtb.string();
}

struct Expected {
    const char* board;
    const char* pool;   // "" = the board declares no CMA pool
    std::uint64_t size; // as written in the source
    std::optional<std::uint64_t> base;
    std::array<bool, 3> lost; // 4K, 16K, 64K
};

// From the sources:
//  meson-a1.dtsi         linux,cma { size = <0x0 0x800000>; }                 8 MiB, dynamic
//  sdm845.dtsi           fastrpc { size = <0x0 0x1000000>; }                 16 MiB, dynamic
//  imx8-ss-*/tqma8xx     linux,cma { size = <0 0x20000000>; }               512 MiB, dynamic
//  imx93-var-som-symphony ethosu-region@88000000 { reg = <0x0 0x88000000 0x0 0x8000000>; }
//                        128 MiB at 0x88000000 (a multiple of 32 MiB, not of 512 MiB)
//  juno.dts              no /reserved-memory at all
const Expected samples[] = {
    {"amlogic/meson-a1-ad401",
     "/reserved-memory/linux,cma",
     0x800000,
     std::nullopt,
     {false, true, true}},
    {"qcom/sdm845-db845c",
     "/reserved-memory/fastrpc",
     0x1000000,
     std::nullopt,
     {false, true, true}},
    {"freescale/imx8qxp-tqma8xqp-mba8xx",
     "/reserved-memory/linux,cma",
     0x20000000,
     std::nullopt,
     {false, false, false}},
    {"freescale/imx93-var-som-symphony",
     "/reserved-memory/ethosu-region@88000000",
     0x8000000,
     0x88000000,
     {false, false, true}},
    {"arm/juno", "", 0, std::nullopt, {false, false, false}},
};

bool lost_pool(const checks::Result& r, const std::string& node) {
    for (const auto& d : r.diagnostics)
        if (d.node == node && d.severity == Severity::error &&
            (d.check == "cma-size-alignment" || d.check == "cma-base-alignment"))
            return true;
    return false;
}

} // namespace

TEST_CASE("real arm64 boards (DTB): which CMA pools 6.12 keeps with 4K/16K/64K pages" *
          CMALIGN_REAL_MATERIAL(kernel_tree)) {
    if (!test::have_material(kernel_tree) || !test::have_program("cpp") ||
        !test::have_program("dtc"))
        return;
    fs::path out = fs::temp_directory_path() / ("cmalign-real-" + std::to_string(::getpid()));
    fs::create_directories(out);
    const kernel::Model models[3] = {test::arm64_612(4096), test::arm64_612(16384),
                                     test::arm64_612(65536)};
    for (const auto& e : samples) {
        CAPTURE(e.board);
        auto dtb = compile(e.board, out);
        REQUIRE(!dtb.empty());
        Diagnostics diags;
        auto tree = dt::read_dtb(dtb, diags);
        REQUIRE(tree);
        for (int k = 0; k < 3; ++k) {
            CAPTURE(models[k].page_size);
            auto result = checks::run(*tree, models[k], {});
            std::vector<const reserved::Region*> pools;
            for (const auto& r : result.reservations.regions)
                if (r.kind == reserved::Kind::cma) pools.push_back(&r);
            if (std::string(e.pool).empty()) {
                CHECK(pools.empty());
                CHECK(result.count(Severity::error) == 0);
                continue;
            }
            REQUIRE(pools.size() == 1);
            CHECK(pools[0]->path == e.pool);
            CHECK(pools[0]->size == e.size);
            CHECK(pools[0]->dynamic == !e.base.has_value());
            if (e.base) CHECK(pools[0]->base == *e.base);
            CHECK(lost_pool(result, e.pool) == e.lost[static_cast<std::size_t>(k)]);
            // Nothing but a lost pool is an error on these boards.
            for (const auto& d : result.diagnostics)
                if (d.severity == Severity::error) CHECK(d.node == e.pool);
            if (k == 0) {
                // fdtget (dtc's tool) reads the same size cells.
                auto prop = e.base ? "reg" : "size";
                auto text = run_capture("fdtget -t x '" + dtb + "' '" + e.pool + "' " + prop);
                std::vector<std::uint64_t> cells;
                std::size_t pos = 0;
                while (pos < text.size()) {
                    std::size_t used = 0;
                    try {
                        cells.push_back(std::stoull(text.substr(pos), &used, 16));
                    } catch (...) {
                        break;
                    }
                    pos += used;
                }
                REQUIRE(cells.size() >= 2);
                CHECK(((cells[cells.size() - 2] << 32) | cells.back()) == e.size);
            }
        }
    }
    fs::remove_all(out);
}

TEST_CASE("real arm64 boards (DTS): the same pools, located in the source that wrote them" *
          CMALIGN_REAL_MATERIAL(kernel_tree)) {
    if (!test::have_material(kernel_tree)) return;
    const auto m16 = test::arm64_612(16384);
    for (const auto& e : samples) {
        if (std::string(e.pool).empty() || !e.lost[1]) continue;
        CAPTURE(e.board);
        dt::PreprocessOptions po;
        po.kernel_tree = kernel_tree.string();
        dt::FileCache cache;
        Diagnostics diags;
        auto path =
            (kernel_tree / "arch/arm64/boot/dts" / (std::string(e.board) + ".dts")).string();
        auto tree = dt::load_dts(path, po, cache, diags);
        REQUIRE(tree);
        auto result = checks::run(*tree, m16, {});
        std::vector<Diagnostic> size_errors;
        for (const auto& d : result.diagnostics)
            if (d.check == "cma-size-alignment") size_errors.push_back(d);
        REQUIRE(size_errors.size() == 1);
        const auto& d = size_errors[0];
        CHECK(d.node == e.pool);
        REQUIRE(d.where.line > 0);
        REQUIRE(d.where.column > 0);
        // The location is the size value in an included .dtsi: that line holds `size = <`.
        auto text = cache.load(d.where.file);
        REQUIRE(text);
        auto begin = text->line_starts.at(static_cast<std::size_t>(d.where.line) - 1);
        auto line = text->text.substr(begin, text->text.find('\n', begin) - begin);
        CAPTURE(line);
        CHECK(line.find("size") != std::string::npos);
        CHECK(fs::path(d.where.file).extension() == ".dtsi");
        REQUIRE(d.fix.size() == 1);
        CHECK(d.fix[0].old_value == e.size);
        CHECK(d.fix[0].new_value % (32u << 20) == 0);
        CHECK(d.fix[0].new_value - e.size < (32u << 20));
    }
}

TEST_CASE("real arm64 boards (DTB): meson-gxl-s805x's 256 MiB linux,cma finds no room in its "
          "512 MiB" *
          CMALIGN_REAL_MATERIAL(kernel_tree)) {
    if (!test::have_material(kernel_tree) || !test::have_program("cpp") ||
        !test::have_program("dtc"))
        return;
    fs::path out = fs::temp_directory_path() / ("cmalign-room-" + std::to_string(::getpid()));
    fs::create_directories(out);
    // meson-gx.dtsi: a dynamic 256 MiB linux,cma and a no-map secmon@10000000 (2 MiB); the
    // s805x boards have 512 MiB at 0, so neither half holds the pool, wherever the kernel lies
    // (nothing reserved early here). The s905x p212 (its own /memory) is the control.
    checks::Options nothing_early;
    nothing_early.early_reservations = std::vector<checks::EarlyReservation>{};
    auto lost = [&](const char* board) {
        auto dtb = compile(board, out);
        REQUIRE(!dtb.empty());
        Diagnostics diags;
        auto tree = dt::read_dtb(dtb, diags);
        REQUIRE(tree);
        std::vector<std::string> nodes;
        for (const auto& d : checks::run(*tree, test::arm64_612(4096), nothing_early).diagnostics)
            if (d.check == "dynamic-no-room") nodes.push_back(d.node);
        return nodes;
    };
    for (const char* board :
         {"amlogic/meson-gxl-s805x-p241", "amlogic/meson-gxl-s805x-libretech-ac"}) {
        CAPTURE(board);
        CHECK(lost(board) == std::vector<std::string>{"/reserved-memory/linux,cma"});
    }
    CHECK(lost("amlogic/meson-gxl-s905x-p212").empty());
    fs::remove_all(out);
}
