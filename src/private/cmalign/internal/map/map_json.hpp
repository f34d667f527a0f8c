// The memory map as JSON (`map --format json`). Private, as every JSON of the library.
#pragma once

#include <nlohmann/json.hpp> // IWYU pragma: export (callers take the JSON apart)

#include "cmalign/map/map.hpp"

namespace cmalign::map {

// {input, arch, kernel_version, page_size, cma_alignment_bytes, alignment_at_boot, banks: [...],
//  blocks: [{label, path, kind, base, size, no_map, reusable, status, reason, base_aligned,
//  size_aligned, fixed_size, fix_blocked, lane}], axis: [{begin, end, in_memory, gap}], notes,
//  summary: {errors, warnings}}
nlohmann::json to_json(const Layout& layout);

} // namespace cmalign::map
