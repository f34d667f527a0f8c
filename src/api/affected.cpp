// check --affected-by: which boards a change reaches, from the preprocessor's and the DTS parser's
// record of the files each board read (a pull request that edits a shared .dtsi → exactly the
// boards to check).
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "cmalign/dt/dtb.hpp"
#include "cmalign/internal/core/disk_cache.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/run.hpp"

namespace cmalign {

namespace {

namespace fs = std::filesystem;

std::string canonical_path(const std::string& path) {
    std::error_code ec;
    auto p = fs::weakly_canonical(path, ec);
    return ec ? fs::absolute(path, ec).lexically_normal().string() : p.string();
}

// canonical_path() of many files in few directories (a tree's boards): each directory is
// resolved once, then the name appended, instead of a readlink() per component of every board
// (12,000 calls for the arm64 tree). A name that is itself a symbolic link is resolved whole.
class CanonicalPaths {
public:
    std::string of(const std::string& path) {
        const fs::path p(path);
        const auto name = p.filename();
        struct stat st {};
        if (name.empty() || name == "." || name == ".." || ::lstat(path.c_str(), &st) != 0 ||
            S_ISLNK(st.st_mode))
            return canonical_path(path);
        const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
        {
            std::lock_guard hold(lock_);
            if (auto it = dirs_.find(dir); it != dirs_.end()) return (it->second / name).string();
        }
        fs::path resolved = canonical_path(dir);
        std::lock_guard hold(lock_);
        return (dirs_.emplace(dir, std::move(resolved)).first->second / name).string();
    }

private:
    std::mutex lock_;
    std::unordered_map<std::string, fs::path> dirs_;
};

bool is_blob(const std::string& path) {
    if (dt::is_dtb_name(path)) return true;
    std::uint8_t magic[4] = {};
    const auto got = read_file_prefix(path, magic);
    return got && *got == sizeof magic && dt::has_fdt_magic(magic);
}

// The include graph of one board in the on-disk cache: every file its preprocessing, /include/
// and /incbin/ read, with its identity (core/disk_cache.hpp), keyed by the build, the board and
// the preprocessor's options. Read back only while every one of those files is unchanged; one
// entry per board and option set, rewritten in place, so the directory grows with the boards,
// not with the runs.
constexpr const char* graph_kind = "includes";
constexpr const char* graph_format = "cmalign-include-graph\t1";

// The part of a graph's key that the options decide, made once per pass (canonical paths cost
// a lookup per path component); graph_key() adds the board.
std::string graph_options_key(const TreeOptions& tree) {
    std::string key;
    for (const auto& d : tree.include_dirs)
        key += disk_cache::line({"I", canonical_path(d)});
    for (const auto& d : tree.defines)
        key += disk_cache::line({"D", d});
    if (tree.kernel_tree) key += disk_cache::line({"tree", canonical_path(*tree.kernel_tree)});
    for (const auto& row : limit_table())
        key += fmt::format("limit\t{}\t{}\n", row.name, *limit_value(tree.limits, row.name));
    return key;
}

std::string graph_key(const std::string& canonical_input, const std::string& options_key) {
    return fmt::format("build={}\ninput={}\n", source_stamp(), canonical_input) + options_key;
}

std::optional<std::vector<std::string>> cached_graph(const std::string& dir, const std::string& key,
                                                     disk_cache::StatMemo& memo) {
    const auto entry = disk_cache::entry_path(dir, graph_kind, key);
    auto text = disk_cache::read_entry(entry);
    std::vector<std::string> files;
    if (!text ||
        !disk_cache::read_lines(
            *text, graph_format, key, files, [](const auto&) { return false; }, &memo, &entry))
        return std::nullopt;
    return files;
}

void store_graph(const std::string& dir, const std::string& key,
                 const std::vector<std::string>& files) {
    std::string text = std::string(graph_format) + "\n" + disk_cache::line({"key", key});
    for (const auto& f : files) {
        auto s = disk_cache::stamp(f);
        if (!s) return;
        text += disk_cache::stamp_line(*s);
    }
    text += "end\n";
    disk_cache::write_entry(disk_cache::entry_path(dir, graph_kind, key), text);
}

// The last component, as fs::path::filename() gives it for these absolute, normal paths (a fifth
// of a warm --affected-by went to building fs::path objects for it).
std::string_view base_name(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

} // namespace

std::optional<std::vector<std::string>> detail::board_sources(const std::string& input,
                                                              const dt::PreprocessOptions& options,
                                                              dt::FileCache& cache) {
    if (is_blob(input)) return std::vector<std::string>{canonical_path(input)};
    Diagnostics diags;
    auto text = dt::preprocess(input, options, cache, diags);
    if (!text) return std::nullopt;
    std::vector<std::string> files;
    for (const auto& file : text->files)
        if (file) files.push_back(canonical_path(file->path));
    // dtc's /include/ and /incbin/ are read by the DTS parser, after the preprocessor: the parse
    // records them. A board that does not parse has unknown sources (it is checked, so its error
    // is reported).
    if (text->text.find("/include/") != std::string::npos ||
        text->text.find("/incbin/") != std::string::npos) {
        auto parsed = dt::parse(*text, dt::parse_options_for(options), cache, diags);
        if (!parsed) return std::nullopt;
        for (const auto& path : parsed->read_paths)
            files.push_back(canonical_path(path));
    }
    return files;
}

std::vector<std::string> inputs_affected_by(const std::vector<std::string>& inputs,
                                            const std::vector<std::string>& changed,
                                            const TreeOptions& tree, unsigned jobs,
                                            const std::vector<std::string>& config_files,
                                            const std::string& cache_dir) {
    dt::FileCache cache;
    return detail::inputs_affected_by(inputs, changed, tree, jobs, config_files, cache_dir, cache);
}

std::vector<std::string> detail::inputs_affected_by(const std::vector<std::string>& inputs,
                                                    const std::vector<std::string>& changed,
                                                    const TreeOptions& tree, unsigned jobs,
                                                    const std::vector<std::string>& config_files,
                                                    const std::string& cache_dir,
                                                    dt::FileCache& cache) {
    std::set<std::string> wanted;
    for (const auto& c : changed)
        wanted.insert(canonical_path(c));
    for (const auto& c : config_files)
        if (wanted.count(canonical_path(c))) return inputs; // the configuration changed
    // With a cache directory the include graphs of unchanged boards are read instead of
    // preprocessed. A changed file that no graph names but whose name one of them includes may
    // be a new file shadowing it earlier in the search path: that board is preprocessed again.
    std::set<std::string, std::less<>> wanted_names;
    for (const auto& w : wanted)
        wanted_names.insert(std::string(base_name(w)));
    auto pp = detail::preprocess_options(tree);
    disk_cache::StatMemo memo; // the boards' graphs name the same headers: one lookup each
    const std::string options_key = cache_dir.empty() ? std::string() : graph_options_key(tree);
    std::vector<char> keep(inputs.size(), 0);
    CanonicalPaths canonical;
    detail::for_each_input(inputs.size(), jobs, [&](std::size_t i) {
        const std::string input = canonical.of(inputs[i]);
        if (wanted.count(input)) {
            keep[i] = 1;
            return;
        }
        std::string key = cache_dir.empty() ? std::string() : graph_key(input, options_key);
        if (!cache_dir.empty()) {
            if (auto files = cached_graph(cache_dir, key, memo)) {
                bool named = false, same_name = false;
                for (const auto& f : *files) {
                    named = named || wanted.count(f) > 0;
                    same_name = same_name || wanted_names.count(base_name(f)) > 0;
                }
                if (named || !same_name) {
                    keep[i] = named;
                    return;
                }
            }
        }
        // A DTB records no includes. (A kept graph above names the board itself, unchanged
        // since it was preprocessed as source, so it is not opened for its magic first.)
        if (is_blob(inputs[i])) return;
        auto files = detail::board_sources(inputs[i], pp, cache);
        if (!files) {
            keep[i] = 1; // cannot tell: check it, so its error is reported
            return;
        }
        keep[i] = std::any_of(files->begin(), files->end(),
                              [&](const auto& f) { return wanted.count(f) > 0; });
        if (!cache_dir.empty()) store_graph(cache_dir, key, *files);
    });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (keep[i]) out.push_back(inputs[i]);
    return out;
}

} // namespace cmalign
