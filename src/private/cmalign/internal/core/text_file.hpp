// The one bounded reader for text inputs that are not device-tree sources: .config fragments,
// boot logs, /proc/zoneinfo and sysctl files. Every one of them is read the same way:
//  - at most limits.file_bytes (also after decompression) and no line over limits.line_bytes;
//  - a character device or named FIFO (/dev/kmsg, a VM's console) is read non-blocking to its
//    current end: the records present now, then stop, never a wait for more; an anonymous pipe
//    is read to its writer's end, as a filter does, and once (anonymous_pipe_bytes);
//  - binary data is one located error, "not a text file", found in the first bytes (as git and
//    grep decide: a NUL byte in the first 8000), not one error per line of junk;
//  - with `decompress`, gzip, xz and zstd data (/proc/config.gz, config.xz, config.zst) and a
//    kernel image built with CONFIG_IKCONFIG (the IKCFG_ST marker scripts/extract-ikconfig looks
//    for, the image itself possibly gzip/xz/zstd-compressed) are read as the text they hold.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/limits.hpp"

namespace cmalign {

struct TextFileOptions {
    std::string what = "file"; // "cannot read WHAT: No such file or directory"
    bool decompress = false;
};

struct TextFile {
    std::string text;
    // How the text was found: "" (as is), "gzip", "xz", "zstd", "IKCONFIG" (a kernel image's
    // embedded configuration) or "xz, IKCONFIG" (in a compressed image).
    std::string unpacked_from;
};

struct TextFileError {
    Location where;
    std::string message;
};

// An anonymous pipe can be read once, and a command reads an input more than once (a .config's
// header for its arch, then the evaluation; explain's check and fix plan). The first read of a
// path leading to a pipe (`cat x.config | cmalign … -c /dev/stdin`, `dmesg | cmalign explain
// /dev/stdin …`, `cat board.dts | cmalign check /dev/stdin`) takes it to its writer's end, at most
// `max_bytes`, and the bytes are kept for the process; every later read of that pipe gets them.
struct PipeBytes {
    std::string bytes;
    bool truncated = false; // the pipe held more than max_bytes
    int error = 0;          // errno of a failed read
};
// nullopt when `path` is not an anonymous pipe (a file, a named FIFO, a device, missing).
std::optional<PipeBytes> anonymous_pipe_bytes(const std::string& path, std::size_t max_bytes);

// One run of a command, in which every input is taken as first seen: a pipe's kept bytes and a
// file's cache stamp (disk_cache::stamp) live while any scope is open (each run_* entry point
// opens one, the program one for its whole run), so a process that runs many commands on many
// pipes (a BSP tool linking the library) does not keep them all.
class RunScope {
public:
    RunScope();
    ~RunScope();
    RunScope(const RunScope&) = delete;
    RunScope& operator=(const RunScope&) = delete;

    // Which run is open (nested scopes share the outermost one's); 0 when none is.
    static std::uint64_t current();

    // Hands over an object whose only job left is to be freed (a bulk check's include memos and
    // results: hundreds of MB in millions of blocks): the outermost scope frees it when it
    // closes, or at once when none is open. A program that ends without closing its scope (the
    // command line, whose last act is exiting) never spends time freeing it.
    static void free_at_close(std::shared_ptr<void> object);
};

// An object shared by a run's workers (a bulk check's file cache) that is handed to
// RunScope::free_at_close() when it goes out of scope instead of being freed there.
template <class T> class FreedAtClose {
public:
    FreedAtClose() : object_(std::make_shared<T>()) {}
    ~FreedAtClose() { RunScope::free_at_close(std::move(object_)); }
    FreedAtClose(const FreedAtClose&) = delete;
    FreedAtClose& operator=(const FreedAtClose&) = delete;

    T& operator*() const { return *object_; }

private:
    std::shared_ptr<T> object_;
};

// The whole content of `path` as it was read in this run (a pipe's kept bytes), for the readers
// that come back to an input: fix's edits, the source lines of a report. nullopt: unreadable.
std::optional<std::string> read_whole_input(const std::string& path);

// The first bytes of a file, up to out.size(), with plain open/read (a whole tree sniffs a
// thousand boards for the DTB magic: no stream buffer or locale each). Returns how many were
// read; nullopt when the file cannot be opened.
std::optional<std::size_t> read_file_prefix(const std::string& path, std::span<std::uint8_t> out);

// The file's text, or the one error that refused it.
std::optional<TextFileError> read_text_file(const std::string& path, const InputLimits& limits,
                                            const TextFileOptions& options, TextFile& out);

} // namespace cmalign
