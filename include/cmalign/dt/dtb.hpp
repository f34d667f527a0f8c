// Flattened device trees (.dtb/.dtbo) read through libfdt into a dt::Tree.
//
// The blob is validated with fdt_check_full() before anything walks it, so a truncated or corrupt
// file becomes a located error ("board.dtb: error: … at offset 0x…"), never a crash. DTB values
// have no source lines: every Location is just the file name.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/limits.hpp"
#include "cmalign/dt/tree.hpp"

namespace cmalign::dt {

struct DtbOptions {
    InputLimits limits; // file_bytes, node_depth, nodes, properties
};

// True for a .dtb/.dtbo name, or when the first bytes are the FDT magic (0xd00dfeed).
bool is_dtb_name(std::string_view path);
bool has_fdt_magic(std::span<const std::uint8_t> bytes);

// Reads `path` (nullopt and an error in diags when unreadable or invalid). `input` is the name
// the user gave (Tree::input); defaults to `path`.
std::optional<Tree> read_dtb(const std::string& path, Diagnostics& diags,
                             const DtbOptions& options = {}, std::string input = {});

// Same, for a blob already in memory; `file_name` is used in locations.
std::optional<Tree> parse_dtb(std::span<const std::uint8_t> blob, const std::string& file_name,
                              Diagnostics& diags, const DtbOptions& options = {});

} // namespace cmalign::dt
