// The on-disk cache of Kconfig evaluations (EvalOptions::cache_dir): an entry is read back only
// while the inputs and every file the parse read are unchanged; a changed Kconfig file, fragment
// or Makefile changes the answer; a corrupt entry is ignored and rewritten; concurrent
// evaluations share a directory.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "cmalign/kconfig/kconfig_tree.hpp"
#include "support/kconfig_mini_tree.hpp"

namespace fs = std::filesystem;
using cmalign::Diagnostics;
using cmalign::kconfig::EvalOptions;
using cmalign::test::MiniTree;

namespace {

const char* kconfig = R"K(
config A
	bool "a"
	default y
source "sub/Kconfig"
)K";
const char* sub_v1 = "config B\n\tint \"b\"\n\tdefault 11\n";
const char* sub_v2 = "config B\n\tint \"b\"\n\tdefault 22\n"; // same length as v1

struct CacheDir {
    fs::path path =
        fs::temp_directory_path() / ("cmalign-disk-cache-" + std::to_string(::getpid()) + "-" +
                                     std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    ~CacheDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::vector<fs::path> entries() const {
        std::vector<fs::path> out;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(path, ec))
            out.push_back(e.path());
        return out;
    }
};

std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The value of B through a cold in-process cache (so only the disk can answer early).
std::string value_of_b(MiniTree& t, const CacheDir& dir, const std::string& config = "") {
    cmalign::kconfig::clear_cache();
    Diagnostics diags;
    EvalOptions options;
    options.cache_dir = dir.path.string();
    auto r = t.eval(config, diags, options);
    REQUIRE(r);
    const auto* b = r->config.find("B");
    return b ? b->value : "";
}

} // namespace

TEST_CASE("disk cache: the second evaluation is read back, equal to the first") {
    MiniTree t;
    t.write("Kconfig", kconfig);
    t.write("sub/Kconfig", sub_v1);
    CacheDir dir;
    Diagnostics d1;
    EvalOptions options;
    options.cache_dir = dir.path.string();
    auto cold = t.eval("CONFIG_A=n\nCONFIG_UNKNOWN=y\n", d1, options);
    REQUIRE(cold);
    REQUIRE(dir.entries().size() == 1);
    cmalign::kconfig::clear_cache();
    Diagnostics d2;
    auto warm = t.eval("CONFIG_A=n\nCONFIG_UNKNOWN=y\n", d2, options);
    REQUIRE(warm);
    CHECK(warm->dotconfig == cold->dotconfig);
    CHECK(warm->arch == cold->arch);
    CHECK(warm->kernel_version == cold->kernel_version);
    CHECK(warm->config.decided_by == cold->config.decided_by);
    REQUIRE(warm->config.entries().size() == cold->config.entries().size());
    for (const auto& [name, e] : cold->config.entries()) {
        const auto* w = warm->config.find(name);
        REQUIRE(w);
        CHECK(w->value == e.value);
        CHECK(w->where == e.where);
    }
    REQUIRE(d2.items().size() == d1.items().size());
    for (std::size_t i = 0; i < d1.items().size(); ++i) {
        CHECK(d2.items()[i].message == d1.items()[i].message);
        CHECK(d2.items()[i].where == d1.items()[i].where);
    }

    // It really is the entry that answers: an edit of its text comes back.
    auto entry = dir.entries().front();
    auto text = read(entry);
    auto at = text.find("decided\tB\t");
    REQUIRE(at != std::string::npos);
    text.insert(text.find('\n', at), " (edited)");
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << text;
    cmalign::kconfig::clear_cache();
    Diagnostics d3;
    auto edited = t.eval("CONFIG_A=n\nCONFIG_UNKNOWN=y\n", d3, options);
    REQUIRE(edited);
    CHECK(edited->config.decided_by.at("B").ends_with(" (edited)"));
}

TEST_CASE("disk cache: a changed Kconfig file, fragment or Makefile changes the answer") {
    MiniTree t;
    t.write("Kconfig", kconfig);
    t.write("sub/Kconfig", sub_v1);
    CacheDir dir;
    CHECK(value_of_b(t, dir) == "11");
    CHECK(value_of_b(t, dir) == "11");
    // Same size, written within the same second: only the content hash can tell.
    t.write("sub/Kconfig", sub_v2);
    CHECK(value_of_b(t, dir) == "22");
    // A fragment is part of the key.
    CHECK(value_of_b(t, dir, "CONFIG_B=33\n") == "33");
    CHECK(value_of_b(t, dir) == "22");
    // An older mtime with new content (restored from a backup, a checkout): still seen.
    t.write("sub/Kconfig", sub_v1);
    fs::last_write_time(fs::path(t.path()) / "sub/Kconfig",
                        fs::file_time_type::clock::now() - std::chrono::hours(48));
    CHECK(value_of_b(t, dir) == "11");
    // A new version in the top Makefile changes the key's version.
    t.write("Makefile", "VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\nEXTRAVERSION =\n");
    cmalign::kconfig::clear_cache();
    Diagnostics diags;
    EvalOptions options;
    options.cache_dir = dir.path.string();
    auto r = t.eval("", diags, options);
    REQUIRE(r);
    CHECK(r->kernel_version == "6.1.0");
}

TEST_CASE("disk cache: a corrupt entry is ignored and rewritten; shell mode is never cached") {
    MiniTree t;
    t.write("Kconfig", kconfig);
    t.write("sub/Kconfig", sub_v1);
    CacheDir dir;
    CHECK(value_of_b(t, dir) == "11");
    REQUIRE(dir.entries().size() == 1);
    auto entry = dir.entries().front();
    auto whole = read(entry);
    for (std::string bad : {std::string("garbage"), whole.substr(0, whole.size() / 2),
                            std::string("cmalign-kconfig-evaluation\t1\nkey\tother\nend\n")}) {
        std::ofstream(entry, std::ios::binary | std::ios::trunc) << bad;
        CHECK(value_of_b(t, dir) == "11");
        CHECK(read(entry) == whole);
    }
    CacheDir shell_dir;
    Diagnostics diags;
    EvalOptions options;
    options.cache_dir = shell_dir.path.string();
    options.run_shell = true;
    REQUIRE(t.eval("", diags, options));
    CHECK(shell_dir.entries().empty());
}

TEST_CASE("disk cache: concurrent evaluations share a directory") {
    MiniTree t;
    t.write("Kconfig", kconfig);
    t.write("sub/Kconfig", sub_v1);
    CacheDir dir;
    std::vector<std::string> seen(8);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < seen.size(); ++i)
        threads.emplace_back([&, i] {
            Diagnostics diags;
            EvalOptions options;
            options.cache_dir = dir.path.string();
            cmalign::kconfig::Config inputs;
            std::string text = i % 2 ? "CONFIG_B=44\n" : "";
            cmalign::kconfig::read_fragment(text, "in.config", inputs, diags);
            options.input_order = {"in.config"};
            auto r = cmalign::kconfig::evaluate(t.path(), "test", inputs, options, diags);
            seen[i] = r && r->config.find("B") ? r->config.find("B")->value : "?";
        });
    for (auto& th : threads)
        th.join();
    for (std::size_t i = 0; i < seen.size(); ++i)
        CHECK(seen[i] == (i % 2 ? "44" : "11"));
    for (const auto& e : dir.entries())
        CHECK(e.filename().string().find(".tmp.") == std::string::npos); // none left behind
    CHECK(dir.entries().size() == 2);
}
