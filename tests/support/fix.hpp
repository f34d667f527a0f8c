// Helpers for fix tests: temp directories, files, running the CLI, models.
#pragma once

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include "cmalign/api.hpp"
#include "cmalign/kernel/model.hpp"
#include "support/run.hpp"

namespace fix_test {

namespace fs = std::filesystem;
using cmalign::test::read_file;
using cmalign::test::Run;
using cmalign::test::run_shell;

// A fresh directory under the temp dir, removed when the object dies.
struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& name) {
        path = fs::temp_directory_path() /
               ("cmalign-fix-test-" + name + "-" + std::to_string(::getpid()));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(path, ec);
    }
    std::string operator/(const std::string& name) const { return (path / name).string(); }
};

inline void write_file(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream out(path, std::ios::binary);
    out << text;
}

// Bytes and modification time, to prove a file was not touched.
struct Snapshot {
    std::string bytes;
    struct timespec mtime {};
    ino_t inode = 0;
    explicit Snapshot(const std::string& path) {
        bytes = read_file(path);
        struct stat st {};
        REQUIRE(::stat(path.c_str(), &st) == 0);
        mtime = st.st_mtim;
        inode = st.st_ino;
    }
    bool unchanged(const std::string& path) const {
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) return false;
        return read_file(path) == bytes && st.st_mtim.tv_sec == mtime.tv_sec &&
               st.st_mtim.tv_nsec == mtime.tv_nsec && st.st_ino == inode;
    }
};

inline Run run_cli(const std::string& args) {
    return run_shell(std::string(CMALIGN_CLI) + " " + args);
}

inline std::string config_16k() {
    return std::string(CMALIGN_SOURCE_DIR) + "/examples/configs/arm64-16k.config";
}

inline cmalign::kernel::Model model_16k(const std::string& version = "") {
    cmalign::ConfigOptions o;
    o.config_files = {config_16k()};
    if (!version.empty()) o.kernel_version = version;
    cmalign::Diagnostics diags;
    auto m = cmalign::load_model(o, diags);
    REQUIRE(m);
    return *m;
}

} // namespace fix_test
