// Boot log lines built from the kernel's own format strings (read from Debian's v6.1 and v6.12
// trees at test time, with the pr_fmt prefix in effect where each is printed) and decorated as
// dmesg, dmesg -T, journalctl -k, /dev/kmsg and a serial capture with CRLF print them.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "cmalign/bootlog/bootlog.hpp"

using cmalign::bootlog::Event;

namespace {

const std::string ksrc = CMALIGN_KERNEL_SRC_DIR;

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE_MESSAGE(in.good(), "kernel source missing: "
                                   << path << " (scripts/kernel-sources extracts Debian's trees)");
    return {std::istreambuf_iterator<char>(in), {}};
}

// The format string literal that contains `key`, unescaped, with the pr_fmt prefix in effect
// at that point of the file.
std::string kernel_format(const std::string& tree, const std::string& file,
                          const std::string& key) {
    std::string src = read_all(ksrc + "/linux-source-" + tree + "/" + file);
    // The first occurrence inside a string literal that is a call's first argument
    // (pr_err("…", …)), not in a comment.
    std::size_t at = 0, open = std::string::npos;
    for (at = src.find(key); at != std::string::npos; at = src.find(key, at + 1)) {
        open = src.rfind('"', at);
        if (open == std::string::npos || src.find('\n', open) < at) continue;
        auto before = src.find_last_not_of(" \t\n", open - 1);
        if (before != std::string::npos && src[before] == '(') break;
    }
    REQUIRE_MESSAGE(at != std::string::npos, key << " not in a format of " << tree << "/" << file);
    auto close = src.find('"', at);
    while (close != std::string::npos && src[close - 1] == '\\') // an escaped quote: \"cma=\"
        close = src.find('"', close + 1);
    REQUIRE(close != std::string::npos);
    std::string literal = src.substr(open + 1, close - open - 1);
    std::string text;
    for (std::size_t i = 0; i < literal.size(); ++i) {
        if (literal[i] == '\\' && i + 1 < literal.size()) {
            char c = literal[++i];
            text += c == 'n' ? '\n' : c;
        } else {
            text += literal[i];
        }
    }
    std::string prefix;
    auto def = src.rfind("#define pr_fmt(fmt)", open);
    if (def != std::string::npos) {
        auto eol = src.find('\n', def);
        std::string line = src.substr(def, eol - def);
        auto q1 = line.find('"');
        auto q2 = line.rfind('"');
        if (q1 != std::string::npos && q2 > q1) prefix = line.substr(q1 + 1, q2 - q1 - 1);
    }
    return prefix + text;
}

// printf with the conversions these messages use, each taking the next of `args`.
std::string expand(const std::string& format, const std::vector<std::string>& args) {
    static const std::regex conversion("%(pa|s|lu|ld|zd|llu|d)");
    std::string out;
    std::size_t next = 0;
    auto begin = std::sregex_iterator(format.begin(), format.end(), conversion);
    std::size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
        out += format.substr(last, static_cast<std::size_t>(it->position()) - last);
        REQUIRE_MESSAGE(next < args.size(), "too few arguments for " << format);
        out += args[next++];
        last = static_cast<std::size_t>(it->position() + it->length());
    }
    out += format.substr(last);
    CHECK_MESSAGE(next == args.size(), "unused arguments for " << format);
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

struct Case {
    const char* file_61;  // nullptr: the message does not exist in v6.1
    const char* file_612; // nullptr: not in v6.12
    const char* key;
    Event event;
    std::vector<std::string> args;
    std::vector<std::string> nodes;
    std::optional<std::uint64_t> base;
    std::optional<std::uint64_t> bytes;
};

constexpr const char* ofrm = "drivers/of/of_reserved_mem.c";
constexpr const char* fdt = "drivers/of/fdt.c";
constexpr const char* contig = "kernel/dma/contiguous.c";
constexpr const char* coh = "kernel/dma/coherent.c";
constexpr const char* swiotlb = "kernel/dma/swiotlb.c";
constexpr const char* mmcma = "mm/cma.c";
const std::string pa = "0x0000000050000000";
constexpr std::uint64_t base = 0x50000000;
constexpr std::uint64_t mib16 = 16u << 20;

std::vector<Case> cases() {
    return {
        {ofrm,
         ofrm,
         "initialized node",
         Event::initialized_node,
         {"camera-pool@50000000", "shared-dma-pool"},
         {"camera-pool@50000000"},
         {},
         {}},
        {ofrm,
         ofrm,
         "compatible matching fail",
         Event::matching_fail,
         {"linux,cma"},
         {"linux,cma"},
         {},
         {}},
        {nullptr,
         ofrm,
         "(%lu KiB)",
         Event::region_listed,
         {pa, "0x0000000050ffffff", "16384", "map", "reusable", "camera-pool@50000000"},
         {"camera-pool@50000000"},
         base,
         mib16},
        {ofrm,
         ofrm,
         "failed to allocate memory for node",
         Event::failed_to_allocate,
         {"vdec-pool", "4"},
         {"vdec-pool"},
         {},
         4u << 20},
        {ofrm,
         ofrm,
         "invalid size property",
         Event::invalid_size,
         {"vdec-pool"},
         {"vdec-pool"},
         {},
         {}},
        {ofrm,
         ofrm,
         "invalid alignment property",
         Event::invalid_alignment,
         {"vdec-pool"},
         {"vdec-pool"},
         {},
         {}},
        {ofrm,
         ofrm,
         "invalid alloc-ranges property",
         Event::invalid_alloc_ranges,
         {"vdec-pool"},
         {"vdec-pool"},
         {},
         {}},
        {nullptr,
         ofrm,
         "too many defined dynamic regions",
         Event::too_many_dynamic,
         {"vdec-pool"},
         {"vdec-pool"},
         {},
         {}},
        {ofrm,
         ofrm,
         "not enough space for all defined regions",
         Event::not_enough_space,
         {},
         {},
         {},
         {}},
        {fdt,
         ofrm,
         "failed to reserve memory for node",
         Event::failed_to_reserve,
         {"camera-pool@50000000", pa, "16"},
         {"camera-pool@50000000"},
         base,
         mib16},
        {fdt,
         ofrm,
         "invalid reg property in",
         Event::invalid_reg,
         {"camera-pool@50000000"},
         {"camera-pool@50000000"},
         {},
         {}},
        {fdt, ofrm, "unsupported node format", Event::unsupported_format, {}, {}, {}, {}},
        {nullptr,
         ofrm,
         "No reserved-memory node in the DT",
         Event::no_reserved_memory,
         {},
         {},
         {},
         {}},
        {contig,
         contig,
         "Reserved memory: bypass",
         Event::bypass_cmdline,
         {"linux,cma"},
         {"linux,cma"},
         {},
         {}},
        {contig,
         contig,
         "incorrect alignment of CMA region",
         Event::incorrect_alignment,
         {},
         {},
         {},
         {}},
        {contig, contig, "unable to setup CMA region", Event::unable_to_setup, {}, {}, {}, {}},
        {contig,
         contig,
         "created CMA memory pool",
         Event::created_cma_pool,
         {pa, "16"},
         {},
         base,
         mib16},
        {coh, coh, "created DMA memory pool", Event::created_dma_pool, {pa, "16"}, {}, base, mib16},
        {coh, coh, "regions without no-map", Event::coherent_needs_no_map, {}, {}, {}, {}},
        {coh,
         coh,
         "failed to init DMA memory pool",
         Event::coherent_init_failed,
         {pa, "16"},
         {},
         base,
         mib16},
        {swiotlb,
         swiotlb,
         "created restricted DMA pool",
         Event::created_restricted_pool,
         {pa, "16"},
         {},
         base,
         mib16},
        {mmcma, mmcma, "Not enough slots", Event::not_enough_slots, {}, {}, {}, {}},
        {mmcma,
         mmcma,
         "could not be activated",
         Event::not_activated,
         {"vdec-pool"},
         {"vdec-pool"},
         {},
         {}},
        {mmcma,
         nullptr,
         "Reserved %ld MiB at %pa\\n",
         Event::cmdline_reserved,
         {"64", pa},
         {},
         base,
         64u << 20},
        {nullptr,
         mmcma,
         "Reserved %ld MiB at %pa on node",
         Event::cmdline_reserved,
         {"64", pa, "-1"},
         {},
         base,
         64u << 20},
        {mmcma,
         nullptr,
         "Failed to reserve %ld MiB\\n",
         Event::cmdline_failed,
         {"64"},
         {},
         {},
         64u << 20},
        {nullptr,
         mmcma,
         "Failed to reserve %ld MiB on node",
         Event::cmdline_failed,
         {"64", "-1"},
         {},
         {},
         64u << 20},
        {mmcma,
         mmcma,
         "must be aligned to",
         Event::cmdline_misaligned,
         {pa, "0x0000000002000000"},
         {},
         base,
         {}},
        {mmcma,
         mmcma,
         "exceeds limit",
         Event::cmdline_size_limit,
         {"0x0000000004000000", pa, "0x0000000040000000"},
         {},
         base,
         {}},
        {mmcma,
         mmcma,
         "low/high memory boundary",
         Event::cmdline_boundary,
         {pa, "0x0000000040000000"},
         {},
         base,
         {}},
    };
}

// The expected message lines of one tree, each with its event (OVERLAP adds two).
struct Expected {
    std::string line;
    const Case* c = nullptr; // nullptr: the OVERLAP pair
    Event event{};
};

std::vector<Expected> expected_lines(const std::string& tree, const std::vector<Case>& all) {
    std::vector<Expected> out;
    for (const auto& c : all) {
        const char* file = tree == "6.1" ? c.file_61 : c.file_612;
        if (!file) continue;
        std::string key = c.key;
        // Keys that end in "\n" pick the v6.1 spelling that stops there.
        out.push_back({expand(kernel_format(tree, file, key), c.args), &c, c.event});
    }
    std::string overlap =
        expand(kernel_format(tree, ofrm, "OVERLAP DETECTED"),
               {"vdec-pool", "0x0000000050000000", "0x0000000050400000", "camera-pool@50000000",
                "0x0000000050000000", "0x0000000051000000"});
    auto nl = overlap.find('\n');
    REQUIRE(nl != std::string::npos);
    out.push_back({overlap.substr(0, nl), nullptr, Event::overlap_detected});
    out.push_back({overlap.substr(nl + 1), nullptr, Event::overlap_pair});
    return out;
}

// Lines a real log holds around them; none is a reserved-memory message.
const std::vector<std::string> noise = {
    "Booting Linux on physical CPU 0x0000000000 [0x410fd083]",
    "Memory: 981248K/1048576K available (16384K kernel code, 65536K cma-reserved)",
    "systemd[1]: Started Journal Service.",
    "Zone ranges:",
    "  DMA      [mem 0x0000000040000000-0x000000007fffffff]",
};

std::string decorate(const std::string& style, const std::string& line, int n) {
    if (style == "bare") return line;
    if (style == "dmesg") return "[    0.00" + std::to_string(1000 + n) + "] " + line;
    if (style == "dmesg -T")
        return "[Tue Dec  1 03:59:4" + std::to_string(n % 10) + " 2026] " + line;
    if (style == "journalctl") return "Dec 01 03:59:43 acme-board kernel: " + line;
    if (style == "syslog priority") return "<3>[    0.000000] " + line;
    return line;
}

void check_tree(const std::string& tree, const std::string& style, const std::string& eol) {
    CAPTURE(tree);
    CAPTURE(style);
    auto all = cases();
    auto lines = expected_lines(tree, all);
    std::string log =
        decorate(style,
                 "Linux version " +
                     std::string(tree == "6.1" ? "6.1.0-28-arm64" : "6.12.117-arm64") +
                     " (debian-kernel@lists.debian.org) (gcc-12) #1 SMP",
                 0) +
        eol;
    std::size_t line_number = 1;
    std::vector<std::size_t> numbers;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        log += decorate(style, noise[i % noise.size()], static_cast<int>(i)) + eol;
        ++line_number;
        log += decorate(style, lines[i].line, static_cast<int>(i)) + eol;
        numbers.push_back(++line_number);
    }
    auto parsed = cmalign::bootlog::parse(log);
    REQUIRE(parsed.version);
    CHECK(parsed.version->str() == (tree == "6.1" ? "6.1.0" : "6.12.117"));
    CHECK(parsed.version_line == 1);
    REQUIRE(parsed.messages.size() == lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto& m = parsed.messages[i];
        CAPTURE(lines[i].line);
        CHECK(m.event == lines[i].event);
        CHECK(m.line_number == numbers[i]);
        CHECK(m.message == lines[i].line);
        if (const auto* c = lines[i].c) {
            CHECK(m.nodes == c->nodes);
            if (c->base) CHECK(m.base == c->base);
            if (c->bytes) CHECK(m.bytes == c->bytes);
        } else if (m.event == Event::overlap_pair) {
            CHECK(m.nodes == std::vector<std::string>{"vdec-pool", "camera-pool@50000000"});
        }
    }
}

} // namespace

TEST_CASE("every reserved-memory and CMA message of v6.1 and v6.12 is recognised") {
    for (const char* tree : {"6.1", "6.12"})
        for (const char* style : {"bare", "dmesg", "dmesg -T", "journalctl", "syslog priority"})
            for (const char* eol : {"\n", "\r\n"})
                check_tree(tree, style, eol);
}

TEST_CASE("the formats differ where the kernel's do") {
    // v6.1 reserves static regions in drivers/of/fdt.c, v6.12 in of_reserved_mem.c: the prefix
    // of the same message differs, and both are recognised.
    CHECK(kernel_format("6.1", fdt, "failed to reserve memory for node").starts_with("OF: fdt: "));
    CHECK(kernel_format("6.12", ofrm, "failed to reserve memory for node")
              .starts_with("OF: reserved mem: "));
    // contiguous.c drops its "cma: " prefix for the rmem part; mm/cma.c keeps it.
    CHECK(kernel_format("6.12", contig, "incorrect alignment").starts_with("Reserved memory: "));
    CHECK(kernel_format("6.12", mmcma, "could not be activated").starts_with("cma: "));
    CHECK(kernel_format("6.12", swiotlb, "created restricted DMA pool")
              .starts_with("software IO TLB: "));
}

TEST_CASE("/dev/kmsg records, colour codes and lone CRs") {
    std::string overlap = expand(kernel_format("6.12", ofrm, "OVERLAP DETECTED"),
                                 {"a", "0x0000000050000000", "0x0000000050400000", "b@50200000",
                                  "0x0000000050200000", "0x0000000050600000"});
    // /dev/kmsg escapes the record's inner newline as \x0a.
    std::string escaped = overlap;
    escaped.replace(escaped.find('\n'), 1, "\\x0a");
    std::string log =
        "6,1,0,-;Linux version 6.12.117 (x) #1\n"
        "3,2,0,-;" +
        escaped +
        "\n"
        "\x1b[0;31m[    0.000000] Reserved memory: incorrect alignment of CMA "
        "region\x1b[0m\r"
        "[    0.000000] OF: reserved mem: node linux,cma compatible matching fail\r\n";
    auto parsed = cmalign::bootlog::parse(log);
    REQUIRE(parsed.messages.size() == 4);
    CHECK(parsed.messages[0].event == Event::overlap_detected);
    CHECK(parsed.messages[1].event == Event::overlap_pair);
    CHECK(parsed.messages[1].nodes == std::vector<std::string>{"a", "b@50200000"});
    CHECK(parsed.messages[1].line_number == 2);
    CHECK(parsed.messages[2].event == Event::incorrect_alignment);
    CHECK(parsed.messages[2].message == "Reserved memory: incorrect alignment of CMA region");
    CHECK(parsed.messages[3].event == Event::matching_fail);
    CHECK(parsed.messages[3].nodes == std::vector<std::string>{"linux,cma"});
}

TEST_CASE("a capture of two boots explains the last one") {
    std::string log = "[    0.000000] Linux version 6.1.0 (x) #1\n"
                      "[    0.000000] OF: reserved mem: node a compatible matching fail\n"
                      "U-Boot 2024.01\n"
                      "[    0.000000] Linux version 6.12.117 (x) #1\n"
                      "[    0.000000] OF: reserved mem: initialized node a, compatible id "
                      "shared-dma-pool\n";
    auto parsed = cmalign::bootlog::parse(log);
    CHECK(parsed.boots == 2);
    REQUIRE(parsed.version);
    CHECK(parsed.version->str() == "6.12.117");
    REQUIRE(parsed.messages.size() == 1);
    CHECK(parsed.messages[0].event == Event::initialized_node);
    CHECK(parsed.messages[0].compatible == "shared-dma-pool");
    CHECK(parsed.messages[0].line_number == 5);
}

TEST_CASE("lines that only look alike are not messages") {
    auto parsed =
        cmalign::bootlog::parse("Memory: 981248K/1048576K available (65536K cma-reserved)\n"
                                "printk: Reserved memory: created CMA memory pool at somewhere\n"
                                "my-app: node foo compatible matching fail\n");
    CHECK(parsed.messages.empty());
    CHECK_FALSE(parsed.version);
}

TEST_CASE("v7.2's own lines: one reg tuple used, the cma= skip, a cma= area of several ranges") {
    auto first = expand(kernel_format("7.2", ofrm, "only the first is used"), {"fw@42000000", "2"});
    auto skip = kernel_format("7.2", "kernel/dma/contiguous.c", "Skipping dt linux,cma-default");
    auto ranges = expand(kernel_format("7.2", "mm/cma.c", "Reserved %lu MiB in"), {"64", "2", "s"});
    // v6.19–v7.0 printed the skip from __reserved_mem_reserve_reg() in of_reserved_mem.c, in
    // shorter words (no such tree here: the format as that file and the v7.1 patch removing it
    // spell it).
    std::string old_skip = "OF: reserved mem: Skipping dt linux,cma-default for \"cma=\" kernel "
                           "param.";
    std::string log = "Linux version 7.2.13-arm64 (gcc-15) #1 SMP\n[ 0.1] " + first + "\n[ 0.2] " +
                      skip + "\n[ 0.3] " + ranges + "\n[ 0.4] " + old_skip + "\n";
    CAPTURE(log);
    auto parsed = cmalign::bootlog::parse(log);
    REQUIRE(parsed.messages.size() == 4);
    CHECK(parsed.messages[0].event == Event::only_first_reg);
    CHECK(parsed.messages[0].nodes == std::vector<std::string>{"fw@42000000"});
    CHECK(parsed.messages[1].event == Event::skipping_cma_default);
    CHECK(parsed.messages[1].nodes.empty());
    CHECK(parsed.messages[2].event == Event::cmdline_reserved);
    CHECK(parsed.messages[2].bytes == 64u << 20);
    CHECK_FALSE(parsed.messages[2].base);
    CHECK(parsed.messages[3].event == Event::skipping_cma_default);
}
