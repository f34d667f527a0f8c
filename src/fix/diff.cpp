// Unified diffs of the planned changes, as `cmalign fix --diff` prints them.
#include <filesystem>

#include <fmt/format.h>

#include "cmalign/internal/fix/detail.hpp"

namespace cmalign::fix {

namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        auto nl = text.find('\n', start);
        if (nl == std::string_view::npos) {
            lines.push_back(text.substr(start));
            break;
        }
        lines.push_back(text.substr(start, nl + 1 - start));
        start = nl + 1;
    }
    return lines;
}

std::string diff_path(const std::string& file, const std::string& base_dir) {
    namespace fs = std::filesystem;
    fs::path p(file);
    if (!base_dir.empty()) {
        std::error_code ec;
        auto abs = fs::absolute(p, ec);
        auto base = fs::absolute(base_dir, ec);
        auto rel = abs.lexically_normal().lexically_relative(base.lexically_normal());
        if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
    }
    auto s = p.lexically_normal().generic_string();
    while (s.starts_with("/"))
        s.erase(0, 1);
    while (s.starts_with("./"))
        s.erase(0, 2);
    return s;
}

void put_line(std::string& out, char mark, std::string_view line) {
    out += mark;
    out += line;
    if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

} // namespace

std::string unified_diff(const FileChange& change, const std::string& base_dir) {
    if (change.old_content == change.new_content) return {};
    std::string path = diff_path(change.file, base_dir);
    if (change.binary) return fmt::format("Binary files a/{} and b/{} differ\n", path, path);
    auto a = split_lines(change.old_content);
    auto b = split_lines(change.new_content);
    std::string out = fmt::format("--- a/{}\n+++ b/{}\n", path, path);
    constexpr std::size_t context = 3;
    if (a.size() != b.size()) {
        // Edits never add or remove line breaks; should one ever do, one whole-file hunk is
        // still a correct diff.
        out += fmt::format("@@ -{},{} +{},{} @@\n", a.empty() ? 0 : 1, a.size(), b.empty() ? 0 : 1,
                           b.size());
        for (auto l : a)
            put_line(out, '-', l);
        for (auto l : b)
            put_line(out, '+', l);
        return out;
    }
    std::vector<std::size_t> changed;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) changed.push_back(i);
    std::size_t k = 0;
    while (k < changed.size()) {
        std::size_t first = changed[k] >= context ? changed[k] - context : 0;
        std::size_t last = changed[k]; // last changed line of the hunk
        std::size_t j = k + 1;
        while (j < changed.size() && changed[j] <= last + 2 * context)
            last = changed[j++];
        std::size_t end = std::min(a.size(), last + context + 1);
        std::size_t count = end - first;
        auto range = [&](std::size_t start, std::size_t n) {
            return n == 1 ? fmt::format("{}", start + 1) : fmt::format("{},{}", start + 1, n);
        };
        out += fmt::format("@@ -{} +{} @@\n", range(first, count), range(first, count));
        // Within a hunk, each changed line is shown as removed then added, context in between.
        for (std::size_t i = first; i < end;) {
            if (a[i] == b[i]) {
                put_line(out, ' ', a[i]);
                ++i;
                continue;
            }
            std::size_t run = i;
            while (run < end && a[run] != b[run])
                ++run;
            for (std::size_t x = i; x < run; ++x)
                put_line(out, '-', a[x]);
            for (std::size_t x = i; x < run; ++x)
                put_line(out, '+', b[x]);
            i = run;
        }
        k = j;
    }
    return out;
}

} // namespace cmalign::fix
