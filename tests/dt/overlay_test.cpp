// Overlays in check and fix (base + .dtso, base.dtb + .dtbo, a lone overlay), and the one
// interval module check and fix share (a pool across two adjacent /memory banks).
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "cmalign/checks/checks.hpp"
#include "cmalign/core/interval.hpp"
#include "cmalign/fix/fix.hpp"
#include "cmalign/internal/dt/overlay.hpp"
#include "cmalign/internal/fix/plan.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/reserved/regions.hpp"
#include "cmalign/run.hpp"
#include "support/fix.hpp"

using namespace fix_test;
using namespace cmalign;

namespace {

constexpr std::uint64_t MiB = 1u << 20;

const char* base_dts = R"(/dts-v1/;
/ {
	#address-cells = <2>;
	#size-cells = <2>;
	memory@40000000 { device_type = "memory"; reg = <0x0 0x40000000 0x0 0x40000000>; };
	reserved-memory {
		#address-cells = <2>;
		#size-cells = <2>;
		ranges;
		linux_cma: linux,cma {
			compatible = "shared-dma-pool";
			reusable;
			size = <0x0 0x2000000>;
			linux,cma-default;
		};
	};
	soc { video: video@1000 { reg = <0x0 0x1000 0x0 0x100>; }; };
};
)";

// Grows the base's pool through its label (line 4) and adds a camera pool under
// /reserved-memory (line 9), both 4 MiB off the 32 MiB alignment of 16K pages.
const char* overlay_dtso = R"(/dts-v1/;
/plugin/;
&linux_cma {
	size = <0x0 0x4400000>;
};
&{/reserved-memory} {
	camera: camera-pool {
		compatible = "shared-dma-pool";
		reusable; size = <0x0 0x1400000>;
	};
};
&video { memory-region = <&camera>; };
)";

std::vector<Diagnostic> errors_of(const checks::Result& r) {
    std::vector<Diagnostic> out;
    for (const auto& d : r.diagnostics)
        if (d.severity == Severity::error) out.push_back(d);
    return out;
}

} // namespace

TEST_CASE("interval: banks merge when they touch or overlap; ends saturate") {
    IntervalSet ram({Interval::of(0x40000000, 0x1000000), Interval::of(0x41000000, 0x1000000),
                     Interval::of(0x80000000, 0x100)});
    REQUIRE(ram.spans().size() == 2);
    CHECK(ram.spans()[0] == Interval{0x40000000, 0x42000000});
    CHECK(ram.covers(Interval::of(0x40800000, 0x1000000)));       // across the seam
    CHECK_FALSE(ram.covers(Interval::of(0x41800000, 0x1000000))); // past the end
    CHECK(ram.largest_piece_within(Interval::of(0x41800000, 0x1000000)) == 0x800000);
    CHECK(ram.has_span_of(0x2000000));
    CHECK_FALSE(ram.has_span_of(0x2000001));
    // base + size past 2^64 saturates instead of wrapping to a small end.
    auto wrap = Interval::of(UINT64_MAX - 10, 100);
    CHECK(wrap.end == UINT64_MAX);
    CHECK(Interval::wraps(UINT64_MAX - 10, 100));
    CHECK_FALSE(ram.covers(wrap));
    IntervalSet top({wrap, Interval::of(0, 0)}); // an empty range adds nothing
    CHECK(top.spans().size() == 1);
    CHECK(overlaps(Interval::of(10, 10), Interval::of(19, 1)));
    CHECK_FALSE(overlaps(Interval::of(10, 10), Interval::of(20, 1)));
    // Added out of order and bridging: one span.
    IntervalSet bridged;
    bridged.add({30, 40});
    bridged.add({0, 10});
    bridged.add({10, 30});
    REQUIRE(bridged.spans().size() == 1);
    CHECK(bridged.spans()[0] == Interval{0, 40});
}

TEST_CASE("a pool across two adjacent /memory banks: check accepts the place, fix grows it") {
    TempDir dir("adjacent");
    // Two 16 MiB banks back to back; a 24 MiB pool at the first bank's start grows to 32 MiB
    // (16K pages), ending exactly at the second bank's end.
    write_file(dir / "b.dts", R"(/dts-v1/;
/ {
	#address-cells = <2>;
	#size-cells = <2>;
	memory@40000000 { device_type = "memory";
		reg = <0x0 0x40000000 0x0 0x1000000>, <0x0 0x41000000 0x0 0x1000000>; };
	reserved-memory {
		#address-cells = <2>;
		#size-cells = <2>;
		ranges;
		pool@40000000 { compatible = "shared-dma-pool"; reusable;
			reg = <0x0 0x40000000 0x0 0x1800000>; };
	};
};
)");
    auto model = model_16k();
    dt::FileCache cache;
    Diagnostics diags;
    auto tree = cmalign::detail::load_tree(dir / "b.dts", {}, cache, diags);
    REQUIRE(tree);
    auto result = checks::run(*tree, model, {});
    for (const auto& d : result.diagnostics)
        CHECK_MESSAGE(d.check != "outside-memory", d.message);
    // The pool's own error, and the default CMA area's: 32 MiB of RAM, a pool in 24 of it, no
    // room left for the area the configuration asks for.
    auto errors = errors_of(result);
    REQUIRE(errors.size() == 2);
    CHECK(errors[0].check == "cma-size-alignment");
    CHECK(errors[1].check == "cma-default-area");
    auto rs = reserved::read(*tree, checks::read_options(model));
    auto plan = fix::plan_fixes(*tree, rs, 32 * MiB, cache);
    CHECK_FALSE(plan.unfixable);
    REQUIRE(plan.edits.size() == 1);
    CHECK(plan.edits[0].old_text == "0x1800000");
    CHECK(plan.edits[0].new_text == "0x2000000");
    // One byte more would not fit: fix and check agree on where RAM ends.
    write_file(dir / "c.dts",
               read_file(dir / "b.dts")
                   .replace(read_file(dir / "b.dts").find("0x0 0x1800000"), 13, "0x0 0x2000001"));
    dt::FileCache cache2;
    auto tree2 = cmalign::detail::load_tree(dir / "c.dts", {}, cache2, diags);
    REQUIRE(tree2);
    auto result2 = checks::run(*tree2, model, {});
    bool outside = false;
    for (const auto& d : result2.diagnostics)
        outside = outside || d.check == "outside-memory";
    CHECK(outside);
    auto plan2 = fix::plan_fixes(*tree2, reserved::read(*tree2, checks::read_options(model)),
                                 32 * MiB, cache2);
    CHECK(plan2.edits.empty());
    REQUIRE_FALSE(plan2.diagnostics.empty());
    CHECK(plan2.diagnostics[0].message.find("outside /memory") != std::string::npos);
}

TEST_CASE("base.dts + overlay.dtso: findings at the overlay's lines, fix edits only the overlay") {
    TempDir dir("overlay-dts");
    write_file(dir / "base.dts", base_dts);
    write_file(dir / "ov.dtso", overlay_dtso);
    Snapshot base(dir / "base.dts");
    const std::string common = " -c " + config_16k() + " --overlay " + (dir / "ov.dtso");

    auto r = run_cli("check " + (dir / "base.dts") + common + " --format json");
    CHECK(r.exit_code == 1);
    auto j = nlohmann::json::parse(r.out);
    std::vector<std::pair<int, std::string>> at;
    for (const auto& d : j["diagnostics"])
        if (d["severity"] == "error") {
            CHECK(d["file"] == dir / "ov.dtso");
            CHECK(d["input"] == dir / "base.dts");
            CHECK(d["check"] == "cma-size-alignment");
            at.emplace_back(d["line"].get<int>(), d["node"].get<std::string>());
        }
    std::sort(at.begin(), at.end());
    REQUIRE(at.size() == 2);
    CHECK(at[0] == std::pair<int, std::string>{4, "/reserved-memory/linux,cma"});
    CHECK(at[1] == std::pair<int, std::string>{9, "/reserved-memory/camera-pool"});

    auto f = run_cli("fix " + (dir / "base.dts") + common + " --in-place");
    CHECK(f.exit_code == 0);
    CHECK(base.unchanged(dir / "base.dts"));
    std::string expected = overlay_dtso;
    expected.replace(expected.find("0x4400000"), 9, "0x6000000");
    expected.replace(expected.find("0x1400000"), 9, "0x2000000");
    CHECK(read_file(dir / "ov.dtso") == expected);
    auto again = run_cli("check " + (dir / "base.dts") + common);
    CHECK(again.exit_code == 0);
    // Without the overlay the base alone was clean all along.
    CHECK(run_cli("check " + (dir / "base.dts") + " -c " + config_16k()).exit_code == 0);
}

TEST_CASE("base.dtb + overlay.dtbo: the .dtbo's bytes are fixed, the base blob is not touched") {
    if (!cmalign::test::have_program("dtc") || !cmalign::test::have_program("fdtoverlay") ||
        !cmalign::test::have_program("fdtget"))
        return;
    TempDir dir("overlay-dtb");
    write_file(dir / "base.dts", base_dts);
    write_file(dir / "ov.dtso", overlay_dtso);
    REQUIRE(run_shell("dtc -@ -q -O dtb -o " + (dir / "base.dtb") + " " + (dir / "base.dts"))
                .exit_code == 0);
    REQUIRE(
        run_shell("dtc -q -O dtb -o " + (dir / "ov.dtbo") + " " + (dir / "ov.dtso")).exit_code ==
        0);
    Snapshot base(dir / "base.dtb");
    const std::string common = " -c " + config_16k() + " --overlay " + (dir / "ov.dtbo");
    auto r = run_cli("check " + (dir / "base.dtb") + common + " --format json");
    CHECK(r.exit_code == 1);
    auto j = nlohmann::json::parse(r.out);
    int errors = 0;
    for (const auto& d : j["diagnostics"])
        if (d["severity"] == "error") {
            ++errors;
            CHECK(d["file"] == dir / "ov.dtbo");
        }
    CHECK(errors == 2);
    auto f = run_cli("fix " + (dir / "base.dtb") + common + " --in-place");
    CHECK(f.exit_code == 0);
    CHECK(base.unchanged(dir / "base.dtb"));
    CHECK(run_cli("check " + (dir / "base.dtb") + common).exit_code == 0);
    // fdtoverlay itself sees the fixed sizes.
    REQUIRE(run_shell("fdtoverlay -i " + (dir / "base.dtb") + " -o " + (dir / "m.dtb") + " " +
                      (dir / "ov.dtbo"))
                .exit_code == 0);
    auto cma = run_shell("fdtget -t x " + (dir / "m.dtb") + " /reserved-memory/linux,cma size");
    CHECK(cma.out == "0 6000000\n");
    auto cam = run_shell("fdtget -t x " + (dir / "m.dtb") + " /reserved-memory/camera-pool size");
    CHECK(cam.out == "0 2000000\n");
}

TEST_CASE("a lone overlay: the pools it adds under /reserved-memory, with a note") {
    TempDir dir("overlay-lone");
    write_file(dir / "ov.dtso", overlay_dtso);
    auto r = run_cli("check " + (dir / "ov.dtso") + " -c " + config_16k() + " --format json");
    CHECK(r.exit_code == 1);
    auto j = nlohmann::json::parse(r.out);
    int errors = 0;
    bool note = false;
    for (const auto& d : j["diagnostics"]) {
        if (d["severity"] == "error") {
            ++errors;
            CHECK(d["line"] == 9); // the camera pool; &linux_cma needs the base
            CHECK(d["node"] == "/reserved-memory/camera-pool");
        }
        std::string m = d["message"];
        if (d["severity"] == "note" && m.find("base is unknown") != std::string::npos) {
            note = true;
            CHECK(m.find("fragment@0 (target = <&label>)") != std::string::npos);
            CHECK(m.find("#size-cells = <2>") != std::string::npos);
        }
    }
    CHECK(errors == 1);
    CHECK(note);
}

TEST_CASE("overlay errors: a label the base lacks, a file that is not an overlay") {
    TempDir dir("overlay-bad");
    write_file(dir / "base.dts", base_dts);
    write_file(dir / "ov.dtso", "/dts-v1/;\n/plugin/;\n&nowhere { status = \"okay\"; };\n");
    auto r = run_cli("check " + (dir / "base.dts") + " -c " + config_16k() + " --overlay " +
                     (dir / "ov.dtso"));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("label `nowhere` is not in the /__symbols__") != std::string::npos);
    auto t = run_cli("tree " + (dir / "base.dts") + " --overlay " + (dir / "base.dts"));
    CHECK(t.exit_code == 2);
    CHECK(t.err.find("not an overlay") != std::string::npos);
}

TEST_CASE("tree and suggest take --overlay too") {
    TempDir dir("overlay-tree");
    write_file(dir / "base.dts", base_dts);
    write_file(dir / "ov.dtso", overlay_dtso);
    auto t = run_cli("tree " + (dir / "base.dts") + " --overlay " + (dir / "ov.dtso") +
                     " --path /reserved-memory --format json");
    REQUIRE(t.exit_code == 0);
    auto j = nlohmann::json::parse(t.out);
    bool camera = false;
    for (const auto& n : j["nodes"])
        if (n["path"] == "/reserved-memory/camera-pool") {
            camera = true;
            CHECK(n["file"] == dir / "ov.dtso");
        }
    CHECK(camera);
    // The base alone needs 32 MiB (valid on 16K pages); the overlay's pools need only 4 MiB.
    auto alone =
        run_cli("suggest " + (dir / "base.dts") + " -c " + config_16k() + " --format json");
    REQUIRE(alone.exit_code == 0);
    CHECK(nlohmann::json::parse(alone.out)["needed_alignment_bytes"] == 32 * MiB);
    auto with = run_cli("suggest " + (dir / "base.dts") + " -c " + config_16k() + " --overlay " +
                        (dir / "ov.dtso") + " --format json");
    auto js = nlohmann::json::parse(with.out);
    CHECK(js["needed_alignment_bytes"] == 4 * MiB);
    CHECK(js["already_valid"] == false);
}
