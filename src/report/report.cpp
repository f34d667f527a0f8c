// Text, JSON and SARIF renderings of check results.
#include "cmalign/report/report.hpp"
#include "cmalign/internal/report/json.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cmalign/internal/core/text_file.hpp"

namespace cmalign::report {

namespace {

// Lines of a file, read once per report call; empty when unreadable or binary.
class LineCache {
public:
    const std::vector<std::string>* lines(const std::string& path) {
        auto it = files_.find(path);
        if (it == files_.end()) it = files_.emplace(path, load(path)).first;
        return it->second.empty() ? nullptr : &it->second;
    }

private:
    static std::vector<std::string> load(const std::string& path) {
        std::vector<std::string> out;
        std::error_code ec;
        // A board read from a pipe is quoted from the bytes it was read as; a device never.
        std::optional<std::string> text;
        if (auto piped = anonymous_pipe_bytes(path, InputLimits{}.file_bytes))
            text = std::move(piped->bytes);
        else if (std::filesystem::is_regular_file(path, ec))
            text = read_whole_input(path);
        if (!text) return out;
        std::istringstream in(std::move(*text));
        std::string line;
        while (std::getline(in, line)) {
            if (line.find('\0') != std::string::npos) return {}; // a DTB: no source lines
            if (!line.empty() && line.back() == '\r') line.pop_back();
            out.push_back(std::move(line));
        }
        return out;
    }
    std::map<std::string, std::vector<std::string>> files_;
};

const char* severity_color(Severity s) {
    switch (s) {
    case Severity::error:
        return "\033[01;31m";
    case Severity::warning:
        return "\033[01;35m";
    case Severity::note:
        return "\033[01;36m";
    }
    return "";
}

std::string render(const Diagnostic& d, const TextOptions& options, LineCache& cache) {
    std::string out;
    std::string head = format_gcc(d);
    if (options.color) {
        // Colour the severity word the way gcc does; the rest stays plain.
        std::string word = std::string(to_string(d.severity)) + ":";
        if (auto pos = head.find(" " + word); pos != std::string::npos)
            head.replace(pos + 1, word.size(),
                         std::string(severity_color(d.severity)) + word + "\033[m");
    }
    out += head;
    out += '\n';
    if (!options.show_source || !d.where.known() || d.where.line <= 0) return out;
    const auto* lines = cache.lines(d.where.file);
    if (lines == nullptr || static_cast<std::size_t>(d.where.line) > lines->size()) return out;
    const std::string& line = (*lines)[static_cast<std::size_t>(d.where.line) - 1];
    // Expand tabs (8 columns) so the caret lands under the right character.
    std::string shown;
    std::size_t caret = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (static_cast<int>(i) + 1 == d.where.column) caret = shown.size();
        if (line[i] == '\t')
            shown.append(8 - shown.size() % 8, ' ');
        else
            shown.push_back(line[i]);
    }
    if (d.where.column > static_cast<int>(line.size())) caret = shown.size();
    std::string gutter = fmt::format("{:>5}", d.where.line);
    out += fmt::format("{} | {}\n", gutter, shown);
    if (d.where.column > 0) {
        out += fmt::format("{} | {}{}{}\n", std::string(gutter.size(), ' '),
                           std::string(caret, ' '), options.color ? "\033[01;32m^\033[m" : "^", "");
    }
    return out;
}

nlohmann::json nullable_line(int value) {
    return value > 0 ? nlohmann::json(value) : nlohmann::json(nullptr);
}

} // namespace

std::string text(const Diagnostic& d, const TextOptions& options) {
    LineCache cache;
    return render(d, options, cache);
}

std::string text(std::span<const Diagnostic> diagnostics, const TextOptions& options) {
    LineCache cache;
    std::string out;
    for (const auto& d : diagnostics)
        out += render(d, options, cache);
    return out;
}

std::vector<Diagnostic> merge_shared(std::span<const Diagnostic> diagnostics) {
    auto same_place = [](const Diagnostic& a, const Diagnostic& b) {
        return a.where.file == b.where.file && a.where.line == b.where.line &&
               a.where.column == b.where.column && a.severity == b.severity && a.check == b.check &&
               a.message == b.message && a.node == b.node;
    };
    std::vector<Diagnostic> out;
    std::vector<std::vector<std::string>> boards; // per entry of out
    for (const auto& d : diagnostics) {
        auto it = std::find_if(out.begin(), out.end(),
                               [&](const Diagnostic& o) { return same_place(o, d); });
        if (it == out.end()) {
            out.push_back(d);
            boards.push_back({d.input});
            continue;
        }
        auto& list = boards[static_cast<std::size_t>(it - out.begin())];
        if (std::find(list.begin(), list.end(), d.input) == list.end()) list.push_back(d.input);
    }
    constexpr std::size_t named = 5;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const auto& list = boards[i];
        if (list.size() < 2) continue;
        std::string names;
        for (std::size_t k = 0; k < list.size() && k < named; ++k)
            names += (k == 0 ? "" : ", ") + list[k];
        if (list.size() > named) names += fmt::format(" and {} more", list.size() - named);
        out[i].message += fmt::format(" (in {} boards: {})", list.size(), names);
    }
    return out;
}

std::string summary_line(std::span<const Diagnostic> diagnostics) {
    if (diagnostics.empty()) return {};
    std::size_t counts[3] = {0, 0, 0};
    for (const auto& d : diagnostics)
        ++counts[static_cast<int>(d.severity)];
    auto plural = [](std::size_t n, const char* word) {
        return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
    };
    return fmt::format("{}, {}, {}", plural(counts[2], "error"), plural(counts[1], "warning"),
                       plural(counts[0], "note"));
}

nlohmann::json to_json(const reserved::Region& r) {
    nlohmann::json j;
    j["input"] = r.input;
    j["file"] = r.where.file;
    j["line"] = nullable_line(r.where.line);
    j["node"] = r.path;
    j["compatible"] = r.compatible;
    j["kind"] = reserved::to_string(r.kind);
    j["reusable"] = r.reusable;
    j["no_map"] = r.no_map;
    j["cma_default"] = r.cma_default;
    j["base"] = r.dynamic || !r.base ? nlohmann::json(nullptr) : nlohmann::json(*r.base);
    j["size"] = r.size ? nlohmann::json(*r.size) : nlohmann::json(nullptr);
    j["alignment"] = r.alignment ? nlohmann::json(*r.alignment) : nlohmann::json(nullptr);
    auto ranges = nlohmann::json::array();
    for (const auto& a : r.alloc_ranges)
        ranges.push_back({a.base, a.size});
    j["alloc_ranges"] = std::move(ranges);
    // Extra keys (docs/json.md: keys may be added, never dropped): why a region is inactive, and
    // how it is placed.
    j["dynamic"] = r.dynamic;
    j["inactive_reason"] =
        r.inactive_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.inactive_reason);
    return j;
}

nlohmann::json to_json(const Diagnostic& d, DiagnosticKeys keys) {
    nlohmann::json j;
    const bool config = keys == DiagnosticKeys::config;
    j["file"] =
        config && d.where.file.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.where.file);
    j["line"] = nullable_line(d.where.line);
    j["column"] = nullable_line(d.where.column);
    j["severity"] = to_string(d.severity);
    j["check"] = d.check.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.check);
    j["message"] = d.message;
    if (config) return j;
    j["input"] = d.input;
    j["node"] = d.node.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.node);
    if (d.fix.empty()) {
        j["fix"] = nullptr;
    } else {
        const auto& f = d.fix.front();
        j["fix"] = {{"property", f.property}, {"old", f.old_value}, {"new", f.new_value}};
    }
    return j;
}

nlohmann::json diagnostics_json(std::span<const Diagnostic> diagnostics, DiagnosticKeys keys) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& d : diagnostics)
        out.push_back(to_json(d, keys));
    return out;
}

nlohmann::json summary_json(std::span<const Diagnostic> diagnostics) {
    std::size_t counts[3] = {0, 0, 0};
    for (const auto& d : diagnostics)
        ++counts[static_cast<int>(d.severity)];
    return {{"errors", counts[2]}, {"warnings", counts[1]}, {"notes", counts[0]}};
}

nlohmann::json default_cma_areas_json(std::span<const checks::Result> results) {
    nlohmann::json out = nlohmann::json::array();
    auto nullable = [](auto v) { return v ? nlohmann::json(v) : nlohmann::json(nullptr); };
    auto optional = [](const auto& o) { return o ? nlohmann::json(*o) : nlohmann::json(nullptr); };
    for (const auto& result : results) {
        if (!result.default_area) continue;
        const auto& a = *result.default_area;
        nlohmann::json j;
        j["input"] = result.reservations.input;
        j["outcome"] = checks::to_string(a.outcome);
        j["source"] = a.source == checks::DefaultArea::Source::cmdline ? "cmdline" : "config";
        j["asked"] = a.asked;
        // 0 asked is a size (cma=0); none known is null (a share of RAM without /memory).
        j["size_bytes"] = a.requested || a.outcome != checks::DefaultArea::Outcome::unknown
                              ? nlohmann::json(a.requested)
                              : nlohmann::json(nullptr);
        j["aligned_size_bytes"] = nullable(a.size);
        j["alignment"] = nullable(a.alignment);
        j["base"] = optional(a.base);
        j["fixed"] = a.fixed.has_value();
        j["arch_limit"] = nullable(a.arch_limit);
        j["limit"] = nullable(a.limit);
        j["limit_words"] = a.limit_words;
        j["dt_pool"] = a.dt_pool.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.dt_pool);
        j["reason"] = a.reason;
        j["lines"] = a.lines;
        out.push_back(std::move(j));
    }
    return out;
}

nlohmann::json check_json(const nlohmann::json& alignment, std::span<const checks::Result> results,
                          std::span<const Diagnostic> input_errors) {
    nlohmann::json j;
    j["alignment"] = alignment;
    j["default_cma_areas"] = default_cma_areas_json(results);
    auto regions = nlohmann::json::array();
    std::vector<Diagnostic> all(input_errors.begin(), input_errors.end());
    for (const auto& result : results) {
        for (const auto& r : result.reservations.regions)
            regions.push_back(to_json(r));
        all.insert(all.end(), result.diagnostics.begin(), result.diagnostics.end());
    }
    j["regions"] = std::move(regions); // a whole tree has thousands: not copied
    j["diagnostics"] = diagnostics_json(all);
    j["summary"] = summary_json(all);
    return j;
}

std::string uri_encode_path(const std::string& path) {
    std::string out;
    for (unsigned char c : path) {
        bool keep = std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/' ||
                    c == '!' || c == '$' || c == '&' || c == '\'' || c == '(' || c == ')' ||
                    c == '*' || c == '+' || c == ',' || c == ';' || c == '=' || c == ':' ||
                    c == '@';
        if (keep)
            out.push_back(static_cast<char>(c));
        else
            out += fmt::format("%{:02X}", c);
    }
    return out;
}

namespace {

// "cma-size-alignment" → "CmaSizeAlignment" (SARIF rule names are identifiers by convention).
std::string rule_name(std::string_view id) {
    std::string out;
    bool upper = true;
    for (char c : id) {
        if (c == '-') {
            upper = true;
            continue;
        }
        out.push_back(upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
        upper = false;
    }
    return out;
}

// FNV-1a, for a stable partial fingerprint (the same finding keeps its id across runs even when
// lines move).
std::string fingerprint(const Diagnostic& d, const std::string& uri) {
    std::uint64_t h = 1469598103934665603ull;
    for (const std::string* part : {&d.check, &d.node, &uri, &d.message})
        for (unsigned char c : *part + '\x1f') {
            h ^= c;
            h *= 1099511628211ull;
        }
    return fmt::format("{:016x}", h);
}

} // namespace

nlohmann::json sarif(std::span<const Diagnostic> diagnostics, const SarifOptions& options) {
    namespace fs = std::filesystem;
    nlohmann::json rules = nlohmann::json::array();
    std::map<std::string, int> rule_index;
    for (const auto& c : checks::registry()) {
        rule_index[c.name] = static_cast<int>(rules.size());
        rules.push_back({{"id", c.name},
                         {"name", rule_name(c.name)},
                         {"shortDescription", {{"text", c.description}}},
                         {"defaultConfiguration",
                          {{"enabled", c.enabled_by_default}, {"level", to_string(c.severity)}}}});
    }
    rule_index[input_rule_id] = static_cast<int>(rules.size());
    rules.push_back({{"id", input_rule_id},
                     {"name", "Input"},
                     {"shortDescription", {{"text", "an input file could not be read or parsed"}}},
                     {"defaultConfiguration", {{"level", "error"}}}});

    std::optional<fs::path> base;
    if (options.base_dir) {
        std::error_code ec;
        auto abs = fs::weakly_canonical(fs::absolute(*options.base_dir, ec), ec);
        if (!ec) base = abs;
    }

    nlohmann::json results = nlohmann::json::array();
    for (const auto& d : diagnostics) {
        std::string id = d.check.empty() ? input_rule_id : d.check;
        nlohmann::json result;
        result["ruleId"] = id;
        if (auto it = rule_index.find(id); it != rule_index.end()) result["ruleIndex"] = it->second;
        result["level"] = to_string(d.severity); // SARIF levels: error, warning, note
        result["message"] = {{"text", d.message}};
        std::string uri_text;
        nlohmann::json locations = nlohmann::json::array();
        if (d.where.known()) {
            nlohmann::json artifact;
            std::error_code ec;
            fs::path file = fs::weakly_canonical(fs::absolute(d.where.file, ec), ec);
            bool relative = false;
            if (base && !ec) {
                auto rel = file.lexically_relative(*base);
                if (!rel.empty() && *rel.begin() != "..") {
                    artifact["uri"] = uri_encode_path(rel.generic_string());
                    artifact["uriBaseId"] = "SRCROOT";
                    relative = true;
                }
            }
            if (!relative) {
                if (!ec && file.is_absolute())
                    artifact["uri"] = "file://" + uri_encode_path(file.generic_string());
                else
                    artifact["uri"] = uri_encode_path(d.where.file);
            }
            uri_text = artifact["uri"].get<std::string>();
            nlohmann::json physical = {{"artifactLocation", artifact}};
            if (d.where.line > 0) {
                nlohmann::json region = {{"startLine", d.where.line}};
                if (d.where.column > 0) region["startColumn"] = d.where.column;
                physical["region"] = region;
            }
            nlohmann::json location = {{"physicalLocation", physical}};
            if (!d.node.empty())
                location["logicalLocations"] =
                    nlohmann::json::array({{{"fullyQualifiedName", d.node}, {"kind", "object"}}});
            locations.push_back(location);
        }
        result["locations"] = locations;
        result["partialFingerprints"] = {{"cmalignFinding/v1", fingerprint(d, uri_text)}};
        nlohmann::json properties;
        if (!d.input.empty()) properties["input"] = d.input;
        if (!d.node.empty()) properties["node"] = d.node;
        if (!d.fix.empty())
            properties["fix"] = {{"property", d.fix.front().property},
                                 {"old", d.fix.front().old_value},
                                 {"new", d.fix.front().new_value}};
        if (!properties.empty()) result["properties"] = properties;
        results.push_back(result);
    }

    nlohmann::json run;
    run["tool"] = {{"driver",
                    {{"name", "cmalign"},
                     {"version", options.tool_version},
                     {"semanticVersion", options.tool_version},
                     {"rules", rules}}}};
    if (base) {
        std::string uri = "file://" + uri_encode_path(base->generic_string());
        if (uri.back() != '/') uri += '/'; // a base URI must end with a slash
        run["originalUriBaseIds"] = {{"SRCROOT", {{"uri", uri}}}};
    }
    run["results"] = results;
    run["columnKind"] = "unicodeCodePoints";

    return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
            {"version", "2.1.0"},
            {"runs", nlohmann::json::array({run})}};
}

} // namespace cmalign::report
