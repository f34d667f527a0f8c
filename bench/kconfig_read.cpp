// Reads every configuration given on the command line (".xz" through `xz -dc`) many times and
// prints the best and mean time of one read_fragment() call per file, plus totals.
// Build and run: bench/kconfig-read.sh [BUILD_DIR]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cmalign/kconfig/config.hpp"

namespace {

std::string slurp(const std::string& path) {
    bool xz = path.size() > 3 && path.compare(path.size() - 3, 3, ".xz") == 0;
    std::unique_ptr<FILE, int (*)(FILE*)> in(xz ? ::popen(("xz -dc '" + path + "'").c_str(), "r")
                                                : std::fopen(path.c_str(), "rb"),
                                             xz ? &::pclose : &std::fclose);
    std::string text;
    if (!in) return text;
    char buffer[1 << 16];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, in.get())) > 0)
        text.append(buffer, got);
    return text;
}

} // namespace

int main(int argc, char** argv) {
    const int repetitions = 20;
    double worst_best_us = 0, sum_best_us = 0;
    std::size_t files = 0, lines = 0, errors = 0;
    for (int i = 1; i < argc; ++i) {
        std::string text = slurp(argv[i]);
        double best = 1e18, total = 0;
        for (int r = 0; r < repetitions; ++r) {
            cmalign::kconfig::Config config;
            cmalign::Diagnostics diags;
            auto start = std::chrono::steady_clock::now();
            cmalign::kconfig::read_fragment(text, argv[i], config, diags);
            double us =
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                    .count();
            best = std::min(best, us);
            total += us;
            if (r == 0) errors += diags.count(cmalign::Severity::error);
        }
        ++files;
        lines += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
        sum_best_us += best;
        if (best > worst_best_us) worst_best_us = best;
        if (text.size() > 100000)
            std::printf("%8.0f us best %8.0f us mean %7zu bytes  %s\n", best, total / repetitions,
                        text.size(), argv[i]);
    }
    std::printf("%zu files, %zu lines, %zu errors; slowest file %.0f us, all files %.1f ms "
                "(best of %d)\n",
                files, lines, errors, worst_best_us, sum_best_us / 1000, repetitions);
    return errors == 0 ? 0 : 1;
}
