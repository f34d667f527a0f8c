#include "cmalign/report/sweep.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/kernel/versions.hpp"

namespace cmalign::report {

const char* to_string(PoolState state) {
    switch (state) {
    case PoolState::ok:
        return "ok";
    case PoolState::rejected:
        return "rejected";
    case PoolState::warning:
        return "warning";
    case PoolState::not_a_pool:
        return "-";
    case PoolState::unavailable:
        return "n/a";
    case PoolState::failed:
        return "error";
    }
    return "?";
}

std::optional<KernelVersion> first_rejecting_version(const SweepMatrix& m, std::size_t pool,
                                                     std::uint64_t page_size) {
    for (std::size_t c = 0; c < m.columns.size(); ++c)
        if (m.columns[c].page_size == page_size && m.cells[pool][c] == PoolState::rejected)
            return m.columns[c].version;
    return std::nullopt;
}

namespace {

std::string page_label(std::uint64_t bytes) {
    if (bytes == 0) return "?";
    if (bytes >= (1u << 20)) return fmt::format("{}M", bytes >> 20);
    return fmt::format("{}K", bytes >> 10);
}

std::string size_label(std::optional<std::uint64_t> bytes) {
    return bytes ? format_size(*bytes) : std::string("at boot");
}

std::string pool_letter(std::size_t i) {
    std::string s;
    do {
        s.insert(s.begin(), static_cast<char>('A' + i % 26));
        i = i / 26;
    } while (i-- > 0);
    return s;
}

std::string fit(std::string text, std::size_t width) {
    if (text.size() <= width) return text;
    if (width < 4) return text.substr(0, width);
    // Keep the end: the node name and line number say the most.
    return "…" + text.substr(text.size() - (width - 3)); // "…" is 3 bytes, 1 column
}

struct Row {
    std::size_t first = 0, last = 0; // columns
    std::vector<std::size_t> note_ids;
};

} // namespace

namespace {

constexpr std::size_t kernel_w = 14, page_w = 5, align_w = 10, cell_w = 10, notes_w = 6;

// Page sizes in column order, for the legend.
std::vector<std::uint64_t> page_sizes_of(const SweepMatrix& m) {
    std::vector<std::uint64_t> page_sizes;
    for (const auto& c : m.columns)
        if (std::find(page_sizes.begin(), page_sizes.end(), c.page_size) == page_sizes.end())
            page_sizes.push_back(c.page_size);
    return page_sizes;
}

// "checked: N versions from vA to vB, 4K, 16K pages"
std::string checked_line(const SweepMatrix& m, const std::vector<std::uint64_t>& page_sizes) {
    if (m.columns.empty()) return "";
    const KernelVersion* last_version = nullptr;
    for (const auto& c : m.columns)
        if (!last_version || *last_version < c.version) last_version = &c.version;
    const KernelVersion* first_version = &m.columns.front().version;
    for (const auto& c : m.columns)
        if (c.version < *first_version) first_version = &c.version;
    std::string sizes;
    for (auto size : page_sizes)
        sizes += (sizes.empty() ? "" : ", ") + page_label(size);
    std::size_t versions = m.columns.size() / std::max<std::size_t>(page_sizes.size(), 1);
    return fmt::format("checked: {} version{} from v{} to v{}, {} pages\n", versions,
                       versions == 1 ? "" : "s", first_version->str(), last_version->str(), sizes);
}

// Each pool's letter, node and place, and the first version that rejects it per page size.
std::string pool_legend(const SweepMatrix& m, const std::vector<std::uint64_t>& page_sizes,
                        std::size_t width) {
    std::string out;
    for (std::size_t p = 0; p < m.pools.size(); ++p) {
        const auto& pool = m.pools[p];
        std::string where =
            pool.where.known()
                ? fmt::format("{}:{}", std::filesystem::path(pool.where.file).filename().string(),
                              pool.where.line)
                : std::string();
        std::string letter = pool_letter(p);
        std::size_t room = width > letter.size() + 6 + where.size()
                               ? width - letter.size() - 6 - where.size()
                               : 20;
        out += fmt::format("{:>3}  {}  {}\n", letter, fit(pool.node, room), where);
        std::string firsts;
        for (auto size : page_sizes) {
            auto v = first_rejecting_version(m, p, size);
            std::string text = v ? "v" + v->str() : std::string("never");
            firsts += fmt::format("{}{}{}", firsts.empty() ? "" : " · ",
                                  page_sizes.size() > 1 ? page_label(size) + " " : "", text);
        }
        out += fmt::format("     first rejected: {}\n", firsts);
    }
    return out;
}

// Rows: runs of columns with the same page size, alignment, notes and cells; the notes numbered
// once each.
std::vector<Row> rows_of(const SweepMatrix& m, std::vector<std::string>& notes) {
    auto note_id = [&](const std::string& note) {
        auto it = std::find(notes.begin(), notes.end(), note);
        if (it != notes.end()) return static_cast<std::size_t>(it - notes.begin()) + 1;
        notes.push_back(note);
        return notes.size();
    };
    std::vector<Row> rows;
    for (std::size_t c = 0; c < m.columns.size(); ++c) {
        std::vector<std::size_t> ids;
        for (const auto& n : m.columns[c].notes)
            ids.push_back(note_id(n));
        auto same = [&](const Row& row) {
            const auto& a = m.columns[row.last];
            const auto& b = m.columns[c];
            if (!b.follows_previous || a.page_size != b.page_size || a.alignment != b.alignment ||
                row.note_ids != ids)
                return false;
            for (std::size_t p = 0; p < m.pools.size(); ++p)
                if (m.cells[p][row.last] != m.cells[p][c]) return false;
            return true;
        };
        if (!rows.empty() && same(rows.back()))
            rows.back().last = c;
        else
            rows.push_back({c, c, ids});
    }
    return rows;
}

std::string without_trailing_blanks(std::string line) {
    while (!line.empty() && line.back() == ' ')
        line.pop_back();
    return line;
}

// One table of the pools [start, end): a header, then a line per row.
std::string table(const SweepMatrix& m, const std::vector<Row>& rows, bool any_notes,
                  std::size_t start, std::size_t end) {
    std::string out = "\n";
    std::string header =
        fmt::format("{:<{}}{:<{}}{:<{}}", "kernel", kernel_w, "page", page_w, "CMA align", align_w);
    for (std::size_t p = start; p < end && p < m.pools.size(); ++p)
        header += fmt::format("{:<{}}", pool_letter(p), cell_w);
    if (any_notes) header += "notes";
    out += without_trailing_blanks(std::move(header)) + '\n';
    for (const auto& row : rows) {
        const auto& a = m.columns[row.first];
        const auto& b = m.columns[row.last];
        std::string versions = row.first == row.last
                                   ? "v" + a.version.str()
                                   : fmt::format("v{}–v{}", a.version.str(), b.version.str());
        // "–" is 3 bytes but one column: pad by columns, not bytes.
        std::size_t shown = versions.size() - (row.first == row.last ? 0 : 2);
        std::string line = versions + std::string(kernel_w > shown ? kernel_w - shown : 1, ' ');
        line += fmt::format("{:<{}}{:<{}}", page_label(a.page_size), page_w,
                            size_label(a.alignment), align_w);
        for (std::size_t p = start; p < end && p < m.pools.size(); ++p)
            line += fmt::format("{:<{}}", to_string(m.cells[p][row.first]), cell_w);
        std::string ids;
        for (auto id : row.note_ids)
            ids += fmt::format("{}[{}]", ids.empty() ? "" : " ", id);
        line += ids;
        out += without_trailing_blanks(std::move(line)) + '\n';
    }
    return out;
}

// The numbered notes, long ones wrapped at the width and indented under their number.
std::string numbered_notes(const std::vector<std::string>& notes, std::size_t width) {
    if (notes.empty()) return "";
    std::string out = "\nconfiguration as each version's Kconfig reads it:\n";
    for (std::size_t i = 0; i < notes.size(); ++i) {
        std::string prefix = fmt::format("[{}] ", i + 1);
        const std::string& text = notes[i];
        std::string line = prefix;
        std::size_t pos = 0;
        while (pos < text.size()) {
            auto space = text.find(' ', pos);
            if (space == std::string::npos) space = text.size();
            std::string word = text.substr(pos, space - pos);
            if (line.size() + word.size() + 1 > width && line.size() > prefix.size()) {
                out += line + '\n';
                line = std::string(prefix.size(), ' ');
            }
            if (line.size() > prefix.size() && line.back() != ' ') line += ' ';
            line += word;
            pos = space + 1;
        }
        out += line + '\n';
    }
    return out;
}

} // namespace

std::string render_sweep_text(const SweepMatrix& m, std::size_t width) {
    std::string out;
    if (m.pools.empty())
        out += "no reservation that is a pool (shared-dma-pool, restricted-dma-pool)\n";
    const auto page_sizes = page_sizes_of(m);
    out += checked_line(m, page_sizes);
    out += pool_legend(m, page_sizes, width);

    std::vector<std::string> notes;
    const auto rows = rows_of(m, notes);
    const std::size_t fixed = kernel_w + page_w + align_w + notes_w;
    const std::size_t per_table =
        std::max<std::size_t>(1, width > fixed ? (width - fixed) / cell_w : 1);
    const std::size_t pool_count = std::max<std::size_t>(m.pools.size(), 1);
    for (std::size_t start = 0; start < pool_count; start += per_table)
        out += table(m, rows, !notes.empty(), start, std::min(pool_count, start + per_table));
    out += numbered_notes(notes, width);
    out += "\nok: created · rejected: the kernel will not create it as written (--format "
           "json\nhas each finding) · -: not a pool in that kernel · n/a: page size not "
           "offered\n";
    return out;
}

namespace {

bool is_pool(reserved::Kind k) {
    return k == reserved::Kind::cma || k == reserved::Kind::coherent ||
           k == reserved::Kind::restricted;
}

// Every region that is a pool or has an error in some cell, in document order of the first cell
// that lists it.
std::vector<SweepPool> pools_of(std::span<const SweepCellResults> cells) {
    std::vector<SweepPool> pools;
    std::map<std::pair<std::string, std::string>, std::size_t> index;
    auto pool_of = [&](const std::string& input, const std::string& node, const Location& where) {
        auto key = std::make_pair(input, node);
        if (index.count(key)) return;
        index.emplace(key, pools.size());
        pools.push_back({input, node, where});
    };
    for (const auto& c : cells) {
        for (const auto& r : c.results) {
            for (const auto& region : r.reservations.regions)
                if (is_pool(region.kind) || is_pool(region.declared_kind))
                    pool_of(region.input, region.path, region.where);
            for (const auto& d : r.diagnostics) {
                if (d.severity != Severity::error || d.node.empty()) continue;
                for (const auto& region : r.reservations.regions)
                    if (region.path == d.node) pool_of(region.input, region.path, region.where);
            }
        }
    }
    return pools;
}

// A pool's state in one cell, and the checks that reject it there.
PoolState pool_state(const SweepCellResults& c, const SweepPool& pool,
                     std::vector<std::string>& checks) {
    if (c.unavailable) return PoolState::unavailable;
    if (!c.has_model) return PoolState::failed;
    PoolState state = PoolState::failed;
    for (const auto& r : c.results) {
        if (r.reservations.input != pool.input) continue;
        state = PoolState::not_a_pool;
        for (const auto& region : r.reservations.regions)
            if (region.path == pool.node && is_pool(region.kind)) state = PoolState::ok;
        for (const auto& d : r.diagnostics) {
            if (d.node != pool.node) continue;
            if (d.severity == Severity::error) {
                state = PoolState::rejected;
                if (std::find(checks.begin(), checks.end(), d.check) == checks.end())
                    checks.push_back(d.check);
            } else if (d.severity == Severity::warning && state == PoolState::ok) {
                state = PoolState::warning;
            }
        }
    }
    return state;
}

} // namespace

SweepMatrix sweep_matrix(std::span<const SweepCellResults> cells) {
    SweepMatrix m;
    m.pools = pools_of(cells);
    m.cells.assign(m.pools.size(), {});
    m.rejecting_checks.assign(m.pools.size(), {});
    for (const auto& c : cells) {
        m.columns.push_back(c.column);
        for (std::size_t p = 0; p < m.pools.size(); ++p) {
            std::vector<std::string> checks;
            m.cells[p].push_back(pool_state(c, m.pools[p], checks));
            std::string joined;
            for (const auto& name : checks)
                joined += (joined.empty() ? "" : ",") + name;
            m.rejecting_checks[p].push_back(std::move(joined));
        }
    }
    return m;
}

nlohmann::json sweep_cell_json(const KernelVersion& version, std::optional<std::uint64_t> page_size,
                               const kernel::Retarget& change,
                               std::optional<std::uint64_t> cma_alignment) {
    nlohmann::json j;
    j["kernel_version"] = version.str();
    j["page_size"] = page_size ? nlohmann::json(*page_size) : nlohmann::json(nullptr);
    j["config_changes"] = {{"set", change.sets}, {"unset", change.dropped}};
    j["notes"] = change.notes;
    j["unavailable"] =
        change.unavailable.empty() ? nlohmann::json(nullptr) : nlohmann::json(change.unavailable);
    j["cma_min_alignment_bytes"] =
        cma_alignment ? nlohmann::json(*cma_alignment) : nlohmann::json(nullptr);
    return j;
}

nlohmann::json first_rejected_json(const SweepMatrix& matrix) {
    nlohmann::json pools = nlohmann::json::array();
    for (std::size_t p = 0; p < matrix.pools.size(); ++p) {
        nlohmann::json first = nlohmann::json::object();
        for (const auto& column : matrix.columns) {
            auto key = std::to_string(column.page_size);
            if (first.contains(key)) continue;
            auto v = first_rejecting_version(matrix, p, column.page_size);
            first[key] = v ? nlohmann::json(v->str()) : nlohmann::json(nullptr);
        }
        const auto& pool = matrix.pools[p];
        pools.push_back({{"input", pool.input},
                         {"node", pool.node},
                         {"file", pool.where.file},
                         {"line", pool.where.line},
                         {"first_rejected", first}});
    }
    return pools;
}

} // namespace cmalign::report
