// fix: literal rewriting, planning on DTS (top file, included .dtsi, multi-cell carry, static reg,
// macros, overflow), merging, atomic writes, unified diffs accepted by patch and git apply.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "support/material.hpp"

#include <algorithm>

#include "cmalign/checks/checks.hpp"
#include "cmalign/fix/fix.hpp"
#include "cmalign/internal/fix/plan.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/reserved/regions.hpp"
#include "cmalign/run.hpp"
#include "cmalign/run_fix.hpp"
#include "support/fix.hpp"

using namespace fix_test;
using namespace cmalign;

namespace {

constexpr std::uint64_t MiB = 1u << 20;

struct Planned {
    fix::Plan plan;
    bool loaded = false;
};

Planned plan_file(const std::string& path, const kernel::Model& model) {
    dt::FileCache cache;
    Diagnostics diags;
    auto tree = cmalign::detail::load_tree(path, {}, cache, diags);
    Planned out;
    if (!tree || diags.has_errors()) return out;
    out.loaded = true;
    auto rs = reserved::read(*tree, checks::read_options(model));
    auto align = fix::required_alignment(model);
    REQUIRE(align);
    out.plan = fix::plan_fixes(*tree, rs, *align, cache);
    return out;
}

std::string board(const std::string& cells_decl, const std::string& pool_body,
                  const std::string& extra = "",
                  const std::string& memory_reg = "0x0 0x40000000 0x0 0x40000000") {
    return "/dts-v1/;\n" + extra + "/ {\n\t" + cells_decl +
           "\n\tmemory@40000000 { device_type = \"memory\"; reg = <" + memory_reg +
           ">; "
           "};\n"
           "\treserved-memory {\n\t\t#address-cells = <2>;\n\t\t#size-cells = <2>;\n\t\tranges;\n" +
           pool_body + "\t};\n};\n";
}

const char* two_cells = "#address-cells = <2>;\n\t#size-cells = <2>;";

} // namespace

TEST_CASE("rewrite_literal keeps the number's style") {
    CHECK(fix::rewrite_literal("0x400000", 32 * MiB) == "0x2000000");
    CHECK(fix::rewrite_literal("0X400000", 32 * MiB) == "0X2000000");
    CHECK(fix::rewrite_literal("0x00400000", 32 * MiB) == "0x02000000"); // padding kept
    CHECK(fix::rewrite_literal("0x0A00000", 0xC000000) == "0xC000000");  // upper case kept
    CHECK(fix::rewrite_literal("0xa00000", 0xC000000) == "0xc000000");
    CHECK(fix::rewrite_literal("0x400000UL", 32 * MiB) == "0x2000000UL");
    CHECK(fix::rewrite_literal("4194304", 32 * MiB) == "33554432");
    CHECK(fix::rewrite_literal("4194304u", 32 * MiB) == "33554432u");
    CHECK(fix::rewrite_literal("020000000", 32 * MiB) == "0200000000"); // octal stays octal
    CHECK(fix::rewrite_literal("0x0", 1) == "0x1");                     // the high cell of a carry
    CHECK(fix::rewrite_literal("0xF0000000", 0) == "0x0");
    CHECK_FALSE(fix::rewrite_literal("SZ_4M", 1));
    CHECK_FALSE(fix::rewrite_literal("(4 << 20)", 1));
    CHECK_FALSE(fix::rewrite_literal("", 1));
}

TEST_CASE("the upstream example: 4 MiB becomes 32 MiB on 16K pages, every other byte identical") {
    std::string seed =
        std::string(CMALIGN_SOURCE_DIR) + "/examples/boards/upstream-commit-example.dts";
    if (!cmalign::test::have_material(seed)) return;
    TempDir dir("seed");
    std::string path = dir / "seed-example.dts";
    fs::copy_file(seed, path);
    // The copy keeps the source's mode, which may be read-only: fix refuses a read-only file.
    fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
    std::string before = read_file(path);

    auto model = model_16k();
    auto p = plan_file(path, model);
    REQUIRE(p.loaded);
    REQUIRE(p.plan.edits.size() == 1);
    const auto& e = p.plan.edits[0];
    CHECK(e.old_text == "0x400000");
    CHECK(e.new_text == "0x2000000");
    CHECK(e.property == "size");
    CHECK(e.old_value == 4 * MiB);
    CHECK(e.new_value == 32 * MiB);
    CHECK(e.where.line == 24); // "size = <0x0 0x400000>;" in the example file
    CHECK_FALSE(p.plan.unfixable);

    Diagnostics diags;
    REQUIRE(fix::apply_edits(p.plan.edits, diags));
    CHECK_FALSE(diags.has_errors());
    // Expected bytes, built independently of the plan: only the size literal differs.
    auto at = before.find("0x400000>");
    REQUIRE(at != std::string::npos);
    std::string expected = before.substr(0, at) + "0x2000000" + before.substr(at + 8);
    CHECK(read_file(path) == expected);

    // Twice: nothing left to do.
    auto again = plan_file(path, model);
    CHECK(again.plan.edits.empty());
    CHECK(again.plan.diagnostics.empty());
}

TEST_CASE("a size written in an included .dtsi is edited there, with a note") {
    TempDir dir("include");
    write_file(dir / "soc.dtsi",
               "/ {\n\treserved-memory {\n\t\t#address-cells = <2>;\n\t\t#size-cells = <2>;\n"
               "\t\tranges;\n\t\tpool: pool {\n\t\t\tcompatible = \"shared-dma-pool\";\n"
               "\t\t\treusable;\n\t\t\tsize = <0x0 0x01000000>;\n\t\t};\n\t};\n};\n");
    write_file(
        dir / "board.dts",
        "/dts-v1/;\n#include \"soc.dtsi\"\n/ {\n\t#address-cells = <2>;\n\t#size-cells = <2>;\n"
        "\tmemory@40000000 { device_type = \"memory\"; reg = <0x0 0x40000000 0x0 0x40000000>; "
        "};\n};\n");
    auto p = plan_file(dir / "board.dts", model_16k());
    REQUIRE(p.loaded);
    REQUIRE(p.plan.edits.size() == 1);
    CHECK(fs::path(p.plan.edits[0].file).filename() == "soc.dtsi");
    CHECK(p.plan.edits[0].old_text == "0x01000000");
    CHECK(p.plan.edits[0].new_text == "0x02000000");
    CHECK(p.plan.edits[0].where.line == 9);
    bool noted =
        std::any_of(p.plan.diagnostics.begin(), p.plan.diagnostics.end(), [](const auto& d) {
            return d.severity == Severity::note &&
                   d.message.find("soc.dtsi") != std::string::npos &&
                   d.message.find("every board that includes it") != std::string::npos;
        });
    CHECK(noted);

    SUBCASE("-o refuses: the edit is not in the board file") {
        Snapshot soc(dir / "soc.dtsi"), top(dir / "board.dts");
        auto r = run_cli("fix " + (dir / "board.dts") + " -c " + config_16k() + " -o " +
                         (dir / "out.dts"));
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("included files") != std::string::npos);
        CHECK_FALSE(fs::exists(dir / "out.dts"));
        CHECK(soc.unchanged(dir / "soc.dtsi"));
        CHECK(top.unchanged(dir / "board.dts"));
    }
    SUBCASE("--in-place edits the .dtsi only") {
        Snapshot top(dir / "board.dts");
        auto r = run_cli("fix " + (dir / "board.dts") + " -c " + config_16k() + " --in-place");
        CHECK(r.exit_code == 0);
        CHECK(top.unchanged(dir / "board.dts"));
        CHECK(read_file(dir / "soc.dtsi").find("size = <0x0 0x02000000>;") != std::string::npos);
        CHECK(run_cli("check " + (dir / "board.dts") + " -c " + config_16k()).exit_code == 0);
    }
}

TEST_CASE("a two-cell size carries into the high cell") {
    TempDir dir("carry");
    // 0xF0000000 rounded up to 512 MiB (64K pages) is 0x1_0000_0000: both cells change.
    write_file(dir / "b.dts", board(two_cells,
                                    "\t\tpool { compatible = \"shared-dma-pool\"; reusable; "
                                    "size = <0x0 0xF0000000>; };\n",
                                    "", "0x0 0x40000000 0x2 0x0")); // 8 GiB of RAM
    cmalign::ConfigOptions o;
    o.config_files = {config_16k()};
    o.sets = {"CONFIG_ARM64_16K_PAGES=n", "CONFIG_ARM64_64K_PAGES=y",
              "CONFIG_ARCH_FORCE_MAX_ORDER=13"};
    Diagnostics diags;
    auto model = load_model(o, diags);
    REQUIRE(model);
    REQUIRE(model->cma_min_alignment_bytes == 512 * MiB);
    auto p = plan_file(dir / "b.dts", *model);
    REQUIRE(p.plan.edits.size() == 2);
    CHECK(p.plan.edits[0].old_text == "0x0");
    CHECK(p.plan.edits[0].new_text == "0x1");
    CHECK(p.plan.edits[1].old_text == "0xF0000000");
    CHECK(p.plan.edits[1].new_text == "0x0");
    CHECK(p.plan.edits[0].new_value == 0x100000000ull);
    REQUIRE(fix::apply_edits(p.plan.edits, diags));
    CHECK(read_file(dir / "b.dts").find("size = <0x1 0x0>;") != std::string::npos);
    CHECK(plan_file(dir / "b.dts", *model).plan.edits.empty());
}

TEST_CASE(
    "a static reg pool: size fixed in reg, misaligned base reported with free aligned bases") {
    TempDir dir("static");
    // 32 MiB alignment. Occupied: a no-map region 0x42000000+32M and /memreserve/ at 0x44000000.
    // Below 0x44100000: 0x44000000 hits the memreserve, 0x42000000 the no-map region, so
    // 0x40000000; above: 0x46000000 is free.
    write_file(dir / "b.dts",
               board(two_cells,
                     "\t\tfw@42000000 { reg = <0x0 0x42000000 0x0 0x2000000>; no-map; };\n"
                     "\t\tpool@44100000 { compatible = \"shared-dma-pool\"; reusable; "
                     "reg = <0x0 0x44100000 0x0 0x1000000>; };\n",
                     "/memreserve/ 0x44000000 0x100000;\n"));
    auto p = plan_file(dir / "b.dts", model_16k());
    REQUIRE(p.loaded);
    CHECK(p.plan.unfixable);
    REQUIRE(p.plan.edits.size() == 1); // the size still gets fixed
    CHECK(p.plan.edits[0].property == "reg");
    CHECK(p.plan.edits[0].old_text == "0x1000000");
    CHECK(p.plan.edits[0].new_text == "0x2000000");
    auto base = std::find_if(p.plan.diagnostics.begin(), p.plan.diagnostics.end(),
                             [](const auto& d) { return d.check == "cma-base-alignment"; });
    REQUIRE(base != p.plan.diagnostics.end());
    CHECK(base->severity == Severity::error);
    CHECK(base->message.find("0x40000000 (below)") != std::string::npos);
    CHECK(base->message.find("0x46000000 (above)") != std::string::npos);
    CHECK(base->message.find("never moves") != std::string::npos);

    // CLI: the size is written, the base is not, and the run says something is left (exit 1).
    auto r = run_cli("fix " + (dir / "b.dts") + " -c " + config_16k() + " --in-place");
    CHECK(r.exit_code == 1);
    auto text = read_file(dir / "b.dts");
    CHECK(text.find("reg = <0x0 0x44100000 0x0 0x2000000>;") != std::string::npos);
}

TEST_CASE(
    "a size written with a macro or an expression: the exact number to write, no file written") {
    TempDir dir("macro");
    for (std::string size : {"SIZE_4M", "(4 << 20)"}) {
        CAPTURE(size);
        write_file(dir / "b.dts", board(two_cells,
                                        "\t\tpool { compatible = \"shared-dma-pool\"; reusable; "
                                        "size = <0x0 " +
                                            size + ">; };\n",
                                        "#define SIZE_4M 0x400000\n"));
        Snapshot snap(dir / "b.dts");
        auto p = plan_file(dir / "b.dts", model_16k());
        REQUIRE(p.loaded);
        CHECK(p.plan.unfixable);
        CHECK(p.plan.edits.empty());
        REQUIRE(p.plan.diagnostics.size() == 1);
        CHECK(p.plan.diagnostics[0].severity == Severity::error);
        CHECK(p.plan.diagnostics[0].message.find("<0x0 0x2000000>") != std::string::npos);
        REQUIRE(p.plan.diagnostics[0].fix.size() == 1);
        CHECK(p.plan.diagnostics[0].fix[0].new_value == 32 * MiB);
        auto r = run_cli("fix " + (dir / "b.dts") + " -c " + config_16k() + " --in-place");
        CHECK(r.exit_code == 1);
        CHECK(snap.unchanged(dir / "b.dts"));
    }
}

TEST_CASE("a new size that does not fit the cells is an error and nothing is written") {
    TempDir dir("overflow");
    write_file(
        dir / "b.dts",
        "/dts-v1/;\n/ {\n\t#address-cells = <1>;\n\t#size-cells = <1>;\n"
        "\tmemory@40000000 { device_type = \"memory\"; reg = <0x40000000 0x40000000>; };\n"
        "\treserved-memory {\n\t\t#address-cells = <1>;\n\t\t#size-cells = <1>;\n\t\tranges;\n"
        "\t\ta { compatible = \"shared-dma-pool\"; reusable; size = <0x400000>; };\n"
        "\t\tb { compatible = \"shared-dma-pool\"; reusable; size = <0xFFF00000>; };\n"
        "\t};\n};\n");
    Snapshot snap(dir / "b.dts");
    auto p = plan_file(dir / "b.dts", model_16k());
    CHECK(p.plan.unfixable);
    CHECK(p.plan.edits.empty()); // not even pool a: a board is fixed completely or not at all
    bool said =
        std::any_of(p.plan.diagnostics.begin(), p.plan.diagnostics.end(), [](const auto& d) {
            return d.message.find("does not fit in 1 cell") != std::string::npos;
        });
    CHECK(said);
    for (const char* mode : {"--in-place", "--diff"}) {
        auto r = run_cli("fix " + (dir / "b.dts") + " -c " + config_16k() + " " + mode);
        CHECK(r.exit_code == 1);
        CHECK(snap.unchanged(dir / "b.dts"));
    }
    auto r = run_cli("fix " + (dir / "b.dts") + " -c " + config_16k() + " -o " + (dir / "out.dts"));
    CHECK(r.exit_code == 1);
    CHECK_FALSE(fs::exists(dir / "out.dts"));
}

TEST_CASE("an unparsable file is never written") {
    TempDir dir("unparsable");
    write_file(dir / "b.dts", board(two_cells,
                                    "\t\tpool { compatible = \"shared-dma-pool\"; reusable; "
                                    "size = <0x0 0x400000>; \n")); // missing "};"
    Snapshot snap(dir / "b.dts");
    for (std::string mode :
         {std::string("--in-place"), std::string("--diff"), "-o " + (dir / "out.dts")}) {
        auto r = run_cli("fix " + (dir / "b.dts") + " -c " + config_16k() + " " + mode);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("b.dts:") != std::string::npos);
        CHECK(snap.unchanged(dir / "b.dts"));
        CHECK_FALSE(fs::exists(dir / "out.dts"));
    }
}

TEST_CASE("a write that cannot happen leaves the file as it was") {
    TempDir dir("readonly");
    std::string body = board(two_cells, "\t\tpool { compatible = \"shared-dma-pool\"; reusable; "
                                        "size = <0x0 0x400000>; };\n");
    SUBCASE("read-only directory") {
        // Root ignores directory permissions: then run the CLI as nobody through setpriv.
        std::string prefix;
        if (::geteuid() == 0) {
            if (!cmalign::test::have_program("setpriv")) return;
            prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
        }
        write_file(dir / "ro/b.dts", body);
        Snapshot snap(dir / "ro/b.dts");
        if (!prefix.empty()) {
            REQUIRE(::chown(dir.path.c_str(), 65534, 65534) == 0);
            REQUIRE(::chown((dir / "ro").c_str(), 65534, 65534) == 0);
            REQUIRE(::chown((dir / "ro/b.dts").c_str(), 65534, 65534) == 0);
        }
        fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec |
                                        fs::perms::group_read | fs::perms::group_exec |
                                        fs::perms::others_read | fs::perms::others_exec);
        auto r = run_shell(prefix + CMALIGN_CLI + " fix " + (dir / "ro/b.dts") + " -c " +
                           config_16k() + " --in-place");
        fs::permissions(dir / "ro", fs::perms::owner_all);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("Permission denied") != std::string::npos);
        CHECK(snap.unchanged(dir / "ro/b.dts"));
        std::size_t entries = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir / "ro"))
            ++entries;
        CHECK(entries == 1);
    }
    SUBCASE("no room for the temporary file's name (fails for root too)") {
        // NAME_MAX is 255: a 245-byte name leaves no room for ".NAME.cmalign-XXXXXX".
        std::string name = std::string(241, 'b') + ".dts";
        write_file(dir / name, body);
        Snapshot snap(dir / name);
        auto r = run_cli("fix " + (dir / name) + " -c " + config_16k() + " --in-place");
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("temporary file") != std::string::npos);
        CHECK(snap.unchanged(dir / name));
        std::size_t entries = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path))
            ++entries;
        CHECK(entries == 1); // no temp file left behind
    }
}

TEST_CASE("--in-place keeps permissions and follows symlinks") {
    TempDir dir("perms");
    write_file(dir / "real/b.dts", board(two_cells, "\t\tpool { compatible = \"shared-dma-pool\"; "
                                                    "reusable; size = <0x0 0x400000>; };\n"));
    fs::permissions(dir / "real/b.dts", fs::perms(0640));
    fs::create_symlink(dir / "real/b.dts", dir / "link.dts");
    auto r = run_cli("fix " + (dir / "link.dts") + " -c " + config_16k() + " --in-place");
    CHECK(r.exit_code == 0);
    CHECK(fs::is_symlink(dir / "link.dts"));
    CHECK((fs::status(dir / "real/b.dts").permissions() & fs::perms::all) == fs::perms(0640));
    CHECK(read_file(dir / "real/b.dts").find("size = <0x0 0x2000000>;") != std::string::npos);
}

TEST_CASE("--in-place over several boards writes nothing when one of them does not parse") {
    TempDir dir("allornothing");
    write_file(dir / "good.dts", board(two_cells, "\t\tpool { compatible = \"shared-dma-pool\"; "
                                                  "reusable; size = <0x0 0x400000>; };\n"));
    write_file(dir / "broken.dts", "/dts-v1/;\n/ { reserved-memory { ; };\n");
    Snapshot good(dir / "good.dts");
    auto r = run_cli("fix " + (dir / "good.dts") + " " + (dir / "broken.dts") + " -c " +
                     config_16k() + " --in-place");
    CHECK(r.exit_code == 2);
    CHECK(good.unchanged(dir / "good.dts"));
    CHECK(r.err.find("nothing written") != std::string::npos);
    // Alone, the good board is fixed.
    CHECK(run_cli("fix " + (dir / "good.dts") + " -c " + config_16k() + " --in-place").exit_code ==
          0);
    CHECK(read_file(dir / "good.dts").find("size = <0x0 0x2000000>;") != std::string::npos);
}

TEST_CASE("a file changed since it was read is not overwritten, and no temp file is left") {
    TempDir dir("changed");
    write_file(dir / "a.dts", "A, as read\n");
    write_file(dir / "b.dts", "B, as read\n");
    std::vector<fix::FileChange> changes(2);
    changes[0] = {dir / "a.dts", "A, as read\n", "A, fixed\n", false};
    changes[1] = {dir / "b.dts", "B, as read\n", "B, fixed\n", false};
    write_file(dir / "b.dts", "B, edited meanwhile\n"); // same length class, new content
    Diagnostics diags;
    CHECK_FALSE(fix::write_changes(changes, diags));
    REQUIRE(diags.has_errors());
    CHECK(diags.items().front().message.find("changed since cmalign read it") != std::string::npos);
    CHECK(read_file(dir / "a.dts") == "A, as read\n"); // all or nothing
    CHECK(read_file(dir / "b.dts") == "B, edited meanwhile\n");
    int entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path))
        ++entries;
    CHECK(entries == 2);
    // Unchanged on disk: both written.
    write_file(dir / "b.dts", "B, as read\n");
    Diagnostics ok;
    CHECK(fix::write_changes(changes, ok));
    CHECK(read_file(dir / "a.dts") == "A, fixed\n");
    CHECK(read_file(dir / "b.dts") == "B, fixed\n");
}

TEST_CASE("--diff output is accepted by patch -p1 and git apply, and writes nothing") {
    TempDir dir("diff");
    write_file(dir / "arch/soc.dtsi",
               "/ {\n\treserved-memory {\n\t\t#address-cells = <2>;\n\t\t#size-cells = <2>;\n"
               "\t\tranges;\n\t\tpool { compatible = \"shared-dma-pool\"; reusable; "
               "size = <0x0 0x800000>; };\n\t};\n};"); // no newline at the end
    write_file(dir / "arch/b.dts", board(two_cells,
                                         "\t\tsecond { compatible = \"shared-dma-pool\"; reusable; "
                                         "size = <0x0 12582912>; };\n",
                                         "#include \"soc.dtsi\"\n"));
    Snapshot a(dir / "arch/soc.dtsi"), b(dir / "arch/b.dts");
    auto r = run_shell("cd " + dir.path.string() + " && " + CMALIGN_CLI + " fix arch/b.dts -c " +
                       config_16k() + " --diff");
    CHECK(r.exit_code == 1); // shown, not applied
    CHECK(r.out.find("--- a/arch/soc.dtsi\n+++ b/arch/soc.dtsi\n") != std::string::npos);
    CHECK(r.out.find("--- a/arch/b.dts\n+++ b/arch/b.dts\n") != std::string::npos);
    CHECK(r.out.find("\\ No newline at end of file") != std::string::npos);
    CHECK(a.unchanged(dir / "arch/soc.dtsi"));
    CHECK(b.unchanged(dir / "arch/b.dts"));
    write_file(dir / "fix.patch", r.out);

    auto patch = run_shell("cd " + dir.path.string() + " && patch -p1 --dry-run < fix.patch");
    CHECK_MESSAGE(patch.exit_code == 0, patch.err);
    auto git = run_shell("cd " + dir.path.string() + " && git apply --check fix.patch");
    CHECK_MESSAGE(git.exit_code == 0, git.err);
    // Applying the patch gives exactly what --in-place writes.
    REQUIRE(run_shell("cd " + dir.path.string() + " && patch -s -p1 < fix.patch").exit_code == 0);
    auto patched_dtsi = read_file(dir / "arch/soc.dtsi");
    auto patched_board = read_file(dir / "arch/b.dts");
    write_file(dir / "arch/soc.dtsi", a.bytes);
    write_file(dir / "arch/b.dts", b.bytes);
    REQUIRE(
        run_cli("fix " + (dir / "arch/b.dts") + " -c " + config_16k() + " --in-place").exit_code ==
        0);
    CHECK(read_file(dir / "arch/soc.dtsi") == patched_dtsi);
    CHECK(read_file(dir / "arch/b.dts") == patched_board);
    CHECK(patched_board.find("size = <0x0 33554432>;") != std::string::npos); // decimal stays
}

TEST_CASE("merge_edits: shared edits once, overlapping different edits are a conflict") {
    fix::Edit e;
    e.file = "x.dtsi";
    e.begin = 10;
    e.end = 18;
    e.old_text = "0x400000";
    e.new_text = "0x2000000";
    e.input = "a.dts";
    fix::Edit same = e;
    same.input = "b.dts";
    auto m = fix::merge_edits(std::vector<fix::Edit>{e, same});
    CHECK(m.edits.size() == 1);
    CHECK_FALSE(m.conflict);

    fix::Edit other = e;
    other.new_text = "0x4000000";
    m = fix::merge_edits(std::vector<fix::Edit>{e, other});
    CHECK(m.conflict);
    fix::Edit overlapping = e;
    overlapping.begin = 12;
    overlapping.end = 20;
    m = fix::merge_edits(std::vector<fix::Edit>{e, overlapping});
    CHECK(m.conflict);
    REQUIRE_FALSE(m.diagnostics.empty());
    CHECK(m.diagnostics[0].severity == Severity::error);
}

TEST_CASE("dynamic pools: a small `alignment` property is left alone") {
    TempDir dir("alignprop");
    write_file(dir / "b.dts",
               board(two_cells, "\t\tpool { compatible = \"shared-dma-pool\"; reusable; "
                                "size = <0x0 0x2000000>; alignment = <0x0 0x400000>; };\n"));
    auto p = plan_file(dir / "b.dts", model_16k());
    CHECK(p.plan.edits.empty());
    CHECK(p.plan.diagnostics.empty());
}

TEST_CASE("DTB in, DTB out through libfdt") {
    std::string seed =
        std::string(CMALIGN_SOURCE_DIR) + "/examples/boards/upstream-commit-example.dts";
    if (!cmalign::test::have_material(seed) || !cmalign::test::have_program("dtc")) return;
    TempDir dir("dtb");
    REQUIRE(run_shell("dtc -q -I dts -O dtb -o " + (dir / "b.dtb") + " " + seed).exit_code == 0);
    std::string before = read_file(dir / "b.dtb");
    auto r = run_cli("fix " + (dir / "b.dtb") + " -c " + config_16k() + " -o " + (dir / "out.dtb") +
                     " --format json");
    REQUIRE(r.exit_code == 0);
    auto after = read_file(dir / "out.dtb");
    REQUIRE(after.size() == before.size());
    std::size_t differing = 0;
    for (std::size_t i = 0; i < after.size(); ++i)
        differing += after[i] != before[i];
    CHECK(differing == 2); // 0x00400000 → 0x02000000: two bytes of the low cell
    auto got =
        run_shell("fdtget -t x " + (dir / "out.dtb") + " /reserved-memory/cma_test_reserve size");
    CHECK(got.out == "0 2000000\n");
    CHECK(run_cli("check " + (dir / "out.dtb") + " -c " + config_16k()).exit_code == 0);
    // In place, then once more: nothing to do.
    REQUIRE(run_cli("fix " + (dir / "b.dtb") + " -c " + config_16k() + " --in-place").exit_code ==
            0);
    CHECK(read_file(dir / "b.dtb") == after);
    Snapshot snap(dir / "b.dtb");
    CHECK(run_cli("fix " + (dir / "b.dtb") + " -c " + config_16k() + " --in-place").exit_code == 0);
    CHECK(snap.unchanged(dir / "b.dtb")); // nothing to change: not even rewritten
}

TEST_CASE("fix JSON follows docs/json.md") {
    TempDir dir("json");
    write_file(dir / "b.dts", board(two_cells, "\t\tpool { compatible = \"shared-dma-pool\"; "
                                               "reusable; size = <0x0 0x400000>; };\n"));
    auto r = run_cli("fix " + (dir / "b.dts") + " -c " + config_16k() + " --format json");
    CHECK(r.exit_code == 1); // no mode: a plan only, edits pending
    auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["edits"].size() == 1);
    for (const char* key : {"file", "line", "column", "node", "property", "old", "new"})
        CHECK_MESSAGE(j["edits"][0].contains(key), key);
    CHECK(j["edits"][0]["old"] == "0x400000");
    CHECK(j["edits"][0]["new"] == "0x2000000");
    CHECK(j["edits"][0]["node"] == "/reserved-memory/pool");
    CHECK(j["diagnostics"].is_array());
}

TEST_CASE("a pool that could not be placed once grown is not written") {
    TempDir dir("placement");
    // 16 MiB → 32 MiB, but the only alloc-ranges window is 24 MiB.
    write_file(dir / "b.dts",
               board(two_cells, "\t\tpool { compatible = \"shared-dma-pool\"; reusable; "
                                "size = <0x0 0x1000000>; "
                                "alloc-ranges = <0x0 0x40000000 0x0 0x1800000>; };\n"));
    Snapshot snap(dir / "b.dts");
    auto p = plan_file(dir / "b.dts", model_16k());
    CHECK(p.plan.unfixable);
    CHECK(p.plan.edits.empty());
    REQUIRE(p.plan.diagnostics.size() == 1);
    CHECK(p.plan.diagnostics[0].message.find("alloc-ranges") != std::string::npos);
    // A static pool that would grow into the next reservation.
    write_file(dir / "c.dts",
               board(two_cells,
                     "\t\tpool@42000000 { compatible = \"shared-dma-pool\"; reusable; "
                     "reg = <0x0 0x42000000 0x0 0x1000000>; };\n"
                     "\t\tfw@43000000 { reg = <0x0 0x43000000 0x0 0x100000>; no-map; };\n"));
    auto q = plan_file(dir / "c.dts", model_16k());
    CHECK(q.plan.edits.empty());
    REQUIRE(q.plan.diagnostics.size() == 1);
    CHECK(q.plan.diagnostics[0].message.find("overlap the reservation at 0x43000000") !=
          std::string::npos);
    auto r = run_cli("fix " + (dir / "b.dts") + " -c " + config_16k() + " --in-place");
    CHECK(r.exit_code == 1);
    CHECK(snap.unchanged(dir / "b.dts"));
}

TEST_CASE("bulk: a .dtsi shared by several boards, reached by two spellings, is edited once") {
    TempDir dir("bulk");
    write_file(dir / "dts/soc.dtsi",
               "/ {\n\treserved-memory {\n\t\t#address-cells = <2>;\n\t\t#size-cells = <2>;\n"
               "\t\tranges;\n\t\tpool { compatible = \"shared-dma-pool\"; reusable; "
               "size = <0x0 0x800000>; };\n\t};\n};\n");
    std::string top = "/dts-v1/;\n/ {\n\t#address-cells = <2>;\n\t#size-cells = <2>;\n"
                      "\tmemory@40000000 { device_type = \"memory\"; "
                      "reg = <0x0 0x40000000 0x0 0x40000000>; };\n};\n";
    // One board includes it by its own directory, the other through a symlinked prefix dir (as
    // the kernel's scripts/dtc/include-prefixes).
    write_file(dir / "dts/a.dts", top + "#include \"soc.dtsi\"\n");
    write_file(dir / "dts/b.dts", top + "#include <arm64/soc.dtsi>\n");
    fs::create_directories(dir.path / "prefixes");
    fs::create_symlink("../dts", dir.path / "prefixes/arm64");

    FixRequest request;
    request.inputs = {dir / "dts/a.dts", dir / "dts/b.dts"};
    request.config.config_files = {config_16k()};
    request.tree.include_dirs = {dir / "prefixes"};
    request.mode = FixMode::in_place;
    auto outcome = run_fix(request);
    CHECK(outcome.exit_code() == ExitCode::clean);
    REQUIRE(outcome.edits.size() == 1);
    CHECK(outcome.written.size() == 1);
    CHECK(outcome.boards_with_edits == 2);
    CHECK(read_file(dir / "dts/soc.dtsi").find("size = <0x0 0x2000000>;") != std::string::npos);
    // Both boards are clean now, and a second run has nothing to do.
    request.mode = FixMode::plan;
    auto again = run_fix(request);
    CHECK(again.edits.empty());
    CHECK(again.exit_code() == ExitCode::clean);
}

TEST_CASE(
    "--diff hunks are exactly those of diff -u (several hunks, merged context, no final newline)") {
    if (!cmalign::test::have_program("diff")) return;
    TempDir dir("hunks");
    std::string pools;
    for (int i = 0; i < 12; ++i) {
        bool bad = i == 0 || i == 1 || i == 5 || i == 11; // 0 and 1 share a hunk
        pools +=
            "\t\tp" + std::to_string(i) +
            " {\n\t\t\tcompatible = \"shared-dma-pool\";\n\t\t\treusable;\n\t\t\tsize = <0x0 " +
            (bad ? "0x400000" : "0x2000000") + ">;\n\t\t};\n";
    }
    std::string text = board(two_cells, pools);
    text.pop_back(); // no newline at the end
    write_file(dir / "b.dts", text);
    write_file(dir / "orig.dts", text);
    auto mine = run_shell("cd " + dir.path.string() + " && " + CMALIGN_CLI + " fix b.dts -c " +
                          config_16k() + " --diff");
    REQUIRE(mine.exit_code == 1);
    REQUIRE(run_cli("fix " + (dir / "b.dts") + " -c " + config_16k() + " --in-place").exit_code ==
            0);
    auto ref = run_shell("cd " + dir.path.string() + " && diff -u orig.dts b.dts");
    REQUIRE(ref.exit_code == 1);
    auto body = [](const std::string& d) { // without the two header lines
        auto second = d.find('\n', d.find('\n') + 1);
        return d.substr(second + 1);
    };
    CHECK(body(mine.out) == body(ref.out));
    CHECK(mine.out.starts_with("--- a/b.dts\n+++ b/b.dts\n@@ "));
}
