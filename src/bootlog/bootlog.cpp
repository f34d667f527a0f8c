#include "cmalign/bootlog/bootlog.hpp"

#include <regex>

#include "cmalign/internal/core/integer.hpp"

namespace cmalign::bootlog {

namespace {

struct Format {
    Event event;
    const char* name;
    const char* source;
    std::regex pattern;
    // Which capture groups hold what (0: none).
    int node = 0, node2 = 0, base = 0, mib = 0, kib = 0, compatible = 0, end = 0;
};

// %pa prints "0x" and zero-padded hex digits (lib/vsprintf.c).
#define PA "(0x[0-9a-fA-F]+)"
// A node name as fdt_get_name() gives it: no blanks (DT names are [A-Za-z0-9,._+-@]).
#define NODE "(\\S+?)"
#define RMEM "OF: reserved mem: "
#define FDT_OR_RMEM "OF: (?:fdt|reserved mem): "

const std::vector<Format>& formats() {
    using E = Event;
    static const std::vector<Format> table = [] {
        auto f = [](E e, const char* name, const char* source, const char* re) {
            return Format{e, name, source, std::regex(re, std::regex::optimize)};
        };
        std::vector<Format> t;
        const char* ofrm = "drivers/of/of_reserved_mem.c";
        const char* fdt = "drivers/of/fdt.c (v6.1), drivers/of/of_reserved_mem.c (v6.12)";
        const char* contig = "kernel/dma/contiguous.c";
        const char* coh = "kernel/dma/coherent.c";
        const char* cma = "mm/cma.c";
        t.push_back(f(E::initialized_node, "initialized-node", ofrm,
                      RMEM "initialized node " NODE ", compatible id (\\S+)"));
        t.back().node = 1, t.back().compatible = 2;
        t.push_back(f(E::matching_fail, "compatible-matching-fail", ofrm,
                      RMEM "node " NODE " compatible matching fail"));
        t.back().node = 1;
        t.push_back(f(E::region_listed, "region", ofrm,
                      RMEM PA "\\.\\." PA " \\((\\d+) KiB\\) (?:nomap|map) "
                              "(?:reusable|non-reusable) (\\S+)"));
        t.back().base = 1, t.back().end = 2, t.back().kib = 3, t.back().node = 4;
        t.push_back(f(E::failed_to_allocate, "failed-to-allocate", ofrm,
                      RMEM "failed to allocate memory for node '([^']*)': size (\\d+) MiB"));
        t.back().node = 1, t.back().mib = 2;
        t.push_back(f(E::invalid_size, "invalid-size", ofrm,
                      RMEM "invalid size property in '([^']*)' node\\."));
        t.back().node = 1;
        t.push_back(f(E::invalid_alignment, "invalid-alignment", ofrm,
                      RMEM "invalid alignment property in '([^']*)' node\\."));
        t.back().node = 1;
        t.push_back(f(E::invalid_alloc_ranges, "invalid-alloc-ranges", ofrm,
                      RMEM "invalid alloc-ranges property in '([^']*)', skipping node\\."));
        t.back().node = 1;
        t.push_back(f(E::too_many_dynamic, "too-many-dynamic-regions", ofrm,
                      RMEM "too many defined dynamic regions, skip '([^']*)'"));
        t.back().node = 1;
        t.push_back(f(E::not_enough_space, "not-enough-space", ofrm,
                      RMEM "not enough space for all defined regions\\."));
        t.push_back(f(E::overlap_detected, "overlap-detected", ofrm, RMEM "OVERLAP DETECTED!"));
        t.push_back(f(E::overlap_pair, "overlaps-with", ofrm,
                      "(?:^|\\s)" NODE " \\(" PA "--" PA "\\) overlaps with " NODE " \\(" PA "--" PA
                      "\\)"));
        t.back().node = 1, t.back().base = 2, t.back().end = 3, t.back().node2 = 4;
        t.push_back(f(E::failed_to_reserve, "failed-to-reserve", fdt,
                      FDT_OR_RMEM "Reserved memory: failed to reserve memory for node '([^']*)': "
                                  "base " PA ", size (\\d+) MiB"));
        t.back().node = 1, t.back().base = 2, t.back().mib = 3;
        t.push_back(f(E::invalid_reg, "invalid-reg", fdt,
                      FDT_OR_RMEM "Reserved memory: invalid reg property in '([^']*)', skipping "
                                  "node\\."));
        t.back().node = 1;
        t.push_back(f(E::unsupported_format, "unsupported-node-format", fdt,
                      FDT_OR_RMEM "Reserved memory: unsupported node format, ignoring"));
        t.push_back(f(E::no_reserved_memory, "no-reserved-memory", ofrm,
                      RMEM "Reserved memory: No reserved-memory node in the DT"));
        t.push_back(f(E::only_first_reg, "only-first-reg", ofrm,
                      RMEM "Reserved memory: node '([^']*)' has \\d+ <base size> entries, only the "
                           "first is used"));
        t.back().node = 1;
        t.push_back(f(E::skipping_cma_default, "skipping-cma-default",
                      "drivers/of/of_reserved_mem.c (v6.19), kernel/dma/contiguous.c (v7.1)",
                      "Skipping dt linux,cma-default (?:node in favor )?for \"cma=\" kernel "
                      "param\\."));
        t.push_back(f(E::bypass_cmdline, "bypass", contig,
                      "Reserved memory: bypass " NODE " node, using cmdline CMA params instead"));
        t.back().node = 1;
        t.push_back(f(E::incorrect_alignment, "incorrect-alignment", contig,
                      "Reserved memory: incorrect alignment of CMA region"));
        t.push_back(f(E::unable_to_setup, "unable-to-setup", contig,
                      "Reserved memory: unable to setup CMA region"));
        t.push_back(f(E::created_cma_pool, "created-cma-pool", contig,
                      "Reserved memory: created CMA memory pool at " PA ", size (-?\\d+) MiB"));
        t.back().base = 1, t.back().mib = 2;
        t.push_back(f(E::created_restricted_pool, "created-restricted-pool", "kernel/dma/swiotlb.c",
                      "software IO TLB: Reserved memory: created restricted DMA pool at " PA
                      ", size (-?\\d+) MiB"));
        t.back().base = 1, t.back().mib = 2;
        t.push_back(f(E::created_dma_pool, "created-dma-pool", coh,
                      "Reserved memory: created DMA memory pool at " PA ", size (-?\\d+) MiB"));
        t.back().base = 1, t.back().mib = 2;
        t.push_back(f(E::coherent_needs_no_map, "regions-without-no-map", coh,
                      "Reserved memory: regions without no-map are not yet supported"));
        t.push_back(f(E::coherent_init_failed, "failed-to-init-dma-pool", coh,
                      "Reserved memory: failed to init DMA memory pool at " PA
                      ", size (-?\\d+) MiB"));
        t.back().base = 1, t.back().mib = 2;
        t.push_back(f(E::not_enough_slots, "not-enough-slots", cma,
                      "cma: Not enough slots for CMA reserved regions!"));
        t.push_back(f(E::not_activated, "could-not-be-activated", cma,
                      "cma: CMA area " NODE " could not be activated"));
        t.back().node = 1;
        t.push_back(f(E::cmdline_reserved, "cma-reserved", cma,
                      "cma: Reserved (\\d+) MiB (?:at " PA
                      "(?: on node -?\\d+)?|in \\d+ ranges?)"));
        t.back().mib = 1, t.back().base = 2;
        t.push_back(f(E::cmdline_failed, "cma-failed-to-reserve", cma,
                      "cma: Failed to reserve (\\d+) MiB(?: on node -?\\d+)?"));
        t.back().mib = 1;
        t.push_back(f(E::cmdline_misaligned, "cma-region-alignment", cma,
                      "cma: Region at " PA " must be aligned to " PA " bytes"));
        t.back().base = 1;
        t.push_back(f(E::cmdline_size_limit, "cma-size-limit", cma,
                      "cma: Size \\(" PA "\\) of region at " PA " exceeds limit \\(" PA "\\)"));
        t.back().base = 2;
        t.push_back(f(E::cmdline_boundary, "cma-memory-boundary", cma,
                      "cma: Region at " PA " defined on low/high memory boundary \\(" PA "\\)"));
        t.back().base = 1;
        return t;
    }();
    return table;
}

const Format& format_of(Event e) {
    for (const auto& f : formats())
        if (f.event == e) return f;
    return formats().front();
}

std::optional<std::uint64_t> number(const std::string& text, int base) {
    std::string_view s = text;
    if (base == 16 && (s.starts_with("0x") || s.starts_with("0X"))) s.remove_prefix(2);
    return parse_unsigned(s, base);
}

// CR, ANSI colour/cursor sequences and other control characters (except tab) removed.
std::string clean(std::string_view line) {
    std::string out;
    out.reserve(line.size());
    for (std::size_t i = 0; i < line.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(line[i]);
        if (c == 0x1b) {
            // CSI: ESC [ parameters final-byte (0x40..0x7e)
            if (i + 1 < line.size() && line[i + 1] == '[') {
                i += 2;
                while (i < line.size() && !(line[i] >= 0x40 && line[i] <= 0x7e))
                    ++i;
            }
            continue;
        }
        if (c < 0x20 && c != '\t') continue;
        out.push_back(static_cast<char>(c));
    }
    return out;
}

// Cheap test before running any pattern: every format holds one of these.
bool may_matter(std::string_view s) {
    return s.find("eserved") != std::string_view::npos ||
           s.find("cma: ") != std::string_view::npos ||
           s.find("overlaps with") != std::string_view::npos ||
           s.find("Skipping dt linux,cma-default") != std::string_view::npos;
}

void match_line(std::string_view piece, std::size_t line_number, const std::string& text,
                Log& log) {
    static const std::regex version_re("Linux version (\\d+\\.\\d+(?:\\.\\d+)?\\S*)");
    std::string s(piece);
    std::smatch m;
    if (s.find("Linux version ") != std::string::npos && std::regex_search(s, m, version_re)) {
        if (auto v = KernelVersion::parse(m[1].str())) {
            // A capture of several boots: the last one is the one to explain.
            if (log.version) log.messages.clear();
            ++log.boots;
            log.version = v;
            log.version_line = line_number;
            log.version_text = text;
        }
        return;
    }
    if (!may_matter(s)) return;
    for (const auto& f : formats()) {
        if (!std::regex_search(s, m, f.pattern)) continue;
        Message msg;
        msg.line_number = line_number;
        msg.text = text;
        msg.event = f.event;
        auto start = static_cast<std::size_t>(m.position(0));
        if (f.event == Event::overlap_pair && start < s.size() && s[start] == ' ') ++start;
        msg.message = s.substr(start);
        while (!msg.message.empty() && (msg.message.back() == ' ' || msg.message.back() == '\t'))
            msg.message.pop_back();
        if (f.node) msg.nodes.push_back(m[f.node].str());
        if (f.node2) msg.nodes.push_back(m[f.node2].str());
        if (f.base) msg.base = number(m[f.base].str(), 16);
        if (f.mib)
            if (auto mib = number(m[f.mib].str(), 10)) msg.bytes = *mib << 20;
        if (f.kib)
            if (auto kib = number(m[f.kib].str(), 10)) msg.bytes = *kib << 10;
        if (f.end && msg.base) {
            // "base..end" is inclusive in the v6.12 listing, exclusive in OVERLAP lines.
            if (auto end = number(m[f.end].str(), 16); end && *end >= *msg.base)
                if (!msg.bytes)
                    msg.bytes = *end - *msg.base + (f.event == Event::region_listed ? 1 : 0);
        }
        if (f.compatible) msg.compatible = m[f.compatible].str();
        log.messages.push_back(std::move(msg));
        return;
    }
}

} // namespace

const char* to_string(Event event) {
    return format_of(event).name;
}

const char* source_of(Event event) {
    return format_of(event).source;
}

bool names_no_node(Event event) {
    switch (event) {
    case Event::incorrect_alignment:
    case Event::unable_to_setup:
    case Event::created_cma_pool:
    case Event::created_dma_pool:
    case Event::created_restricted_pool:
    case Event::coherent_needs_no_map:
    case Event::not_enough_slots:
        return true;
    default:
        return false;
    }
}

Log parse(std::string_view text) {
    Log log;
    std::size_t pos = 0;
    std::size_t number = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string_view raw = text.substr(pos, nl - pos);
        pos = nl + 1;
        ++number;
        // A lone CR ends a line too (some serial captures); CRLF is one break.
        std::size_t start = 0;
        while (start <= raw.size()) {
            auto cr = raw.find('\r', start);
            if (cr == std::string_view::npos) cr = raw.size();
            std::string line = clean(raw.substr(start, cr - start));
            start = cr + 1;
            if (line.empty()) continue;
            // /dev/kmsg escapes the newline of a two-line message (OVERLAP DETECTED!) as \x0a.
            std::size_t from = 0;
            while (from <= line.size()) {
                auto esc = line.find("\\x0a", from);
                if (esc == std::string::npos) esc = line.size();
                match_line(std::string_view(line).substr(from, esc - from), number, line, log);
                from = esc + 4;
            }
        }
    }
    log.lines = number;
    return log;
}

} // namespace cmalign::bootlog
