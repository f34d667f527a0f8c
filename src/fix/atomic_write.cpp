// Atomic file replacement: temp file beside the target, same permissions, fsync, rename.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cmalign/fix/fix.hpp"

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
    std::size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail("cannot write");
        }
        done += static_cast<std::size_t>(n);
    }
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
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
    if (!in) return std::nullopt;
    std::string text;
    char buffer[65536];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, in.get())) > 0)
        text.append(buffer, n);
    if (std::ferror(in.get())) return std::nullopt;
    return text;
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
