// The resolved device tree: what dtc would put in the DTB, plus where each value came from.
// Built from DTS (dt/dts.hpp) or DTB (dt/dtb.hpp); consumed by reserved/ and checks/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/core/diagnostic.hpp"

namespace cmalign::dt {

// Bytes [begin, end) of an original source file (not the preprocessed text).
struct SourceSpan {
    std::string file;
    std::size_t begin = 0;
    std::size_t end = 0;
};

// One cell or element of a property value and where it was written. `fix` uses `literal` to
// rewrite exactly those characters; when a value came from a macro or an expression, `literal`
// is empty and only `where`/`text` are known.
struct ValueChunk {
    std::size_t offset = 0; // byte offset in Property::value
    std::size_t size = 0;   // bytes (4 for a 32-bit cell)
    Location where;         // where the user wrote it (through includes and macro expansions)
    std::string text;       // the source text of the element ("0x400000", "SZ_4M", "(1 << 22)")
    std::optional<SourceSpan> literal; // set only for a plain integer literal written verbatim
};

struct Property {
    std::string name;
    std::vector<std::uint8_t> value;
    Location where; // the property name in its (last) assignment
    std::vector<ValueChunk> chunks;
    std::vector<std::string> labels;
    bool has_refs = false; // holds phandle references or path references
    // Set when an overlay read from a blob (.dtbo) wrote this property: its node's path in that
    // blob (`where.file`), so `fix` can find the bytes again. Empty otherwise.
    std::string blob_node;

    // Big-endian cells; nullopt if the length is not a multiple of 4.
    std::optional<std::vector<std::uint32_t>> cells() const;
    std::optional<std::uint32_t> u32() const; // exactly one cell
    // Chunk covering value byte `offset`, if any.
    const ValueChunk* chunk_at(std::size_t offset) const;
};

struct Node {
    std::string name; // "memory@40000000"; empty for the root
    Location where;   // first definition
    std::vector<std::string> labels;
    std::vector<Property> properties;
    std::vector<Node> children;

    const Property* find_property(std::string_view name) const;
    Property* find_property(std::string_view name);
    const Node* find_child(std::string_view name) const;
    // "name" without the unit address ("memory" for "memory@40000000").
    std::string_view base_name() const;
};

struct MemReserve {
    std::uint64_t address = 0;
    std::uint64_t size = 0;
    Location where;
};

struct Tree {
    std::string input; // the file named on the command line
    bool from_dtb = false;
    Node root;
    std::vector<MemReserve> memreserve;
    std::uint32_t boot_cpuid = 0;
    // Every file read to build the tree (a DTB: the blob; a DTS: the board and all its
    // preprocessing read), as a build system's depfile lists them; nullopt when not known:
    // dtc's /include/ and /incbin/ are read by the DTS parser, after the preprocessor's record.
    std::optional<std::vector<std::string>> sources;

    // "/reserved-memory/foo@0"; "/" is the root. nullptr when absent.
    const Node* find(std::string_view path) const;
};

// Appends every node as (path, node) in depth-first document order.
void walk(const Node& root, const std::string& root_path,
          const std::function<void(const std::string&, const Node&)>& visit);

} // namespace cmalign::dt
