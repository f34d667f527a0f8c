// The one bounded reader for text inputs that are not device-tree sources: .config fragments,
// boot logs, /proc/zoneinfo and sysctl files. Every one of them is read the same way:
//  - at most limits.file_bytes (also after decompression) and no line over limits.line_bytes;
//  - a character device or FIFO (/dev/kmsg, a pipe) is read non-blocking to its current end:
//    the records present now, then stop, never a wait for more;
//  - binary data is one located error, "not a text file", found in the first bytes (as git and
//    grep decide: a NUL byte in the first 8000), not one error per line of junk;
//  - with `decompress`, gzip, xz and zstd data (/proc/config.gz, config.xz, config.zst) and a
//    kernel image built with CONFIG_IKCONFIG (the IKCFG_ST marker scripts/extract-ikconfig looks
//    for, the image itself possibly gzip/xz/zstd-compressed) are read as the text they hold.
#pragma once

#include <optional>
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

// The file's text, or the one error that refused it.
std::optional<TextFileError> read_text_file(const std::string& path, const InputLimits& limits,
                                            const TextFileOptions& options, TextFile& out);

} // namespace cmalign
