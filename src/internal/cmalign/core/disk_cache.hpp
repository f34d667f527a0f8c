// The pieces of cmalign's on-disk cache (--cache-dir): file identities that say whether an entry
// is still valid, the entries' line format, and writes that concurrent runs can share.
//
// An entry is one file, written to a temporary name in the same directory and renamed into place
// (rename(2) is atomic), so a reader sees a whole entry or none; no lock is held across a run.
// It records every file its answer was computed from, with size, mtime and a content hash. It is
// used only when each file is unchanged: same size and mtime, or — when the mtime moved, or the
// file was written in the two seconds before the entry (a change within the clock's resolution
// could keep the mtime: git's "racy" rule) — the same content hash. Anything unreadable,
// truncated or of another format is ignored and rewritten.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cmalign::disk_cache {

struct Stamp {
    std::string path;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t hash = 0; // FNV-1a 64 of the content
    bool racy = false;      // written within 2 s of the entry: always compared by content
};

// FNV-1a, 64 bits: names entries (the full key is stored and compared) and fingerprints content.
std::uint64_t fnv1a(std::string_view bytes, std::uint64_t seed = 0xcbf29ce484222325ull);

// The identity of `path` now; nullopt when it cannot be read.
std::optional<Stamp> stamp(const std::string& path);
// Whether `s` still describes the file (see above).
bool unchanged(const Stamp& s);

// One line of an entry: fields separated by tabs; backslash, tab, CR and LF escaped.
std::string escape(std::string_view text);
std::string line(std::initializer_list<std::string_view> fields);
// The fields of one line (unescaped).
std::vector<std::string> fields(std::string_view line);

// An entry's "file" line for `s` (path, size, mtime, hash, racy), and `s` back from the fields
// of such a line (nullopt when malformed).
std::string stamp_line(const Stamp& s);
std::optional<Stamp> parse_stamp(const std::vector<std::string>& fields);

// "<dir>/<kind>-<16 hex digits of fnv1a(key)>".
std::filesystem::path entry_path(const std::string& dir, std::string_view kind,
                                 std::string_view key);
// Whole file or nullopt.
std::optional<std::string> read_entry(const std::filesystem::path& file);
// Creates the directory, writes a temporary file beside `file`, renames it over `file`; false
// (and nothing left behind) when any step fails: a cache that cannot be written is no error.
bool write_entry(const std::filesystem::path& file, const std::string& content);
// Keeps the `keep` most recently written entries of `kind` in `dir`, deleting older ones.
void prune(const std::string& dir, std::string_view kind, std::size_t keep);

} // namespace cmalign::disk_cache
