#include "cmalign/kconfig/config.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <system_error>

#include <sys/stat.h>

#include <fmt/format.h>

#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/kconfig/integer.hpp"
#include "cmalign/internal/kconfig/line_parser.hpp"

namespace cmalign::kconfig {
namespace {

constexpr std::string_view config_prefix = "CONFIG_";
constexpr const char* command_line_file = "--set";

std::string_view without_prefix(std::string_view name) {
    if (name.substr(0, config_prefix.size()) == config_prefix)
        name.remove_prefix(config_prefix.size());
    return name;
}

std::string shown_value(const Entry& e) {
    return e.quoted ? fmt::format("\"{}\"", detail::printable(e.value))
                    : detail::printable(e.value);
}

std::string shown_place(const Location& where) {
    return where.line > 0 ? fmt::format("{}:{}", where.file, where.line) : where.file;
}

// merge_config.sh semantics: the later value wins; a different value is a warning naming both
// places. Values are compared as kconfig reads them, so "CONFIG_X=n" after
// "# CONFIG_X is not set" is no redefinition (merge_config.sh compares the text and would warn).
// A --set that changes a file's value is what the user asked for: recorded, not warned about.
void assign(Config& into, Entry entry, Diagnostics& diags) {
    bool from_command_line = entry.where.file == command_line_file;
    std::string name = entry.name;
    std::optional<Entry> previous = into.set(std::move(entry));
    if (!previous) return;
    const Entry& current = into.entries().find(name)->second; // exact key: set() just stored it
    bool differs = previous->value != current.value || previous->quoted != current.quoted;
    bool user_override = from_command_line && previous->where.file != command_line_file;
    if (differs && !user_override) {
        diags.warning(current.where,
                      fmt::format("CONFIG_{} redefined: {} at {} is replaced by {} at {}", name,
                                  shown_value(*previous), shown_place(previous->where),
                                  shown_value(current), shown_place(current.where)),
                      "config-redefined");
    }
}

} // namespace

std::optional<Entry> Config::set(Entry e) {
    auto it = entries_.lower_bound(e.name);
    if (it == entries_.end() || it->first != e.name) {
        std::string key = e.name;
        entries_.emplace_hint(it, std::move(key), std::move(e));
        return std::nullopt;
    }
    Entry before = std::move(it->second);
    it->second = std::move(e);
    if (before.value != it->second.value || before.quoted != it->second.quoted)
        redefinitions_.push_back({before, it->second});
    return before;
}

const Entry* Config::find(std::string_view name) const {
    auto it = entries_.find(without_prefix(name));
    // A symbol whose own name starts with CONFIG_ ("CONFIG_CONFIG_X=y") is still found by its key.
    if (it == entries_.end()) it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
}

bool Config::erase(std::string_view name) {
    auto it = entries_.find(without_prefix(name));
    if (it == entries_.end()) return false;
    entries_.erase(it);
    return true;
}

std::optional<bool> Config::get_bool(std::string_view name) const {
    const Entry* e = find(name);
    if (!e || e->quoted) return std::nullopt;
    if (e->value == "y" || e->value == "m") return true;
    if (e->value == "n") return false;
    return std::nullopt; // not a bool/tristate value
}

std::optional<long long> Config::get_int(std::string_view name) const {
    const Entry* e = find(name);
    if (!e || e->quoted) return std::nullopt; // kconfig rejects a quoted int/hex value
    return parse_integer(e->value, IntegerSyntax::decimal_or_hex);
}

std::optional<std::string_view> Config::get_string(std::string_view name) const {
    const Entry* e = find(name);
    if (!e) return std::nullopt;
    return std::string_view(e->value);
}

bool read_fragment(std::string_view text, const std::string& file, Config& into, Diagnostics& diags,
                   std::uint64_t max_errors) {
    bool ok = true;
    std::uint64_t errors = 0;
    bool header_seen = into.header_version.has_value();
    int line_number = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        ++line_number;
        std::size_t newline = text.find('\n', pos);
        std::size_t line_end = newline == std::string_view::npos ? text.size() : newline;
        std::string_view line = text.substr(pos, line_end - pos);
        pos = newline == std::string_view::npos ? text.size() : newline + 1;
        // getline_stripped (confdata.c) removes "\n" and then one "\r".
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        int column_offset = 0;
        if (line_number == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") { // UTF-8 byte-order mark
            line.remove_prefix(3);
            column_offset = 3;
        }

        detail::LineResult r = detail::parse_line(line);
        Location where{file, line_number, r.column + column_offset};
        switch (r.kind) {
        case detail::LineKind::blank:
            break;
        case detail::LineKind::header:
            if (!header_seen) {
                header_seen = true;
                if (!r.header_arch.empty()) into.header_arch = std::move(r.header_arch);
                into.header_version = std::move(r.header_version);
            }
            break;
        case detail::LineKind::warning:
            diags.warning(std::move(where), std::move(r.message), std::move(r.check));
            break;
        case detail::LineKind::error:
            ok = false;
            if (++errors > max_errors) { // as -fmax-errors: the rest of the file is not read
                diags.error(std::move(where),
                            fmt::format("more than {} errors in this file, reading stops here {}",
                                        max_errors, limit_hint("errors")));
                return false;
            }
            diags.error(std::move(where), std::move(r.message));
            break;
        case detail::LineKind::assignment:
            if (!r.message.empty()) diags.warning(where, std::move(r.message), std::move(r.check));
            assign(into,
                   Entry{std::move(r.name), std::move(r.value), r.quoted, {file, line_number, 1}},
                   diags);
            break;
        }
    }
    return ok;
}

bool read_fragment_file(const std::string& path, Config& into, Diagnostics& diags,
                        const InputLimits& limits) {
    // /proc/config.gz, config.xz/.zst and IKCONFIG kernel images are read as their text.
    TextFile file;
    if (auto error = read_text_file(path, limits, {"configuration", true}, file)) {
        diags.error(error->where, std::move(error->message));
        return false;
    }
    return read_fragment(file.text, path, into, diags, limits.errors);
}

bool apply_set(std::string_view assignment, Config& into, Diagnostics& diags) {
    detail::LineResult r = detail::parse_set(assignment);
    if (r.kind != detail::LineKind::assignment) {
        diags.error(Location{command_line_file, 0, 0},
                    fmt::format("invalid --set '{}': {} (column {})", detail::printable(assignment),
                                r.message, r.column));
        return false;
    }
    assign(into, Entry{std::move(r.name), std::move(r.value), r.quoted, {command_line_file, 0, 0}},
           diags);
    return true;
}

bool load(const std::vector<std::string>& files, const std::vector<std::string>& sets, Config& into,
          Diagnostics& diags, const InputLimits& limits) {
    bool ok = true;
    for (const auto& file : files)
        ok = read_fragment_file(file, into, diags, limits) && ok;
    for (const auto& set : sets)
        ok = apply_set(set, into, diags) && ok;
    return ok;
}

} // namespace cmalign::kconfig
