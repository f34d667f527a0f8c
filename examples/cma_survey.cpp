// Survey a directory of compiled boards (.dtb): which declare a CMA pool, and which pools the
// kernel would reject with its defconfig (HugeTLB and THP on where the arch has them, CMA,
// DMA_CMA) at each page size the arch offers. The models are written out by hand from values
// the compiler computed from the real headers (tests/data/oracle, case ids below), so this
// program does not depend on the Kconfig evaluator.
//
//   example_cma_survey DIR [--list] [--kernel K] [--arch A]      DIR: .dtb files
//   example_cma_survey --dts KERNEL_TREE [--list] [--only FILE] [--kernel K] [--arch A]
//       the .dts boards of KERNEL_TREE through the built-in preprocessor and parser;
//       --only FILE restricts to the boards listed in FILE (paths relative to arch/A/boot/dts)
//   K: 5.10, 6.1, 6.12 (default) or 7.2; A: arm64 (4K/16K/64K, default), arm (multi_v7, 4K),
//   riscv (defconfig, 4K)
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
#include "cmalign/internal/dt/dts.hpp"
#include <fstream>
#include <set>

using namespace cmalign;

namespace {

struct Variant {
    const char* label;
    int page_shift;
    int max_page_order;
    int pageblock_order;
    std::uint64_t alignment; // CMA_MIN_ALIGNMENT_BYTES (≤ v5.18: PAGE_SIZE << max(MPO, pb))
};

// Oracle cases <K>-arm64-{4k,16k,64k}-default, <K>-arm-multi_v7-default, <K>-riscv-default.
std::vector<Variant> variants(const std::string& kernel, const std::string& arch) {
    const bool v510 = kernel == "5.10";
    if (arch == "arm") return {{"4K", 12, 11, 11, 8u << 20}}; // SOC_AM33XX: max order 11
    if (arch == "riscv") // 5.10 defconfig: no HugeTLB, pageblock_order = MAX_ORDER - 1
        return {v510 ? Variant{"4K", 12, 10, 10, 4u << 20} : Variant{"4K", 12, 10, 9, 2u << 20}};
    return {{"4K", 12, 10, 9, v510 ? 4u << 20 : 2u << 20},
            {"16K", 14, 11, 11, 32u << 20},
            {"64K", 16, 13, 13, 512u << 20}};
}

kernel::Model model_of(const std::string& kernel, const std::string& arch, const Variant& v) {
    kernel::Model m;
    m.version = *KernelVersion::parse(kernel);
    m.arch = *kernel::parse_arch(arch);
    m.page_shift = v.page_shift;
    m.page_size = std::uint64_t{1} << v.page_shift;
    m.max_page_order = v.max_page_order;
    m.pageblock_order = v.pageblock_order;
    m.cma_min_alignment_bytes = v.alignment;
    m.hugetlb = m.thp = arch != "arm";
    m.cma = m.dma_cma = true;
    m.cma_areas = arch == "arm64" ? 20 : 8;
    m.phys_addr_64bit = arch != "arm";
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
        std::fprintf(stderr,
                     "usage: %s DIR [--list] | --dts KERNEL_TREE [--list] [--only FILE] "
                     "[--kernel 5.10|6.1|6.12|7.2] [--arch arm64|arm|riscv]\n",
                     argv[0]);
        return 2;
    }
    bool list = std::find(args.begin(), args.end(), "--list") != args.end();
    bool dts = args[0] == "--dts" && args.size() > 1;
    auto option = [&](const char* name, const char* fallback) {
        auto it = std::find(args.begin(), args.end(), name);
        return it != args.end() && it + 1 != args.end() ? *(it + 1) : std::string(fallback);
    };
    const std::string kernel = option("--kernel", "6.12");
    const std::string arch = option("--arch", "arm64");
    if (!KernelVersion::parse(kernel) || !kernel::parse_arch(arch) ||
        (arch != "arm64" && arch != "arm" && arch != "riscv")) {
        std::fprintf(stderr, "--kernel takes 5.10, 6.1, 6.12 or 7.2; --arch arm64, arm or riscv\n");
        return 2;
    }
    std::string root = dts ? args[1] + "/arch/" + arch + "/boot/dts" : args[0];
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

    const auto chosen = variants(kernel, arch);
    const int nvariants = static_cast<int>(chosen.size());
    std::vector<kernel::Model> models;
    for (const auto& v : chosen)
        models.push_back(model_of(kernel, arch, v));

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
            for (int k = 0; k < nvariants; ++k) {
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
    for (int k = 0; k < nvariants; ++k) {
        std::size_t with_pool = 0, losing = 0;
        for (const auto& br : results) {
            with_pool += br.has_pool[k];
            losing += br.lost_pool[k];
        }
        std::printf("%s %s %-3s pages (CMA alignment %llu KiB): %zu boards declare a CMA pool, "
                    "%zu would lose one\n",
                    arch.c_str(), kernel.c_str(), chosen[k].label,
                    static_cast<unsigned long long>(*models[k].cma_min_alignment_bytes >> 10),
                    with_pool, losing);
        if (list)
            for (const auto& br : results)
                if (br.lost_pool[k])
                    for (const auto& node : br.lost_names[k])
                        std::printf("  %s: %s %s\n", chosen[k].label, br.name.c_str(),
                                    node.c_str());
    }
    return 0;
}
