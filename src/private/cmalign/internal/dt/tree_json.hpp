// A resolved device tree as JSON (`tree --format json`). Private, as every JSON of the library.
#pragma once

#include <nlohmann/json.hpp> // IWYU pragma: export (callers take the JSON apart)

#include "cmalign/internal/dt/write.hpp"

namespace cmalign::dt {

// {"nodes": [{"path", "file", "line", "properties": [{"name", "value", "refs"}]}]} for the
// subtree at `path` (every node, depth first, document order). nullopt when `path` is absent.
std::optional<nlohmann::json> tree_json(const Tree& tree, const std::string& path = "/");

} // namespace cmalign::dt
