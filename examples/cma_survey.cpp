// Survey a directory of compiled boards (.dtb): which declare a CMA pool, and which pools the
// kernel would reject for arm64 6.12 with 4K, 16K and 64K pages (defconfig: HugeTLB and THP on,
// CMA, DMA_CMA, NUMA so CONFIG_CMA_AREAS = 20). The models are written out by hand from
// kernel-facts.md §10 (values the compiler computed from the real headers), so this program does
// not depend on the Kconfig evaluator.
//
//   example_cma_survey DIR [--list]                 DIR: .dtb files (scripts/compile-dtbs.sh)
//   example_cma_survey --dts KERNEL_TREE [--list] [--only FILE]
//       the arm64 .dts boards of KERNEL_TREE through the built-in preprocessor and parser;
//       --only FILE restricts to the boards listed in FILE (paths relative to arch/arm64/boot/dts)
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cmalign/checks/checks.hpp"
#include "cmalign/dt/dtb.hpp"
#include "cmalign/dt/dts.hpp"
#include <fstream>
#include <set>

using namespace cmalign;

namespace {

kernel::Model arm64_612(std::uint64_t page_size, int page_shift, int max_order, int pageblock) {
    kernel::Model m;
    m.version = *KernelVersion::parse("6.12.117");
    m.arch = kernel::Arch::arm64;
    m.page_size = page_size;
    m.page_shift = page_shift;
    m.max_page_order = max_order;
    m.pageblock_order = pageblock;
    m.cma_min_alignment_bytes = page_size << pageblock;
    m.hugetlb = m.thp = m.cma = m.dma_cma = true;
    m.cma_areas = 20;
    return m;
}

struct BoardResult {
    std::string name;
    bool has_pool[3] = {false, false, false};
    bool lost_pool[3] = {false, false, false};
    bool parse_error = false;
    std::vector<std::string> lost_names[3];
};

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::fprintf(stderr, "usage: %s DIR [--list] | --dts KERNEL_TREE [--list] [--only FILE]\n",
                     argv[0]);
        return 2;
    }
    bool list = std::find(args.begin(), args.end(), "--list") != args.end();
    bool dts = args[0] == "--dts" && args.size() > 1;
    std::string root = dts ? args[1] + "/arch/arm64/boot/dts" : args[0];
    std::set<std::string> only;
    if (auto it = std::find(args.begin(), args.end(), "--only");
        it != args.end() && it + 1 != args.end()) {
        std::ifstream in(*(it + 1));
        for (std::string line; std::getline(in, line);)
            if (!line.empty()) only.insert(line);
    }
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
        if (!e.is_regular_file() || e.path().extension() != (dts ? ".dts" : ".dtb")) continue;
        auto rel = std::filesystem::relative(e.path(), root).replace_extension("").string();
        if (!only.empty() && !only.count(rel)) continue;
        files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    dt::FileCache cache; // shared .dtsi and headers are read once
    dt::PreprocessOptions preprocess;
    if (dts) preprocess.kernel_tree = args[1];

    const kernel::Model models[3] = {arm64_612(4096, 12, 10, 9), arm64_612(16384, 14, 11, 11),
                                     arm64_612(65536, 16, 13, 13)};
    const char* labels[3] = {"4K", "16K", "64K"};

    std::vector<BoardResult> results(files.size());
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i = next++; i < files.size(); i = next++) {
            BoardResult& br = results[i];
            br.name = std::filesystem::relative(files[i], root).replace_extension("").string();
            Diagnostics diags;
            auto tree = dts ? dt::load_dts(files[i], preprocess, cache, diags)
                            : dt::read_dtb(files[i], diags);
            if (!tree) {
                br.parse_error = true;
                continue;
            }
            for (int k = 0; k < 3; ++k) {
                auto result = checks::run(*tree, models[k], {});
                for (const auto& r : result.reservations.regions)
                    if (r.kind == reserved::Kind::cma) br.has_pool[k] = true;
                for (const auto& d : result.diagnostics) {
                    if (d.severity != Severity::error) continue;
                    if (d.check == "cma-size-alignment" || d.check == "cma-base-alignment") {
                        br.lost_pool[k] = true;
                        if (std::find(br.lost_names[k].begin(), br.lost_names[k].end(), d.node) ==
                            br.lost_names[k].end())
                            br.lost_names[k].push_back(d.node);
                    }
                }
            }
        }
    };
    std::vector<std::thread> threads;
    unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned t = 0; t < n; ++t)
        threads.emplace_back(worker);
    for (auto& t : threads)
        t.join();

    std::size_t parse_errors = 0;
    for (const auto& br : results)
        parse_errors += br.parse_error;
    std::printf("%zu %s, %zu unreadable\n", files.size(), dts ? "DTS boards" : "DTBs",
                parse_errors);
    for (int k = 0; k < 3; ++k) {
        std::size_t with_pool = 0, losing = 0;
        for (const auto& br : results) {
            with_pool += br.has_pool[k];
            losing += br.lost_pool[k];
        }
        std::printf(
            "arm64 6.12 %-3s pages (CMA alignment %llu KiB): %zu boards declare a CMA pool, "
            "%zu would lose one\n",
            labels[k], static_cast<unsigned long long>(*models[k].cma_min_alignment_bytes >> 10),
            with_pool, losing);
        if (list)
            for (const auto& br : results)
                if (br.lost_pool[k])
                    for (const auto& node : br.lost_names[k])
                        std::printf("  %s: %s %s\n", labels[k], br.name.c_str(), node.c_str());
    }
    return 0;
}
