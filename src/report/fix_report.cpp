// `cmalign fix` and `cmalign suggest` as JSON.
#include "cmalign/internal/report/fix_report.hpp"

#include <string_view>

#include "cmalign/internal/core/bytes.hpp"
#include "cmalign/internal/report/json.hpp"

namespace cmalign::report {

namespace {

// A DTB edit's cell bytes as a DTS would write them: "<0x0 0x400000>".
std::string cells_of_bytes(std::string_view bytes) {
    std::vector<std::uint64_t> cells;
    for (std::size_t i = 0; i + 4 <= bytes.size(); i += 4)
        cells.push_back(bytes::be32(reinterpret_cast<const std::uint8_t*>(bytes.data() + i)));
    return bytes::cells_text(cells);
}

} // namespace

nlohmann::json fix_json(const std::vector<fix::Edit>& edit_list,
                        std::initializer_list<const std::vector<Diagnostic>*> diagnostics,
                        const std::vector<std::string>& written,
                        std::optional<std::uint64_t> alignment) {
    nlohmann::json edits = nlohmann::json::array();
    for (const auto& e : edit_list) {
        edits.push_back({{"file", e.file},
                         {"line", e.where.line},
                         {"column", e.where.column},
                         {"node", e.node},
                         {"property", e.property},
                         {"old", e.binary ? cells_of_bytes(e.old_text) : e.old_text},
                         {"new", e.binary ? cells_of_bytes(e.new_text) : e.new_text},
                         {"input", e.input},
                         {"old_value", e.old_value},
                         {"new_value", e.new_value},
                         {"binary", e.binary}});
    }
    nlohmann::json diags = nlohmann::json::array();
    for (const auto* list : diagnostics)
        for (const auto& d : *list)
            diags.push_back(to_json(d));
    nlohmann::json out;
    out["edits"] = std::move(edits);
    out["diagnostics"] = std::move(diags);
    out["written"] = written;
    out["alignment"] = alignment ? nlohmann::json(*alignment) : nlohmann::json();
    return out;
}

nlohmann::json suggest_json(const std::optional<fix::SuggestResult>& result,
                            const std::vector<Diagnostic>& errors) {
    nlohmann::json out;
    nlohmann::json list = nlohmann::json::array();
    nlohmann::json notes = nlohmann::json::array();
    if (result) {
        for (const auto& s : result->suggestions) {
            nlohmann::json changes = nlohmann::json::object();
            for (const auto& [k, v] : s.changes)
                changes[k] = v;
            list.push_back({{"changes", changes},
                            {"cma_min_alignment_bytes", s.cma_min_alignment_bytes},
                            {"note", s.note},
                            {"pageblock_order", s.pageblock_order},
                            {"page_size", s.page_size},
                            {"upstream", s.upstream}});
        }
        for (const auto& n : result->notes)
            notes.push_back(n);
        out["needed_alignment_bytes"] = result->needed_alignment;
        out["current_alignment_bytes"] = result->current_alignment
                                             ? nlohmann::json(*result->current_alignment)
                                             : nlohmann::json();
        out["already_valid"] = result->already_valid;
    }
    out["suggestions"] = std::move(list);
    out["notes"] = std::move(notes);
    out["diagnostics"] = diagnostics_json(errors);
    return out;
}

} // namespace cmalign::report
