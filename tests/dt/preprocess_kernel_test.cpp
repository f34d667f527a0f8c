// The built-in preprocessor against gcc's cpp on real kernel boards (a sample; the whole tree
// is tests/differential/compare-preprocessor.py). Skips when the kernel sources or cpp are absent.
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cmalign/internal/dt/preprocess.hpp"

namespace fs = std::filesystem;
using namespace cmalign;

namespace {

// Whitespace-insensitive tokens: strings, character literals, words/numbers, other characters.
std::vector<std::string> tokens_of(const std::string& text) {
    std::vector<std::string> out;
    auto word = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    };
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        std::size_t j = i + 1;
        if (std::isspace(static_cast<unsigned char>(c))) {
            ++i;
            continue;
        }
        if (c == '"') {
            while (j < text.size() && text[j] != c && text[j] != '\n')
                j += text[j] == '\\' ? 2 : 1;
            j = std::min(j + 1, text.size());
        } else if (word(c)) {
            while (j < text.size() && word(text[j]))
                ++j;
        }
        out.push_back(text.substr(i, j - i));
        i = j;
    }
    return out;
}

std::optional<std::string> run_cpp(const std::string& tree, const std::string& board) {
    const std::string cmd = "cpp -nostdinc -undef -D__DTS__ -x assembler-with-cpp -P -I '" + tree +
                            "/scripts/dtc/include-prefixes' '" + board + "' 2>/dev/null";
    std::FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return std::nullopt;
    std::string out;
    char buffer[65536];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, p)) > 0;)
        out.append(buffer, n);
    if (::pclose(p) != 0) return std::nullopt;
    return out;
}

} // namespace

TEST_CASE("real boards: same tokens as cpp -x assembler-with-cpp" *
          CMALIGN_REAL_MATERIAL(std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12")) {
    const std::string tree = std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12";
    if (!cmalign::test::have_material(tree + "/arch/arm64/boot/dts") ||
        !cmalign::test::have_program("cpp"))
        return;
    std::vector<std::string> sample;
    for (const char* arch : {"arm64", "arm", "riscv"}) {
        std::vector<std::string> boards;
        for (const auto& e : fs::recursive_directory_iterator(tree + "/arch/" + arch + "/boot/dts"))
            if (e.path().extension() == ".dts") boards.push_back(e.path().string());
        std::sort(boards.begin(), boards.end());
        const std::size_t want = std::string(arch) == "riscv" ? 4 : 8;
        for (std::size_t i = 0; i < want && !boards.empty(); ++i)
            sample.push_back(boards[i * boards.size() / want]);
    }
    REQUIRE(sample.size() >= 10);
    dt::PreprocessOptions options;
    options.kernel_tree = tree;
    dt::FileCache cache; // shared, as in a bulk run
    for (const auto& board : sample) {
        CAPTURE(board);
        auto expected = run_cpp(tree, board);
        REQUIRE(expected);
        Diagnostics diags;
        auto got = dt::preprocess(board, options, cache, diags);
        REQUIRE_MESSAGE(got, (diags.items().empty() ? "" : format_gcc(diags.items().front())));
        const auto a = tokens_of(*expected);
        const auto b = tokens_of(got->text);
        std::size_t i = 0;
        while (i < a.size() && i < b.size() && a[i] == b[i])
            ++i;
        if (i < a.size() || i < b.size())
            FAIL_CHECK("first difference at token "
                       << i << ": cpp '" << (i < a.size() ? a[i] : "<end>") << "', ours '"
                       << (i < b.size() ? b[i] : "<end>") << "'");
        // The map holds for real material too: verbatim pieces are the original bytes.
        for (std::size_t k = 0; k < got->segments.size(); ++k) {
            const auto& seg = got->segments[k];
            const std::size_t size = got->segment_end(k) - seg.out_begin;
            if (seg.verbatim)
                CHECK(got->text.compare(seg.out_begin, size, seg.file->text, seg.src_begin, size) ==
                      0);
        }
    }
}
