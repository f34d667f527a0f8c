// The floor under a warm cached run: a process that does nothing but stat(2) every file a cached
// answer names (each can change the answer), shared among as many threads as cmalign's check of
// an entry uses (the cores plus one, at most four). bench/cache.sh times it in the same place in
// each round as the warm run, so the two see the same state of the machine's caches.
//
//   stat_floor LIST   (LIST: one path per line; exits 1 if any path is missing)
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: stat_floor LIST\n");
        return 2;
    }
    std::vector<std::string> paths;
    std::ifstream in(argv[1]);
    if (!in) {
        std::fprintf(stderr, "stat_floor: cannot read %s\n", argv[1]);
        return 2;
    }
    for (std::string line; std::getline(in, line);)
        paths.push_back(line);
    std::atomic<std::size_t> next{0};
    std::atomic<bool> missing{false};
    auto work = [&] {
        constexpr std::size_t batch = 32;
        struct stat st {};
        for (std::size_t from; (from = next.fetch_add(batch)) < paths.size();)
            for (std::size_t i = from; i < std::min(from + batch, paths.size()); ++i)
                if (::stat(paths[i].c_str(), &st) != 0) missing = true;
    };
    const unsigned cores = std::thread::hardware_concurrency();
    std::vector<std::thread> helpers;
    if (cores >= 2)
        for (unsigned i = 0; i < std::min(cores, 3u); ++i)
            helpers.emplace_back(work);
    work();
    for (auto& helper : helpers)
        helper.join();
    return missing ? 1 : 0;
}
