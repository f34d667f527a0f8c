#include "cmalign/internal/core/text_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <lzma.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <fmt/format.h>

namespace cmalign {

namespace {

// An error about the whole file, built member by member: a brace-initialised TextFileError
// temporary makes GCC 12 at -O3 warn -Wmaybe-uninitialized in std::string's destructor.
TextFileError whole_file_error(const std::string& path, std::string message) {
    TextFileError e;
    e.where.file = path;
    e.message = std::move(message);
    return e;
}

// git's and grep's rule for "binary": a NUL byte among the first 8000 bytes.
constexpr std::size_t sniff_bytes = 8000;

constexpr std::string_view gzip_magic{"\x1f\x8b", 2};
constexpr std::string_view xz_magic{"\xfd"
                                    "7zXZ\0",
                                    6};
constexpr std::string_view zstd_magic{"\x28\xb5\x2f\xfd", 4};
// scripts/extract-ikconfig (6.12): cf1='IKCFG_ST\037\213\010' — the marker, then gzip data.
constexpr std::string_view ikconfig_marker{"IKCFG_ST\x1f\x8b\x08", 11};
constexpr std::size_t ikconfig_marker_length = 8; // "IKCFG_ST"

const char* compression_of(std::string_view data) {
    if (data.starts_with(gzip_magic)) return "gzip";
    if (data.starts_with(xz_magic)) return "xz";
    if (data.starts_with(zstd_magic)) return "zstd";
    return nullptr;
}

std::optional<std::size_t> first_nul(std::string_view data, std::size_t within) {
    auto at = data.substr(0, within).find('\0');
    if (at == std::string_view::npos) return std::nullopt;
    return at;
}

Location location_of(const std::string& path, std::string_view text, std::size_t offset) {
    auto clamp = [](std::size_t v) {
        return static_cast<int>(std::min<std::size_t>(v, std::numeric_limits<int>::max()));
    };
    auto before = text.substr(0, offset);
    std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
    auto line_start = before.rfind('\n');
    std::size_t column = offset - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
    return {path, clamp(line), clamp(column)};
}

std::string too_large(const InputLimits& limits, std::string_view what) {
    return fmt::format("{} is larger than {} bytes {}", what, limits.file_bytes,
                       limit_hint("file-bytes"));
}

// Decompressed `data` (one format, concatenated streams as the tools accept them) within
// limits.file_bytes; the error message otherwise.
std::optional<std::string> gunzip(std::string_view data, const InputLimits& limits,
                                  std::string& out, bool stop_at_end) {
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK) return "cannot start the gzip decoder";
    struct End {
        z_stream& z;
        ~End() { inflateEnd(&z); }
    } end{z};
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(std::min<std::size_t>(data.size(), UINT32_MAX));
    char buffer[1 << 16];
    for (;;) {
        z.next_out = reinterpret_cast<Bytef*>(buffer);
        z.avail_out = sizeof buffer;
        int rc = inflate(&z, Z_NO_FLUSH);
        std::size_t produced = sizeof buffer - z.avail_out;
        if (out.size() + produced > limits.file_bytes) return too_large(limits, "the gzip data");
        out.append(buffer, produced);
        if (rc == Z_STREAM_END) {
            // gzip(1) reads concatenated members; trailing zero padding is allowed too.
            if (stop_at_end || z.avail_in == 0) return std::nullopt;
            std::string_view rest(reinterpret_cast<const char*>(z.next_in), z.avail_in);
            if (!rest.starts_with(gzip_magic)) return std::nullopt;
            if (inflateReset(&z) != Z_OK) return "cannot restart the gzip decoder";
            continue;
        }
        if (rc == Z_OK) continue;
        if (rc == Z_BUF_ERROR && z.avail_in == 0) return "the gzip data is truncated";
        return fmt::format("corrupt gzip data ({})", z.msg ? z.msg : "inflate failed");
    }
}

std::optional<std::string> unxz(std::string_view data, const InputLimits& limits,
                                std::string& out) {
    lzma_stream s = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
        return "cannot start the xz decoder";
    struct End {
        lzma_stream& s;
        ~End() { lzma_end(&s); }
    } end{s};
    s.next_in = reinterpret_cast<const std::uint8_t*>(data.data());
    s.avail_in = data.size();
    std::uint8_t buffer[1 << 16];
    for (;;) {
        s.next_out = buffer;
        s.avail_out = sizeof buffer;
        lzma_ret rc = lzma_code(&s, s.avail_in == 0 ? LZMA_FINISH : LZMA_RUN);
        std::size_t produced = sizeof buffer - s.avail_out;
        if (out.size() + produced > limits.file_bytes) return too_large(limits, "the xz data");
        out.append(reinterpret_cast<const char*>(buffer), produced);
        if (rc == LZMA_STREAM_END) return std::nullopt;
        if (rc == LZMA_OK) continue;
        if (rc == LZMA_BUF_ERROR) return "the xz data is truncated";
        return fmt::format("corrupt xz data (liblzma error {})", static_cast<int>(rc));
    }
}

std::optional<std::string> unzstd(std::string_view data, const InputLimits& limits,
                                  std::string& out) {
    ZSTD_DStream* z = ZSTD_createDStream();
    if (!z) return "cannot start the zstd decoder";
    struct End {
        ZSTD_DStream* z;
        ~End() { ZSTD_freeDStream(z); }
    } end{z};
    ZSTD_inBuffer in{data.data(), data.size(), 0};
    char buffer[1 << 16];
    for (;;) {
        ZSTD_outBuffer o{buffer, sizeof buffer, 0};
        std::size_t rc = ZSTD_decompressStream(z, &o, &in);
        if (ZSTD_isError(rc)) return fmt::format("corrupt zstd data ({})", ZSTD_getErrorName(rc));
        if (out.size() + o.pos > limits.file_bytes) return too_large(limits, "the zstd data");
        out.append(buffer, o.pos);
        // All input read and the output not full: the decoder holds nothing more. rc 0: the
        // last frame is complete.
        if (in.pos == in.size && o.pos < sizeof buffer) {
            if (rc != 0) return "the zstd data is truncated";
            break;
        }
    }
    return std::nullopt;
}

std::optional<std::string> decompress(const char* format, std::string_view data,
                                      const InputLimits& limits, std::string& out) {
    std::string_view f = format;
    if (f == "gzip") return gunzip(data, limits, out, false);
    if (f == "xz") return unxz(data, limits, out);
    return unzstd(data, limits, out);
}

// The raw bytes: to EOF, or for a device/FIFO to its current end (EAGAIN on a non-blocking
// descriptor). `sniff` decides on the first bytes whether to go on (binary junk stops early).
struct RawRead {
    std::string bytes;
    bool stopped_early = false; // sniff said no: `bytes` holds the start only
};

std::optional<TextFileError> read_raw(const std::string& path, const InputLimits& limits,
                                      const TextFileOptions& options, RawRead& raw) {
    auto failure = [&](int error_number) {
        return whole_file_error(path, fmt::format("cannot read {}: {}", options.what,
                                                  std::generic_category().message(error_number)));
    };
    if (auto piped = anonymous_pipe_bytes(path, limits.file_bytes)) {
        if (piped->error != 0) return failure(piped->error);
        if (piped->truncated || piped->bytes.size() > limits.file_bytes)
            return whole_file_error(path, too_large(limits, "file"));
        raw.bytes = std::move(piped->bytes);
        return std::nullopt;
    }
    // O_NONBLOCK: a FIFO opens without a writer, and a device read ends at its current end.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return failure(errno);
    struct Close {
        int fd;
        ~Close() { ::close(fd); }
    } close_fd{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) return failure(errno);
    if (S_ISDIR(st.st_mode)) return failure(EISDIR);
    const bool regular = S_ISREG(st.st_mode);
    if (regular && st.st_size > 0)
        raw.bytes.reserve(static_cast<std::size_t>(
            std::min<std::uint64_t>(static_cast<std::uint64_t>(st.st_size), limits.file_bytes)));
    char buffer[1 << 16];
    bool sniffed = false;
    for (;;) {
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break; // the current end
            // /dev/kmsg: records were overwritten since the last read; the next read goes on.
            if (errno == EPIPE && S_ISCHR(st.st_mode)) continue;
            return failure(errno);
        }
        if (raw.bytes.size() + static_cast<std::size_t>(n) > limits.file_bytes)
            return whole_file_error(path, too_large(limits, "file"));
        raw.bytes.append(buffer, static_cast<std::size_t>(n));
        // Binary junk stops the read at once: a device like /dev/urandom never ends, and an
        // 80 MB binary is not read whole to say it is not text. A regular file that may hold a
        // compressed configuration or a kernel image is read whole (within file-bytes).
        if (!sniffed && (raw.bytes.size() >= sniff_bytes || !regular)) {
            sniffed = true;
            bool maybe_packed = options.decompress && (compression_of(raw.bytes) || regular);
            if (!maybe_packed && first_nul(raw.bytes, sniff_bytes)) {
                raw.stopped_early = true;
                return std::nullopt;
            }
        }
    }
    return std::nullopt;
}

// The pipes read so far, by (device, inode): a pipe's inode stays unique while the pipe lives.
std::mutex pipes_mutex;
std::map<std::pair<dev_t, ino_t>, PipeBytes> pipes_read;
int open_scopes = 0;         // RunScope
std::uint64_t scope_run = 0; // RunScope::current() while open_scopes > 0
std::uint64_t runs_opened = 0;
std::vector<std::shared_ptr<void>> freed_at_close; // RunScope::free_at_close

} // namespace

std::optional<PipeBytes> anonymous_pipe_bytes(const std::string& path, std::size_t max_bytes) {
    struct stat st {};
    // stat() follows /dev/stdin → /proc/self/fd/0 → the pipe; a regular file costs this only.
    if (::stat(path.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode)) return std::nullopt;
    // O_NONBLOCK: a named FIFO without a writer opens at once (and is not ours to take whole).
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return std::nullopt; // the reader that follows reports why
    struct Close {
        int fd;
        ~Close() { ::close(fd); }
    } close_fd{fd};
    // The descriptor's /proc link says "pipe:[inode]" for an anonymous pipe, a path for a FIFO.
    char target[64];
    auto link = fmt::format("/proc/self/fd/{}", fd);
    ssize_t length = ::readlink(link.c_str(), target, sizeof target - 1);
    if (length <= 0 ||
        !std::string_view(target, static_cast<std::size_t>(length)).starts_with("pipe:["))
        return std::nullopt;
    if (::fstat(fd, &st) != 0) return std::nullopt;
    std::lock_guard lock(pipes_mutex);
    const auto key = std::make_pair(st.st_dev, st.st_ino);
    if (auto it = pipes_read.find(key); it != pipes_read.end()) return it->second;
    PipeBytes out;
    int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
        out.error = errno;
        return out;
    }
    char buffer[1 << 16];
    for (;;) {
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            out.error = errno;
            return out; // not kept: a read error is reported, not replayed as content
        }
        auto room = max_bytes - out.bytes.size();
        if (static_cast<std::size_t>(n) > room) {
            out.bytes.append(buffer, room);
            out.truncated = true;
            break;
        }
        out.bytes.append(buffer, static_cast<std::size_t>(n));
    }
    pipes_read.emplace(key, out);
    return out;
}

RunScope::RunScope() {
    std::lock_guard lock(pipes_mutex);
    if (open_scopes++ == 0) scope_run = ++runs_opened;
}

RunScope::~RunScope() {
    std::vector<std::shared_ptr<void>> to_free; // freed after the lock is released
    std::lock_guard lock(pipes_mutex);
    if (--open_scopes == 0) {
        pipes_read.clear();
        scope_run = 0;
        to_free.swap(freed_at_close);
    }
}

void RunScope::free_at_close(std::shared_ptr<void> object) {
    std::lock_guard lock(pipes_mutex);
    if (open_scopes > 0) freed_at_close.push_back(std::move(object));
    // else `object` is freed on return, after the lock is released
}

std::uint64_t RunScope::current() {
    std::lock_guard lock(pipes_mutex);
    return scope_run;
}

std::optional<std::size_t> read_file_prefix(const std::string& path, std::span<std::uint8_t> out) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::size_t got = 0;
    while (got < out.size()) {
        const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return got;
}

std::optional<std::string> read_whole_input(const std::string& path) {
    if (auto piped = anonymous_pipe_bytes(path, InputLimits{}.file_bytes)) {
        if (piped->error != 0 || piped->truncated) return std::nullopt;
        return std::move(piped->bytes);
    }
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
    if (!in) return std::nullopt;
    std::string text;
    char buffer[1 << 16];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, in.get())) > 0)
        text.append(buffer, n);
    if (std::ferror(in.get())) return std::nullopt;
    return text;
}

std::optional<TextFileError> read_text_file(const std::string& path, const InputLimits& limits,
                                            const TextFileOptions& options, TextFile& out) {
    RawRead raw;
    if (auto error = read_raw(path, limits, options, raw)) return error;
    out.text = std::move(raw.bytes);
    out.unpacked_from.clear();
    if (options.decompress && !raw.stopped_early) {
        if (const char* format = compression_of(out.text)) {
            std::string unpacked;
            if (auto error = decompress(format, out.text, limits, unpacked))
                return whole_file_error(path, *error);
            out.text = std::move(unpacked);
            out.unpacked_from = format;
        }
        if (first_nul(out.text, sniff_bytes)) {
            if (auto at = out.text.find(ikconfig_marker); at != std::string::npos) {
                std::string config;
                auto gz = std::string_view(out.text).substr(at + ikconfig_marker_length);
                if (auto error = gunzip(gz, limits, config, true))
                    return whole_file_error(
                        path, fmt::format("the kernel image's IKCONFIG data: {}", *error));
                out.text = std::move(config);
                out.unpacked_from += out.unpacked_from.empty() ? "IKCONFIG" : ", IKCONFIG";
            }
        }
    }
    if (auto nul = first_nul(out.text, sniff_bytes)) {
        if (!out.unpacked_from.empty()) // the location would be in bytes nobody can see
            return whole_file_error(path,
                                    fmt::format("not a text file: the {} data holds a NUL byte at "
                                                "offset {}",
                                                out.unpacked_from, *nul));
        std::string hint = options.decompress
                               ? " (gzip, xz and zstd files and kernel images with IKCONFIG are "
                                 "read; this is none of them)"
                               : "";
        return TextFileError{location_of(path, out.text, *nul),
                             fmt::format("not a text file: a NUL byte at offset {}{}", *nul, hint)};
    }
    if (auto long_line = first_line_over(out.text, limits.line_bytes))
        return TextFileError{long_line_location(path, *long_line, limits),
                             long_line_message(*long_line, limits)};
    return std::nullopt;
}

} // namespace cmalign
