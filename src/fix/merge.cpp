// Merging the edits of many boards (one spelling per file, duplicates once, conflicts refused),
// rendering them into new file contents and applying them.
#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <libfdt.h>

#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/fix/detail.hpp"

namespace cmalign::fix {

using namespace detail;
using reserved::Kind;
using reserved::Region;
using reserved::ValueRef;

namespace {

// One spelling per real file: the same .dtsi reached as arch/arm64/boot/dts/x.dtsi and through
// scripts/dtc/include-prefixes/arm64/x.dtsi must merge (and never be written twice). Relative to
// the working directory when under it, else absolute.
std::string file_key(const std::string& file) {
    namespace fs = std::filesystem;
    std::error_code ec;
    auto real = fs::weakly_canonical(fs::path(file), ec);
    if (ec) return file;
    auto cwd = fs::current_path(ec);
    if (!ec) {
        auto rel = real.lexically_relative(cwd);
        if (!rel.empty() && *rel.begin() != "..") return rel.string();
    }
    return real.string();
}

} // namespace

Merged merge_edits(std::span<const Edit> edits) {
    Merged out;
    std::vector<Edit> sorted(edits.begin(), edits.end());
    std::map<std::string, std::string> keys;
    for (auto& e : sorted) {
        auto it = keys.find(e.file);
        if (it == keys.end()) it = keys.emplace(e.file, file_key(e.file)).first;
        e.file = it->second;
        e.where.file = it->second;
    }
    std::stable_sort(sorted.begin(), sorted.end(), [](const Edit& a, const Edit& b) {
        return std::tie(a.file, a.begin, a.end) < std::tie(b.file, b.begin, b.end);
    });
    for (auto& e : sorted) {
        if (!out.edits.empty()) {
            Edit& last = out.edits.back();
            if (last.file == e.file && last.begin == e.begin && last.end == e.end &&
                last.new_text == e.new_text && last.old_text == e.old_text)
                continue; // the same shared .dtsi edit asked for by another board
            if (last.file == e.file && e.begin < last.end) {
                Diagnostic d = make_diag(
                    Severity::error, e.where, e.node, e.input,
                    fmt::format("conflicting edits of the same text: {} wants '{}' → '{}' and {} "
                                "wants '{}' → '{}'; nothing is written",
                                last.input, last.old_text, last.new_text, e.input, e.old_text,
                                e.new_text));
                out.diagnostics.push_back(std::move(d));
                out.conflict = true;
                continue;
            }
        }
        out.edits.push_back(std::move(e));
    }
    return out;
}

std::vector<FileChange> render(std::span<const Edit> edits, Diagnostics& diags) {
    std::map<std::string, std::vector<const Edit*>> by_file;
    std::vector<std::string> order;
    for (const auto& e : edits) {
        if (!by_file.count(e.file)) order.push_back(e.file);
        by_file[e.file].push_back(&e);
    }
    std::vector<FileChange> out;
    for (const auto& file : order) {
        auto list = by_file[file];
        std::sort(list.begin(), list.end(),
                  [](const Edit* a, const Edit* b) { return a->begin > b->begin; });
        auto content = read_whole_input(file); // a piped board: the bytes it was read as
        if (!content) {
            diags.error({file, 0, 0}, "cannot read the file to edit");
            continue;
        }
        FileChange change;
        change.file = file;
        change.old_content = std::move(*content);
        change.new_content = change.old_content;
        bool ok = true;
        std::size_t previous_begin = std::string::npos;
        for (const Edit* e : list) {
            change.binary = change.binary || e->binary;
            if (e->end > change.old_content.size() || e->begin > e->end ||
                change.old_content.compare(e->begin, e->end - e->begin, e->old_text) != 0) {
                diags.error(e->where,
                            fmt::format("the file changed since it was read: '{}' is "
                                        "no longer at this place; nothing written",
                                        e->binary ? std::string("the value") : e->old_text));
                ok = false;
                break;
            }
            if (previous_begin != std::string::npos && e->end > previous_begin) {
                diags.error(e->where, "overlapping edits; nothing written");
                ok = false;
                break;
            }
            previous_begin = e->begin;
            change.new_content.replace(e->begin, e->end - e->begin, e->new_text);
        }
        if (ok && change.binary) {
            std::vector<std::uint64_t> blob((change.new_content.size() + 7) / 8 + 1);
            std::memcpy(blob.data(), change.new_content.data(), change.new_content.size());
            int err = fdt_check_header(blob.data());
            if (err == 0) err = fdt_check_full(blob.data(), change.new_content.size());
            if (err != 0) {
                diags.error({file, 0, 0},
                            fmt::format("the edited blob fails fdt_check_full: {}; nothing written",
                                        fdt_strerror(err)));
                ok = false;
            }
        }
        if (ok) out.push_back(std::move(change));
    }
    return out;
}

bool apply_edits(std::span<const Edit> edits, Diagnostics& diags) {
    Diagnostics local;
    auto changes = render(edits, local);
    diags.append(local);
    if (local.has_errors()) return false;
    return write_changes(changes, diags);
}

} // namespace cmalign::fix
