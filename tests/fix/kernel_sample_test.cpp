// fix on real material, a CI-sized sample: three Amlogic boards of Debian's 6.12 tree that fail at
// 16K and 64K pages, copied with their includes into a temp dir (the tree itself is only read).
// tests/differential/fix-kernel-tree.sh does the same for every arm64 board.
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "cmalign/dt/dtb.hpp"
#include "support/fix.hpp"

using namespace fix_test;
using namespace cmalign;

namespace {

const std::string kernel_tree = std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12";
const std::vector<std::string> boards = {"meson-a1-ad401.dts", "meson-a1-ad402.dts",
                                         "meson-gxl-s905w-jethome-jethub-j80.dts"};

void copy_sample(const fs::path& to) {
    fs::create_directories(to / "arch/arm64/boot/dts");
    fs::copy(kernel_tree + "/arch/arm64/boot/dts/amlogic", to / "arch/arm64/boot/dts/amlogic",
             fs::copy_options::recursive);
    fs::create_directories(to / "include");
    fs::copy(kernel_tree + "/include/dt-bindings", to / "include/dt-bindings",
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    fs::create_directories(to / "include/uapi/linux");
    fs::copy(kernel_tree + "/include/uapi/linux/input-event-codes.h", to / "include/uapi/linux/");
    fs::create_directories(to / "scripts/dtc/include-prefixes");
    fs::create_symlink("../../../arch/arm64/boot/dts", to / "scripts/dtc/include-prefixes/arm64");
    fs::create_symlink("../../../include/dt-bindings",
                       to / "scripts/dtc/include-prefixes/dt-bindings");
    fs::copy(kernel_tree + "/Makefile", to / "Makefile");
}

std::map<std::string, std::string> snapshot(const fs::path& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && !e.is_symlink())
            out[fs::relative(e.path(), dir).string()] = read_file(e.path().string());
    return out;
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
        out.push_back(text.substr(start, nl - start));
    out.push_back(text.substr(start));
    return out;
}

// cpp + dtc as the kernel's Makefile.lib does; empty when they are missing or fail.
std::string build_dtb(const fs::path& root, const std::string& board, const fs::path& out) {
    auto dir = root / "arch/arm64/boot/dts/amlogic";
    auto pp = out.string() + ".pp";
    auto r = run_shell("cpp -nostdinc -undef -D__DTS__ -x assembler-with-cpp -I " +
                       (root / "scripts/dtc/include-prefixes").string() + " -I " + dir.string() +
                       " " + (dir / board).string() + " -o " + pp + " && dtc -q -I dts -O dtb -i " +
                       dir.string() + " -o " + out.string() + " " + pp);
    return r.exit_code == 0 ? out.string() : std::string();
}

std::map<std::string, std::vector<std::uint8_t>> properties(const std::string& dtb) {
    Diagnostics diags;
    auto tree = dt::read_dtb(dtb, diags);
    REQUIRE(tree);
    std::map<std::string, std::vector<std::uint8_t>> out;
    dt::walk(tree->root, "/", [&](const std::string& path, const dt::Node& node) {
        for (const auto& p : node.properties)
            out[path + ":" + p.name] = p.value;
    });
    return out;
}

} // namespace

TEST_CASE("fix --in-place on a sample of Debian 6.12 arm64 boards: clean, digits only, dtc-equal" *
          CMALIGN_REAL_MATERIAL(kernel_tree)) {
    if (!cmalign::test::have_material(kernel_tree + "/arch/arm64/boot/dts/amlogic")) return;
    bool have_dtc = cmalign::test::have_program("dtc") && cmalign::test::have_program("cpp");
    struct Case {
        const char* page_size;
        const char* sets;
        std::set<std::string> unfixable; // the grown pool would not fit the board's RAM
    };
    // At 64K pages the A1 boards' 8 MiB pool would have to become 512 MiB, more than their
    // /memory holds: fix refuses those (and leaves meson-a1.dtsi alone) and fixes the rest.
    for (const auto& c : {Case{"16K", "", {}},
                          Case{"64K",
                               " --set CONFIG_ARM64_16K_PAGES=n --set CONFIG_ARM64_64K_PAGES=y "
                               "--set CONFIG_ARCH_FORCE_MAX_ORDER=13",
                               {"meson-a1-ad401.dts", "meson-a1-ad402.dts"}}}) {
        std::string page_size = c.page_size, sets = c.sets;
        CAPTURE(page_size);
        TempDir tmp(std::string("ksample-") + page_size);
        auto root = tmp.path / "tree";
        copy_sample(root);
        auto before = snapshot(root);
        std::string options = " -c " + config_16k() + sets + " --kernel-tree " + root.string();
        std::string files, fixable_files;
        for (const auto& b : boards) {
            auto path = " " + (root / "arch/arm64/boot/dts/amlogic" / b).string();
            files += path;
            if (!c.unfixable.count(b)) fixable_files += path;
        }

        REQUIRE(run_cli("check" + files + options).exit_code == 1); // they fail before

        auto fixed = run_cli("fix" + files + options + " --in-place --format json");
        REQUIRE(fixed.exit_code == (c.unfixable.empty() ? 0 : 1));
        auto j = nlohmann::json::parse(fixed.out);
        REQUIRE_FALSE(j["edits"].empty());
        std::set<std::pair<std::string, std::string>> edited;
        for (const auto& e : j["edits"])
            edited.insert({e["node"].get<std::string>(), e["property"].get<std::string>()});

        CHECK(run_cli("check" + fixable_files + options).exit_code == 0); // clean after
        for (const auto& b : c.unfixable) {
            CAPTURE(b);
            bool reported = false;
            for (const auto& d : j["diagnostics"])
                reported =
                    reported ||
                    (d["severity"] == "error" && d["input"].get<std::string>().ends_with(b) &&
                     d["message"].get<std::string>().find("/memory") != std::string::npos);
            CHECK(reported);
        }

        // Every changed line differs only in its numbers; no file changed that no edit names.
        auto after = snapshot(root);
        REQUIRE(after.size() == before.size());
        std::regex number(R"(\b(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*\b)");
        std::size_t changed_files = 0, changed_lines = 0;
        for (const auto& [path, text] : before) {
            const auto& now = after[path];
            if (now == text) continue;
            ++changed_files;
            auto a = lines(text), b = lines(now);
            REQUIRE(a.size() == b.size());
            for (std::size_t i = 0; i < a.size(); ++i) {
                if (a[i] == b[i]) continue;
                ++changed_lines;
                CAPTURE(a[i]);
                CAPTURE(b[i]);
                CHECK(std::regex_replace(a[i], number, "N") ==
                      std::regex_replace(b[i], number, "N"));
            }
        }
        std::set<std::string> edit_files;
        for (const auto& e : j["edits"])
            edit_files.insert(e["file"].get<std::string>());
        CHECK(changed_files == edit_files.size());
        CHECK(changed_lines == j["edits"].size());

        // Twice: nothing to do, not a byte changes.
        auto again = run_cli("fix" + files + options + " --in-place --format json");
        CHECK(again.exit_code == (c.unfixable.empty() ? 0 : 1));
        CHECK(nlohmann::json::parse(again.out)["edits"].empty());
        CHECK(snapshot(root) == after);

        // cpp + dtc before and after: the same trees except the edited sizes.
        if (!have_dtc) continue; // said (or failed, in CI) by have_program above
        auto orig = tmp.path / "orig";
        copy_sample(orig);
        for (const auto& b : boards) {
            CAPTURE(b);
            auto old_dtb = build_dtb(orig, b, tmp.path / (b + ".before.dtb"));
            auto new_dtb = build_dtb(root, b, tmp.path / (b + ".after.dtb"));
            REQUIRE_FALSE(old_dtb.empty());
            REQUIRE_FALSE(new_dtb.empty());
            auto p0 = properties(old_dtb), p1 = properties(new_dtb);
            REQUIRE(p0.size() == p1.size());
            std::size_t differing = 0;
            for (const auto& entry : p0) {
                const auto& key = entry.first; // clang 14 cannot capture structured bindings
                const auto& value = entry.second;
                REQUIRE(p1.count(key));
                if (p1[key] == value) continue;
                ++differing;
                auto colon = key.rfind(':');
                CAPTURE(key);
                CHECK(edited.count({key.substr(0, colon), key.substr(colon + 1)}) == 1);
            }
            CHECK(differing == (c.unfixable.count(b) ? 0u : 1u)); // one pool per board
        }
    }
}
