// The input limits: names, ceilings and the --limit NAME=VALUE parser.
#include "cmalign/core/limits.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <limits>

#include "cmalign/core/size.hpp"

namespace cmalign {

namespace {

// The ceilings keep the recursive parsers (node and expression nesting, #include, Kconfig
// source) within an 8 MiB thread stack under ASan, where frames are several times larger.
constexpr std::array<LimitInfo, 11> table{{
    {"file-bytes", "bytes of any one file read", 1ull << 32},
    {"line-bytes", "bytes on one line of a text input", 1ull << 30},
    {"include-depth", "nested #include and /include/", 1000},
    {"macro-depth", "nested macro expansion (cpp, Kconfig $(...))", 2000},
    {"expanded-bytes", "preprocessor output of one input", 1ull << 34},
    {"node-depth", "device-tree node (and DTS expression) nesting", 2000},
    {"nodes", "device-tree nodes in one input", 100'000'000},
    {"properties", "device-tree properties in one input", 1'000'000'000},
    {"kconfig-source-depth", "nested Kconfig source statements", 1000},
    {"kconfig-symbols", "Kconfig symbols in one tree", 100'000'000},
    {"errors", "errors reported for one input file before reading it stops", 1'000'000},
}};

template <typename F> auto visit_limit(InputLimits& l, std::string_view name, F&& f) {
    if (name == "file-bytes") return f(l.file_bytes);
    if (name == "line-bytes") return f(l.line_bytes);
    if (name == "include-depth") return f(l.include_depth);
    if (name == "macro-depth") return f(l.macro_depth);
    if (name == "expanded-bytes") return f(l.expanded_bytes);
    if (name == "node-depth") return f(l.node_depth);
    if (name == "nodes") return f(l.nodes);
    if (name == "properties") return f(l.properties);
    if (name == "kconfig-source-depth") return f(l.kconfig_source_depth);
    if (name == "kconfig-symbols") return f(l.kconfig_symbols);
    return f(l.errors); // callers checked the name against the table
}

const LimitInfo* find_limit(std::string_view name) {
    for (const auto& row : table)
        if (row.name == name) return &row;
    return nullptr;
}

} // namespace

std::span<const LimitInfo> limit_table() {
    return table;
}

std::optional<std::uint64_t> limit_value(const InputLimits& limits, std::string_view name) {
    if (!find_limit(name)) return std::nullopt;
    InputLimits copy = limits;
    return visit_limit(copy, name, [](auto& field) { return static_cast<std::uint64_t>(field); });
}

std::optional<std::string> set_limit(InputLimits& limits, std::string_view spec) {
    auto eq = spec.find('=');
    if (eq == std::string_view::npos) return fmt::format("--limit '{}': expected NAME=VALUE", spec);
    std::string_view name = spec.substr(0, eq);
    const LimitInfo* row = find_limit(name);
    if (!row) {
        std::string names;
        for (const auto& r : table)
            names += (names.empty() ? "" : ", ") + std::string(r.name);
        return fmt::format("--limit: unknown limit '{}' (known: {})", name, names);
    }
    auto value = parse_size(spec.substr(eq + 1));
    if (!value || *value == 0)
        return fmt::format("--limit {}: '{}' is not a positive number", name, spec.substr(eq + 1));
    if (*value > row->ceiling)
        return fmt::format("--limit {}: {} is above the largest allowed value {}", name, *value,
                           row->ceiling);
    visit_limit(limits, name, [&](auto& field) {
        field = static_cast<std::remove_reference_t<decltype(field)>>(*value);
    });
    return std::nullopt;
}

std::optional<LongLine> first_line_over(std::string_view text, std::uint64_t line_bytes) {
    if (text.size() <= line_bytes) return std::nullopt;
    std::size_t line = 1;
    for (std::size_t start = 0; start < text.size(); ++line) {
        std::size_t end = std::min(text.find('\n', start), text.size());
        if (end - start > line_bytes) return LongLine{line, end - start};
        start = end + 1;
    }
    return std::nullopt;
}

Location long_line_location(const std::string& file, const LongLine& line,
                            const InputLimits& limits) {
    auto clamp = [](std::uint64_t v) {
        return static_cast<int>(std::min<std::uint64_t>(v, std::numeric_limits<int>::max()));
    };
    return Location{file, clamp(line.line), clamp(limits.line_bytes + 1)};
}

std::string long_line_message(const LongLine& line, const InputLimits& limits) {
    return fmt::format("line {} is {} bytes long, over the limit of {} {}", line.line, line.length,
                       limits.line_bytes, limit_hint("line-bytes"));
}

std::string limit_hint(std::string_view name) {
    return fmt::format("(--limit {}=N raises it)", name);
}

} // namespace cmalign
