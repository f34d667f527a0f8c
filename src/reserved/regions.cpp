// /reserved-memory and friends as the kernel reads them. Sources (Debian 6.12.117 and 6.1.192):
// drivers/of/of_reserved_mem.c (__reserved_mem_check_root, __reserved_mem_reserve_reg,
// fdt_scan_reserved_mem_reg_nodes, __reserved_mem_alloc_size), drivers/of/fdt.c
// (early_init_dt_scan_root, early_init_dt_scan_memory, dt_mem_next_cell), lib/cmdline.c
// (memparse), kernel/params.c (next_arg), kernel/dma/contiguous.c (early_cma).
#include "cmalign/reserved/regions.hpp"

#include <algorithm>
#include <cctype>
#include <strings.h>

#include "cmalign/internal/core/bytes.hpp"
#include "cmalign/reserved/bootargs.hpp"

namespace cmalign::reserved {

const char* to_string(Kind kind) {
    switch (kind) {
    case Kind::cma:
        return "cma";
    case Kind::coherent:
        return "coherent";
    case Kind::restricted:
        return "restricted";
    case Kind::static_:
        return "static";
    case Kind::inactive:
        return "inactive";
    }
    return "static";
}

namespace {

// NUL-separated string list (compatible); a missing final NUL still yields the last string.
std::vector<std::string> string_list(const dt::Property& prop) {
    std::vector<std::string> out;
    std::string current;
    for (auto byte : prop.value) {
        if (byte == 0) {
            out.push_back(std::move(current));
            current.clear();
        } else {
            current.push_back(static_cast<char>(byte));
        }
    }
    if (!current.empty()) out.push_back(std::move(current));
    return out;
}

std::string first_string(const dt::Property& prop) {
    std::string out;
    for (auto byte : prop.value) {
        if (byte == 0) break;
        out.push_back(static_cast<char>(byte));
    }
    return out;
}

// of_fdt_device_is_available(): no status, "okay" or "ok".
bool is_available(const dt::Node& node) {
    const auto* status = node.find_property("status");
    if (status == nullptr) return true;
    auto value = first_string(*status);
    return value == "okay" || value == "ok";
}

// of_flat_dt_is_compatible() compares with of_compat_cmp() (strcasecmp for flat trees).
bool has_compatible(const std::vector<std::string>& list, const char* name) {
    return std::any_of(list.begin(), list.end(),
                       [&](const std::string& c) { return strcasecmp(c.c_str(), name) == 0; });
}

Location property_location(const dt::Property& prop, const dt::Node& node) {
    return prop.where.known() ? prop.where : node.where;
}

// fdt_path_offset()'s matching: an exact name, else "name@unit" for a name without '@'.
const dt::Node* find_child_fdt(const dt::Node& parent, std::string_view name) {
    if (const auto* exact = parent.find_child(name)) return exact;
    for (const auto& child : parent.children)
        if (child.base_name() == name) return &child;
    return nullptr;
}

std::string child_path(const std::string& parent, const std::string& name) {
    return parent == "/" ? "/" + name : parent + "/" + name;
}

} // namespace

ValueRef read_value(const dt::Property& prop, std::size_t offset, std::uint32_t cells) {
    ValueRef ref;
    ref.property = prop.name;
    ref.offset = offset;
    ref.length = std::size_t{cells} * 4;
    std::uint64_t value = 0;
    for (std::uint32_t i = 0; i < cells; ++i) {
        std::uint32_t cell = bytes::be32_at(prop.value, offset + std::size_t{i} * 4);
        // of_read_number(): r = (r << 32) | cell, so cells before the last two fall off.
        if (cells > 2 && i + 2 < cells && cell != 0) ref.overflowed = true;
        value = (value << 32) | cell;
    }
    ref.value = value;
    ref.where = prop.where;
    for (const auto& chunk : prop.chunks) {
        if (chunk.offset < offset + ref.length && chunk.offset + chunk.size > offset)
            ref.chunks.push_back(chunk);
    }
    // Point at the cell that carries the value: the most significant non-zero one ("0x88000000"
    // in "<0x0 0x88000000>"), or the last cell when the value is 0.
    std::size_t cell = cells == 0 ? 0 : cells - 1;
    for (std::uint32_t i = 0; i < cells; ++i) {
        if (bytes::be32_at(prop.value, offset + std::size_t{i} * 4) != 0) {
            cell = i;
            break;
        }
    }
    if (const auto* chunk = prop.chunk_at(offset + cell * 4); chunk && chunk->where.known())
        ref.where = chunk->where;
    else if (!ref.chunks.empty() && ref.chunks.front().where.known())
        ref.where = ref.chunks.front().where;
    return ref;
}

MemparseResult memparse(std::string_view text) {
    MemparseResult result;
    std::size_t pos = 0;
    unsigned base = 10;
    // _parse_integer_fixup_radix(): "0x" + hex digit → 16, leading 0 → 8, else 10.
    if (text.size() >= 3 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') &&
        std::isxdigit(static_cast<unsigned char>(text[2]))) {
        base = 16;
        pos = 2;
    } else if (!text.empty() && text[0] == '0') {
        base = 8;
    }
    std::size_t digits_start = pos;
    std::uint64_t value = 0;
    while (pos < text.size()) {
        char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[pos])));
        unsigned digit = 0;
        if (c >= '0' && c <= '9')
            digit = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f')
            digit = static_cast<unsigned>(c - 'a' + 10);
        else
            break;
        if (digit >= base) break;
        value = value * base + digit; // wraps like the kernel's parser on overflow
        ++pos;
    }
    if (pos == digits_start) {
        // No digits: simple_strtoull() returns 0 and leaves the pointer at the start.
        result.consumed = 0;
        return result;
    }
    if (pos < text.size()) {
        int shift = 0;
        switch (text[pos]) {
        case 'E':
        case 'e':
            shift = 60;
            break;
        case 'P':
        case 'p':
            shift = 50;
            break;
        case 'T':
        case 't':
            shift = 40;
            break;
        case 'G':
        case 'g':
            shift = 30;
            break;
        case 'M':
        case 'm':
            shift = 20;
            break;
        case 'K':
        case 'k':
            shift = 10;
            break;
        default:
            break;
        }
        if (shift != 0) {
            value <<= shift;
            ++pos;
        }
    }
    result.value = value;
    result.consumed = pos;
    return result;
}

std::vector<std::pair<std::string, std::optional<std::string>>>
split_cmdline(std::string_view line) {
    std::vector<std::pair<std::string, std::optional<std::string>>> out;
    std::size_t pos = 0;
    auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (pos < line.size()) {
        while (pos < line.size() && is_space(line[pos]))
            ++pos;
        if (pos >= line.size()) break;
        // next_arg(): a word ends at a space outside double quotes; quotes are stripped.
        std::string word;
        bool in_quote = false;
        std::optional<std::size_t> equals;
        while (pos < line.size() && (in_quote || !is_space(line[pos]))) {
            char c = line[pos++];
            if (c == '"') {
                in_quote = !in_quote;
                continue;
            }
            if (c == '=' && !equals) equals = word.size();
            word.push_back(c);
        }
        if (word == "--") break; // everything after "--" goes to init
        if (equals)
            out.emplace_back(word.substr(0, *equals), word.substr(*equals + 1));
        else
            out.emplace_back(word, std::nullopt);
    }
    return out;
}

std::optional<CmaCmdline> parse_cma_cmdline(std::string_view bootargs) {
    std::optional<CmaCmdline> found;
    int occurrences = 0;
    for (const auto& [name, value] : split_cmdline(bootargs)) {
        if (name != "cma") continue;
        ++occurrences;
        CmaCmdline cma;
        cma.has_value = value.has_value();
        cma.text = value.value_or("");
        if (cma.has_value) {
            // early_cma(): size[@base[-limit]].
            std::string_view rest = cma.text;
            auto size = memparse(rest);
            cma.size = size.value;
            rest.remove_prefix(size.consumed);
            if (!rest.empty() && rest.front() == '@') {
                rest.remove_prefix(1);
                auto base = memparse(rest);
                cma.base = base.value;
                rest.remove_prefix(base.consumed);
                if (!rest.empty() && rest.front() == '-') {
                    rest.remove_prefix(1);
                    auto limit = memparse(rest);
                    cma.limit = limit.value;
                    rest.remove_prefix(limit.consumed);
                } else {
                    cma.limit = *cma.base + cma.size;
                }
                // dma_contiguous_reserve(): fixed when base + size == limit.
                cma.fixed = *cma.base + cma.size == *cma.limit;
            }
            cma.trailing = std::string(rest);
        }
        found = std::move(cma);
    }
    if (found) found->occurrences = occurrences;
    return found;
}

namespace {

// The cells of <address size> tuples, as the root gives them.
struct Cells {
    std::uint32_t ac;
    std::uint32_t sc;
    // Cell counts this large make no sense; treat tuples as unreadable rather than overflow.
    bool sane() const { return ac <= 16 && sc <= 16 && ac + sc > 0; }
    std::size_t tuple_bytes() const { return (std::size_t{ac} + sc) * 4; }
};

// early_init_dt_scan_root(): defaults 1/1 (2/1 on SPARC), else the first cell.
void read_root_cells(const dt::Node& root, const ReadOptions& options, Reservations& out) {
    out.address_cells = options.sparc ? 2 : 1;
    out.size_cells = 1;
    if (const auto* p = root.find_property("#address-cells"); p && p->value.size() >= 4)
        out.address_cells = bytes::be32_at(p->value, 0);
    else
        out.address_cells_defaulted = true;
    if (const auto* p = root.find_property("#size-cells"); p && p->value.size() >= 4)
        out.size_cells = bytes::be32_at(p->value, 0);
    else
        out.size_cells_defaulted = true;
}

// /memory: top-level nodes with device_type = "memory" (early_init_dt_scan_memory).
void read_memory(const dt::Node& root, Cells cells, Reservations& out) {
    const std::size_t tuple_bytes = cells.tuple_bytes();
    for (const auto& child : root.children) {
        const auto* type = child.find_property("device_type");
        if (type == nullptr || first_string(*type) != "memory" || !is_available(child)) continue;
        const auto* reg = child.find_property("linux,usable-memory");
        if (reg == nullptr) reg = child.find_property("reg");
        if (reg == nullptr || !cells.sane()) continue;
        for (std::size_t off = 0; off + tuple_bytes <= reg->value.size(); off += tuple_bytes) {
            auto base = read_value(*reg, off, cells.ac);
            auto size = read_value(*reg, off + std::size_t{cells.ac} * 4, cells.sc);
            if (size.value == 0) continue;
            out.memory.push_back({child_path("/", child.name), property_location(*reg, child),
                                  Range{base.value, size.value}});
        }
    }
}

// /chosen/bootargs, or --bootargs.
void read_bootargs(const dt::Node& root, const ReadOptions& options, Reservations& out) {
    if (options.bootargs) {
        out.bootargs = options.bootargs;
        out.bootargs_from_option = true;
    } else {
        const dt::Node* chosen = find_child_fdt(root, "chosen");
        if (chosen != nullptr) {
            if (const auto* args = chosen->find_property("bootargs")) {
                out.bootargs = first_string(*args);
                out.bootargs_where = property_location(*args, *chosen);
            }
        }
    }
    if (out.bootargs) {
        out.cma_cmdline = parse_cma_cmdline(*out.bootargs);
        out.boot_params = std::make_shared<const BootParams>(parse_boot_params(*out.bootargs));
    }
}

// /chosen's initrd and usable-memory range (drivers/of/fdt.c, 5.10–7.2): the initrd bounds are
// of_read_number(prop, len / 4), the end exclusive; the range is the first <base size> tuple in
// the root's cells.
void read_chosen_ranges(const dt::Node& root, Cells cells, Reservations& out) {
    const dt::Node* chosen = find_child_fdt(root, "chosen");
    if (chosen == nullptr) return;
    auto number = [](const dt::Property& p) -> std::optional<std::uint64_t> {
        const auto words = p.value.size() / 4;
        if (words == 0 || words > 2) return std::nullopt;
        return read_value(p, 0, static_cast<std::uint32_t>(words)).value;
    };
    const auto* start = chosen->find_property("linux,initrd-start");
    const auto* end = chosen->find_property("linux,initrd-end");
    if (start && end) {
        auto s = number(*start), e = number(*end);
        if (s && e && *e > *s) {
            out.initrd = Range{*s, *e - *s};
            out.initrd_where = property_location(*start, *chosen);
        }
    }
    if (const auto* usable = chosen->find_property("linux,usable-memory-range");
        usable && cells.sane() && usable->value.size() >= cells.tuple_bytes()) {
        auto base = read_value(*usable, 0, cells.ac);
        auto size = read_value(*usable, std::size_t{cells.ac} * 4, cells.sc);
        if (size.value) {
            out.usable_memory_range = Range{base.value, size.value};
            out.usable_memory_range_where = property_location(*usable, *chosen);
        }
    }
}

// The /reserved-memory node's own cells and ranges.
void read_reserved_memory_format(const dt::Node& rm, Cells cells, Reservations& out) {
    out.has_reserved_memory = true;
    out.reserved_memory_path = "/" + rm.name;
    out.reserved_memory_where = rm.where;
    if (const auto* p = rm.find_property("#address-cells")) {
        out.rm_address_cells_where = property_location(*p, rm);
        if (p->value.size() >= 4) out.rm_address_cells = bytes::be32_at(p->value, 0);
    }
    if (const auto* p = rm.find_property("#size-cells")) {
        out.rm_size_cells_where = property_location(*p, rm);
        if (p->value.size() >= 4) out.rm_size_cells = bytes::be32_at(p->value, 0);
    }
    out.rm_has_ranges = rm.find_property("ranges") != nullptr;
    // __reserved_mem_check_root(): present and equal to the root's, and `ranges` present.
    out.rm_format_ok =
        out.rm_size_cells == cells.sc && out.rm_address_cells == cells.ac && out.rm_has_ranges;
}

// One child of /reserved-memory read into a Region: flags, kind, `reg` or `size`/`alignment`/
// `alloc-ranges`, as drivers/of/of_reserved_mem.c reads them.
class RegionReader {
public:
    RegionReader(const dt::Node& child, Cells cells, const ReadOptions& options)
        : child_(child), cells_(cells), options_(options) {}

    Region read(const Reservations& out) {
        region_.input = out.input;
        region_.name = child_.name;
        region_.path = child_path(out.reserved_memory_path, child_.name);
        region_.where = child_.where;
        read_flags();
        const auto* reg = child_.find_property("reg");
        if (reg != nullptr && options_.addr_size_helpers &&
            (!cells_.sane() || reg->value.empty() || reg->value.size() % tuple_bytes() != 0)) {
            LengthProblem problem{"reg", reg->value.size(), tuple_bytes(), true,
                                  property_location(*reg, child_)};
            problem.ignored = true;
            region_.length_problems.push_back(problem);
            reg = nullptr; // as if absent: a `size` makes it dynamic
        }
        if (reg != nullptr)
            read_reg(*reg);
        else if (const auto* size = child_.find_property("size"))
            read_dynamic(*size);
        else
            region_.accepted_by_parser = false; // nothing to reserve: the kernel skips it silently
        set_kind(out.rm_format_ok);
        return std::move(region_);
    }

private:
    const dt::Node& child_;
    const Cells cells_;
    const ReadOptions& options_;
    Region region_;

    std::size_t tuple_bytes() const { return cells_.tuple_bytes(); }

    void read_flags() {
        if (const auto* c = child_.find_property("compatible"))
            region_.compatible = string_list(*c);
        region_.disabled = !is_available(child_);
        region_.reusable = child_.find_property("reusable") != nullptr;
        region_.no_map = child_.find_property("no-map") != nullptr;
        region_.cma_default = child_.find_property("linux,cma-default") != nullptr;
        region_.dma_default = child_.find_property("linux,dma-default") != nullptr;
        region_.shared_dma_pool = has_compatible(region_.compatible, "shared-dma-pool");
        if (region_.shared_dma_pool)
            region_.declared_kind = region_.reusable ? Kind::cma : Kind::coherent;
        else if (has_compatible(region_.compatible, "restricted-dma-pool"))
            region_.declared_kind = Kind::restricted;
        else
            region_.declared_kind = Kind::static_;
    }

    // read_value() with the node as the fallback location (hand-built trees may lack one); an
    // overflow is noted.
    ValueRef value_at(const dt::Property& prop, std::size_t offset, std::uint32_t cells) {
        auto ref = read_value(prop, offset, cells);
        if (!ref.where.known()) ref.where = child_.where;
        if (ref.overflowed) region_.overflowed_values.push_back(ref);
        return ref;
    }

    // Each <address size> tuple of `reg` or `alloc-ranges`.
    template <class Visit> void for_each_tuple(const dt::Property& prop, Visit visit) {
        for (std::size_t off = 0; off + tuple_bytes() <= prop.value.size(); off += tuple_bytes()) {
            auto base = value_at(prop, off, cells_.ac);
            auto size = value_at(prop, off + std::size_t{cells_.ac} * 4, cells_.sc);
            visit(base, size);
        }
    }

    // __reserved_mem_reserve_reg() / fdt_scan_reserved_mem_reg_nodes().
    void read_reg(const dt::Property& reg) {
        std::size_t len = reg.value.size();
        if (!cells_.sane() || len == 0 || len % tuple_bytes() != 0) {
            region_.accepted_by_parser = false;
            region_.length_problems.push_back(
                {"reg", len, tuple_bytes(), true, property_location(reg, child_)});
            return;
        }
        for_each_tuple(reg, [&](const ValueRef& base, const ValueRef& size) {
            region_.reg.push_back({base.value, size.value});
            region_.reg_refs.push_back(base);
            region_.reg_refs.push_back(size);
        });
        region_.base = region_.reg.front().base;
        region_.size = region_.reg.front().size;
        region_.base_ref = region_.reg_refs[0];
        region_.size_ref = region_.reg_refs[1];
        if (*region_.size == 0) region_.accepted_by_parser = false; // "if (size)" skips it
        if (options_.first_reg_tuple_only && region_.reg.size() > 1) {
            region_.extra_tuples_unreserved = true;
        } else if (options_.addr_size_helpers && region_.reg.size() > 1) {
            region_.multi_tuple_dropped = true;
            region_.accepted_by_parser = false;
        }
    }

    // __reserved_mem_alloc_size(): size has #size-cells, alignment #address-cells.
    void read_dynamic(const dt::Property& size) {
        region_.dynamic = true;
        const std::size_t size_bytes = std::size_t{cells_.sc} * 4;
        if (!cells_.sane() || size.value.size() != size_bytes) {
            region_.accepted_by_parser = false;
            region_.length_problems.push_back(
                {"size", size.value.size(), size_bytes, false, property_location(size, child_)});
        } else {
            auto ref = value_at(size, 0, cells_.sc);
            region_.size = ref.value;
            region_.size_ref = ref;
        }
        if (const auto* align = child_.find_property("alignment")) {
            const std::size_t align_bytes = std::size_t{cells_.ac} * 4;
            if (!cells_.sane() || align->value.size() != align_bytes) {
                region_.accepted_by_parser = false;
                region_.length_problems.push_back({"alignment", align->value.size(), align_bytes,
                                                   false, property_location(*align, child_)});
            } else {
                auto ref = value_at(*align, 0, cells_.ac);
                region_.alignment = ref.value;
                region_.alignment_ref = ref;
            }
        }
        if (const auto* ranges = child_.find_property("alloc-ranges")) read_alloc_ranges(*ranges);
    }

    void read_alloc_ranges(const dt::Property& ranges) {
        std::size_t len = ranges.value.size();
        if (!cells_.sane() || len % tuple_bytes() != 0) {
            LengthProblem problem{"alloc-ranges", len, tuple_bytes(), true,
                                  property_location(ranges, child_)};
            problem.ignored = options_.addr_size_helpers; // then: allocate anywhere
            if (!problem.ignored) region_.accepted_by_parser = false;
            region_.length_problems.push_back(problem);
            return;
        }
        for_each_tuple(ranges, [&](const ValueRef& base, const ValueRef& rsize) {
            region_.alloc_ranges.push_back({base.value, rsize.value});
        });
    }

    // What the kernel makes of the node: its declared kind, or inactive and why.
    void set_kind(bool format_ok) {
        region_.kind = region_.declared_kind;
        if (!format_ok) {
            region_.kind = Kind::inactive;
            region_.inactive_reason =
                "the kernel ignores /reserved-memory (unsupported node format)";
        } else if (region_.disabled) {
            region_.kind = Kind::inactive;
            region_.inactive_reason = "the node is disabled";
        } else if (!region_.accepted_by_parser) {
            region_.kind = Kind::inactive;
            region_.inactive_reason = "the kernel skips the node (nothing valid to reserve)";
        } else if (region_.declared_kind == Kind::cma) {
            if (region_.no_map) {
                region_.kind = Kind::inactive;
                region_.inactive_reason = "reusable with no-map: neither CMA nor the coherent "
                                          "allocator accepts it";
            } else if (!options_.cma_enabled || !options_.dma_cma_enabled) {
                region_.kind = Kind::inactive;
                region_.inactive_reason =
                    options_.cma_enabled ? "CONFIG_DMA_CMA is not set" : "CONFIG_CMA is not set";
            }
        }
    }
};

} // namespace

Reservations read(const dt::Tree& tree, const ReadOptions& options) {
    Reservations out;
    out.input = tree.input;
    out.memreserve = tree.memreserve;
    const dt::Node& root = tree.root;
    out.root_where = root.where;
    read_root_cells(root, options, out);
    const Cells cells{out.address_cells, out.size_cells};
    read_memory(root, cells, out);
    read_bootargs(root, options, out);
    out.dma_max_cpu_address = dma_max_cpu_address(root);
    read_chosen_ranges(root, cells, out);

    const dt::Node* rm = find_child_fdt(root, "reserved-memory");
    if (rm == nullptr) return out;
    read_reserved_memory_format(*rm, cells, out);
    for (const auto& child : rm->children)
        out.regions.push_back(RegionReader(child, cells, options).read(out));
    return out;
}

} // namespace cmalign::reserved
