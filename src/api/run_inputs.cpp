// How the commands read their inputs (run_inputs.hpp): the preprocessor's options, one tree from
// a DTS or DTB, the --overlay files, and a board with its overlays applied.
#include <algorithm>

#include <fmt/format.h>

#include "cmalign/dt/dtb.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/dt/dts.hpp"
#include "cmalign/internal/dt/overlay.hpp"
#include "cmalign/internal/run_inputs.hpp"

namespace cmalign {

dt::PreprocessOptions detail::preprocess_options(const TreeOptions& options) {
    dt::PreprocessOptions out;
    out.include_dirs = options.include_dirs;
    out.kernel_tree = options.kernel_tree;
    out.limits = options.limits;
    for (const auto& d : options.defines) {
        auto eq = d.find('=');
        if (eq == std::string::npos)
            out.defines.emplace_back(d, std::nullopt);
        else
            out.defines.emplace_back(d.substr(0, eq), d.substr(eq + 1));
    }
    return out;
}

dt::ResolveOptions detail::reservation_resolve_options() {
    dt::ResolveOptions options;
    options.chunk_paths = {"/reserved-memory", "/memory", "/chosen"};
    options.all_locations = false; // the checks locate nothing else
    options.whole_tree = false;    // ... and read nothing else (reserved::read)
    return options;
}

std::optional<dt::Tree> detail::load_tree(const std::string& path,
                                          const dt::PreprocessOptions& options,
                                          dt::FileCache& cache, Diagnostics& diags,
                                          const dt::ResolveOptions& resolve) {
    // Sniff the magic: .dtb files are sometimes named .bin or .img.
    std::uint8_t magic[4] = {};
    if (auto piped = anonymous_pipe_bytes(path, options.limits.file_bytes)) {
        // `… | cmalign check /dev/stdin`: sniffed from the bytes kept for the readers after us.
        dt::DtbOptions dtb;
        dtb.limits = options.limits;
        if (dt::has_fdt_magic(
                {reinterpret_cast<const std::uint8_t*>(piped->bytes.data()), piped->bytes.size()}))
            return dt::read_dtb(path, diags, dtb, path);
    } else {
        const auto got = read_file_prefix(path, magic);
        if (!got) {
            diags.error({path, 0, 0}, "cannot read file");
            return std::nullopt;
        }
        dt::DtbOptions dtb;
        dtb.limits = options.limits;
        if (*got == sizeof magic && dt::has_fdt_magic(magic))
            return dt::read_dtb(path, diags, dtb, path);
        if (dt::is_dtb_name(path)) return dt::read_dtb(path, diags, dtb, path); // bad magic
    }
    return dt::load_dts(path, options, cache, diags, resolve);
}

std::optional<std::vector<dt::Tree>> detail::load_overlays(const std::vector<std::string>& paths,
                                                           const dt::PreprocessOptions& options,
                                                           dt::FileCache& cache,
                                                           Diagnostics& diags) {
    std::vector<dt::Tree> out;
    bool ok = true;
    for (const auto& path : paths) {
        Diagnostics local;
        auto tree = detail::load_tree(path, options, cache, local); // every cell located
        if (tree && !local.has_errors() && !dt::is_overlay(*tree)) {
            local.error({path, 0, 0}, "not an overlay: no fragment with an __overlay__ node "
                                      "(a .dtso needs /plugin/;)");
        }
        for (auto& d : local.items())
            if (d.input.empty()) d.input = path;
        diags.append(local);
        if (!tree || local.has_errors()) {
            ok = false;
            continue;
        }
        out.push_back(std::move(*tree));
    }
    if (!ok) return std::nullopt;
    return out;
}

std::optional<dt::Tree> detail::load_board(const std::string& path,
                                           const dt::PreprocessOptions& options,
                                           dt::FileCache& cache, Diagnostics& diags,
                                           const dt::ResolveOptions& resolve,
                                           const std::vector<dt::Tree>& overlays,
                                           const dt::OverlayOptions& overlay_options) {
    if (overlays.empty()) {
        auto tree = detail::load_tree(path, options, cache, diags, resolve);
        if (!tree || diags.has_errors()) return tree;
        // `resolve` may have left out deep nodes (a fragment's __overlay__ body) and their
        // locations: a file whose fragments name a target is read again, whole.
        bool fragments = std::any_of(
            tree->root.children.begin(), tree->root.children.end(), [](const dt::Node& c) {
                return c.find_property("target") || c.find_property("target-path");
            });
        if (fragments && !tree->from_dtb) {
            Diagnostics again;
            tree = detail::load_tree(path, options, cache, again);
            if (!tree || again.has_errors()) {
                diags.append(again);
                return tree;
            }
        }
        if (!dt::is_overlay(*tree)) return tree;
        auto lone = dt::overlay_without_base(*tree);
        lone.tree.input = path;
        bool adds = lone.tree.find("/reserved-memory") &&
                    !lone.tree.find("/reserved-memory")->children.empty();
        if (adds || !lone.skipped.empty()) {
            std::string what =
                adds ? "only the reservations its fragments add under target-path = "
                       "\"/reserved-memory\" are checked, against no /memory and no other "
                       "reservation"
                     : "nothing is checked";
            if (!lone.assumed_cells.empty())
                what += fmt::format("; assumed {}", lone.assumed_cells);
            if (!lone.skipped.empty()) {
                std::string list;
                for (const auto& s : lone.skipped)
                    list += (list.empty() ? "" : ", ") + s;
                what += fmt::format("; fragments that need the base are skipped although they "
                                    "hold reservations: {}",
                                    list);
            }
            diags.note({path, 0, 0},
                       fmt::format("{} is an overlay and no base was given (--overlay applies it "
                                   "to one), so the base is unknown: {}",
                                   path, what));
        }
        return std::move(lone.tree);
    }
    // fdtoverlay needs the base's labels as /__symbols__ and any node a fragment targets.
    auto whole = resolve;
    whole.whole_tree = true;
    whole.symbols = true;
    auto tree = detail::load_tree(path, options, cache, diags, whole);
    if (!tree || diags.has_errors()) return tree;
    for (const auto& overlay : overlays)
        if (!dt::apply_overlay(*tree, overlay, diags, overlay_options)) return std::nullopt;
    return tree;
}

} // namespace cmalign
