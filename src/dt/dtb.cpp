// DTB input through libfdt (dtc 1.6.1). Validate first (fdt_check_full), then walk.
#include "cmalign/dt/dtb.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "cmalign/internal/core/bytes.hpp"
#include "cmalign/internal/core/text_file.hpp"

extern "C" {
#include <libfdt.h>
}

namespace cmalign::dt {

namespace {

constexpr std::uint32_t fdt_magic_value = 0xd00dfeed;

void located_error(Diagnostics& diags, const std::string& file, std::string message) {
    diags.error(Location{file, 0, 0}, std::move(message));
}

// After fdt_check_full() failed: find the structure-block offset where a plain tag walk stops,
// so the error points somewhere useful. fdt_next_tag() bounds-checks every read.
std::size_t failing_struct_offset(const void* fdt) {
    int offset = 0;
    for (int steps = 0; steps < (1 << 22); ++steps) {
        int next = 0;
        std::uint32_t tag = fdt_next_tag(fdt, offset, &next);
        if (next < 0 || tag == FDT_END) break;
        if (tag != FDT_BEGIN_NODE && tag != FDT_END_NODE && tag != FDT_PROP && tag != FDT_NOP)
            break;
        if (next <= offset) break;
        offset = next;
    }
    return fdt_off_dt_struct(fdt) + static_cast<std::size_t>(offset);
}

struct Walker {
    const void* fdt;
    Location where;
    const DtbOptions& options;
    Diagnostics& diags;
    bool ok = true;
    std::uint64_t node_count = 0;
    std::uint64_t property_count = 0;

    void build(int node_offset, Node& node, int depth) {
        if (depth > options.limits.node_depth) {
            located_error(diags, where.file,
                          fmt::format("device tree nested deeper than {} levels (node at structure "
                                      "offset 0x{:x}) {}",
                                      options.limits.node_depth, node_offset,
                                      limit_hint("node-depth")));
            ok = false;
            return;
        }
        if (++node_count > options.limits.nodes) {
            located_error(diags, where.file,
                          fmt::format("more than {} nodes (node at structure offset 0x{:x}) {}",
                                      options.limits.nodes, node_offset, limit_hint("nodes")));
            ok = false;
            return;
        }
        int name_len = 0;
        const char* name = fdt_get_name(fdt, node_offset, &name_len);
        if (name == nullptr) {
            located_error(diags, where.file,
                          fmt::format("unreadable node name at structure offset 0x{:x}: {}",
                                      node_offset, fdt_strerror(name_len)));
            ok = false;
            return;
        }
        if (depth > 0 && name_len > 0) node.name.assign(name, static_cast<std::size_t>(name_len));
        node.where = where;

        int prop_offset = 0;
        fdt_for_each_property_offset(prop_offset, fdt, node_offset) {
            const char* prop_name = nullptr;
            int len = 0;
            const void* data = fdt_getprop_by_offset(fdt, prop_offset, &prop_name, &len);
            if (data == nullptr || prop_name == nullptr || len < 0) {
                located_error(diags, where.file,
                              fmt::format("unreadable property at structure offset 0x{:x}: {}",
                                          prop_offset,
                                          fdt_strerror(len < 0 ? len : -FDT_ERR_BADSTRUCTURE)));
                ok = false;
                return;
            }
            if (++property_count > options.limits.properties) {
                located_error(diags, where.file,
                              fmt::format("more than {} properties (at structure offset 0x{:x}) {}",
                                          options.limits.properties, prop_offset,
                                          limit_hint("properties")));
                ok = false;
                return;
            }
            Property prop;
            prop.name = prop_name;
            auto bytes = static_cast<const std::uint8_t*>(data);
            prop.value.assign(bytes, bytes + len);
            prop.where = where;
            node.properties.push_back(std::move(prop));
        }

        int child_offset = 0;
        fdt_for_each_subnode(child_offset, fdt, node_offset) {
            Node child;
            build(child_offset, child, depth + 1);
            if (!ok) return;
            node.children.push_back(std::move(child));
        }
    }
};

} // namespace

bool is_dtb_name(std::string_view path) {
    auto ends_with = [&](std::string_view suffix) {
        return path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix;
    };
    return ends_with(".dtb") || ends_with(".dtbo");
}

bool has_fdt_magic(std::span<const std::uint8_t> bytes) {
    return bytes.size() >= 4 && bytes::be32(bytes.data()) == fdt_magic_value;
}

std::optional<Tree> parse_dtb(std::span<const std::uint8_t> blob, const std::string& file_name,
                              Diagnostics& diags, const DtbOptions& options) {
    constexpr std::size_t header_size = sizeof(struct fdt_header);
    if (blob.size() < header_size) {
        located_error(
            diags, file_name,
            fmt::format("truncated DTB: {} bytes, the header alone needs {} (at offset 0x{:x})",
                        blob.size(), header_size, blob.size()));
        return std::nullopt;
    }
    if (!has_fdt_magic(blob)) {
        located_error(diags, file_name,
                      fmt::format("not a flattened device tree: magic 0x{:08x} instead of 0x{:08x} "
                                  "(at offset 0x0)",
                                  bytes::be32(blob.data()), fdt_magic_value));
        return std::nullopt;
    }
    std::uint32_t total_size = bytes::be32(blob.data() + 4);
    if (total_size > blob.size()) {
        located_error(diags, file_name,
                      fmt::format("truncated DTB: the header says {} bytes, the file has {} (at "
                                  "offset 0x{:x})",
                                  total_size, blob.size(), blob.size()));
        return std::nullopt;
    }
    if (total_size < header_size) {
        located_error(
            diags, file_name,
            fmt::format("corrupt DTB: total size {} is smaller than the header (at offset 0x4)",
                        total_size));
        return std::nullopt;
    }

    // libfdt wants the blob 8-byte aligned; a vector<uint64_t> guarantees it.
    std::vector<std::uint64_t> aligned((total_size + 7) / 8);
    std::memcpy(aligned.data(), blob.data(), total_size);
    const void* fdt = aligned.data();

    if (int err = fdt_check_header(fdt); err != 0) {
        located_error(diags, file_name,
                      fmt::format("corrupt DTB header: {} (at offset 0x0)", fdt_strerror(err)));
        return std::nullopt;
    }
    // Before version 16 node names are full paths. libfdt 1.6.1's fdt_check_full() dereferences
    // fdt_get_name()'s NULL when the root's name has no '/', so that case is answered here first.
    if (fdt_version(fdt) < 0x10) {
        int name_len = 0;
        if (fdt_get_name(fdt, 0, &name_len) == nullptr) {
            located_error(diags, file_name,
                          fmt::format("corrupt DTB: version {} root node name is not a path ({}) "
                                      "(at offset 0x{:x})",
                                      fdt_version(fdt), fdt_strerror(name_len),
                                      fdt_off_dt_struct(fdt)));
            return std::nullopt;
        }
    }
    if (int err = fdt_check_full(fdt, total_size); err != 0) {
        std::size_t where = failing_struct_offset(fdt);
        located_error(diags, file_name,
                      fmt::format("corrupt DTB: {} (at offset 0x{:x})", fdt_strerror(err), where));
        return std::nullopt;
    }

    Tree tree;
    tree.input = file_name;
    tree.from_dtb = true;
    tree.boot_cpuid = fdt_boot_cpuid_phys(fdt);
    Location where{file_name, 0, 0};

    int reserve_count = fdt_num_mem_rsv(fdt);
    if (reserve_count < 0) {
        located_error(diags, file_name,
                      fmt::format("corrupt DTB memory reservation block: {} (at offset 0x{:x})",
                                  fdt_strerror(reserve_count), fdt_off_mem_rsvmap(fdt)));
        return std::nullopt;
    }
    for (int i = 0; i < reserve_count; ++i) {
        std::uint64_t address = 0;
        std::uint64_t size = 0;
        if (int err = fdt_get_mem_rsv(fdt, i, &address, &size); err != 0) {
            located_error(diags, file_name,
                          fmt::format("corrupt DTB memory reservation {}: {} (at offset 0x{:x})", i,
                                      fdt_strerror(err), fdt_off_mem_rsvmap(fdt) + 16u * i));
            return std::nullopt;
        }
        tree.memreserve.push_back({address, size, where});
    }

    int root = fdt_path_offset(fdt, "/");
    if (root < 0) {
        located_error(diags, file_name,
                      fmt::format("corrupt DTB: no root node ({}) (at offset 0x{:x})",
                                  fdt_strerror(root), fdt_off_dt_struct(fdt)));
        return std::nullopt;
    }
    Walker walker{fdt, where, options, diags};
    walker.build(root, tree.root, 0);
    if (!walker.ok) return std::nullopt;
    return tree;
}

namespace {

// A whole DTB read, parsed and named after the board it stands for.
std::optional<Tree> finish_dtb(const std::vector<std::uint8_t>& bytes, const std::string& path,
                               Diagnostics& diags, const DtbOptions& options, std::string input) {
    auto tree = parse_dtb(bytes, path, diags, options);
    if (tree) {
        tree->input = input.empty() ? path : std::move(input);
        tree->sources = std::vector<std::string>{path};
    }
    return tree;
}

} // namespace

std::optional<Tree> read_dtb(const std::string& path, Diagnostics& diags, const DtbOptions& options,
                             std::string input) {
    std::vector<std::uint8_t> bytes;
    if (auto piped = anonymous_pipe_bytes(path, options.limits.file_bytes)) {
        // dtc -O dtb … | cmalign check /dev/stdin: the pipe's bytes, read once.
        if (piped->error != 0) {
            located_error(diags, path, fmt::format("cannot read: {}", std::strerror(piped->error)));
            return std::nullopt;
        }
        if (piped->truncated) {
            located_error(diags, path,
                          fmt::format("file is more than the limit of {} bytes {}",
                                      options.limits.file_bytes, limit_hint("file-bytes")));
            return std::nullopt;
        }
        bytes.assign(piped->bytes.begin(), piped->bytes.end());
        return finish_dtb(bytes, path, diags, options, std::move(input));
    }
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
        located_error(diags, path, "cannot read: not a regular file");
        return std::nullopt;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        located_error(diags, path, fmt::format("cannot open: {}", std::strerror(errno)));
        return std::nullopt;
    }
    in.seekg(0, std::ios::end);
    auto end = in.tellg();
    if (end < 0) {
        located_error(diags, path, "cannot read: not a regular file");
        return std::nullopt;
    }
    auto size = static_cast<std::size_t>(end);
    if (size > options.limits.file_bytes) {
        located_error(diags, path,
                      fmt::format("file is {} bytes, more than the limit of {} {}", size,
                                  options.limits.file_bytes, limit_hint("file-bytes")));
        return std::nullopt;
    }
    in.seekg(0, std::ios::beg);
    bytes.resize(size);
    if (size > 0 &&
        !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) {
        located_error(diags, path, "cannot read the whole file");
        return std::nullopt;
    }
    return finish_dtb(bytes, path, diags, options, std::move(input));
}

} // namespace cmalign::dt
