// The rule tables against the real kernel sources (Debian 6.1.192 and 6.12.117 trees): the
// Kconfig defaults and ranges of ARCH_FORCE_MAX_ORDER, CMA_AREAS, and the header formulas the
// tables encode. Skipped when the trees are absent.
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cmalign/internal/kernel/rules.hpp"
#include "cmalign/kernel/model.hpp"

using namespace cmalign;
namespace rules = cmalign::kernel::rules;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct KconfigBlock {
    std::vector<int> defaults;
    std::vector<std::pair<int, int>> ranges;
    bool found = false;
};

// The numeric `default` and `range` lines of one `config NAME` block, in order.
KconfigBlock read_block(const fs::path& kconfig, const std::string& name) {
    KconfigBlock b;
    std::ifstream in(kconfig);
    std::string line;
    bool inside = false;
    static const std::regex def_re(R"re(^\s+default\s+"?(\d+)"?(\s|$))re");
    static const std::regex range_re(R"(^\s+range\s+(\d+)\s+(\d+)(\s|$))");
    while (std::getline(in, line)) {
        if (!inside) {
            if (line == "config " + name) inside = b.found = true;
            continue;
        }
        if (!line.empty() && !std::isspace(static_cast<unsigned char>(line[0]))) break;
        if (line.find("help") != std::string::npos &&
            line.find_first_not_of(" \t") == line.find("help"))
            break;
        std::smatch m;
        if (std::regex_search(line, m, def_re))
            b.defaults.push_back(std::stoi(m[1]));
        else if (std::regex_search(line, m, range_re))
            b.ranges.emplace_back(std::stoi(m[1]), std::stoi(m[2]));
    }
    return b;
}

const rules::MaxOrderKconfigRow* row_for(kernel::Arch arch, const KernelVersion& v) {
    for (const auto& r : rules::max_order_kconfig())
        if (r.arch == arch && r.versions.contains(v)) return &r;
    return nullptr;
}

struct Tree {
    const char* dir;
    const char* version;
};

} // namespace

TEST_CASE("ARCH_FORCE_MAX_ORDER tables agree with arch/*/Kconfig of the 6.1 and 6.12 trees" *
          CMALIGN_REAL_MATERIAL(fs::path(CMALIGN_KERNEL_SRC_DIR) / "linux-source-6.12")) {
    fs::path root = CMALIGN_KERNEL_SRC_DIR;
    for (Tree t : {Tree{"linux-source-6.1", "6.1"}, Tree{"linux-source-6.12", "6.12"}}) {
        fs::path tree = root / t.dir;
        if (!cmalign::test::have_material(tree / "Makefile")) continue;
        auto version = *KernelVersion::parse(t.version);
        for (auto arch : {kernel::Arch::arm64, kernel::Arch::arm, kernel::Arch::powerpc,
                          kernel::Arch::loongarch, kernel::Arch::mips}) {
            CAPTURE(t.version);
            CAPTURE(kernel::to_string(arch));
            const auto* row = row_for(arch, version);
            REQUIRE(row);
            REQUIRE(row->symbol);
            auto block =
                read_block(tree / "arch" / kernel::to_string(arch) / "Kconfig", row->symbol);
            REQUIRE(block.found);
            std::vector<int> want_defaults;
            for (const auto& d : row->defaults)
                want_defaults.push_back(d.value);
            std::vector<std::pair<int, int>> want_ranges;
            for (const auto& r : row->ranges)
                want_ranges.emplace_back(r.lo, r.hi);
            CHECK(block.defaults == want_defaults);
            CHECK(block.ranges == want_ranges);
        }
        // x86 and riscv define no such symbol: the generic mmzone.h default applies.
        for (const char* arch : {"x86", "riscv"}) {
            auto block = read_block(tree / "arch" / arch / "Kconfig", "ARCH_FORCE_MAX_ORDER");
            CHECK_FALSE(block.found);
        }
    }
}

TEST_CASE("mmzone.h, pageblock-flags.h, cma.h and CMA_AREAS agree with the tables" *
          CMALIGN_REAL_MATERIAL(fs::path(CMALIGN_KERNEL_SRC_DIR) / "linux-source-6.12")) {
    fs::path root = CMALIGN_KERNEL_SRC_DIR;
    for (Tree t : {Tree{"linux-source-6.1", "6.1"}, Tree{"linux-source-6.12", "6.12"}}) {
        fs::path tree = root / t.dir;
        if (!cmalign::test::have_material(tree / "Makefile")) continue;
        CAPTURE(t.version);
        auto version = *KernelVersion::parse(t.version);

        const rules::MaxOrderDefinitionRow* def = nullptr;
        for (const auto& d : rules::max_order_definitions())
            if (d.versions.contains(version)) def = &d;
        REQUIRE(def);
        std::string mmzone = slurp(tree / "include/linux/mmzone.h");
        // "#define MAX_ORDER 11" (6.1) / "#define MAX_PAGE_ORDER 10" (6.12).
        std::string macro(def->mpo_name);
        macro = macro.substr(0, macro.find(' '));
        CHECK(mmzone.find("#define " + macro + " " + std::to_string(def->generic_default)) !=
              std::string::npos);
        // Exclusive: MAX_ORDER_NR_PAGES is 1 << (MAX_ORDER - 1).
        CHECK((mmzone.find("MAX_ORDER_NR_PAGES (1 << (MAX_ORDER - 1))") != std::string::npos) ==
              def->exclusive);

        // The THP-only case: MPO in 6.1, min(HPAGE_PMD_ORDER, MPO) in 6.12.
        std::string pageblock = slurp(tree / "include/linux/pageblock-flags.h");
        const rules::PageblockRow* thp = nullptr;
        for (const auto& r : rules::pageblock_rules())
            if (r.versions.contains(version) && r.which == rules::PageblockCase::thp_only) thp = &r;
        REQUIRE(thp);
        bool header_has_pmd = pageblock.find("HPAGE_PMD_ORDER") != std::string::npos;
        CHECK(header_has_pmd == (thp->formula.a == rules::Operand::pmd_order));

        std::string cma = slurp(tree / "include/linux/cma.h");
        const rules::CmaAreasRow* areas = nullptr;
        for (const auto& r : rules::cma_areas_rules())
            if (r.versions.contains(version)) areas = &r;
        REQUIRE(areas);
        bool plus_one = cma.find("(1 + CONFIG_CMA_AREAS)") != std::string::npos;
        CHECK(plus_one == (areas->plus == 1));
        auto block = read_block(tree / "mm/Kconfig", "CMA_AREAS");
        REQUIRE(block.found);
        CHECK(block.defaults == std::vector<int>{areas->default_numa, areas->default_uma});

        const rules::CmaAlignmentRow* align = nullptr;
        for (const auto& r : rules::cma_alignment_rules())
            if (r.versions.contains(version)) align = &r;
        REQUIRE(align);
        CHECK(cma.find("#define CMA_MIN_ALIGNMENT_PAGES pageblock_nr_pages") != std::string::npos);
        CHECK_FALSE(align->max_with_max_order);
    }
}

TEST_CASE("SECTION_SIZE_BITS values appear in the arch sparsemem.h of 6.12" *
          CMALIGN_REAL_MATERIAL(fs::path(CMALIGN_KERNEL_SRC_DIR) / "linux-source-6.12")) {
    fs::path tree = fs::path(CMALIGN_KERNEL_SRC_DIR) / "linux-source-6.12";
    if (!cmalign::test::have_material(tree / "Makefile")) return;
    auto v = *KernelVersion::parse("6.12");
    for (const auto& s : rules::section_sizes()) {
        if (!s.versions.contains(v)) continue;
        CAPTURE(s.source);
        std::string text = slurp(tree / s.source);
        std::regex re("define\\s+SECTION_SIZE_BITS\\s+" + std::to_string(s.bits) + "\\b");
        CHECK(std::regex_search(text, re));
    }
}
