// Output of a resolved tree: the `cmalign tree` JSON of docs/json.md and DTS text in the style of
// `dtc -O dts` (recompilable with dtc; phandle references are written as numbers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/dt/tree.hpp"

namespace cmalign::dt {

// Lowercase hex of the bytes, no separators ("0000000100000002").
std::string to_hex(const std::vector<std::uint8_t>& bytes);

// The subtree at `path` as DTS text (with /dts-v1/ and /memreserve/ lines for the whole tree).
// nullopt when `path` is absent.
std::optional<std::string> tree_dts(const Tree& tree, const std::string& path = "/");

// How dtc would show a value without type information: "string", "cells" or "bytes"
// (dtc's guess_value_type in treesource.c).
enum class ValueShape { empty, strings, cells, bytes };
ValueShape guess_shape(const std::vector<std::uint8_t>& value);

} // namespace cmalign::dt
