// /proc/zoneinfo as the kernel prints it (mm/vmstat.c zoneinfo_show_print()), and the
// comparison of what it reports with what compute_pcp() computed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/calc/pcp.hpp"
#include "cmalign/core/diagnostic.hpp"

namespace cmalign::calc {

struct ZoneinfoCpu {
    int cpu = 0;
    Location where;
    std::optional<std::uint64_t> high, batch, high_min, high_max;
};

struct ZoneinfoZone {
    int node = 0;
    std::string name; // as printed ("DMA32")
    ZoneType type = ZoneType::normal;
    Location where; // the "Node 0, zone DMA32" line
    // min_wmark_pages() etc. print _watermark[] + watermark_boost.
    std::optional<std::uint64_t> boost, min, low, high, promo, spanned, present, managed;
    std::vector<std::uint64_t> protection;
    Location protection_where;
    std::vector<ZoneinfoCpu> cpus;
};

struct Zoneinfo {
    std::string path;
    std::vector<ZoneinfoZone> zones;
    // Distinct CPUs listed in the pagesets (zoneinfo prints every online CPU for every
    // populated zone).
    unsigned online_cpus() const;
    unsigned nodes() const;
};

// nullopt (and located errors) when the file cannot be read or is not a zoneinfo.
std::optional<Zoneinfo> parse_zoneinfo(const std::string& path, Diagnostics& diags);
std::optional<Zoneinfo> parse_zoneinfo_text(const std::string& text, const std::string& path,
                                            Diagnostics& diags);

struct Difference {
    int node = 0;
    std::string zone;  // empty for global values (min_free_kbytes)
    std::string field; // "batch", "high_min", "watermarks.low", "lowmem_reserve[2]", ...
    std::uint64_t reported = 0;
    std::uint64_t computed = 0;
    Location where;
};

std::vector<Difference> compare(const Zoneinfo& reported, const PcpResult& computed);

} // namespace cmalign::calc
