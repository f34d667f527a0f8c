// Kconfig evaluations in the on-disk cache (internal/kconfig/disk_cache.hpp). The format is lines
// of tab-separated fields (core/disk_cache.hpp), read back in a few milliseconds for a whole arm64
// configuration; the first line names the format, the last is "end".
#include "cmalign/internal/kconfig/disk_cache.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "cmalign/core/limits.hpp"
#include "cmalign/internal/core/disk_cache.hpp"
#include "cmalign/internal/core/integer.hpp"

namespace cmalign::kconfig::detail {

namespace {

constexpr const char* kind = "kconfig";
constexpr const char* format_line = "cmalign-kconfig-evaluation\t1";
constexpr std::size_t kept_entries = 64;

std::optional<long long> decimal(const std::string& text) {
    return parse_integer(text, IntegerSyntax::decimal);
}

int number(const std::string& text) {
    auto v = decimal(text);
    return v && *v >= 0 && *v <= 1'000'000'000 ? static_cast<int>(*v) : -1;
}

std::string location_fields(const Location& l) {
    return fmt::format("{}\t{}\t{}", disk_cache::escape(l.file), l.line, l.column);
}

// One configuration entry as a line ("in" in keys, "entry" in evaluations), appended in place:
// a full .config has ten thousand of them, written for the key and again for the entry.
template <class Entry>
void append_entry(std::string& out, std::string_view tag, std::string_view name, const Entry& e) {
    out += tag;
    out += '\t';
    disk_cache::escape_to(out, name);
    out += '\t';
    disk_cache::escape_to(out, e.value);
    out += e.quoted ? "\t1\t" : "\t0\t";
    disk_cache::escape_to(out, e.where.file);
    const fmt::format_int line(e.where.line), column(e.where.column);
    out += '\t';
    out.append(line.data(), line.size());
    out += '\t';
    out.append(column.data(), column.size());
    out += '\n';
}

std::optional<Location> location_of(const std::vector<std::string>& f, std::size_t at) {
    if (f.size() < at + 3) return std::nullopt;
    int line = number(f[at + 1]), column = number(f[at + 2]);
    if (line < 0 || column < 0) return std::nullopt;
    return Location{f[at], line, column};
}

std::optional<Severity> severity_of(const std::string& s) {
    if (s == "error") return Severity::error;
    if (s == "warning") return Severity::warning;
    if (s == "note") return Severity::note;
    return std::nullopt;
}

// One line of an entry (after its key and besides its "file" lines) into `out` and `diags`;
// false on anything unexpected.
bool read_line(const std::vector<std::string>& f, Evaluation& out, std::vector<Diagnostic>& diags) {
    const auto& tag = f[0];
    if (tag == "diag") {
        auto where = location_of(f, 2);
        auto sev = f.size() == 9 ? severity_of(f[1]) : std::nullopt;
        if (!where || !sev) return false;
        diags.push_back({*sev, *where, f[5], f[6], f[7], f[8], {}});
    } else if (tag == "eval") {
        if (f.size() != 4) return false;
        out.arch = f[1], out.srcarch = f[2], out.kernel_version = f[3];
    } else if (tag == "header") {
        if (f.size() != 5) return false;
        if (f[1] == "1") out.config.header_arch = f[2];
        if (f[3] == "1") out.config.header_version = f[4];
    } else if (tag == "entry") {
        auto where = location_of(f, 4);
        if (f.size() != 7 || !where) return false;
        out.config.set({f[1], f[2], f[3] == "1", *where});
    } else if (tag == "decided") {
        if (f.size() != 3) return false;
        out.config.decided_by[f[1]] = f[2];
    } else if (tag == "assume") {
        auto where = location_of(f, 3);
        if (f.size() != 6 || !where) return false;
        out.assumptions.push_back({f[1], f[2], *where});
    } else if (tag == "dotconfig") {
        if (f.size() != 2) return false;
        out.dotconfig = f[1];
    } else {
        return false;
    }
    return true;
}

} // namespace

std::string disk_key(const std::string& tree, const std::string& arch, const Config& inputs,
                     const EvalOptions& options, const std::string& version_text) {
    std::error_code ec;
    auto canonical = std::filesystem::weakly_canonical(tree, ec);
    std::string key =
        fmt::format("build={}\ntree={}\narch={}\nversion={}\nshell={}\n", source_stamp(),
                    ec ? tree : canonical.string(), arch, version_text, options.run_shell ? 1 : 0);
    for (const auto& [name, value] : options.env)
        key += disk_cache::line({"env", name, value});
    for (const auto& row : limit_table())
        key += fmt::format("limit\t{}\t{}\n", row.name, *limit_value(options.limits, row.name));
    for (const auto& file : options.input_order)
        key += disk_cache::line({"order", file});
    key += disk_cache::line(
        {"header", inputs.header_arch.value_or("-"), inputs.header_version.value_or("-")});
    for (const auto& [name, e] : inputs.entries())
        append_entry(key, "in", name, e);
    // Every line read: a value kconfig rejects leaves the one before it in force.
    for (const auto& a : inputs.assignments())
        key += disk_cache::line({"line", a.name, a.text, std::to_string(static_cast<int>(a.form)),
                                 a.quoted ? "1" : "0", a.where.file, std::to_string(a.where.line),
                                 std::to_string(a.where.column), a.reported ? "1" : "0"});
    return key;
}

std::optional<Evaluation> load_evaluation(const std::string& dir, const std::string& key,
                                          Diagnostics& diags) {
    const auto entry = disk_cache::entry_path(dir, kind, key);
    auto text = disk_cache::read_entry(entry);
    Evaluation out;
    std::vector<Diagnostic> reported;
    std::vector<std::string> files;
    if (!text || !disk_cache::read_lines(
                     *text, format_line, key, files,
                     [&](const auto& f) { return read_line(f, out, reported); }, nullptr, &entry))
        return std::nullopt;
    for (auto& d : reported)
        diags.add(std::move(d));
    out.sources = std::move(files);
    return out;
}

void store_evaluation(const std::string& dir, const std::string& key, const Evaluation& result,
                      const std::vector<Diagnostic>& reported,
                      const std::vector<std::string>& files) {
    std::string text = std::string(format_line) + "\n" + disk_cache::line({"key", key});
    for (const auto& file : files) {
        auto s = disk_cache::stamp(file);
        if (!s) return; // a file gone already: nothing worth keeping
        text += disk_cache::stamp_line(*s);
    }
    for (const auto& d : reported) {
        if (!d.fix.empty()) return; // not in the format; evaluations report none
        text += fmt::format("diag\t{}\t{}\t{}\t", to_string(d.severity), location_fields(d.where),
                            disk_cache::escape(d.check)) +
                disk_cache::line({d.message, d.node, d.input});
    }
    text += disk_cache::line({"eval", result.arch, result.srcarch, result.kernel_version});
    const auto& c = result.config;
    text += disk_cache::line({"header", c.header_arch ? "1" : "0", c.header_arch.value_or(""),
                              c.header_version ? "1" : "0", c.header_version.value_or("")});
    for (const auto& [name, e] : c.entries())
        append_entry(text, "entry", name, e);
    for (const auto& [name, how] : c.decided_by)
        text += disk_cache::line({"decided", name, how});
    for (const auto& a : result.assumptions)
        text += fmt::format("assume\t{}\t{}\t{}\n", disk_cache::escape(a.command),
                            disk_cache::escape(a.result), location_fields(a.where));
    text += disk_cache::line({"dotconfig", result.dotconfig});
    text += "end\n";
    auto path = disk_cache::entry_path(dir, kind, key);
    if (disk_cache::write_entry(path, text)) disk_cache::prune(dir, kind, kept_entries);
}

} // namespace cmalign::kconfig::detail
