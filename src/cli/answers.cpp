// Whole answers of `check` in the on-disk cache (answers.hpp).
#include "answers.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "cmalign/api.hpp"
#include "cmalign/internal/core/disk_cache.hpp"

namespace cmalign::cli::answers {

namespace {

namespace fs = std::filesystem;

constexpr const char* kind = "answer";
constexpr const char* format_line = "cmalign-answer\t1";
// Distinct command lines (boards, formats) seen in a repository's recent history.
constexpr std::size_t kept_entries = 256;
constexpr const char* alias_kind = "typed";
constexpr const char* alias_format_line = "cmalign-typed-answer\t1";

} // namespace

std::string key(std::string_view command, std::string_view request, std::string_view context) {
    std::error_code ec;
    return fmt::format("build={}\ncommand={}\ncwd={}\n", source_stamp(), command,
                       fs::current_path(ec).string()) +
           disk_cache::line({"request", request}) + disk_cache::line({"context", context});
}

std::optional<Answer> find(const std::string& dir, const std::string& key) {
    const auto entry = disk_cache::entry_path(dir, kind, key);
    auto text = disk_cache::read_entry(entry);
    if (!text) return std::nullopt;
    Answer answer;
    bool has_exit = false;
    bool ok = disk_cache::read_lines(
        *text, format_line, key,
        [&](const auto& f) {
            if (f.size() == 2 && (f[0] == "1" || f[0] == "2")) {
                answer.chunks.emplace_back(f[0] == "1" ? 1 : 2, f[1]);
            } else if (f.size() == 2 && f[0] == "exit" && (f[1] == "0" || f[1] == "1")) {
                // Only clean and findings are kept: an input error is recomputed, so that it is
                // reported from the inputs as they are now.
                answer.exit = f[1] == "0" ? ExitCode::clean : ExitCode::findings;
                has_exit = true;
            } else {
                return false;
            }
            return true;
        },
        &entry);
    if (!ok || !has_exit) return std::nullopt;
    return answer;
}

bool store(const std::string& dir, const std::string& key, const std::vector<std::string>& sources,
           const Answer& answer) {
    if (answer.exit == ExitCode::input_error) return false;
    std::string text = std::string(format_line) + "\n" + disk_cache::line({"key", key});
    for (const auto& file : sources) {
        // Only regular files have an identity that says when they change (stamp() takes no
        // other): a -c /dev/stdin or /proc/config.gz would keep its size and time with other
        // content.
        auto s = disk_cache::stamp(file);
        if (!s) return false; // gone already, or not a regular file: nothing worth keeping
        text += disk_cache::stamp_line(*s);
    }
    std::size_t bytes_out = 0;
    for (const auto& chunk : answer.chunks)
        bytes_out += chunk.second.size() + 3;
    text.reserve(text.size() + bytes_out + bytes_out / 16 + 64); // escapes: a newline per line
    for (const auto& [stream, bytes] : answer.chunks) {
        text += stream == 1 ? "1\t" : "2\t"; // escaped in place: no copy of megabytes
        disk_cache::escape_to(text, bytes);
        text += '\n';
    }
    text += disk_cache::line({"exit", answer.exit == ExitCode::clean ? "0" : "1"});
    text += "end\n";
    auto path = disk_cache::entry_path(dir, kind, key);
    if (!disk_cache::write_entry(path, text)) return false;
    disk_cache::prune(dir, kind, kept_entries);
    return true;
}

std::optional<std::string> find_alias(const std::string& dir, const std::string& typed) {
    const auto entry = disk_cache::entry_path(dir, alias_kind, typed);
    auto text = disk_cache::read_entry(entry);
    if (!text) return std::nullopt;
    std::optional<std::string> key;
    bool ok = disk_cache::read_lines(*text, alias_format_line, typed, [&](const auto& f) {
        if (f.size() != 2 || f[0] != "answer" || key) return false;
        key = f[1];
        return true;
    });
    if (!ok) return std::nullopt;
    return key;
}

void store_alias(const std::string& dir, const std::string& typed, const std::string& key) {
    const std::string text = std::string(alias_format_line) + "\n" +
                             disk_cache::line({"key", typed}) + disk_cache::line({"answer", key}) +
                             "end\n";
    const auto path = disk_cache::entry_path(dir, alias_kind, typed);
    if (disk_cache::write_entry(path, text)) disk_cache::prune(dir, alias_kind, kept_entries);
}

std::optional<std::vector<std::string>> check_sources(const CheckRequest& request,
                                                      const CheckOutcome& outcome) {
    if (!check_keepable(request)) return std::nullopt;
    return outcome.sources;
}

bool check_keepable(const CheckRequest& request) {
    // --kconfig-shell: the answer also depends on the toolchain the probes ran, which no entry
    // records (the Kconfig entries are not kept either).
    if (!request.affected_by.empty() || request.config.kconfig_shell) return false;
    std::error_code ec;
    for (const auto& input : request.inputs)
        if (fs::is_directory(input, ec)) return false;
    return true;
}

} // namespace cmalign::cli::answers
