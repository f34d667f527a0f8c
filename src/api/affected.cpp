// check --affected-by: which boards a change reaches, from the preprocessor's record of the files
// each board read (a pull request that edits a shared .dtsi → exactly the boards to check).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "cmalign/dt/dtb.hpp"
#include "cmalign/run.hpp"
#include "cmalign/run_inputs.hpp"

namespace cmalign {

namespace {

namespace fs = std::filesystem;

std::string canonical_path(const std::string& path) {
    std::error_code ec;
    auto p = fs::weakly_canonical(path, ec);
    return ec ? fs::absolute(path, ec).lexically_normal().string() : p.string();
}

bool is_blob(const std::string& path) {
    if (dt::is_dtb_name(path)) return true;
    std::uint8_t magic[4] = {};
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(magic), sizeof magic);
    return in.gcount() == sizeof magic && dt::has_fdt_magic(magic);
}

} // namespace

std::vector<std::string> inputs_affected_by(const std::vector<std::string>& inputs,
                                            const std::vector<std::string>& changed,
                                            const TreeOptions& tree, unsigned jobs,
                                            const std::vector<std::string>& config_files) {
    std::set<std::string> wanted;
    for (const auto& c : changed)
        wanted.insert(canonical_path(c));
    for (const auto& c : config_files)
        if (wanted.count(canonical_path(c))) return inputs; // the configuration changed
    auto pp = preprocess_options(tree);
    dt::FileCache cache;
    std::vector<char> keep(inputs.size(), 0);
    for_each_input(inputs.size(), jobs, [&](std::size_t i) {
        if (wanted.count(canonical_path(inputs[i]))) {
            keep[i] = 1;
            return;
        }
        if (is_blob(inputs[i])) return; // a DTB records no includes
        Diagnostics diags;
        auto text = dt::preprocess(inputs[i], pp, cache, diags);
        if (!text) {
            keep[i] = 1; // cannot tell: check it, so its error is reported
            return;
        }
        keep[i] = std::any_of(text->files.begin(), text->files.end(), [&](const auto& file) {
            return file && wanted.count(canonical_path(file->path)) > 0;
        });
    });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (keep[i]) out.push_back(inputs[i]);
    return out;
}

} // namespace cmalign
