// dts_cpp: the built-in DTS preprocessor as a command, for comparing it with gcc's cpp and timing
// it.
//
//   example_dts_cpp [-I DIR]... [-D NAME[=VALUE]]... [--kernel-tree DIR] FILE...
//       one FILE: print the preprocessed text (like cpp -P)
//   --out-dir DIR   write DIR/<n>.i for the n-th FILE (0-based) instead, for many files
//   --map           print "offset file:line:col verbatim" for each segment instead of the text
//                   (with --out-dir: also write it to DIR/<n>.map)
//   --time          print the total wall and CPU time spent in preprocess() over all FILEs to
//                   stderr (CPU time is what to compare on a loaded machine)
//   --files LIST    read more FILE names from LIST (one a line)
//   --fresh         a new FileCache for each FILE (a single-board run each), instead of one
//                   shared FileCache as a bulk `cmalign check` has
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cmalign/internal/dt/preprocess.hpp"

int main(int argc, char** argv) {
    using namespace cmalign;
    dt::PreprocessOptions options;
    std::vector<std::string> files;
    std::string out_dir;
    bool map = false;
    bool timing = false;
    bool fresh = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::cerr << a << " needs a value\n";
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "-I") {
            options.include_dirs.push_back(value());
        } else if (a.rfind("-I", 0) == 0) {
            options.include_dirs.push_back(a.substr(2));
        } else if (a == "-D" || a.rfind("-D", 0) == 0) {
            const std::string d = a == "-D" ? value() : a.substr(2);
            const auto eq = d.find('=');
            if (eq == std::string::npos)
                options.defines.emplace_back(d, std::nullopt);
            else
                options.defines.emplace_back(d.substr(0, eq), d.substr(eq + 1));
        } else if (a == "--kernel-tree") {
            options.kernel_tree = value();
        } else if (a == "--out-dir") {
            out_dir = value();
        } else if (a == "--map") {
            map = true;
        } else if (a == "--fresh") {
            fresh = true;
        } else if (a == "--time") {
            timing = true;
        } else if (a == "--files") {
            std::ifstream list(value());
            for (std::string line; std::getline(list, line);)
                if (!line.empty()) files.push_back(line);
        } else {
            files.push_back(a);
        }
    }
    dt::FileCache cache;
    int status = 0;
    std::chrono::steady_clock::duration spent{};
    double cpu_ms = 0;
    auto thread_cpu_ms = [] {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
    };
    for (std::size_t n = 0; n < files.size(); ++n) {
        Diagnostics diags;
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = thread_cpu_ms();
        dt::FileCache private_cache;
        auto result = dt::preprocess(files[n], options, fresh ? private_cache : cache, diags);
        cpu_ms += thread_cpu_ms() - c0;
        spent += std::chrono::steady_clock::now() - t0;
        for (const auto& d : diags.items())
            std::cerr << format_gcc(d) << '\n';
        if (!result) {
            status = 1;
            continue;
        }
        auto print_map = [&](std::ostream& out) {
            for (const auto& s : result->segments) {
                const auto where = result->locate(s.out_begin);
                out << s.out_begin << ' ' << where.file << ':' << where.line << ':' << where.column
                    << (s.verbatim ? " verbatim\n" : " expanded\n");
            }
        };
        if (!out_dir.empty()) {
            const std::string stem = out_dir + "/" + std::to_string(n);
            std::ofstream(stem + ".i", std::ios::binary) << result->text;
            if (map) {
                std::ofstream out(stem + ".map", std::ios::binary);
                print_map(out);
            }
        } else if (map) {
            print_map(std::cout);
        } else if (!timing) {
            std::cout << result->text;
        }
    }
    if (timing)
        std::cerr << "preprocess: " << files.size() << " files, "
                  << std::chrono::duration<double, std::milli>(spent).count() << " ms, cpu "
                  << cpu_ms << " ms\n";
    return status;
}
