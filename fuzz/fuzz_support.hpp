// Shared pieces of the libFuzzer targets: a per-process scratch directory on tmpfs that holds the
// "virtual files" one input is split into, and the kernel model the checks run with.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

#include "cmalign/kernel/model.hpp"

namespace cmalign::fuzz {

// One directory per fuzzing process (libFuzzer forks with -jobs/-workers).
inline const std::filesystem::path& scratch_dir() {
    static const std::filesystem::path dir = [] {
        std::filesystem::path base = std::filesystem::exists("/dev/shm")
                                         ? "/dev/shm"
                                         : std::filesystem::temp_directory_path();
        auto d = base / ("cmalign-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

// Splits an input into at most `max_parts` files at lines that read exactly "@@@" and writes them
// under the scratch directory with the given relative names, in order. The names left over are
// removed, so files of an earlier, longer input are not found by this one.
inline std::vector<std::string> write_named_parts(std::string_view input,
                                                  const std::vector<std::string>& names,
                                                  std::size_t max_parts = SIZE_MAX) {
    std::size_t parts = std::min(max_parts, names.size());
    std::vector<std::string> paths;
    std::size_t start = 0;
    for (std::size_t i = 0; i < parts; ++i) {
        std::size_t cut = input.find("\n@@@\n", start);
        bool last = cut == std::string_view::npos || i + 1 == parts;
        std::string_view part = input.substr(start, last ? std::string_view::npos : cut - start);
        auto path = scratch_dir() / names[i];
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary | std::ios::trunc)
            .write(part.data(), static_cast<long>(part.size()));
        paths.push_back(path.string());
        if (last) break;
        start = cut + 5;
    }
    for (std::size_t i = paths.size(); i < names.size(); ++i)
        std::filesystem::remove(scratch_dir() / names[i]);
    return paths;
}

// The DTS flavour: board.dts, a.dtsi, b.h, c.dtsi (the first may #include or /include/ the rest).
inline std::vector<std::string> write_parts(std::string_view input, std::size_t max_parts = 4) {
    return write_named_parts(input, {"board.dts", "a.dtsi", "b.h", "c.dtsi"}, max_parts);
}

// arm64, 6.12, 16K pages: CMA_MIN_ALIGNMENT_BYTES 32 MiB (kernel-facts §10).
inline kernel::Model arm64_16k_model() {
    kernel::Model m;
    m.version = *KernelVersion::parse("6.12.117");
    m.arch = kernel::Arch::arm64;
    m.page_size = 16384;
    m.page_shift = 14;
    m.max_page_order = 11;
    m.pageblock_order = 11;
    m.cma_min_alignment_bytes = std::uint64_t{16384} << 11;
    m.hugetlb = m.thp = m.cma = m.dma_cma = true;
    m.cma_areas = 20;
    return m;
}

} // namespace cmalign::fuzz
