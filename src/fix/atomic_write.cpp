// Atomic file replacement: temp file beside the target, same permissions, fsync, rename.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cmalign/fix/fix.hpp"
#include "cmalign/internal/core/text_file.hpp"

namespace cmalign::fix {

namespace {

namespace fs = std::filesystem;

struct Pending {
    std::string target; // the real file (symlinks resolved)
    std::string temp;
};

std::string errno_text() {
    return std::strerror(errno);
}

// Every byte to `fd` (a short write or EINTR goes on); false with errno set otherwise.
bool write_all(int fd, std::string_view bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// Writes `bytes` to a new temp file in the directory of `target`; the temp's name on success.
std::optional<std::string> write_temp(const std::string& target, std::string_view bytes,
                                      Diagnostics& diags) {
    fs::path t(target);
    auto dir = t.has_parent_path() ? t.parent_path() : fs::path(".");
    std::string pattern = (dir / fmt::format(".{}.cmalign-XXXXXX", t.filename().string())).string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    if (fd < 0) {
        diags.error({target, 0, 0},
                    fmt::format("cannot create a temporary file in {}: {}; nothing written",
                                dir.string(), errno_text()));
        return std::nullopt;
    }
    std::string temp(name.data());
    auto fail = [&](const char* what) {
        diags.error({target, 0, 0},
                    fmt::format("{} {}: {}; nothing written", what, temp, errno_text()));
        ::close(fd);
        ::unlink(temp.c_str());
        return std::nullopt;
    };
    // Keep the permissions of the file it replaces; a new file gets 0644.
    struct stat st {};
    mode_t mode = ::stat(target.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
    if (::fchmod(fd, mode) != 0) return fail("cannot set permissions of");
    // Keep the owner too where we may (root); otherwise the file becomes ours, as with sed -i.
    if (::stat(target.c_str(), &st) == 0 && (st.st_uid != ::geteuid() || st.st_gid != ::getegid()))
        [[maybe_unused]]
        int ignored = ::fchown(fd, st.st_uid, st.st_gid);
    if (!write_all(fd, bytes)) return fail("cannot write");
    if (::fsync(fd) != 0) return fail("cannot sync");
    if (::close(fd) != 0) {
        diags.error({target, 0, 0}, fmt::format("cannot close {}: {}", temp, errno_text()));
        ::unlink(temp.c_str());
        return std::nullopt;
    }
    return temp;
}

// The file a path really names: symlinks followed, so renaming over it keeps the link.
std::string real_target(const std::string& path) {
    std::error_code ec;
    auto real = fs::canonical(path, ec);
    if (!ec) return real.string();
    // Not there yet (an -o target): resolve the directory only.
    fs::path p(path);
    auto dir = fs::canonical(p.has_parent_path() ? p.parent_path() : fs::path("."), ec);
    return ec ? path : (dir / p.filename()).string();
}

// What is on disk now, for the "changed since it was read" comparison; nullopt if unreadable.
std::optional<std::string> current_content(const std::string& path) {
    return read_whole_input(path);
}

// The one rule for every write (fix --in-place, fix -o, map -o): a target that exists and is
// read-only is refused with the reason, never replaced behind the user's back. Read-only means
// no write permission bit at all (0444, even for root, as `rm` asks about it) or not writable
// by this user.
std::optional<std::string> read_only_reason(const std::string& shown, const std::string& target) {
    struct stat st {};
    if (::stat(target.c_str(), &st) != 0) return std::nullopt; // a new file
    if ((st.st_mode & 0222) == 0 || ::access(target.c_str(), W_OK) != 0)
        return fmt::format("permission denied: {} is read-only (mode {:04o}); nothing written",
                           shown, st.st_mode & 07777);
    return std::nullopt;
}

// What a path that exists but is no regular file is, for the message; nullopt for a regular
// file or a new one. stat() follows /dev/stdout to what the descriptor is.
std::optional<std::string> not_regular(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        // A dangling link (/dev/stdin with stdin closed) is not a place to create a file either.
        if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return "a dangling link";
        return std::nullopt;
    }
    if (S_ISREG(st.st_mode)) return std::nullopt;
    if (S_ISDIR(st.st_mode)) return "a directory";
    if (S_ISFIFO(st.st_mode)) return "a pipe";
    if (S_ISCHR(st.st_mode)) return "a character device";
    if (S_ISSOCK(st.st_mode)) return "a socket";
    return "not a regular file";
}

// The descriptor a path names (- or /dev/stdout → /proc/self/fd/1: 1), following its links; -1 if
// none. Such a target is written through that descriptor, so a shell's `>>` or `| tool` gets
// the bytes where it expects them.
int named_descriptor(const std::string& path) {
    if (path == "-") return STDOUT_FILENO; // -o -, as filters spell stdout
    fs::path at = path;
    std::error_code ec;
    for (int hop = 0; hop < 8; ++hop) {
        for (std::string_view prefix : {"/proc/self/fd/", "/dev/fd/"}) {
            const std::string s = at.string();
            if (s.starts_with(prefix)) {
                int fd = -1;
                auto digits = std::string_view(s).substr(prefix.size());
                auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
                return err == std::errc{} && end == digits.data() + digits.size() ? fd : -1;
            }
        }
        auto next = fs::read_symlink(at, ec);
        if (ec) return -1;
        at = next.is_absolute() ? next : at.parent_path() / next;
    }
    return -1;
}

// -o /dev/stdout, -o a pipe or device: the bytes written through, as a filter writes (there is
// nothing to rename over: replacing /dev/stdout would replace the link itself).
bool write_through(const std::string& path, std::string_view bytes, Diagnostics& diags) {
    int named = named_descriptor(path);
    int fd = named >= 0 ? named : ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        diags.error({path, 0, 0}, fmt::format("cannot open for writing: {}", errno_text()));
        return false;
    }
    struct Close {
        int fd;
        bool owned;
        ~Close() {
            if (owned) ::close(fd);
        }
    } close_fd{fd, named < 0};
    if (!write_all(fd, bytes)) {
        diags.error({path, 0, 0}, fmt::format("cannot write: {}", errno_text()));
        return false;
    }
    return true;
}

void sync_directory(const std::string& file) {
    fs::path p(file);
    int fd = ::open(p.parent_path().c_str(), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

} // namespace

bool write_changes(std::span<const FileChange> changes, Diagnostics& diags,
                   const std::optional<std::string>& out_path) {
    if (out_path && changes.size() != 1) {
        diags.error({*out_path, 0, 0},
                    fmt::format("-o writes one file, but the changes touch {}; nothing written",
                                changes.size()));
        return false;
    }
    // Only a regular file is rewritten through a temp file and a rename. In place, anything else
    // is refused (renaming over /dev/stdin replaces the link, not the board); -o writes through.
    for (const auto& c : changes) {
        const std::string& shown = out_path ? *out_path : c.file;
        if (out_path && named_descriptor(shown) >= 0)
            return write_through(shown, c.new_content, diags);
        auto what = not_regular(shown);
        if (!what) continue;
        if (out_path && *what != "a directory" && *what != "a dangling link")
            return write_through(shown, c.new_content, diags);
        diags.error({shown, 0, 0},
                    out_path
                        ? fmt::format("cannot write to {}: it is {}; nothing written", shown, *what)
                        : fmt::format("cannot rewrite {} in place: it is {}, not a regular "
                                      "file; use -o FILE or --diff; nothing written",
                                      shown, *what));
        return false;
    }
    std::vector<Pending> pending;
    auto discard = [&] {
        for (const auto& p : pending)
            ::unlink(p.temp.c_str());
        return false;
    };
    for (const auto& c : changes) {
        const std::string& shown = out_path ? *out_path : c.file;
        std::string target = real_target(shown);
        if (auto why = read_only_reason(shown, target)) {
            diags.error({shown, 0, 0}, std::move(*why));
            return discard();
        }
        auto temp = write_temp(target, c.new_content, diags);
        if (!temp) return discard();
        pending.push_back({target, *temp});
    }
    // Every temp file is complete. A file edited by someone else since it was read (an editor,
    // a concurrent fix) is not overwritten: its content, not only its mtime, is compared.
    if (!out_path) {
        for (const auto& c : changes) {
            auto now = current_content(c.file);
            if (!now || *now != c.old_content) {
                diags.error({c.file, 0, 0},
                            now ? "the file changed since cmalign read it; nothing written (run "
                                  "fix again)"
                                : "the file can no longer be read; nothing written");
                return discard();
            }
        }
    }
    // Now rename them all. Should one rename fail, the files already replaced get their old
    // content back (again through a temp file), so the set of files stays as it was.
    for (std::size_t i = 0; i < pending.size(); ++i) {
        if (::rename(pending[i].temp.c_str(), pending[i].target.c_str()) != 0) {
            diags.error({pending[i].target, 0, 0},
                        fmt::format("cannot replace the file: {}; nothing written", errno_text()));
            for (std::size_t j = i; j < pending.size(); ++j)
                ::unlink(pending[j].temp.c_str());
            for (std::size_t j = 0; j < i && !out_path; ++j) {
                auto restore = write_temp(pending[j].target, changes[j].old_content, diags);
                if (!restore || ::rename(restore->c_str(), pending[j].target.c_str()) != 0)
                    diags.error({pending[j].target, 0, 0},
                                "could not restore the previous content after the failed "
                                "rename: this file holds the fixed content");
            }
            return false;
        }
        sync_directory(pending[i].target);
    }
    return true;
}

bool write_file_atomically(const std::string& path, std::string_view bytes, Diagnostics& diags) {
    FileChange c;
    c.file = path;
    c.new_content = std::string(bytes);
    // As -o: the whole file is new content, so there is no earlier read to compare with.
    return write_changes(std::span<const FileChange>(&c, 1), diags, path);
}

} // namespace cmalign::fix
