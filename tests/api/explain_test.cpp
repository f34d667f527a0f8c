// `explain`: boot logs tied to the example board's nodes, with check's finding and fix's plan.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "cmalign/explain.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/kernel/versions.hpp"
#include "cmalign/run_fix.hpp"

using namespace cmalign;

namespace {
const std::string board = CMALIGN_SOURCE_DIR "/examples/boards/seed-board.dts";
const std::string config_4k = CMALIGN_SOURCE_DIR "/examples/configs/arm64-4k.config";
const std::string config_16k = CMALIGN_SOURCE_DIR "/examples/configs/arm64-16k.config";
const std::string sample_log = CMALIGN_SOURCE_DIR "/examples/logs/seed-board-16k.dmesg";

std::string write_log(const std::string& name, const std::string& text) {
    auto path = (std::filesystem::temp_directory_path() / ("cmalign-explain-" + name)).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

ExplainOutcome explain(const std::string& log, std::vector<std::string> configs) {
    ExplainRequest request;
    request.log_path = log;
    request.board = board;
    request.config.config_files = std::move(configs);
    return run_explain(request);
}

// The name as a pointer, not a std::string: gcc 14 takes a reference returned while a temporary
// string argument lives for a dangling one (-Wdangling-reference).
const NodeExplanation& node(const ExplainOutcome& o, const char* name) {
    for (const auto& n : o.nodes)
        if (n.name == name) return n;
    FAIL("no node " << name);
    return o.nodes.front();
}

// The lines v6.1 prints for the board on 16K pages (drivers/of/of_reserved_mem.c and
// kernel/dma/contiguous.c formats), around other output, with CRLF.
std::string log_61() {
    return "[    0.000000] Linux version 6.1.0-28-arm64 (debian-kernel@lists.debian.org) (gcc-12) "
           "#1 SMP Debian 6.1.119-1\r\n"
           "[    0.000000] Machine model: ACME example board\r\n"
           "[    0.000000] Reserved memory: created CMA memory pool at 0x0000000050000000, "
           "size 16 MiB\r\n"
           "U-Boot> \r\n"
           "[    0.000000] OF: reserved mem: initialized node camera-pool@50000000, compatible id "
           "shared-dma-pool\r\n"
           "[    0.000000] Reserved memory: incorrect alignment of CMA region\r\n"
           "[    0.000000] OF: reserved mem: node vdec-pool compatible matching fail\r\n"
           "[    0.000000] cma: Reserved 32 MiB at 0x000000007c000000\r\n";
}
} // namespace

TEST_CASE("the sample 6.12 log: both pools rejected, with check's finding and fix's plan") {
    auto o = explain(sample_log, {config_16k});
    REQUIRE(o.errors.empty());
    REQUIRE(o.version);
    CHECK(o.version->str() == "6.12.117");
    CHECK(o.version_source == "log line 2");
    CHECK(o.exit_code() == ExitCode::findings);

    // The same check and fix, run the way `check` and `fix` run.
    CheckRequest check;
    check.inputs = {board};
    check.config.config_files = {config_16k};
    check.config.kernel_version = "6.12.117";
    auto checked = run_check(check);
    REQUIRE(checked.results.size() == 1);
    FixRequest fix;
    fix.inputs = {board};
    fix.config = check.config;
    auto planned = run_fix(fix);

    for (const char* name : {"vdec-pool", "camera-pool@50000000"}) {
        CAPTURE(name);
        const auto& n = node(o, name);
        CHECK(n.outcome == NodeOutcome::rejected);
        REQUIRE(n.log.size() == 2);
        CHECK(n.log[0].event == bootlog::Event::incorrect_alignment);
        CHECK(n.log[1].event == bootlog::Event::matching_fail);
        REQUIRE(n.finding);
        CHECK(n.finding->check == "cma-size-alignment");
        bool same = false;
        for (const auto& d : checked.results[0].diagnostics)
            same = same || (d.node == n.node && d.check == n.finding->check &&
                            d.message == n.finding->message && d.where == n.finding->where);
        CHECK(same);
        CHECK(n.message == n.finding->message);
        std::vector<fix::Edit> edits;
        for (const auto& e : planned.edits)
            if (e.node == n.node) edits.push_back(e);
        REQUIRE(edits.size() == n.edits.size());
        for (std::size_t i = 0; i < edits.size(); ++i) {
            CHECK(edits[i].new_value == n.edits[i].new_value);
            CHECK(edits[i].where == n.edits[i].where);
        }
    }
    // vdec-pool's size is a literal: fix rewrites it to 32 MiB. camera-pool's is a macro:
    // check's hint says the number, fix cannot edit it.
    REQUIRE(node(o, "vdec-pool").edits.size() == 1);
    CHECK(node(o, "vdec-pool").edits[0].new_value == 32u << 20);
    CHECK(node(o, "camera-pool@50000000").edits.empty());
    REQUIRE(!node(o, "camera-pool@50000000").finding->fix.empty());
    CHECK(node(o, "camera-pool@50000000").finding->fix[0].new_value == 32u << 20);

    const auto& firmware = node(o, "firmware@4f000000");
    CHECK(firmware.outcome == NodeOutcome::created);
    REQUIRE(firmware.log.size() == 1);
    CHECK(firmware.log[0].event == bootlog::Event::region_listed);
    // The cma= / default area line names no node.
    REQUIRE(o.other.size() == 1);
    CHECK(o.other[0].event == bootlog::Event::cmdline_reserved);
    CHECK(o.unmatched.empty());

    auto j = explain_json(o);
    CHECK(j["kernel_version"] == "6.12.117");
    REQUIRE(j["nodes"].size() == 3);
    for (const auto& jn : j["nodes"])
        for (const char* key :
             {"node", "file", "line", "outcome", "log", "check", "message", "fix"})
            CHECK_MESSAGE(jn.contains(key), key);
    CHECK(j["nodes"][0]["fix"]["new"] == 32u << 20);
    CHECK(j["nodes"][0]["log"][0]["line_number"] == 6);
}

TEST_CASE("a 6.1 log with CRLF and interleaved output uses v6.1's rules") {
    auto o = explain(write_log("61.log", log_61()), {config_16k});
    REQUIRE(o.errors.empty());
    REQUIRE(o.model);
    CHECK(o.model->version.str() == "6.1.0");
    // v6.1 reads CONFIG_ARCH_FORCE_MAX_ORDER=11 as MAX_ORDER 11 (exclusive, until v6.4): the
    // largest order is 10, pageblock_order min(HUGETLB_PAGE_ORDER 11, 10) = 10, and the CMA
    // alignment 16K << 10 = 16 MiB, not v6.12's 32 MiB. The 16 MiB camera pool survives.
    CHECK(o.model->cma_min_alignment_bytes == 16u << 20);
    const auto& vdec = node(o, "vdec-pool");
    CHECK(vdec.outcome == NodeOutcome::rejected);
    REQUIRE(vdec.log.size() == 2);
    CHECK(vdec.log[0].line_number == 6);
    REQUIRE(vdec.finding);
    CHECK(vdec.finding->check == "cma-size-alignment");
    const auto& camera = node(o, "camera-pool@50000000");
    CHECK(camera.outcome == NodeOutcome::created);
    REQUIRE(camera.log.size() == 2);
    CHECK(camera.log[0].line_number == 3);
    CHECK(camera.log[0].bytes == 16u << 20);
    CHECK_FALSE(camera.finding);
    CHECK(node(o, "firmware@4f000000").outcome == NodeOutcome::absent); // v6.1 lists nothing
    CHECK(o.other.size() == 1); // the default area's "cma: Reserved 32 MiB at …"
}

TEST_CASE("a log the configuration does not explain says which page sizes would") {
    // The 4K configuration accepts both pools, yet the log shows them rejected.
    auto o = explain(sample_log, {config_4k});
    REQUIRE(o.errors.empty());
    const auto& n = node(o, "vdec-pool");
    CHECK(n.outcome == NodeOutcome::rejected);
    CHECK_FALSE(n.finding);
    CHECK(n.message.find("configured differently") != std::string::npos);
    CHECK(n.message.find("16 KiB pages (CMA alignment 32 MiB)") != std::string::npos);
    CHECK(o.exit_code() == ExitCode::findings); // a pool was lost, whatever the configuration says
}

TEST_CASE("lines about nodes the board does not have are reported") {
    auto o = explain(write_log("other-dt.log",
                               "Linux version 6.12.117 (x) #1\n"
                               "Reserved memory: created CMA memory pool at 0x0000000060000000, "
                               "size 64 MiB\n"
                               "OF: reserved mem: initialized node gpu-pool@60000000, compatible "
                               "id shared-dma-pool\n"
                               "cma: CMA area linux,cma could not be activated\n"),
                     {config_16k});
    REQUIRE(o.errors.empty());
    REQUIRE(o.unmatched.size() == 3);
    CHECK(o.unmatched[0].event == bootlog::Event::created_cma_pool);
    CHECK(o.unmatched[1].nodes == std::vector<std::string>{"gpu-pool@60000000"});
    CHECK(o.unmatched[2].event == bootlog::Event::not_activated);
    for (const auto& n : o.nodes)
        CHECK(n.outcome == NodeOutcome::absent);
    CHECK_FALSE(o.notes.empty());
}

TEST_CASE("bypassed, created and failed pools") {
    auto o = explain(write_log("mixed.log",
                               "Linux version 6.12.117 (x) #1\n"
                               "Reserved memory: bypass vdec-pool node, using cmdline CMA params "
                               "instead\n"
                               "OF: reserved mem: node vdec-pool compatible matching fail\n"
                               "Reserved memory: created CMA memory pool at 0x0000000050000000, "
                               "size 16 MiB\n"
                               "OF: reserved mem: initialized node camera-pool@50000000, "
                               "compatible id shared-dma-pool\n"
                               "cma: CMA area camera-pool@50000000 could not be activated\n"),
                     {config_4k});
    REQUIRE(o.errors.empty());
    CHECK(node(o, "vdec-pool").outcome == NodeOutcome::bypassed);
    CHECK(node(o, "camera-pool@50000000").outcome == NodeOutcome::failed);
    CHECK(node(o, "camera-pool@50000000").log.size() == 3);
}

TEST_CASE("the version comes from the log, else --kernel-version or the config header") {
    auto no_version =
        write_log("no-version.log", "OF: reserved mem: node vdec-pool compatible matching fail\n");
    auto with_header = explain(no_version, {config_16k});
    REQUIRE(with_header.errors.empty());
    CHECK(with_header.version->str() == "6.12.117");
    CHECK_FALSE(with_header.notes.empty());

    // Nothing says the version or the arch: the newest modelled version, for arm64, each said.
    ExplainRequest bare;
    bare.log_path = no_version;
    bare.board = board;
    auto none = run_explain(bare);
    CHECK(none.errors.empty());
    CHECK(none.exit_code() != ExitCode::input_error);
    REQUIRE(none.version);
    CHECK(*none.version == kernel::newest_modelled_version());
    REQUIRE(none.model);
    CHECK(none.model->arch == kernel::Arch::arm64);
    CHECK(none.notes.size() >= 2);
    CHECK(node(none, "vdec-pool").outcome == NodeOutcome::failed);

    bare.config.kernel_version = "6.1";
    bare.config.arch = "arm64";
    auto given = run_explain(bare);
    CHECK(given.errors.empty());
    CHECK(given.model->version.str() == "6.1");

    ExplainRequest missing;
    missing.log_path = "/nonexistent/boot.log";
    missing.board = board;
    CHECK(run_explain(missing).exit_code() == ExitCode::input_error);
}

TEST_CASE("the cma= skip line (v6.19, v7.1) names no node: it is the linux,cma-default pool's") {
    auto dts = write_log("default.dts",
                         "/dts-v1/;\n/ { #address-cells = <2>; #size-cells = <2>;\n"
                         "memory@40000000 { device_type = \"memory\"; reg = <0 0x40000000 0 "
                         "0x40000000>; };\n"
                         "reserved-memory { #address-cells = <2>; #size-cells = <2>; ranges;\n"
                         "linux,cma { compatible = \"shared-dma-pool\"; reusable; size = <0 "
                         "0x4000000>; linux,cma-default; };\n"
                         "other@50000000 { compatible = \"shared-dma-pool\"; reusable; reg = <0 "
                         "0x50000000 0 0x2000000>; }; }; };\n");
    ExplainRequest request;
    request.board = dts;
    request.config.config_files = {config_4k};
    request.log_path = write_log("skip.log", "Linux version 7.2.13-arm64 (x) #1\n"
                                             "Skipping dt linux,cma-default node in favor for "
                                             "\"cma=\" kernel param.\n"
                                             "cma: Reserved 64 MiB in 2 ranges\n");
    auto o = run_explain(request);
    REQUIRE(o.errors.empty());
    CHECK(node(o, "linux,cma").outcome == NodeOutcome::bypassed);
    CHECK(node(o, "linux,cma").log.size() == 1);
    CHECK(node(o, "other@50000000").outcome == NodeOutcome::absent);
    CHECK(node(o, "other@50000000").log.empty());
}

namespace {

// A 4.19-style arm64 board: a 1 MiB CMA pool (4.19 arm64 4K pages: CMA alignment 4 MiB,
// PAGE_SIZE << max(MAX_ORDER - 1, pageblock_order)) and a 16 MiB one that is fine.
std::string board_419() {
    return write_log("board-419.dts",
                     "/dts-v1/;\n/ { #address-cells = <2>; #size-cells = <2>;\n"
                     "memory@40000000 { device_type = \"memory\"; reg = <0 0x40000000 0 "
                     "0x40000000>; };\n"
                     "reserved-memory { #address-cells = <2>; #size-cells = <2>; ranges;\n"
                     "dsp-pool@50000000 { compatible = \"shared-dma-pool\"; reusable; reg = <0 "
                     "0x50000000 0 0x100000>; };\n"
                     "video-pool@60000000 { compatible = \"shared-dma-pool\"; reusable; reg = <0 "
                     "0x60000000 0 0x1000000>; };\n"
                     "firmware@4f000000 { reg = <0 0x4f000000 0 0x100000>; no-map; }; }; };\n");
}

// What 4.19 prints (drivers/of/of_reserved_mem.c fdt_init_reserved_mem() ignores a failed
// init: no line names the pool it rejects; drivers/base/dma-contiguous.c rmem_cma_setup()).
const char* log_419_lines =
    "[    0.000000] Reserved memory: incorrect alignment of CMA region\n"
    "[    0.000000] Reserved memory: created CMA memory pool at 0x0000000060000000, size 16 MiB\n"
    "[    0.000000] OF: reserved mem: initialized node video-pool@60000000, compatible id "
    "shared-dma-pool\n";

} // namespace

TEST_CASE("a 4.19 log: the alignment line naming no node is the one misaligned pool's") {
    ExplainRequest request;
    request.board = board_419();
    request.config.config_files = {config_4k};
    request.log_path = write_log("419.log", std::string("[    0.000000] Linux version 4.19.232 "
                                                        "(builder@host) (gcc version 8.3.0) #1 "
                                                        "SMP PREEMPT\n") +
                                                log_419_lines);
    auto o = run_explain(request);
    REQUIRE(o.errors.empty());
    REQUIRE(o.model);
    CHECK(o.model->version.str() == "4.19.232");
    CHECK(o.model->cma_min_alignment_bytes == 4u << 20);
    const auto& dsp = node(o, "dsp-pool@50000000");
    CHECK(dsp.outcome == NodeOutcome::rejected);
    REQUIRE(dsp.log.size() == 1);
    CHECK(dsp.log[0].event == bootlog::Event::incorrect_alignment);
    CHECK(dsp.log[0].matched_by.find("the only reusable pool check finds misaligned") !=
          std::string::npos);
    REQUIRE(dsp.finding);
    CHECK(dsp.finding->check == "cma-size-alignment");
    // The created pool keeps its own lines; the failure line before its init line is not its.
    const auto& video = node(o, "video-pool@60000000");
    CHECK(video.outcome == NodeOutcome::created);
    CHECK(video.log.size() == 2);
    CHECK(o.unexplained.empty());
    CHECK(o.exit_code() == ExitCode::findings);
    auto j = explain_json(o);
    CHECK(j["nodes"][0]["log"][0]["matched_by"].get<std::string>().find("misaligned") !=
          std::string::npos);
    CHECK(explain_text(o).find("(names no node: the only reusable pool") != std::string::npos);

    // The same excerpt without its version line, the version given: the same answer.
    request.log_path = write_log("419-cut.log", log_419_lines);
    request.config.kernel_version = "4.19";
    auto cut = run_explain(request);
    REQUIRE(cut.errors.empty());
    CHECK(node(cut, "dsp-pool@50000000").outcome == NodeOutcome::rejected);

    // Two pools that can have caused the line: it stays unexplained.
    request.board = write_log("board-419-two.dts",
                              "/dts-v1/;\n/ { #address-cells = <2>; #size-cells = <2>;\n"
                              "reserved-memory { #address-cells = <2>; #size-cells = <2>; "
                              "ranges;\n"
                              "a@50000000 { compatible = \"shared-dma-pool\"; reusable; reg = <0 "
                              "0x50000000 0 0x100000>; };\n"
                              "b@51000000 { compatible = \"shared-dma-pool\"; reusable; reg = <0 "
                              "0x51000000 0 0x100000>; }; }; };\n");
    request.log_path = write_log("419-two.log", "Reserved memory: incorrect alignment of CMA "
                                                "region\n");
    auto two = run_explain(request);
    REQUIRE(two.errors.empty());
    REQUIRE(two.unexplained.size() == 1);
    CHECK(node(two, "a@50000000").log.empty());
    CHECK(node(two, "b@51000000").log.empty());
}

TEST_CASE("\"unsupported node format\": /reserved-memory's finding is every node's") {
    // #size-cells 1 under a root of 2: __reserved_mem_check_root() refuses the node.
    ExplainRequest request;
    request.board = write_log(
        "bad-format.dts",
        "/dts-v1/;\n/ { #address-cells = <2>; #size-cells = <2>;\n"
        "memory@40000000 { device_type = \"memory\"; reg = <0 0x40000000 0 0x40000000>; };\n"
        "reserved-memory { #address-cells = <2>; #size-cells = <1>; ranges;\n"
        "pool@50000000 { compatible = \"shared-dma-pool\"; reusable; reg = <0 0x50000000 "
        "0x2000000>; }; }; };\n");
    request.config.config_files = {config_4k};
    request.log_path = write_log("bad-format.log",
                                 "Linux version 5.10.223 (x) #1\n"
                                 "OF: fdt: Reserved memory: unsupported node format, ignoring\n");
    CheckRequest check;
    check.inputs = {request.board};
    check.config.config_files = {config_4k};
    check.config.kernel_version = "5.10.223";
    auto checked = run_check(check);
    REQUIRE(checked.results.size() == 1);
    bool on_parent = false;
    for (const auto& d : checked.results[0].diagnostics)
        on_parent =
            on_parent || (d.check == "reserved-memory-format" && d.node == "/reserved-memory");
    REQUIRE(on_parent);

    auto o = run_explain(request);
    REQUIRE(o.errors.empty());
    const auto& pool = node(o, "pool@50000000");
    CHECK(pool.outcome == NodeOutcome::failed);
    REQUIRE(pool.finding);
    CHECK(pool.finding->check == "reserved-memory-format");
    CHECK(pool.message.find("check finds nothing wrong") == std::string::npos);
    REQUIRE(pool.log.size() == 1);
    CHECK(pool.log[0].matched_by.find("/reserved-memory itself") != std::string::npos);
    CHECK(o.unexplained.empty());
    CHECK(o.exit_code() == ExitCode::findings);

    // Without the line (a log that says nothing): still check's finding, not "nothing wrong".
    request.log_path = write_log("bad-format-quiet.log", "Linux version 5.10.223 (x) #1\n");
    auto quiet = run_explain(request);
    CHECK(node(quiet, "pool@50000000").message.find("check finds nothing wrong") ==
          std::string::npos);
    CHECK(quiet.exit_code() == ExitCode::findings);
}

TEST_CASE("a log of only reserved-memory lines, nothing else given: an answer, not a stop") {
    ExplainRequest request;
    request.board = board;
    request.log_path =
        write_log("only-rmem.log", "Reserved memory: incorrect alignment of CMA region\n"
                                   "OF: reserved mem: node vdec-pool compatible matching fail\n"
                                   "Reserved memory: created CMA memory pool at "
                                   "0x0000000050000000, size 16 MiB\n"
                                   "OF: reserved mem: initialized node camera-pool@50000000, "
                                   "compatible id shared-dma-pool\n");
    auto o = run_explain(request);
    CHECK(o.errors.empty());
    CHECK(o.exit_code() == ExitCode::findings); // vdec-pool rejected
    CHECK(node(o, "vdec-pool").outcome == NodeOutcome::rejected);
    CHECK(node(o, "camera-pool@50000000").outcome == NodeOutcome::created);
    CHECK(o.version_source == "the newest modelled version");

    // The version from -c's header when the log has none.
    request.config.config_files = {config_16k};
    auto with_config = run_explain(request);
    CHECK(with_config.errors.empty());
    CHECK(with_config.version->str() == "6.12.117");
    CHECK(with_config.version_source == "the configuration's header");
}

TEST_CASE("\"cma: Failed to reserve\" is the one node inside a fixed cma= area's") {
    auto dts = [](const std::string& name, const std::string& bootargs) {
        return write_log(name, "/dts-v1/;\n/ { #address-cells = <2>; #size-cells = <2>;\n"
                               "chosen { bootargs = \"" +
                                   bootargs +
                                   "\"; };\n"
                                   "memory@40000000 { device_type = \"memory\"; reg = <0 "
                                   "0x40000000 0 0x40000000>; };\n"
                                   "reserved-memory { #address-cells = <2>; #size-cells = <2>; "
                                   "ranges;\n"
                                   "modem@50800000 { reg = <0 0x50800000 0 0x100000>; no-map; };\n"
                                   "tee@5e000000 { reg = <0 0x5e000000 0 0x100000>; no-map; }; "
                                   "}; };\n");
    };
    ExplainRequest request;
    request.config.config_files = {config_4k};
    request.log_path = write_log("cma-failed.log", "Linux version 6.12.117 (x) #1\n"
                                                   "cma: Failed to reserve 16 MiB on node -1\n");
    // cma=16M@0x50000000: mm/cma.c cma_declare_contiguous_nid() finds the fixed range reserved.
    request.board = dts("cma-fixed.dts", "console=ttyS0 cma=16M@0x50000000");
    auto o = run_explain(request);
    REQUIRE(o.errors.empty());
    const auto& modem = node(o, "modem@50800000");
    REQUIRE(modem.log.size() == 1);
    CHECK(modem.log[0].matched_by.find("inside the fixed area of cma=16M@0x50000000") !=
          std::string::npos);
    CHECK(modem.outcome == NodeOutcome::absent); // the node is reserved; the cma= area is lost
    CHECK(modem.message.find("could not reserve the cma= area") != std::string::npos);
    CHECK(node(o, "tee@5e000000").log.empty());
    CHECK(o.unexplained.empty());
    REQUIRE(o.default_area);
    CHECK(o.default_area->kernel == "failed"); // the line is the default area's all the same
    // Without a fixed base no node can have caused it: it is the default area's alone.
    request.board = dts("cma-floating.dts", "console=ttyS0 cma=16M");
    auto floating = run_explain(request);
    REQUIRE(floating.errors.empty());
    CHECK(floating.unexplained.empty());
    CHECK(node(floating, "modem@50800000").log.empty());
    REQUIRE(floating.default_area);
    CHECK(floating.default_area->kernel == "failed");
    REQUIRE(floating.default_area->log.size() == 1);
    CHECK(floating.default_area->log[0].line_number == 2);
}

TEST_CASE("\"Not enough slots\" of the default CMA area is not the next node's") {
    // One CMA area slot (CONFIG_CMA_AREAS=1), taken by the dynamic pool. 32-bit arm and riscv
    // reserve the default area (dma_contiguous_reserve() in arm_memblock_init() and
    // setup_bootmem()) before the static nodes are set up (fdt_scan_reserved_mem_late() from
    // unflatten_device_tree(), 7.2.13), so its refusal comes right before the static pool's.
    // The lines are 7.2.13's: mm/cma.c (pr_fmt "cma: ") cma_init_reserved_mem() and the
    // cma_declare_contiguous_nid() wrapper, kernel/dma/contiguous.c rmem_cma_setup(),
    // drivers/of/of_reserved_mem.c (pr_fmt "OF: reserved mem: ").
    std::ifstream in(config_4k);
    std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = config.find("CONFIG_CMA_AREAS=19");
    REQUIRE(at != std::string::npos);
    config.replace(at, 19, "CONFIG_CMA_AREAS=1");
    ExplainRequest request;
    request.config.config_files = {write_log("one-slot.config", config)};
    request.board = write_log(
        "one-slot.dts", "/dts-v1/;\n/ { #address-cells = <2>; #size-cells = <2>;\n"
                        "chosen { bootargs = \"console=ttyS0 cma=16M\"; };\n"
                        "memory@40000000 { device_type = \"memory\"; reg = <0 0x40000000 0 "
                        "0x40000000>; };\n"
                        "reserved-memory { #address-cells = <2>; #size-cells = <2>; ranges;\n"
                        "dyn { compatible = \"shared-dma-pool\"; reusable; size = <0 0x400000>; "
                        "};\n"
                        "fixed@60000000 { compatible = \"shared-dma-pool\"; reusable; reg = <0 "
                        "0x60000000 0 0x400000>; }; }; };\n");
    request.log_path = write_log(
        "one-slot.log",
        "Linux version 7.2.13 (x) #1\n"
        "Reserved memory: created CMA memory pool at 0x000000007fc00000, size 4 MiB\n"
        "OF: reserved mem: initialized node dyn, compatible id shared-dma-pool\n"
        "OF: reserved mem: 0x000000007fc00000..0x000000007fffffff (4096 KiB) map reusable dyn\n"
        "cma: Not enough slots for CMA reserved regions!\n"
        "cma: Failed to reserve 16 MiB\n"
        "cma: Not enough slots for CMA reserved regions!\n"
        "Reserved memory: unable to setup CMA region\n"
        "OF: reserved mem: node fixed@60000000 compatible matching fail\n");
    auto o = run_explain(request);
    REQUIRE(o.errors.empty());
    const auto& fixed = node(o, "fixed@60000000");
    CHECK(fixed.outcome == NodeOutcome::failed);
    REQUIRE(fixed.log.size() == 3); // its own slot line, "unable to setup", "matching fail"
    CHECK(fixed.log[0].line_number == 7);
    CHECK(node(o, "dyn").outcome == NodeOutcome::created);
    REQUIRE(o.default_area);
    CHECK(o.default_area->kernel == "failed");
    REQUIRE(o.default_area->log.size() == 2);
    CHECK(o.default_area->log[0].line_number == 5);
    CHECK(o.default_area->log[1].line_number == 6);
    CHECK(o.unexplained.empty());
}
