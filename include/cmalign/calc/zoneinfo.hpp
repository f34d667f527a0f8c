// /proc/zoneinfo as the kernel prints it (mm/vmstat.c zoneinfo_show_print()), and the
// comparison of what it reports with what compute_pcp() computed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/calc/pcp.hpp"
#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/limits.hpp"

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
std::optional<Zoneinfo> parse_zoneinfo(const std::string& path, Diagnostics& diags,
                                       const InputLimits& limits = {});
std::optional<Zoneinfo> parse_zoneinfo_text(const std::string& text, const std::string& path,
                                            Diagnostics& diags);

struct Difference {
    int node = 0;
    std::string zone;  // empty for global values (min_free_kbytes)
    std::string field; // "batch", "high", "watermarks.low", "lowmem_reserve[2]", ...
    std::uint64_t reported = 0;
    std::uint64_t computed = 0;
    // ≥ v6.7 `high`: the value moves at run time, so the computation is the range
    // [computed, computed_max] = [high_min, high_max] the printed value must lie in.
    std::optional<std::uint64_t> computed_max;
    Location where;
};

// What /proc/zoneinfo prints (mm/vmstat.c zoneinfo_show_print(), 6.1 and 6.12) compared with
// the computation: per zone the watermarks (less watermark_boost), protection (lowmem_reserve),
// and per CPU `batch` and `high` — equal to the one computed high before v6.7, within
// [high_min, high_max] from v6.7 on, where it moves at run time — and `high_min`/`high_max`
// where the kernel prints them (7.2 does, 6.12 does not). What cannot be compared is said in
// `not_compared` when given.
std::vector<Difference> compare(const Zoneinfo& reported, const PcpResult& computed,
                                std::vector<std::string>* not_compared = nullptr);

} // namespace cmalign::calc
