#include "cmalign/calc/zoneinfo.hpp"

#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cmalign/internal/core/integer.hpp"
#include "cmalign/internal/core/strings.hpp"
#include "cmalign/internal/core/text_file.hpp"

namespace cmalign::calc {

namespace {

struct Parser {
    const std::string& path;
    Diagnostics& diags;
    Zoneinfo out;
    bool ok = true;
    bool in_pagesets = false;

    void error(int line, int column, std::string message) {
        diags.error({path, line, column}, std::move(message));
        ok = false;
    }

    // A decimal number at `text`, whose column in the line is `column`.
    std::optional<std::uint64_t> number(std::string_view text, int line, int column) {
        text = trim(text);
        auto v = parse_unsigned(text);
        if (!v) error(line, column, fmt::format("expected a number, found \"{}\"", text));
        return v;
    }

    void node_line(std::string_view s, int line) {
        // "Node 0, zone      DMA"
        auto comma = s.find(',');
        auto zone_kw = s.find("zone");
        if (comma == std::string_view::npos || zone_kw == std::string_view::npos) {
            error(line, 1, "expected \"Node N, zone NAME\"");
            return;
        }
        auto node = number(s.substr(5, comma - 5), line, 6);
        std::string name(trim(s.substr(zone_kw + 4)));
        auto type = parse_zone_name(name);
        if (!node) return;
        if (!type) {
            error(line, static_cast<int>(zone_kw + 6),
                  fmt::format("unknown zone \"{}\" (expected DMA, DMA32, Normal, HighMem, "
                              "Movable or Device)",
                              name));
            return;
        }
        ZoneinfoZone z;
        z.node = static_cast<int>(*node);
        z.name = name;
        z.type = *type;
        z.where = {path, line, 1};
        out.zones.push_back(std::move(z));
        in_pagesets = false;
    }

    void zone_line(std::string_view raw, int line) {
        auto& z = out.zones.back();
        std::string_view s = trim(raw);
        int col = static_cast<int>(raw.size() - trim(raw).size()) + 1; // leading blanks
        if (s == "pagesets") {
            in_pagesets = true;
            return;
        }
        // "key value" or "key: value"
        auto split = s.find_first_of(" :");
        if (split == std::string_view::npos) return;
        std::string_view key = s.substr(0, split);
        bool colon = s[split] == ':';
        std::string_view rest = s.substr(split + 1);
        int value_col = col + static_cast<int>(split) + 1;
        if (key == "protection" && colon) {
            // "protection: (0, 3019, 9163, 9163, 9163)"
            auto open = rest.find('(');
            auto close = rest.find(')');
            if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
                error(line, value_col, "expected \"protection: (N, N, ...)\"");
                return;
            }
            std::string_view list = rest.substr(open + 1, close - open - 1);
            z.protection.clear();
            z.protection_where = {path, line, col};
            std::size_t pos = 0;
            while (pos <= list.size()) {
                auto next = list.find(',', pos);
                if (next == std::string_view::npos) next = list.size();
                auto v = number(list.substr(pos, next - pos), line,
                                value_col + static_cast<int>(open + 1 + pos));
                if (!v) return;
                z.protection.push_back(*v);
                pos = next + 1;
            }
            return;
        }
        if (in_pagesets) {
            if (key == "cpu" && colon) {
                auto v = number(rest, line, value_col);
                if (!v) return;
                ZoneinfoCpu c;
                c.cpu = static_cast<int>(*v);
                c.where = {path, line, col};
                z.cpus.push_back(c);
                return;
            }
            if (z.cpus.empty() || !colon) return;
            auto& c = z.cpus.back();
            std::optional<std::uint64_t>* field = key == "high"       ? &c.high
                                                  : key == "batch"    ? &c.batch
                                                  : key == "high_min" ? &c.high_min
                                                  : key == "high_max" ? &c.high_max
                                                                      : nullptr;
            if (field) *field = number(rest, line, value_col);
            return;
        }
        if (colon) return;
        std::optional<std::uint64_t>* field = key == "boost"     ? &z.boost
                                              : key == "min"     ? &z.min
                                              : key == "low"     ? &z.low
                                              : key == "high"    ? &z.high
                                              : key == "promo"   ? &z.promo
                                              : key == "spanned" ? &z.spanned
                                              : key == "present" ? &z.present
                                              : key == "managed" ? &z.managed
                                                                 : nullptr;
        if (field) *field = number(rest, line, value_col);
    }
};

} // namespace

unsigned Zoneinfo::online_cpus() const {
    std::set<int> cpus;
    for (const auto& z : zones)
        for (const auto& c : z.cpus)
            cpus.insert(c.cpu);
    return static_cast<unsigned>(cpus.size());
}

unsigned Zoneinfo::nodes() const {
    std::set<int> nodes;
    for (const auto& z : zones)
        nodes.insert(z.node);
    return static_cast<unsigned>(nodes.size());
}

std::optional<Zoneinfo> parse_zoneinfo_text(const std::string& text, const std::string& path,
                                            Diagnostics& diags) {
    Parser p{path, diags, {}};
    p.out.path = path;
    std::istringstream in(text);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        std::string_view s = line;
        if (s.starts_with("Node ")) {
            p.node_line(s, n);
        } else if (!p.out.zones.empty() && !trim(s).empty()) {
            p.zone_line(s, n);
        } else if (!trim(s).empty()) {
            p.error(n, 1, "expected \"Node N, zone NAME\" (is this a /proc/zoneinfo?)");
            break;
        }
    }
    if (!p.ok) return std::nullopt;
    if (p.out.zones.empty()) {
        diags.error({path, 0, 0}, "no \"Node N, zone NAME\" line: not a /proc/zoneinfo");
        return std::nullopt;
    }
    for (const auto& z : p.out.zones) {
        if (!z.managed) {
            diags.error(z.where, fmt::format("zone {} has no \"managed\" line", z.name));
            return std::nullopt;
        }
    }
    return std::move(p.out);
}

std::optional<Zoneinfo> parse_zoneinfo(const std::string& path, Diagnostics& diags,
                                       const InputLimits& limits) {
    TextFile file; // /proc/zoneinfo itself, or a copy; bounded like every input
    if (auto error = read_text_file(path, limits, {"the zoneinfo", false}, file)) {
        diags.error(std::move(error->where), std::move(error->message));
        return std::nullopt;
    }
    return parse_zoneinfo_text(file.text, path, diags);
}

std::vector<Difference> compare(const Zoneinfo& reported, const PcpResult& computed,
                                std::vector<std::string>* not_compared) {
    std::vector<Difference> out;
    std::set<std::string> unsaid; // each "cannot compare" said once
    bool printed_bounds = false;
    auto cannot = [&](std::string why) {
        if (not_compared && unsaid.insert(why).second) not_compared->push_back(std::move(why));
    };
    for (const auto& rz : reported.zones) {
        const ZoneResult* cz = nullptr;
        for (const auto& z : computed.zones)
            if (z.node == rz.node && z.type == rz.type) cz = &z;
        if (!cz) {
            cannot(fmt::format("node {} zone {}: not among the computed zones", rz.node, rz.name));
            continue;
        }
        auto add = [&](std::string field, std::uint64_t rep, std::uint64_t comp, Location where,
                       std::optional<std::uint64_t> comp_max = std::nullopt) {
            if (comp_max ? rep >= comp && rep <= *comp_max : rep == comp) return;
            for (const auto& d : out)
                if (d.node == rz.node && d.zone == rz.name && d.field == field && d.reported == rep)
                    return; // the same value on another CPU
            out.push_back(
                {rz.node, rz.name, std::move(field), rep, comp, comp_max, std::move(where)});
        };
        // The printed watermarks include watermark_boost, which the setup leaves at 0.
        std::uint64_t boost = rz.boost.value_or(0);
        auto wm = [&](const char* name, const std::optional<std::uint64_t>& v, std::uint64_t c) {
            if (v) add(fmt::format("watermarks.{}", name), *v - std::min(*v, boost), c, rz.where);
        };
        wm("min", rz.min, cz->watermarks.min);
        wm("low", rz.low, cz->watermarks.low);
        wm("high", rz.high, cz->watermarks.high);
        wm("promo", rz.promo, cz->watermarks.promo);
        if (boost) cannot("watermark_boost: a run-time boost, taken off the printed watermarks");
        for (std::size_t i = 0; i < rz.protection.size() && i < cz->lowmem_reserve.size(); ++i)
            add(fmt::format("lowmem_reserve[{}]", i), rz.protection[i], cz->lowmem_reserve[i],
                rz.protection_where);
        for (const auto& c : rz.cpus) {
            if (c.batch) add("batch", *c.batch, static_cast<std::uint64_t>(cz->batch), c.where);
            // Printed by later kernels (7.2's mm/vmstat.c; not 6.12's): fixed, so compared.
            if (c.high_min) add("high_min", *c.high_min, cz->high_min, c.where);
            if (c.high_max) add("high_max", *c.high_max, cz->high_max, c.where);
            printed_bounds |= c.high_min || c.high_max;
            if (!c.high) continue;
            if (!computed.high_autotuned) {
                add("high", *c.high, cz->high_min, c.where); // one fixed pcp->high before v6.7
            } else if (*c.high == 0) {
                // per_cpu_pages_init() zeroes pcp->high; pageset_update() sets only high_min
                // and high_max, and the first free on that CPU clamps high into them (6.12).
                cannot("high 0: that CPU's list has not been freed to since boot (pcp->high "
                       "starts at 0 and is clamped into [high_min, high_max] on first use)");
            } else {
                // nr_pcp_high(): high = clamp(high, high_min, high_max), which is high_max
                // when a large watermark_scale_factor puts high_min above high_max.
                add("high", *c.high, std::min(cz->high_min, cz->high_max), c.where, cz->high_max);
            }
        }
    }
    if (computed.high_autotuned && !printed_bounds)
        cannot("high_min and high_max: /proc/zoneinfo does not print them; each CPU's `high` "
               "(which moves at run time since v6.7) is checked to lie between them");
    cannot("count, free pages and vm statistics: run-time state, not computed");
    return out;
}

} // namespace cmalign::calc
