// explain and check agree node by node on every board of the boot-truth suite (scripts/boot-truth:
// the generated layouts its runs booted, written without booting by --write-layouts), for the
// kernels it boots: explain lists every finding check gives a node, on the node itself or on its
// parent /reserved-memory, lists check's other findings apart, and never says "check finds nothing
// wrong" about a node check reports.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <unistd.h>

#include "cmalign/explain.hpp"
#include "cmalign/run.hpp"

using namespace cmalign;
namespace fs = std::filesystem;

namespace {

struct TruthKernel {
    const char* name; // scripts/kernel-images name
    const char* version;
    const char* arch;
    const char* config;   // examples/configs/…, or "" (the arch's defaults)
    const char* set = ""; // one --set
};

// The nine kernels of scripts/boot-truth's default run; their Debian configs are not in the
// repository, so the 4K and 16K example configurations and the arches' defaults stand in for them.
const std::vector<TruthKernel> truth_kernels = {
    {"5.10-arm64", "5.10", "arm64", "arm64-4k.config"},
    {"6.1-arm64", "6.1", "arm64", "arm64-4k.config"},
    {"6.12-arm64", "6.12", "arm64", "arm64-4k.config"},
    {"6.12-arm64-16k", "6.12", "arm64", "arm64-16k.config"},
    {"7.2-arm64", "7.2", "arm64", "arm64-4k.config"},
    {"7.2-arm64-16k", "7.2", "arm64", "arm64-16k.config"},
    {"7.2-armmp", "7.2", "arm", ""},
    {"7.2-armmp-lpae", "7.2", "arm", "", "CONFIG_ARM_LPAE=y"},
    {"7.2-riscv64", "7.2", "riscv", ""},
};

bool same(const Diagnostic& a, const Diagnostic& b) {
    return a.check == b.check && a.message == b.message && a.where == b.where &&
           a.severity == b.severity && a.node == b.node;
}

bool listed(const std::vector<Diagnostic>& list, const Diagnostic& d) {
    return std::any_of(list.begin(), list.end(), [&](const auto& x) { return same(x, d); });
}

bool is_ancestor(const std::string& parent, const std::string& path) {
    return parent.size() > 1 && path.starts_with(parent + "/");
}

std::string write_text(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
}

struct Tally {
    std::size_t runs = 0, nodes = 0, nodes_with_findings = 0, parent_findings = 0,
                board_findings = 0;
};

// One board with one kernel: check, then explain on a log of that kernel that says nothing about
// the board, and on one that shows every node lost (the words for a lost pool differ).
void agree(const std::string& board, const TruthKernel& k, const fs::path& dir, bool lost_log,
           Tally& tally) {
    ConfigOptions config;
    config.arch = k.arch;
    config.kernel_version = k.version;
    if (*k.set) config.sets = {k.set};
    if (*k.config)
        config.config_files = {CMALIGN_SOURCE_DIR "/examples/configs/" + std::string(k.config)};
    CheckRequest check;
    check.inputs = {board};
    check.config = config;
    auto checked = run_check(check);
    REQUIRE(checked.results.size() == 1);
    const auto& result = checked.results.front();
    bool check_error = false;
    for (const auto& d : result.diagnostics)
        check_error = check_error || d.severity == Severity::error;

    std::vector<std::string> logs = {"Linux version " + std::string(k.version) + " (x) #1\n"};
    if (lost_log) {
        std::string lost = logs.front();
        for (const auto& r : result.reservations.regions)
            lost += "Reserved memory: incorrect alignment of CMA region\nOF: reserved mem: node " +
                    r.name + " compatible matching fail\n";
        logs.push_back(lost);
    }
    for (std::size_t l = 0; l < logs.size(); ++l) {
        CAPTURE(l);
        ExplainRequest request;
        request.board = board;
        request.config = config;
        request.config.kernel_version.reset(); // from the log, as a user runs it
        request.log_path = write_text(dir / ("log" + std::to_string(l)), logs[l]);
        auto explained = run_explain(request);
        REQUIRE(explained.errors.empty());
        ++tally.runs;
        REQUIRE(explained.nodes.size() == result.reservations.regions.size());
        std::vector<char> seen(result.diagnostics.size(), 0);
        for (std::size_t i = 0; i < explained.nodes.size(); ++i) {
            const auto& n = explained.nodes[i];
            CAPTURE(n.node);
            CHECK(n.node == result.reservations.regions[i].path);
            ++tally.nodes;
            // Every finding check puts on the node or on its parent is explain's for the node.
            for (std::size_t j = 0; j < result.diagnostics.size(); ++j) {
                const auto& d = result.diagnostics[j];
                if (listed(n.findings, d)) seen[j] = 1;
                if (d.node == n.node || is_ancestor(d.node, n.node)) {
                    CAPTURE(d.message);
                    CHECK(listed(n.findings, d));
                    if (is_ancestor(d.node, n.node)) ++tally.parent_findings;
                }
            }
            for (const auto& f : n.findings)
                CHECK(listed(result.diagnostics, f)); // and nothing check does not say
            if (!n.findings.empty()) {
                ++tally.nodes_with_findings;
                CAPTURE(n.message);
                CHECK(n.message.find("check finds nothing wrong") == std::string::npos);
                CHECK(n.message.find("check agrees") == std::string::npos);
                REQUIRE(n.finding);
                bool error = std::any_of(n.findings.begin(), n.findings.end(), [](const auto& f) {
                    return f.severity == Severity::error;
                });
                CHECK((n.finding->severity == Severity::error) == error);
            }
            if (l == 1) CHECK(n.outcome == NodeOutcome::rejected);
        }
        // The rest of check's findings are the board's, and none of them is about a node.
        for (const auto& d : explained.board_findings) {
            CHECK(listed(result.diagnostics, d));
            for (const auto& r : result.reservations.regions)
                CHECK_FALSE((d.node == r.path || is_ancestor(d.node, r.path)));
        }
        tally.board_findings += explained.board_findings.size();
        for (std::size_t j = 0; j < result.diagnostics.size(); ++j) {
            CAPTURE(result.diagnostics[j].message);
            CHECK((seen[j] || listed(explained.board_findings, result.diagnostics[j])));
        }
        // A log that shows no pool lost: explain fails exactly when check does.
        if (l == 0) CHECK((explained.exit_code() == ExitCode::findings) == check_error);
    }
}

} // namespace

TEST_CASE("slow: explain and check agree on every node of every boot-truth board") {
    const auto dir = fs::temp_directory_path() / ("cmalign-agreement-" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string layouts = (dir / "layouts").string();
    // The 300 layouts (seed 19) every kernel of docs/boot-check.md booted.
    REQUIRE(std::system(("/usr/bin/python3 " CMALIGN_SOURCE_DIR "/scripts/boot-truth "
                         "--write-layouts " +
                         layouts + " --layouts 300 --seed 19")
                            .c_str()) == 0);
    std::vector<std::string> boards;
    for (const auto& e : fs::directory_iterator(layouts))
        if (e.path().extension() == ".dts") boards.push_back(e.path().string());
    std::sort(boards.begin(), boards.end());
    REQUIRE(boards.size() == 300);

    Tally tally;
    for (std::size_t b = 0; b < boards.size(); ++b) {
        CAPTURE(boards[b]);
        for (const auto& k : truth_kernels) {
            CAPTURE(k.name);
            // Every tenth board also with a log that shows every node lost (explain then asks a
            // sweep over the page sizes for the pools check accepts: slower).
            agree(boards[b], k, dir, b % 10 == 0, tally);
        }
        // The same board with its /reserved-memory refused (no `ranges`): check reports
        // reserved-memory-format on /reserved-memory and nothing on the nodes.
        if (b % 10 == 0) {
            std::ifstream in(boards[b]);
            std::string text((std::istreambuf_iterator<char>(in)), {});
            auto broken = std::regex_replace(text, std::regex("\\branges;"), "");
            REQUIRE(broken != text);
            auto path = write_text(dir / "broken.dts", broken);
            agree(path, truth_kernels[2], dir, false, tally);
        }
    }
    MESSAGE("explain runs " << tally.runs << ", nodes " << tally.nodes << " (with findings "
                            << tally.nodes_with_findings << "), parent findings "
                            << tally.parent_findings << ", board findings "
                            << tally.board_findings);
    CHECK(tally.parent_findings > 0);
    CHECK(tally.board_findings > 0);
    fs::remove_all(dir);
}
