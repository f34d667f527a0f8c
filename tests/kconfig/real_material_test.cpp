// The reader on real configurations: the oracle's .config files (kconfig wrote them) and every
// arch/*/configs/*defconfig and *.config fragment of the Debian kernel trees. Each is compared
// with an independent, line-prefix reading done here.
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmalign/internal/kconfig/config_json.hpp"
#include "cmalign/internal/kconfig/write.hpp"
#include "cmalign/kconfig/config.hpp"

namespace fs = std::filesystem;
using cmalign::Diagnostics;
using cmalign::Severity;
using cmalign::kconfig::Config;

namespace {

const fs::path oracle_dir = fs::path(CMALIGN_TEST_DATA) / "oracle";

std::string read_xz(const fs::path& path) {
    std::string command = "xz -dc '" + path.string() + "'";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), &::pclose);
    std::string out;
    if (!pipe) return out;
    char buffer[1 << 16];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe.get())) > 0)
        out.append(buffer, got);
    return out;
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The independent reading: what merge_config.sh's sed expressions match
// ("^CONFIG_[a-zA-Z0-9_]*=" and "^# CONFIG_[a-zA-Z0-9_]* is not set$"), value = the text after '='
// exactly as written (quotes included), last occurrence wins. Counts value changes the way our
// reader should warn about them.
struct Independent {
    std::map<std::string, std::string> raw; // "CONFIG_X" -> text after '=' or "n"
    int changes = 0;
};

Independent independent_reading(const std::string& text) {
    Independent r;
    std::istringstream in(text);
    std::string line;
    auto is_name = [](const std::string& s) {
        return !s.empty() &&
               s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                   "0123456789_") == std::string::npos;
    };
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::string name, value;
        const std::string unset_tail = " is not set";
        if (line.rfind("CONFIG_", 0) == 0 && line.find('=') != std::string::npos) {
            name = line.substr(0, line.find('='));
            value = line.substr(line.find('=') + 1);
        } else if (line.rfind("# CONFIG_", 0) == 0 && line.size() > unset_tail.size() &&
                   line.compare(line.size() - unset_tail.size(), unset_tail.size(), unset_tail) ==
                       0) {
            name = line.substr(2, line.size() - 2 - unset_tail.size());
            value = "n";
        } else {
            continue;
        }
        if (!is_name(name.substr(7))) continue;
        // A value kconfig takes for no type (an unquoted word that is no y/m/n or number,
        // 6.1's android-base.config "CONFIG_ANDROID_BINDER_DEVICES=binder,hwbinder,vndbinder"):
        // the line sets nothing.
        bool some_type_takes =
            value.empty()
                ? false
                : value[0] == '"' || value[0] == 'y' || value[0] == 'm' || value[0] == 'n' ||
                      value.find_first_not_of("-0123456789abcdefABCDEFxX") == std::string::npos;
        if (!some_type_takes) continue;
        auto [it, inserted] = r.raw.emplace(name, value);
        if (!inserted) {
            if (it->second != value) ++r.changes;
            it->second = value;
        }
    }
    return r;
}

// The value as a .config writes it, from our Entry.
std::string as_written(const cmalign::kconfig::Entry& e) {
    if (!e.quoted) return e.value;
    std::string out = "\"";
    for (char c : e.value) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

int redefinition_warnings(const Diagnostics& d) {
    int n = 0;
    for (const auto& item : d.items())
        n += item.check == "config-redefined";
    return n;
}

void compare_with_independent(const std::string& label, const std::string& text, const Config& c,
                              const Diagnostics& d) {
    Independent expected = independent_reading(text);
    CHECK_MESSAGE(c.entries().size() == expected.raw.size(), label);
    int mismatches = 0;
    for (const auto& [name, raw] : expected.raw) {
        const auto* e = c.find(name);
        if (!e || as_written(*e) != raw) ++mismatches;
    }
    CHECK_MESSAGE(mismatches == 0, label);
    CHECK_MESSAGE(redefinition_warnings(d) == expected.changes, label);
}

std::vector<fs::path> sorted_glob(const fs::path& dir, auto predicate) {
    std::vector<fs::path> out;
    if (!fs::is_directory(dir)) return out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && predicate(e.path())) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE("oracle .config files: no diagnostics, same symbols as an independent reading, "
          "oracle values" *
          CMALIGN_REAL_MATERIAL(oracle_dir / "configs")) {
    const fs::path configs = oracle_dir / "configs";
    if (!cmalign::test::have_material(configs)) return;
    // The kernel release each case was configured with, as its .config header names it.
    std::map<std::string, std::string> release_of;
    {
        std::ifstream cases(oracle_dir / "cases.jsonl");
        std::string line;
        while (std::getline(cases, line))
            if (!line.empty()) {
                auto j = nlohmann::json::parse(line);
                release_of[j.at("id").get<std::string>()] = j.at("kernel").get<std::string>();
            }
    }
    std::map<std::string, Config> by_id;
    long long slowest_us = 0;
    for (const auto& path : sorted_glob(
             configs, [](const fs::path& p) { return p.string().ends_with(".config.xz"); })) {
        std::string text = read_xz(path);
        REQUIRE_MESSAGE(text.size() > 10000, path);
        Config c;
        Diagnostics d;
        auto start = std::chrono::steady_clock::now();
        bool ok = cmalign::kconfig::read_fragment(text, path.filename().string(), c, d);
        slowest_us =
            std::max<long long>(slowest_us, std::chrono::duration_cast<std::chrono::microseconds>(
                                                std::chrono::steady_clock::now() - start)
                                                .count());
        CHECK_MESSAGE(ok, path);
        CHECK_MESSAGE(d.items().empty(), path);
        compare_with_independent(path.string(), text, c, d);
        std::string id = path.filename().string();
        id.resize(id.size() - std::string(".config.xz").size());
        CHECK_MESSAGE(c.header_version == release_of[id], id);
        CHECK_MESSAGE((c.header_arch && !c.header_arch->empty()), id);

        // A .config written by us reads back to the same values (one file is enough).
        if (by_id.empty()) {
            Config again;
            Diagnostics d2;
            CHECK(cmalign::kconfig::read_fragment(cmalign::kconfig::to_config_text(c), "w", again,
                                                  d2));
            CHECK(d2.items().empty());
            CHECK(again.entries().size() == c.entries().size());
            CHECK(cmalign::kconfig::to_json(again) == cmalign::kconfig::to_json(c));
        }

        by_id.emplace(id, std::move(c));
    }
    CHECK(by_id.size() >= 200);
    MESSAGE("slowest oracle .config read: " << slowest_us << " us (this build type)");

    std::ifstream cases(oracle_dir / "cases.jsonl");
    std::string line;
    int checked_cases = 0, checked_symbols = 0;
    while (std::getline(cases, line)) {
        if (line.empty()) continue;
        auto j = nlohmann::json::parse(line);
        auto it = by_id.find(j.at("id").get<std::string>());
        REQUIRE_MESSAGE(it != by_id.end(), j.at("id"));
        const Config& c = it->second;
        for (const auto& item : j.at("config_symbols").items()) {
            // Named, not structured bindings: clang 14 cannot capture those in doctest's lambdas.
            const std::string& symbol = item.key();
            const auto& value = item.value();
            if (value.is_null())
                CHECK_MESSAGE(!c.contains(symbol), it->first << " " << symbol);
            else
                CHECK_MESSAGE(c.get_string(symbol) == value.get<std::string>(),
                              it->first << " " << symbol);
            ++checked_symbols;
        }
        ++checked_cases;
    }
    CHECK(checked_cases >= 200);
    CHECK(checked_symbols > 4000);
}

TEST_CASE("oracle fragments merged over their base .config" *
          CMALIGN_REAL_MATERIAL(oracle_dir / "fragments")) {
    // 6.12-arm64-16k-default: "# CONFIG_ARM64_4K_PAGES is not set" over the 4k .config.
    const fs::path base = oracle_dir / "configs" / "6.12-arm64-4k-default.config.xz";
    const fs::path frag = oracle_dir / "fragments" / "6.12-arm64-16k-default.frag";
    if (!cmalign::test::have_material(base) || !cmalign::test::have_material(frag)) return;
    Config c;
    Diagnostics d;
    REQUIRE(cmalign::kconfig::read_fragment(read_xz(base), "base.config", c, d));
    REQUIRE(cmalign::kconfig::read_fragment_file(frag.string(), c, d));
    CHECK(c.get_bool("ARM64_4K_PAGES") == false);
    CHECK(c.find("ARM64_4K_PAGES")->where.file == frag.string());
    CHECK(c.get_bool("ARM64_16K_PAGES") == true);
    // 4K_PAGES y → n and 16K_PAGES n → y are redefinitions; 64K_PAGES stays n: no warning.
    REQUIRE(d.items().size() == 2);
    CHECK(d.items()[0].check == "config-redefined");
    CHECK(d.items()[0].message.find("CONFIG_ARM64_4K_PAGES") != std::string::npos);
    CHECK(d.items()[0].message.find("base.config:") != std::string::npos);
    CHECK(d.items()[0].message.find(frag.string() + ":3") != std::string::npos);
    CHECK(d.items()[1].message.find(frag.string() + ":4") != std::string::npos);
}

TEST_CASE("every defconfig and config fragment of the kernel trees" *
          CMALIGN_REAL_MATERIAL(fs::path(CMALIGN_KERNEL_SRC_DIR) / "linux-source-6.12")) {
    int files = 0, symbols = 0, unquoted = 0;
    for (const char* tree : {"linux-source-6.12", "linux-source-6.1"}) {
        const fs::path root = fs::path(CMALIGN_KERNEL_SRC_DIR) / tree;
        if (!cmalign::test::have_material(root / "arch")) continue;
        std::vector<fs::path> inputs;
        for (const auto& arch : fs::directory_iterator(root / "arch")) {
            for (auto& p : sorted_glob(arch.path() / "configs", [](const fs::path& q) {
                     auto name = q.filename().string();
                     return name.ends_with("defconfig") || name.ends_with(".config");
                 }))
                inputs.push_back(std::move(p));
        }
        for (auto& p : sorted_glob(root / "kernel" / "configs",
                                   [](const fs::path& q) { return q.extension() == ".config"; }))
            inputs.push_back(std::move(p));
        for (const auto& path : inputs) {
            std::string text = read_text(path);
            Config c;
            Diagnostics d;
            bool ok = cmalign::kconfig::read_fragment(text, path.string(), c, d);
            CHECK_MESSAGE(ok, path);
            for (const auto& item : d.items()) {
                // Only the known oddities of these trees: duplicate symbols, 6.1's
                // "#CONFIG_ARCH_MULTI_V7 is not set" in cns3420vb_defconfig, and 6.1's
                // android-base.config "CONFIG_ANDROID_BINDER_DEVICES=binder,hwbinder,vndbinder"
                // (an unquoted string, which kconfig ignores).
                bool expected = item.check == "config-redefined" ||
                                (item.check == "config-ignored-line" &&
                                 path.filename() == "cns3420vb_defconfig") ||
                                (item.check == "config-invalid-value" &&
                                 path.filename() == "android-base.config");
                unquoted += item.check == "config-invalid-value";
                CHECK_MESSAGE(expected, cmalign::format_gcc(item));
            }
            compare_with_independent(path.string(), text, c, d);
            ++files;
            symbols += static_cast<int>(c.entries().size());
        }
    }
    MESSAGE(files << " defconfigs/fragments, " << symbols << " symbols, " << unquoted
                  << " values kconfig takes for no type");
    if (fs::is_directory(fs::path(CMALIGN_KERNEL_SRC_DIR) / "linux-source-6.12"))
        CHECK(files > 500);
}
