// derive() against answers it did not produce: the calc cases taken from the upstream
// CONFIG_PAGE_BLOCK_ORDER commit (tests/data/calc-cases.json) and the kernel-header oracle
// (values the compiler computed from configured kernel trees: tests/data/oracle). The answers
// are read at test time, never copied here.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cmalign/internal/kernel/report.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"

using namespace cmalign;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::optional<std::string> xz_decompress(const fs::path& p) {
    std::string cmd = "xz -dc '" + p.string() + "'";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return std::nullopt;
    std::string out;
    char buf[65536];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0)
        out.append(buf, n);
    int rc = pclose(pipe);
    if (rc != 0) return std::nullopt;
    return out;
}

struct OracleResult {
    int cases = 0;
    int matched = 0;
    std::vector<std::string> out_of_scope; // arches cmalign does not model (s390, sparc64, sh)
};

// One oracle case: read its .config as `cmalign calc -c` would, derive, compare with the truth.
void check_oracle_case(const json& c, const fs::path& dir, OracleResult& result) {
    const std::string id = c.at("id").get<std::string>();
    if (!kernel::parse_arch(c.at("arch").get<std::string>())) {
        result.out_of_scope.push_back(id);
        return;
    }
    fs::path config_path = dir / "configs" / (id + ".config.xz");
    kconfig::Config cfg;
    Diagnostics diags;
    if (fs::exists(config_path)) {
        auto text = xz_decompress(config_path);
        REQUIRE_MESSAGE(text.has_value(), "cannot decompress " << config_path);
        CHECK_MESSAGE(kconfig::read_fragment(*text, id + ".config", cfg, diags), "read " << id);
    } else {
        // No .config shipped: the selected symbols of the case are what we have.
        for (const auto& [name, value] : c.at("config_symbols").items()) {
            if (value.is_null()) continue;
            cfg.set(kconfig::Entry{name.substr(7), value.get<std::string>(), false,
                                   Location{id, 0, 0}});
        }
        cfg.header_arch = c.at("arch").get<std::string>();
        cfg.header_version = c.at("kernel").get<std::string>();
    }
    kernel::Options options; // everything from the config header, as `calc -c` does
    auto model = kernel::derive(cfg, options, diags);
    ++result.cases;
    CHECK_MESSAGE(model.has_value(), id);
    if (!model) return;
    const json& truth = c.at("truth");
    bool ok = true;
    auto expect = [&](const std::string& what, bool good) {
        CHECK_MESSAGE(good, id << ": " << what);
        ok = ok && good;
    };
    expect("PAGE_SIZE", model->page_size == truth.at("PAGE_SIZE").get<std::uint64_t>());
    expect("MAX_PAGE_ORDER", model->max_page_order == truth.at("MAX_PAGE_ORDER").get<int>());
    const json& pb = truth.at("pageblock_order");
    if (pb.is_string()) { // "runtime": not a compile-time constant
        expect("pageblock_order (runtime)", !model->pageblock_order.has_value());
        expect("range", model->pageblock_order_range.has_value());
    } else {
        expect("pageblock_order",
               model->pageblock_order && *model->pageblock_order == pb.get<int>());
    }
    if (truth.contains("CMA_MIN_ALIGNMENT_BYTES")) {
        const json& a = truth.at("CMA_MIN_ALIGNMENT_BYTES");
        const std::string from = truth.value("CMA_MIN_ALIGNMENT_FROM", "");
        if (a.is_string() && from.find("max(MAX_ORDER - 1, pageblock_order)") != std::string::npos)
            // Before 5.19: the compiler cannot fold max() over a pageblock_order set at boot, but
            // that order never exceeds MAX_ORDER - 1 (set_pageblock_order()), so the value is
            // PAGE_SIZE << (MAX_ORDER - 1) whatever the boot decides, and cmalign says so.
            expect("CMA_MIN_ALIGNMENT_BYTES (max over a runtime pageblock_order)",
                   model->cma_min_alignment_bytes && model->pageblock_order_range &&
                       model->pageblock_order_range->second <= model->max_page_order &&
                       *model->cma_min_alignment_bytes == model->page_size
                                                              << model->max_page_order);
        else if (a.is_string())
            expect("CMA_MIN_ALIGNMENT_BYTES (runtime)", !model->cma_min_alignment_bytes);
        else
            expect("CMA_MIN_ALIGNMENT_BYTES",
                   model->cma_min_alignment_bytes &&
                       *model->cma_min_alignment_bytes == a.get<std::uint64_t>());
    }
    // The intermediate orders, where the kernel defines them as constants.
    auto optional_truth = [&](const char* key, const std::optional<int>& ours) {
        if (!truth.contains(key) || !truth.at(key).is_number()) return;
        expect(key, ours && *ours == truth.at(key).get<int>());
    };
    optional_truth("HUGETLB_PAGE_ORDER", model->hugetlb_page_order);
    optional_truth("HPAGE_PMD_ORDER", model->hpage_pmd_order);
    optional_truth("SECTION_SIZE_BITS", model->section_size_bits);
    // The default CMA area's size as the configuration selects it: the case's own record of
    // CONFIG_CMA_SIZE_MBYTES, and none without CMA and DMA_CMA.
    const json& symbols = c.at("config_symbols");
    auto symbol = [&](const char* name) -> std::string {
        return symbols.contains(name) && symbols.at(name).is_string()
                   ? symbols.at(name).get<std::string>()
                   : std::string{};
    };
    if (symbol("CONFIG_CMA") == "y" && symbol("CONFIG_DMA_CMA") == "y") {
        expect("default CMA area", model->default_cma.has_value());
        if (model->default_cma && !symbol("CONFIG_CMA_SIZE_MBYTES").empty())
            expect("CONFIG_CMA_SIZE_MBYTES",
                   model->default_cma->mbytes == std::stoull(symbol("CONFIG_CMA_SIZE_MBYTES")));
    } else if (symbol("CONFIG_CMA") == "n") {
        expect("no default CMA area without CMA", !model->default_cma.has_value());
    }
    // A kernel-generated .config is consistent by construction: no warning may come out of it
    // (in particular not for the ARCH_FORCE_MAX_ORDER default that arm64 .configs always carry).
    if (fs::exists(config_path)) {
        // Range findings are legitimate for deliberately absurd values (ARCH_FORCE_MAX_ORDER=99
        // on arm, which has no range).
        for (const auto& d : model->diagnostics) {
            bool fine = d.severity == Severity::note || d.check == "kernel-config-range";
            CHECK_MESSAGE(fine, id << ": " << format_gcc(d));
            ok = ok && fine;
        }
    }
    if (ok) ++result.matched;
}

OracleResult run_oracle(const fs::path& dir) {
    OracleResult result;
    std::ifstream in(dir / "cases.jsonl");
    std::string line;
    while (std::getline(in, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        json c = json::parse(line);
        CAPTURE(line.substr(0, 60));
        check_oracle_case(c, dir, result);
    }
    return result;
}

} // namespace

TEST_CASE("calc cases of the upstream CONFIG_PAGE_BLOCK_ORDER commit") {
    fs::path path = fs::path(CMALIGN_TEST_DATA) / "calc-cases.json";
    // In the repository: never skipped.
    REQUIRE(fs::exists(path));
    json doc = json::parse(read_file(path));
    int n = 0;
    for (const auto& c : doc.at("cases")) {
        const std::string name = c.at("name").get<std::string>();
        CAPTURE(name);
        kconfig::Config cfg;
        Diagnostics diags;
        for (const auto& [symbol, value] : c.at("set").items())
            REQUIRE(kconfig::apply_set(symbol + "=" + value.get<std::string>(), cfg, diags));
        kernel::Options options;
        options.arch = kernel::parse_arch(c.at("arch").get<std::string>());
        options.version = KernelVersion::parse(c.at("kernel_version").get<std::string>());
        REQUIRE(options.arch);
        REQUIRE(options.version);
        auto model = kernel::derive(cfg, options, diags);
        REQUIRE(model);
        const json& want = c.at("want");
        if (want.contains("page_size"))
            CHECK(model->page_size == want["page_size"].get<std::uint64_t>());
        if (want.contains("max_page_order"))
            CHECK(model->max_page_order == want["max_page_order"].get<int>());
        if (want.contains("pageblock_order")) {
            REQUIRE(model->pageblock_order);
            CHECK(*model->pageblock_order == want["pageblock_order"].get<int>());
        }
        if (want.contains("cma_min_alignment_bytes")) {
            REQUIRE(model->cma_min_alignment_bytes);
            CHECK(*model->cma_min_alignment_bytes ==
                  want["cma_min_alignment_bytes"].get<std::uint64_t>());
        }
        // The JSON rendering carries the same numbers.
        json j = kernel::to_json(*model);
        CHECK(j["cma_min_alignment_bytes"] == json(*model->cma_min_alignment_bytes));
        ++n;
    }
    CHECK(n >= 6);
}

TEST_CASE("kernel-header oracle (5.10, 6.1, 6.12 and 7.2 trees)") {
    fs::path dir = fs::path(CMALIGN_TEST_DATA) / "oracle";
    // In the repository: never skipped.
    REQUIRE(fs::exists(dir / "cases.jsonl"));
    auto r = run_oracle(dir);
    MESSAGE("project oracle: " << r.matched << "/" << r.cases << " cases match; "
                               << r.out_of_scope.size() << " cases of arches not modelled");
    CHECK(r.cases > 0);
    CHECK(r.matched == r.cases);
}
