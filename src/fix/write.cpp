// Atomic file replacement: temp file beside the target, same permissions, fsync, rename.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

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
        std::string target = real_target(out_path ? *out_path : c.file);
        auto temp = write_temp(target, c.new_content, diags);
        if (!temp) return discard();
        pending.push_back({target, *temp});
    }
    // Every temp file is complete: now rename them all.
    for (std::size_t i = 0; i < pending.size(); ++i) {
        if (::rename(pending[i].temp.c_str(), pending[i].target.c_str()) != 0) {
            diags.error({pending[i].target, 0, 0},
                        fmt::format("cannot replace the file: {}", errno_text()));
            for (std::size_t j = i; j < pending.size(); ++j)
                ::unlink(pending[j].temp.c_str());
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
    return write_changes(std::span<const FileChange>(&c, 1), diags);
}

} // namespace cmalign::fix
