#include "cmalign/kconfig/config.hpp"

#include <algorithm>
#include <cstdio>

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
    std::erase_if(assignments_, [&](const Assignment& a) { return a.name == it->first; });
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

namespace {

using detail::ValueType;
using detail::Verdict;

struct KnownSymbol {
    std::string_view name;
    ValueType type;
};

// The symbols cmalign's rules read, with their type in every Kconfig that defines them (5.10,
// 6.1, 6.12, 7.2; tests/differential/config-reader checks the table against the trees).
constexpr KnownSymbol known_symbols[] = {
    {"ARCH_FORCE_MAX_ORDER", ValueType::integer},
    {"ARCH_PHYS_ADDR_T_64BIT", ValueType::boolean},
    {"ARM", ValueType::boolean},
    {"ARM64", ValueType::boolean},
    {"ARM64_16K_PAGES", ValueType::boolean},
    {"ARM64_4K_PAGES", ValueType::boolean},
    {"ARM64_64K_PAGES", ValueType::boolean},
    {"ARM_LPAE", ValueType::boolean},
    {"CMA", ValueType::boolean},
    {"CMA_ALIGNMENT", ValueType::integer},
    {"CMA_AREAS", ValueType::integer},
    {"CMA_SIZE_MBYTES", ValueType::integer},
    {"CMA_SIZE_PERCENTAGE", ValueType::integer},
    {"CMA_SIZE_SEL_MAX", ValueType::boolean},
    {"CMA_SIZE_SEL_MBYTES", ValueType::boolean},
    {"CMA_SIZE_SEL_MIN", ValueType::boolean},
    {"CMA_SIZE_SEL_PERCENTAGE", ValueType::boolean},
    {"CMDLINE", ValueType::string},
    {"CPU_SUPPORTS_HUGEPAGES", ValueType::boolean},
    {"DMA_CMA", ValueType::boolean},
    {"DMA_DECLARE_COHERENT", ValueType::boolean},
    {"DMA_RESTRICTED_POOL", ValueType::boolean},
    {"FORCE_MAX_ZONEORDER", ValueType::integer},
    {"HIGHMEM", ValueType::boolean},
    {"HIGHMEM64G", ValueType::boolean},
    {"HUGETLBFS", ValueType::boolean},
    {"HUGETLB_PAGE", ValueType::boolean},
    {"HUGETLB_PAGE_SIZE_VARIABLE", ValueType::boolean},
    {"LOONGARCH", ValueType::boolean},
    {"MIPS", ValueType::boolean},
    {"MIPS_HUGE_TLB_SUPPORT", ValueType::boolean},
    {"MMU", ValueType::boolean},
    {"MODULES", ValueType::boolean},
    {"NUMA", ValueType::boolean},
    {"PAGE_BLOCK_ORDER", ValueType::integer},
    {"PAGE_SHIFT", ValueType::integer},
    {"PAGE_SIZE_16KB", ValueType::boolean},
    {"PAGE_SIZE_256KB", ValueType::boolean},
    {"PAGE_SIZE_32KB", ValueType::boolean},
    {"PAGE_SIZE_4KB", ValueType::boolean},
    {"PAGE_SIZE_64KB", ValueType::boolean},
    {"PAGE_SIZE_8KB", ValueType::boolean},
    {"PCP_BATCH_SCALE_MAX", ValueType::integer},
    {"PHYS_64BIT", ValueType::boolean},
    {"PHYS_ADDR_T_64BIT", ValueType::boolean},
    {"PPC", ValueType::boolean},
    {"PPC32", ValueType::boolean},
    {"PPC64", ValueType::boolean},
    {"PPC_16K_PAGES", ValueType::boolean},
    {"PPC_256K_PAGES", ValueType::boolean},
    {"PPC_4K_PAGES", ValueType::boolean},
    {"PPC_64K_PAGES", ValueType::boolean},
    {"PPC_64S_HASH_MMU", ValueType::boolean},
    {"PPC_BOOK3E_64", ValueType::boolean},
    {"PPC_BOOK3S_64", ValueType::boolean},
    {"PPC_E500", ValueType::boolean},
    {"PPC_FSL_BOOK3E", ValueType::boolean},
    {"PPC_RADIX_MMU", ValueType::boolean},
    {"PREEMPT_RT", ValueType::boolean},
    {"RISCV", ValueType::boolean},
    {"SPARSEMEM", ValueType::boolean},
    {"TRANSPARENT_HUGEPAGE", ValueType::boolean},
    {"TRANSPARENT_HUGEPAGE_ALWAYS", ValueType::boolean},
    {"TRANSPARENT_HUGEPAGE_MADVISE", ValueType::boolean},
    {"TRANSPARENT_HUGEPAGE_NEVER", ValueType::boolean},
    {"X86", ValueType::boolean},
    {"X86_32", ValueType::boolean},
    {"X86_64", ValueType::boolean},
    {"X86_PAE", ValueType::boolean},
    {"XIP_KERNEL", ValueType::boolean},
    {"ZONE_DEVICE", ValueType::boolean},
    {"ZONE_DMA", ValueType::boolean},
    {"ZONE_DMA32", ValueType::boolean},
};

std::optional<ValueType> known_value_type(std::string_view name) {
    const auto* end = std::end(known_symbols);
    const auto* it =
        std::lower_bound(std::begin(known_symbols), end, name,
                         [](const KnownSymbol& k, std::string_view n) { return k.name < n; });
    if (it == end || it->name != name) return std::nullopt;
    return it->type;
}

// The reading of a value whose symbol's type is unknown here, by its first bytes. kconfig reads
// "y<anything>" as it reads "y" for every type (a bool/tristate takes the first letter, an int,
// hex or string symbol rejects both), and "\"abc\" junk" as "\"abc\"": these need no guess. A
// value no type takes is ignored as kconfig ignores it for every type (`any_type` says how). Only
// a hex number without 0x that is no int ("ff", "007") is read as hex on a guess (`assumed`).
struct ShapeReading {
    Verdict verdict;
    std::optional<ValueType> assumed;
    std::string any_type; // not accepted: what kconfig says for each type
};

ShapeReading read_by_shape(const std::string& name, std::string_view text, LineForm form,
                           const detail::ReadRules& rules) {
    ShapeReading r;
    auto as = [&](ValueType type) { return detail::value_for(type, name, text, form, rules); };
    const char first = text.empty() ? '\0' : text[0];
    if (form != LineForm::value) {
        r.verdict = as(ValueType::boolean);
    } else if (first == '"') {
        r.verdict = as(ValueType::string);
        if (!r.verdict.accepted) // unterminated: no type takes it
            r.any_type = fmt::format("a string symbol warns \"invalid string found\", any other "
                                     "\"symbol value '{}' invalid for {}\"",
                                     detail::printable(text), name);
    } else if (first == 'y' || first == 'n' || first == 'm') {
        r.verdict = as(ValueType::tristate);
    } else if (detail::valid_int(text)) {
        r.verdict = as(ValueType::integer);
    } else if (detail::valid_hex(text)) {
        r.verdict = as(ValueType::hex);
        if (!(text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')))
            r.assumed = ValueType::hex;
    } else {
        // No type takes it: bool, tristate, int and hex warn, a string symbol needs quotes.
        r.any_type = fmt::format("a bool, tristate, int or hex symbol warns \"symbol value '{}' "
                                 "invalid for {}\", a string symbol needs a quoted value",
                                 detail::printable(text), name);
    }
    return r;
}

std::string earlier_value(const Config& config, const std::string& name) {
    const Entry* e = config.find(name);
    if (!e) return {};
    return fmt::format("{} from {}", shown_value(*e), shown_place(e->where));
}

} // namespace

std::optional<std::string_view> known_type(std::string_view name) {
    auto type = known_value_type(without_prefix(name));
    if (!type) return std::nullopt;
    return std::string_view(detail::type_name(*type));
}

bool read_fragment(std::string_view text, const std::string& file, Config& into, Diagnostics& diags,
                   std::uint64_t /*max_errors*/) {
    // The newest kconfig's rules for the forms whose reading changed; a Kconfig evaluation
    // replays the lines with its tree's version.
    const detail::ReadRules rules;
    bool header_seen = into.header_version.has_value();
    int line_number = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        ++line_number;
        std::size_t newline = text.find('\n', pos);
        std::size_t line_end = newline == std::string_view::npos ? text.size() : newline;
        std::string_view line = text.substr(pos, line_end - pos);
        pos = newline == std::string_view::npos ? text.size() : newline + 1;
        // getline_stripped() (6.12) drops "\n" and then one "\r"; 5.10 and 6.1 strip the same
        // from a value. The last line without "\n" keeps its "\r".
        if (newline != std::string_view::npos && !line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        // The C string ends at the first NUL (kconfig reads nothing after it, without a word).
        if (auto nul = line.find('\0'); nul != std::string_view::npos) line = line.substr(0, nul);
        int column_offset = 0;
        if (line_number == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") { // UTF-8 byte-order mark
            // kconfig sees the three bytes: the first line is "unexpected data" or a comment.
            // Editors add them without showing them, so they are skipped here with a warning.
            line.remove_prefix(3);
            column_offset = 3;
            if (!line.empty() && line[0] != '#')
                diags.warning(Location{file, 1, 1},
                              "UTF-8 byte-order mark: kconfig reads it as part of the line and "
                              "ignores the line (\"unexpected data\"); cmalign reads the line "
                              "without it",
                              "config-ignored-line");
        }

        detail::LineResult r = detail::parse_line(line);
        Location where{file, line_number, r.column + column_offset};
        switch (r.kind) {
        case detail::LineKind::skipped:
            break;
        case detail::LineKind::header:
            if (!header_seen) {
                header_seen = true;
                if (!r.header_arch.empty()) into.header_arch = std::move(r.header_arch);
                into.header_version = std::move(r.header_version);
            }
            break;
        case detail::LineKind::ignored:
            diags.warning(std::move(where), std::move(r.message), std::move(r.check));
            break;
        case detail::LineKind::assignment: {
            Assignment a;
            a.name = r.name;
            a.text = r.text;
            a.form = r.form;
            a.where = where;
            Verdict verdict;
            auto known = known_value_type(r.name);
            std::optional<ValueType> assumed;
            std::string any_type;
            if (known) {
                verdict = detail::value_for(*known, r.name, r.text, r.form, rules);
            } else {
                auto shape = read_by_shape(r.name, r.text, r.form, rules);
                verdict = std::move(shape.verdict);
                assumed = shape.assumed;
                any_type = std::move(shape.any_type);
            }
            if (r.form == LineForm::not_set_suffix || r.form == LineForm::not_set_loose) {
                diags.warning(
                    where,
                    fmt::format("{}: kconfig {} unsets CONFIG_{}, newer versions "
                                "ignore the line without a word; cmalign ignores it "
                                "(with --kernel-tree, as that tree's kconfig does)",
                                r.form == LineForm::not_set_suffix ? "text after 'is not set'"
                                                                   : "no space after '#'",
                                r.form == LineForm::not_set_suffix ? "before 6.8" : "before 6.0",
                                r.name),
                    "config-ignored-line");
                a.reported = true;
            } else if (!verdict.accepted && !any_type.empty()) {
                std::string earlier = earlier_value(into, r.name);
                diags.warning(where,
                              fmt::format("kconfig ignores the line whatever the type of "
                                          "CONFIG_{} ({}); it keeps {}",
                                          r.name, any_type,
                                          earlier.empty() ? "the value it had (no earlier line "
                                                            "set it)"
                                                          : earlier),
                              "config-invalid-value");
                a.reported = true;
            } else if (!verdict.accepted) {
                diags.warning(
                    where, detail::rejected_message(verdict, r.name, earlier_value(into, r.name)),
                    verdict.kconfig_warning.empty() ? "config-ignored-value"
                                                    : "config-invalid-value");
                a.reported = true;
            } else if (assumed) {
                diags.warning(
                    where,
                    fmt::format("the type of CONFIG_{} is not known without --kernel-tree: "
                                "'{}' is read as a {} value (kconfig rejects it for a symbol "
                                "of any other type)",
                                r.name, detail::printable(verdict.value),
                                detail::type_name(*assumed)),
                    "config-type-assumed");
            }
            into.record(std::move(a));
            if (verdict.accepted)
                assign(into,
                       Entry{std::move(r.name),
                             std::move(verdict.value),
                             verdict.quoted,
                             {file, line_number, 1}},
                       diags);
            break;
        }
        }
    }
    return true;
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
    detail::SetResult r = detail::parse_set(assignment);
    if (!r.ok) {
        diags.error(Location{command_line_file, 0, 0},
                    fmt::format("invalid --set '{}': {} (column {})", detail::printable(assignment),
                                r.message, r.column));
        return false;
    }
    into.record(Assignment{r.name, r.value, LineForm::entry, r.quoted, {command_line_file, 0, 0}});
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
