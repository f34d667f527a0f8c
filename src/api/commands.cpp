// The command definitions (cmalign/internal/commands.hpp): one row per option of every command.
#include "cmalign/internal/commands.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace cmalign {

namespace {

using T = ValueType;

// Rows shared by several commands are written once and spliced in with the join() below.
constexpr OptionDefinition config_rows[] = {
    {"configs", "-c,--config", T::path, true, false, false, "FILE", "", "",
     "a .config, defconfig or fragment; repeatable, later files win (as merge_config.sh)"},
    {"sets", "--set", T::assignment, true, false, false, "CONFIG_X=VALUE", "", "",
     "a symbol applied after all files; repeatable"},
    {"unsets", "--unset", T::text, true, false, false, "CONFIG_X", "", "",
     "a symbol forgotten after the sets (as olddefconfig drops one the version lacks); "
     "repeatable"},
    {"arch", "--arch", T::text, false, false, false, "ARCH", "", "",
     "arm64, arm, x86_64, x86, riscv, powerpc, loongarch, mips, ... (default: the config header, "
     "its symbols, arch/<arch>/configs/ in a config's path, else ARCH of the environment)"},
    {"kernel_version", "--kernel-version", T::text, false, false, false, "X.Y[.Z]", "", "",
     "the kernel whose rules apply (default: the config header, else --kernel-tree's Makefile, "
     "else the newest modelled)"},
    {"kernel_tree", "--kernel-tree", T::directory, false, false, false, "DIR", "", "",
     "a kernel source tree: its Kconfig is evaluated as make olddefconfig, its include/ joins the "
     "DTS include path (default: the tree a config, an input or the working directory lies in)"},
    {"kconfig_shell", "--kconfig-shell", T::flag, false, false, false, "", "", "",
     "with a kernel tree: run Kconfig's toolchain probes (CROSS_COMPILE, LLVM) instead of "
     "assuming Debian's gcc 12"},
    {"limits", "--limit", T::assignment, true, false, false, "NAME=VALUE", "", "",
     "raise a bound on the work one input may cause (node-depth, file-bytes, ...; "
     "docs/limits.md); repeatable"},
    {"cache_dir", "--cache-dir", T::text, false, false, false, "DIR", "", "",
     "keep evaluated Kconfig configurations, the boards' include graphs and (command line) check's "
     "answers in DIR between runs, each used only while every file it was computed from is "
     "unchanged (command line: "
     "$XDG_CACHE_HOME/cmalign unless --no-cache; JSON and Python: off unless given)"},
    {"no_cache", "--no-cache", T::flag, false, false, false, "", "", "",
     "no on-disk cache (the default directory is $XDG_CACHE_HOME/cmalign, else ~/.cache/cmalign)",
     Surface::cli},
};

constexpr OptionDefinition tree_rows[] = {
    {"include_dirs", "-I", T::directory, true, false, false, "DIR", "", "",
     "include directory for the DTS preprocessor and /include/; repeatable"},
    {"defines", "-D", T::assignment, true, false, false, "NAME[=VALUE]", "", "",
     "preprocessor define; repeatable"},
    {"overlays", "--overlay", T::path, true, false, false, "FILE", "", "",
     ".dtso/.dtbo applied to each input in order, as fdtoverlay does; repeatable"},
};

constexpr OptionDefinition bootargs_row = {
    "bootargs", "--bootargs", T::text, false, false,
    false,      "ARGS",       "",      "",    "kernel command line (overrides /chosen/bootargs)"};
constexpr OptionDefinition kernel_image_row = {
    "kernel_image",
    "--kernel-image",
    T::text,
    false,
    false,
    false,
    "BASE,SIZE",
    "",
    "",
    "where the boot loader puts the kernel and what it takes with its bss (0x40200000,48M): "
    "dynamic nodes are placed around it (default: the arch's usual place and a generic "
    "kernel's size, said in the finding)"};
constexpr OptionDefinition jobs_row = {
    "jobs", "-j,--jobs", T::count, false, false,
    false,  "N",         "",       "",    "parallel jobs (default: all cores)"};
constexpr OptionDefinition switches_row = {
    "switches",
    "-W,-E",
    T::check_switch,
    true,
    false,
    false,
    "CHECK",
    "",
    "",
    "-W CHECK enables a check, -Wno-CHECK disables it, -E CHECK makes its findings errors, "
    "-Eno-CHECK undoes it (as dtc); later wins"};
constexpr OptionDefinition sweep_rows[] = {
    {"sweep_versions", "--sweep-versions", T::text, false, false, false, "LIST", "", "",
     "run for each kernel version: 6.1,6.6,6.12 or 6.1..6.18, boundaries, all"},
    {"sweep_page_sizes", "--sweep-page-sizes", T::text, false, false, false, "LIST", "", "",
     "... and each page size: 4K,16K,64K or all (needs sweep_versions)"},
};

constexpr OptionDefinition format_text_json = {"format",    "--format",      T::choice,   false,
                                               false,       false,           "FORMAT",    "text",
                                               "text,json", "output format", Surface::cli};

// constexpr concatenation of row groups into one array per command.
template <std::size_t... N> constexpr auto join(const OptionDefinition (&... parts)[N]) {
    std::array<OptionDefinition, (N + ...)> out{};
    std::size_t i = 0;
    auto add = [&](const auto& part) {
        for (const auto& row : part)
            out[i++] = row;
    };
    (add(parts), ...);
    return out;
}

constexpr OptionDefinition calc_own[] = {format_text_json};
constexpr auto calc_rows = join(config_rows, calc_own);

constexpr OptionDefinition table_rows[] = {
    {"arch", "--arch", T::text, false, false, false, "ARCH", "arm64", "", "architecture"},
    {"kernel_version", "--kernel-version", T::text, false, false, false, "X.Y[.Z]", "", "",
     "the version (default: the kernel tree's, else the newest modelled)"},
    {"kernel_tree", "--kernel-tree", T::directory, false, false, false, "DIR", "", "",
     "kernel source tree whose version to use (default: the one the working directory lies "
     "in)"},
    {"format", "--format", T::choice, false, false, false, "FORMAT", "text", "text,json,markdown",
     "output format", Surface::cli},
};

constexpr OptionDefinition config_own[] = {{"format", "--format", T::choice, false, false, false,
                                            "FORMAT", "config", "config,json",
                                            "output format: a .config, or JSON", Surface::cli}};
constexpr auto config_command_rows = join(config_rows, config_own);

constexpr OptionDefinition check_head[] = {
    {"files", "", T::path, true, true, true, "FILE", "", "",
     ".dts/.dtsi/.dtso/.dtb/.dtbo files or directories (searched for boards)"},
};
constexpr OptionDefinition check_own[] = {
    bootargs_row,
    kernel_image_row,
    switches_row,
    {"werror", "--werror", T::flag, false, false, false, "", "", "",
     "warnings make the exit status 1"},
    jobs_row,
    {"affected_by", "--affected-by", T::path, true, false, false, "FILE...", "", "",
     "only the boards whose tree includes one of these files (e.g. the files a pull request "
     "changes); on the command line the list ends at the next option or --",
     Surface::both, true},
    sweep_rows[0],
    sweep_rows[1],
    {"no_progress", "--no-progress", T::flag, false, false, false, "", "", "",
     "no progress line on stderr", Surface::cli},
    {"format", "--format", T::choice, false, false, false, "FORMAT", "text",
     "text,json,sarif,github", "gcc-style text, JSON, SARIF 2.1.0 or GitHub annotations",
     Surface::cli},
    {"sarif_base", "--sarif-base", T::directory, false, false, false, "DIR", "", "",
     "SARIF: write locations relative to this directory", Surface::cli},
};
constexpr auto check_rows = join(check_head, config_rows, tree_rows, check_own);

constexpr OptionDefinition tree_head[] = {
    {"file", "", T::path, false, true, true, "FILE", "", "", ".dts/.dtsi/.dtso/.dtb/.dtbo"},
};
constexpr OptionDefinition tree_own[] = {
    {"kernel_tree", "--kernel-tree", T::directory, false, false, false, "DIR", "", "",
     "a kernel source tree (its include/ joins the include path)"},
    {"limits", "--limit", T::assignment, true, false, false, "NAME=VALUE", "", "",
     "raise a bound on the work one input may cause; repeatable"},
    {"path", "--path", T::text, false, false, false, "PATH", "/", "",
     "only this subtree, e.g. /reserved-memory"},
    {"format", "--format", T::choice, false, false, false, "FORMAT", "json", "json,dts",
     "JSON nodes, or DTS text (JSON: {\"dts\": text})"},
};
constexpr auto tree_command_rows = join(tree_head, tree_rows, tree_own);

constexpr OptionDefinition fix_head[] = {
    {"files", "", T::path, true, true, true, "FILE", "", "",
     ".dts/.dtso/.dtb/.dtbo files or directories (JSON also \"file\": one board)"},
    {"file", "", T::path, false, false, false, "FILE", "", "", "one board (same as files)",
     Surface::api},
};
constexpr OptionDefinition fix_own[] = {
    bootargs_row,
    {"in_place", "--in-place", T::flag, false, false, false, "", "", "",
     "rewrite the files (atomically) where sizes are written"},
    {"out", "-o,--output", T::path, false, false, false, "OUT", "", "",
     "write the edited board here (one input; every edit must be in that file; - is stdout)"},
    {"diff", "--diff", T::flag, false, false, false, "", "", "",
     "a unified diff of every file to change, nothing written (JSON: under \"diff\")"},
    jobs_row,
    format_text_json,
};
constexpr auto fix_rows = join(fix_head, config_rows, tree_rows, fix_own);

constexpr OptionDefinition suggest_head[] = {
    {"files", "", T::path, true, false, true, "FILE", "", "",
     "boards whose CMA pools must stay as they are"},
};
constexpr OptionDefinition suggest_own[] = {
    {"target_alignment", "--target-alignment", T::size, false, false, false, "SIZE", "", "",
     "an alignment the configuration must divide (4M, 0x400000, SZ_4M)"},
    sweep_rows[0],
    sweep_rows[1],
    format_text_json,
};
constexpr auto suggest_rows = join(suggest_head, config_rows, tree_rows, suggest_own);

constexpr OptionDefinition map_head[] = {
    {"board", "", T::path, false, true, true, "BOARD", "", "", "a .dts or .dtb board"},
};
constexpr OptionDefinition map_own[] = {
    bootargs_row,
    kernel_image_row,
    {"format", "--format", T::choice, false, false, false, "FORMAT", "text", "text,svg,json",
     "a terminal picture, SVG, or the layout as JSON", Surface::cli},
    {"output", "-o,--output", T::path, false, false, false, "FILE", "", "",
     "write the picture to this file instead of stdout (- is stdout)", Surface::cli},
    {"columns", "--columns", T::count, false, false, false, "N", "80", "",
     "width of the text picture (at least 60)", Surface::cli},
};
constexpr auto map_rows = join(map_head, config_rows, tree_rows, map_own);

constexpr OptionDefinition pcp_own[] = {
    {"memory", "--memory", T::size, false, false, false, "SIZE", "", "",
     "total RAM (zones and managed pages are estimated for the arch)"},
    {"memory_base", "--memory-base", T::size, false, false, false, "ADDRESS", "0", "",
     "physical address where RAM starts, for memory"},
    {"zones", "--zone", T::assignment, true, false, false, "NAME=SIZE", "", "",
     "managed memory of a zone (DMA, DMA32, Normal, HighMem, Movable); repeatable"},
    {"zoneinfo", "--zoneinfo", T::path, false, false, false, "FILE", "", "",
     "a /proc/zoneinfo from the board: managed pages, CPUs, and values to compare"},
    {"cpus", "--cpus", T::count, false, false, false, "N", "", "",
     "CPUs of each NUMA node (default: from zoneinfo, else 1)"},
    {"sysctls", "--sysctl", T::assignment, true, false, false, "vm.NAME=VALUE", "", "",
     "a vm sysctl in effect on the board (min_free_kbytes, watermark_scale_factor, "
     "percpu_pagelist_high_fraction, lowmem_reserve_ratio); repeatable"},
    {"sysctl_file", "--sysctl-file", T::path, false, false, false, "FILE", "", "",
     "\"vm.NAME = VALUE\" lines, as `sysctl vm.min_free_kbytes ...` prints them"},
    {"bootargs", "--bootargs", T::text, false, false, false, "ARGS", "", "", "kernel command line"},
    {"dt", "--dt", T::path, false, false, false, "FILE", "", "",
     "a .dts/.dtb whose /chosen/bootargs is the command line"},
    {"vendor_params", "--vendor-param", T::text, true, false, false, "NAME", "", "",
     "apply a non-upstream boot parameter with its proposed semantics (pcp_batch_scale_max); "
     "repeatable"},
    format_text_json,
};
constexpr auto pcp_rows = join(config_rows, pcp_own);

constexpr OptionDefinition heap_own[] = {
    {"size", "--size", T::size, false, true, false, "SIZE", "", "",
     "allocation size (page-rounded as the ioctl does)"},
    {"available_order", "--available-order", T::count, false, false, false, "ORDER", "", "",
     "assume blocks above this order are exhausted"},
    format_text_json,
};
constexpr auto heap_rows = join(config_rows, heap_own);

constexpr OptionDefinition explain_head[] = {
    {"log", "", T::path, false, true, true, "LOG", "", "",
     "dmesg, journalctl -k or serial console capture"},
    {"board", "", T::path, false, true, true, "BOARD", "", "", "the board's .dts or .dtb"},
};
constexpr OptionDefinition explain_own[] = {bootargs_row, kernel_image_row, format_text_json};
constexpr auto explain_rows = join(explain_head, config_rows, tree_rows, explain_own);

constexpr OptionDefinition boot_check_head[] = {
    {"board", "", T::path, false, true, true, "BOARD", "", "", "the board's .dts or .dtb"},
    {"kernel", "--kernel", T::path, false, true, false, "IMAGE", "", "",
     "the kernel image to boot (arm64 Image/vmlinuz, gzip or EFI zboot)"},
};
constexpr OptionDefinition boot_check_own[] = {
    {"bootargs", "--bootargs", T::text, false, false, false, "ARGS", "", "",
     "kernel command line (overrides /chosen/bootargs; its cma= is passed on)"},
    {"qemu", "--qemu", T::path, false, false, false, "PATH", "", "",
     "the QEMU binary (default: by the image's arch)"},
    {"timeout", "--timeout", T::count, false, false, false, "SECONDS", "120", "",
     "seconds to wait for the root-mount panic"},
    {"stop_early", "--stop-early", T::flag, false, false, false, "", "", "",
     "stop once the kernel has set up its DMA atomic pools (after every reserved-memory and CMA "
     "line) instead of at the root-mount panic"},
    {"save_log", "--save-log", T::path, false, false, false, "FILE", "", "",
     "write the boot log to this file"},
    {"save_dtb", "--save-dtb", T::path, false, false, false, "FILE", "", "",
     "write the grafted DTB to this file"},
    format_text_json,
};
constexpr auto boot_check_rows = join(boot_check_head, config_rows, tree_rows, boot_check_own);

constexpr CommandDefinition commands[] = {
    {"calc", "page size, max order, pageblock_order and the CMA alignment the kernel will compute",
     "[options]", calc_rows},
    {"table", "what-if grid: page sizes x HugeTLB/THP x max order (x page block order from 6.16)",
     "[options]", table_rows},
    {"config", "the value of every symbol after merging the inputs", "[options]",
     config_command_rows},
    {"check", "lint /reserved-memory against the kernel's rules", "FILE... [options]", check_rows},
    {"tree", "the resolved device tree as JSON or DTS", "FILE [options]", tree_command_rows},
    {"fix", "round CMA pool sizes up to the kernel's alignment, in the file where each is written",
     "FILE... [options] (--in-place | -o OUT | --diff)", fix_rows},
    {"suggest", "configuration changes that make the CMA pools valid without growing them",
     "[FILE...] [options]", suggest_rows},
    {"pcp",
     "per-CPU page lists (batch, high, pages per zone-lock hold), watermarks and "
     "min_free_kbytes, as the kernel computes them",
     "(--memory SIZE | --zone NAME=SIZE... | --zoneinfo FILE) [options]", pcp_rows},
    {"heap", "chunk plan of one dma-buf system heap allocation (orders 8, 4, 0)",
     "--size SIZE [options]", heap_rows},
    {"map", "draw the board's physical memory: banks, reservations, CMA grid, rejections, fixes",
     "BOARD [options]", map_rows},
    {"explain", "tie a boot log's reserved-memory and CMA lines to the board's nodes",
     "LOG BOARD [options]", explain_rows},
    {"boot-check",
     "boot a kernel image in QEMU with the board's memory reservations and compare what it did "
     "with check's prediction",
     "BOARD --kernel IMAGE [options]", boot_check_rows},
};

} // namespace

const char* to_string(ValueType type) {
    switch (type) {
    case ValueType::flag:
        return "flag";
    case ValueType::text:
        return "text";
    case ValueType::path:
        return "path";
    case ValueType::directory:
        return "directory";
    case ValueType::size:
        return "size";
    case ValueType::count:
        return "count";
    case ValueType::assignment:
        return "assignment";
    case ValueType::choice:
        return "choice";
    case ValueType::check_switch:
        return "switch";
    }
    return "text";
}

std::span<const CommandDefinition> command_definitions() {
    return commands;
}

bool same_command_name(std::string_view a, std::string_view b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](char x, char y) { return (x == '_' ? '-' : x) == (y == '_' ? '-' : y); });
}

const CommandDefinition* find_command(std::string_view name) {
    auto it =
        std::find_if(std::begin(commands), std::end(commands),
                     [&](const CommandDefinition& c) { return same_command_name(c.name, name); });
    return it == std::end(commands) ? nullptr : &*it;
}

std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string>& candidates) {
    // Edit distance counting a swap of neighbours as one edit ("arhc" → "arch"), as typos are.
    auto distance = [](std::string_view a, std::string_view b) {
        std::vector<std::vector<std::size_t>> d(a.size() + 1,
                                                std::vector<std::size_t>(b.size() + 1));
        for (std::size_t i = 0; i <= a.size(); ++i)
            d[i][0] = i;
        for (std::size_t j = 0; j <= b.size(); ++j)
            d[0][j] = j;
        for (std::size_t i = 1; i <= a.size(); ++i)
            for (std::size_t j = 1; j <= b.size(); ++j) {
                std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
                d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
                if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                    d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        return d[a.size()][b.size()];
    };
    std::optional<std::string> best;
    std::size_t best_distance = 3; // at most 2 edits
    for (const auto& c : candidates) {
        auto d = distance(word, c);
        if (d < best_distance && 2 * d < std::max<std::size_t>(word.size(), 2)) {
            best = c;
            best_distance = d;
        }
    }
    return best;
}

const OptionDefinition* find_option(const CommandDefinition& command, std::string_view key) {
    for (const auto& option : command.options)
        if (option.key == key) return &option;
    return nullptr;
}

} // namespace cmalign
