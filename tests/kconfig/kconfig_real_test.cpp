// Kconfig evaluation against the kernel's own kconfig: for a sample of defconfigs (and a defconfig
// plus fragment) of the Debian kernel trees, `make ARCH=A <defconfig>` / `make olddefconfig` is run
// here and its .config compared with ours. With the shell (the same compiler on both sides) the
// text must be identical; without it, the symbols that decide the CMA alignment must agree.
// A missing tree fails where material is required (CI, CMALIGN_REQUIRE_MATERIAL) and is
// reported otherwise.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>

#include "cmalign/kconfig/kconfig_tree.hpp"
#include "support/material.hpp"

namespace fs = std::filesystem;
using cmalign::Diagnostics;
using cmalign::kconfig::Config;
using cmalign::kconfig::EvalOptions;

namespace {

struct Sample {
    const char* version;
    const char* arch;
    const char* defconfig;
    const char* cross; // Debian cross compiler prefix ("" = host gcc)
    const char* fragment;
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool have(const std::string& tool) {
    return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

std::string symbol_value(const std::string& text, const std::string& name) {
    std::regex set("^CONFIG_" + name + "=(.*)$"), unset("^# CONFIG_" + name + " is not set$");
    std::istringstream in(text);
    std::smatch m;
    for (std::string line; std::getline(in, line);) {
        if (std::regex_match(line, m, set)) return m[1];
        if (std::regex_match(line, unset)) return "n";
    }
    return "(absent)";
}

// One defconfig (and fragment) of one tree through make and through cmalign, both modes.
void check_against_make(const Sample& s) {
    fs::path tree = fs::path(CMALIGN_KERNEL_SRC_DIR) / (std::string("linux-source-") + s.version);
    CAPTURE(s.version);
    CAPTURE(s.arch);
    CAPTURE(s.defconfig);
    if (!fs::exists(tree / "Kconfig")) {
        if (cmalign::test::material_required()) FAIL("kernel tree missing: " << tree);
        MESSAGE("kernel tree missing, sample not checked: " << tree);
        return;
    }
    std::string cross = s.cross;
    if (!cross.empty() && !have(cross + "gcc")) cross.clear(); // host gcc on both sides

    fs::path out =
        fs::temp_directory_path() / ("cmalign-kconfig-real-" + std::to_string(::getpid()));
    fs::remove_all(out);
    fs::create_directories(out);
    fs::path defconfig = tree / "arch" / s.arch / "configs" / s.defconfig;
    std::string make = "make -s -C '" + tree.string() + "' O='" + out.string() +
                       "' ARCH=" + s.arch + (cross.empty() ? "" : " CROSS_COMPILE=" + cross);
    Config inputs;
    Diagnostics read_diags;
    REQUIRE(cmalign::kconfig::read_fragment_file(defconfig.string(), inputs, read_diags));
    std::vector<std::string> order{defconfig.string()};
    if (s.fragment) {
        // merge_config.sh: the defconfig, then the fragment, through olddefconfig.
        std::ofstream(out / ".config") << slurp(defconfig) << s.fragment;
        REQUIRE(std::system((make + " olddefconfig >/dev/null 2>&1").c_str()) == 0);
        REQUIRE(cmalign::kconfig::read_fragment(s.fragment, "fragment.config", inputs, read_diags));
        order.push_back("fragment.config");
    } else {
        REQUIRE(std::system((make + " " + s.defconfig + " >/dev/null 2>&1").c_str()) == 0);
    }
    std::string truth = slurp(out / ".config");
    fs::remove_all(out);
    REQUIRE(truth.size() > 1000);

    EvalOptions shell;
    shell.run_shell = true;
    shell.input_order = order;
    if (!cross.empty()) shell.env["CROSS_COMPILE"] = cross;
    Diagnostics diags;
    auto with_shell = cmalign::kconfig::evaluate(tree.string(), s.arch, inputs, shell, diags);
    REQUIRE(with_shell);
    if (with_shell->dotconfig != truth) {
        // Name the first line that differs rather than print two whole .config files.
        std::istringstream a(truth), b(with_shell->dotconfig);
        std::string la, lb;
        int line = 0;
        while (true) {
            bool ga = static_cast<bool>(std::getline(a, la)),
                 gb = static_cast<bool>(std::getline(b, lb));
            ++line;
            if (!ga && !gb) break;
            if (la != lb || ga != gb) {
                FAIL_CHECK("first difference at line " << line << ": make writes '" << la
                                                       << "', cmalign '" << lb << "'");
                break;
            }
        }
    }

    EvalOptions assumed;
    assumed.input_order = order;
    auto without = cmalign::kconfig::evaluate(tree.string(), s.arch, inputs, assumed, diags);
    REQUIRE(without);
    for (const char* name :
         {"ARM64_4K_PAGES", "ARM64_16K_PAGES", "ARM64_64K_PAGES", "PAGE_SIZE_4KB", "PAGE_SIZE_16KB",
          "PAGE_SIZE_64KB", "ARCH_FORCE_MAX_ORDER", "HUGETLBFS", "HUGETLB_PAGE",
          "TRANSPARENT_HUGEPAGE", "CMA", "DMA_CMA", "CMA_AREAS", "CMA_SIZE_MBYTES",
          "PCP_BATCH_SCALE_MAX", "PAGE_BLOCK_ORDER", "PAGE_BLOCK_MAX_ORDER",
          "DMA_DECLARE_COHERENT"}) {
        CAPTURE(name);
        CHECK(symbol_value(without->dotconfig, name) == symbol_value(truth, name));
    }
}

} // namespace

// Each sample is a test case of its own, "slow: …": ctest runs each in a process of its own
// (tests/CMakeLists.txt), so the two cores share the make runs. 5.10: `option ...`, the
// gold-linker $(error-if); 7.2: `depends on X if Y`, transitional symbols, $(shell,expr ...).
TEST_CASE("slow: kconfig: make 6.12 arm64 defconfig") {
    check_against_make({"6.12", "arm64", "defconfig", "aarch64-linux-gnu-", nullptr});
}
TEST_CASE("slow: kconfig: make 6.12 arm64 defconfig + 16K pages") {
    check_against_make(
        {"6.12", "arm64", "defconfig", "aarch64-linux-gnu-", "CONFIG_ARM64_16K_PAGES=y\n"});
}
TEST_CASE("slow: kconfig: make 6.1 arm64 defconfig") {
    check_against_make({"6.1", "arm64", "defconfig", "aarch64-linux-gnu-", nullptr});
}
TEST_CASE("slow: kconfig: make 6.12 mips rs90_defconfig") {
    check_against_make({"6.12", "mips", "rs90_defconfig", "mips-linux-gnu-", nullptr});
}
TEST_CASE("slow: kconfig: make 6.12 x86 x86_64_defconfig") {
    check_against_make({"6.12", "x86", "x86_64_defconfig", "", nullptr});
}
TEST_CASE("slow: kconfig: make 6.1 arm multi_v7_defconfig") {
    check_against_make({"6.1", "arm", "multi_v7_defconfig", "arm-linux-gnueabihf-", nullptr});
}
TEST_CASE("slow: kconfig: make 5.10 arm64 defconfig") {
    check_against_make({"5.10", "arm64", "defconfig", "aarch64-linux-gnu-", nullptr});
}
TEST_CASE("slow: kconfig: make 7.2 arm64 defconfig + 16K pages") {
    check_against_make(
        {"7.2", "arm64", "defconfig", "aarch64-linux-gnu-", "CONFIG_ARM64_16K_PAGES=y\n"});
}

TEST_CASE("kconfig: a tree given as a relative path answers probes as an absolute one does") {
    // $(srctree) is the path as given: "." once made every dot of a probe's command look like the
    // tree, and no probe of the table matched.
    fs::path tree = fs::path(CMALIGN_KERNEL_SRC_DIR) / "linux-source-7.2";
    if (!fs::exists(tree / "Kconfig")) {
        if (cmalign::test::material_required()) FAIL("kernel tree missing: " << tree);
        MESSAGE("kernel tree missing, not checked: " << tree);
        return;
    }
    fs::path defconfig = tree / "arch" / "arm64" / "configs" / "defconfig";
    Config inputs;
    Diagnostics diags;
    REQUIRE(cmalign::kconfig::read_fragment_file(defconfig.string(), inputs, diags));
    EvalOptions options;
    options.input_order = {defconfig.string()};
    auto absolute = cmalign::kconfig::evaluate(tree.string(), "arm64", inputs, options, diags);
    REQUIRE(absolute);
    fs::path cwd = fs::current_path();
    fs::current_path(tree);
    auto relative = cmalign::kconfig::evaluate(".", "arm64", inputs, options, diags);
    fs::current_path(cwd);
    REQUIRE(relative);
    CHECK(relative->dotconfig == absolute->dotconfig);
    // Debian's gcc 12 has no -fms-anonymous-structs (7.2's CC_MS_EXTENSIONS probe).
    CHECK(symbol_value(relative->dotconfig, "CC_MS_EXTENSIONS") == "\"-fms-extensions\"");
}
