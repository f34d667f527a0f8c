// Planning size fixes as byte edits, merging them, and showing them as unified diffs.
#include "cmalign/fix/fix.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <libfdt.h>

#include "cmalign/checks/checks.hpp"
#include "cmalign/core/interval.hpp"
#include "cmalign/core/size.hpp"
#include "cmalign/dt/preprocess.hpp"

namespace cmalign::fix {

namespace {

using reserved::Kind;
using reserved::Region;
using reserved::ValueRef;

constexpr const char* check_name = "cma-size-alignment";

std::string hex(std::uint64_t v) {
    return fmt::format("{:#x}", v);
}

std::string amount(std::uint64_t v) {
    return fmt::format("{} ({})", hex(v), format_size(v));
}

// Big-endian value of bytes [begin, end) (at most 8 bytes are kept, as of_read_number does).
std::uint64_t be_value(const std::vector<std::uint8_t>& bytes, std::size_t begin, std::size_t end) {
    std::uint64_t v = 0;
    for (std::size_t i = begin; i < end; ++i)
        v = (v << 8) | bytes[i];
    return v;
}

// `value` written big-endian into the last min(length, 8) bytes of a copy of `old`.
// nullopt when it does not fit `length` bytes.
std::optional<std::vector<std::uint8_t>> encode(const std::vector<std::uint8_t>& old,
                                                std::uint64_t value) {
    std::size_t length = old.size();
    if (length < 8 && (value >> (8 * length)) != 0) return std::nullopt;
    std::vector<std::uint8_t> out = old;
    std::uint64_t v = value;
    for (std::size_t i = 0; i < std::min<std::size_t>(length, 8); ++i) {
        out[length - 1 - i] = static_cast<std::uint8_t>(v & 0xff);
        v >>= 8;
    }
    return out;
}

// "<0x0 0x2000000>": how to write a value in `cells` 32-bit cells.
std::string cells_text(std::uint64_t value, std::size_t length) {
    std::size_t cells = length / 4;
    if (cells <= 1) return fmt::format("<{:#x}>", value);
    std::string out = "<";
    for (std::size_t i = 0; i < cells; ++i) {
        std::size_t shift = 32 * (cells - 1 - i);
        std::uint64_t cell = shift >= 64 ? 0 : (value >> shift) & 0xffffffffu;
        out += fmt::format("{}{:#x}", i ? " " : "", cell);
    }
    return out + ">";
}

const dt::Node* find_node(const dt::Tree& tree, const std::string& path) {
    return tree.find(path);
}

Diagnostic make_diag(Severity severity, Location where, std::string node, std::string input,
                     std::string message, std::vector<FixHint> fix = {}) {
    Diagnostic d;
    d.severity = severity;
    d.where = std::move(where);
    d.check = check_name;
    d.node = std::move(node);
    d.input = std::move(input);
    d.message = std::move(message);
    d.fix = std::move(fix);
    return d;
}

Interval interval(std::uint64_t base, std::uint64_t size) {
    return Interval::of(base, size);
}

// Nearest aligned bases below and above `base` where [c, c+size) lies in a /memory bank and
// overlaps no other reservation. Conflicts are jumped over, so the search is short.
struct BaseCandidates {
    std::optional<std::uint64_t> below;
    std::optional<std::uint64_t> above;
};

BaseCandidates aligned_bases(std::uint64_t base, std::uint64_t size, std::uint64_t alignment,
                             const std::vector<Interval>& occupied, const IntervalSet& memory) {
    auto in_memory = [&](std::uint64_t c) {
        if (memory.empty()) return true; // nothing to hold it against: say so in the message
        if (Interval::wraps(c, size)) return false;
        return memory.covers(interval(c, size));
    };
    auto conflict = [&](std::uint64_t c) -> const Interval* {
        auto want = interval(c, size);
        for (const auto& o : occupied)
            if (overlaps(want, o)) return &o;
        return nullptr;
    };
    constexpr int max_steps = 1 << 16;
    BaseCandidates out;
    // Downwards.
    std::uint64_t c = base - base % alignment;
    for (int step = 0; step < max_steps; ++step) {
        const Interval* hit = conflict(c);
        if (!hit && in_memory(c)) {
            out.below = c;
            break;
        }
        std::uint64_t next;
        if (hit) {
            if (hit->begin < size) break;
            next = hit->begin - size;
            next -= next % alignment;
        } else {
            if (c < alignment) break;
            next = c - alignment;
        }
        if (next >= c) break;
        c = next;
    }
    // Upwards.
    auto up = round_up(base, alignment);
    if (up && *up == base)
        up = base + alignment < base ? std::nullopt : std::optional(base + alignment);
    if (up) {
        c = *up;
        for (int step = 0; step < max_steps; ++step) {
            const Interval* hit = conflict(c);
            if (!hit && in_memory(c)) {
                out.above = c;
                break;
            }
            std::optional<std::uint64_t> next =
                hit ? round_up(hit->end, alignment)
                    : (c + alignment < c ? std::nullopt : std::optional(c + alignment));
            if (!next || *next <= c) break;
            bool beyond_memory = !memory.empty() && *next >= memory.top();
            if (beyond_memory) break;
            c = *next;
        }
    }
    return out;
}

// Every other reservation (all reg tuples except the region's own first one) and /memreserve/.
std::vector<Interval> occupied_except(const reserved::Reservations& rs, const Region& r) {
    std::vector<Interval> occupied;
    for (const auto& other : rs.regions) {
        for (std::size_t i = 0; i < other.reg.size(); ++i) {
            if (&other == &r && i == 0) continue;
            if (other.reg[i].size)
                occupied.push_back(interval(other.reg[i].base, other.reg[i].size));
        }
    }
    for (const auto& m : rs.memreserve)
        if (m.size) occupied.push_back(interval(m.address, m.size));
    return occupied;
}

// Why the grown pool could not be placed by the kernel (empty: it can). A fix that trades a
// misaligned pool for one the kernel cannot reserve is no fix, so such a board is left alone.
std::string placement_problem(const Region& r, std::uint64_t new_size, std::uint64_t alignment,
                              const reserved::Reservations& rs, const IntervalSet& memory) {
    if (!r.dynamic && r.base) {
        auto want = interval(*r.base, new_size);
        for (const auto& o : occupied_except(rs, r))
            if (overlaps(want, o))
                return fmt::format("the grown pool {}..{} would overlap the reservation at {}",
                                   hex(want.begin), hex(want.end), hex(o.begin));
        // Adjacent banks are one span of RAM, as for the outside-memory check.
        if (!memory.empty() && !memory.covers(want))
            return fmt::format("the grown pool {}..{} would reach outside /memory", hex(want.begin),
                               hex(want.end));
        return {};
    }
    if (!r.alloc_ranges.empty()) {
        // __reserved_mem_alloc_size(): align = max(alignment property, CMA alignment).
        std::uint64_t align = std::max(alignment, r.alignment.value_or(0));
        for (const auto& range : r.alloc_ranges) {
            auto start = round_up(range.base, align);
            auto end = interval(range.base, range.size).end;
            if (start && *start <= end && end - *start >= new_size) return {};
        }
        return fmt::format("no alloc-ranges window holds {} at a {}-aligned address: widen "
                           "alloc-ranges, or keep the size and change the configuration "
                           "(cmalign suggest)",
                           format_size(new_size), format_size(align));
    }
    if (!memory.empty() && !memory.has_span_of(new_size))
        return fmt::format("no /memory bank is as large as {}", format_size(new_size));
    return {};
}

// The edits of one value (a size of one or more cells): one per chunk whose value changes.
// Returns false (with an error diagnostic) when a changed chunk has no literal to rewrite.
struct ValueEdits {
    std::vector<Edit> edits;
    std::optional<Diagnostic> problem;
};

} // namespace

std::optional<std::uint64_t> required_alignment(const kernel::Model& model) {
    auto facts = checks::alignment_facts(model);
    if (facts.exact) return facts.exact;
    return facts.largest;
}

std::optional<std::string> rewrite_literal(std::string_view literal, std::uint64_t value) {
    std::size_t digits_end = literal.size();
    while (digits_end > 0 && (literal[digits_end - 1] == 'u' || literal[digits_end - 1] == 'U' ||
                              literal[digits_end - 1] == 'l' || literal[digits_end - 1] == 'L'))
        --digits_end;
    std::string_view suffix = literal.substr(digits_end);
    std::string_view body = literal.substr(0, digits_end);
    if (body.empty()) return std::nullopt;
    std::string_view prefix;
    int base = 10;
    if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
        prefix = body.substr(0, 2);
        base = 16;
    } else if (body.size() > 1 && body[0] == '0') {
        prefix = body.substr(0, 1);
        base = 8;
    }
    std::string_view digits = body.substr(prefix.size());
    if (digits.empty()) return std::nullopt;
    bool upper = false;
    for (char ch : digits) {
        bool ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(ch)) != 0
                             : (ch >= '0' && ch < static_cast<char>('0' + base));
        if (!ok) return std::nullopt;
        if (ch >= 'A' && ch <= 'F') upper = true;
    }
    std::string out;
    if (base == 16)
        out = upper ? fmt::format("{:X}", value) : fmt::format("{:x}", value);
    else if (base == 8)
        out = fmt::format("{:o}", value);
    else
        out = fmt::format("{}", value);
    // Keep zero padding ("0x00400000" → "0x02000000"); decimal has none (it would be octal).
    if (base != 10 && digits.size() > out.size() && digits[0] == '0')
        out.insert(0, digits.size() - out.size(), '0');
    return std::string(prefix) + out + std::string(suffix);
}

namespace {

// Chunk-by-chunk edits that turn `old_bytes` into `new_bytes` for one DTS value.
ValueEdits value_edits(const Region& r, const ValueRef& ref, const std::vector<std::uint8_t>& value,
                       std::uint64_t new_value, const std::vector<std::uint8_t>& new_bytes,
                       const std::string& input, dt::FileCache& cache) {
    ValueEdits out;
    std::size_t begin = ref.offset;
    std::size_t end = ref.offset + ref.length;
    std::size_t covered = 0;
    auto unfixable = [&](Location where, std::string why) {
        out.edits.clear();
        out.problem =
            make_diag(Severity::error, where, r.path, input,
                      fmt::format("CMA pool size {} must become {} but {}: write {} there by hand",
                                  amount(ref.value), amount(new_value), why,
                                  cells_text(new_value, ref.length)),
                      {{ref.property, ref.value, new_value}});
    };
    for (const auto& c : ref.chunks) {
        std::size_t cb = c.offset;
        std::size_t ce = c.offset + c.size;
        if (ce <= begin || cb >= end) continue;
        covered += std::min(ce, end) - std::max(cb, begin);
        auto old_chunk = be_value(value, cb, ce);
        // The chunk's bytes after the edit: the new value where it overlaps the size.
        std::vector<std::uint8_t> after(value.begin() + static_cast<std::ptrdiff_t>(cb),
                                        value.begin() + static_cast<std::ptrdiff_t>(ce));
        for (std::size_t i = std::max(cb, begin); i < std::min(ce, end); ++i)
            after[i - cb] = new_bytes[i - begin];
        auto new_chunk = be_value(after, 0, after.size());
        if (old_chunk == new_chunk) continue;
        if (cb < begin || ce > end) {
            unfixable(c.where, fmt::format("'{}' also holds bytes outside the size", c.text));
            return out;
        }
        if (!c.literal) {
            unfixable(c.where,
                      fmt::format("it is written as '{}' (a macro or an expression), which fix "
                                  "does not rewrite",
                                  c.text));
            return out;
        }
        std::string why;
        auto file = cache.load(c.literal->file, &why);
        if (!file || c.literal->end > file->text.size() ||
            std::string_view(file->text)
                    .substr(c.literal->begin, c.literal->end - c.literal->begin) != c.text) {
            unfixable(c.where, fmt::format("the text '{}' could not be found again in {}", c.text,
                                           c.literal->file));
            return out;
        }
        auto text = rewrite_literal(c.text, new_chunk);
        if (!text) {
            unfixable(c.where, fmt::format("'{}' is not a plain integer literal", c.text));
            return out;
        }
        Edit e;
        e.file = c.literal->file;
        e.begin = c.literal->begin;
        e.end = c.literal->end;
        e.old_text = c.text;
        e.new_text = *text;
        e.where = file->location(c.literal->begin);
        e.node = r.path;
        e.property = ref.property;
        e.input = input;
        e.old_value = ref.value;
        e.new_value = new_value;
        out.edits.push_back(std::move(e));
    }
    if (covered != ref.length) {
        out.edits.clear();
        unfixable(ref.where, "part of its bytes were not written in the source");
    }
    return out;
}

// Everything except the edit itself that is common to DTS and DTB planning.
template <typename MakeEdits>
Plan plan_common(const dt::Tree& tree, const reserved::Reservations& rs, std::uint64_t alignment,
                 MakeEdits make_edits) {
    Plan plan;
    // A size that cannot be fixed without breaking the board (overflow, no room once grown):
    // the board gets no edit at all.
    bool blocking = false;
    std::vector<Diagnostic> edit_notes; // "written in an included file", only for edits kept
    IntervalSet memory;
    for (const auto& m : rs.memory)
        memory.add(interval(m.range.base, m.range.size));

    for (const auto& r : rs.regions) {
        if (r.kind != Kind::cma) continue;
        std::uint64_t size = r.size.value_or(0);
        std::optional<std::uint64_t> new_size;
        if (r.size && r.size_ref && size % alignment != 0) {
            const ValueRef& ref = *r.size_ref;
            new_size = round_up(size, alignment);
            const dt::Node* node = find_node(tree, r.path);
            const dt::Property* prop = node ? node->find_property(ref.property) : nullptr;
            if (!new_size) {
                plan.diagnostics.push_back(make_diag(
                    Severity::error, ref.where, r.path, rs.input,
                    fmt::format("CMA pool size {} rounded up to a multiple of {} exceeds 64 bits",
                                amount(size), amount(alignment))));
                plan.unfixable = true;
                blocking = true;
            } else if (ref.overflowed || ref.length == 0 || !prop ||
                       ref.offset + ref.length > prop->value.size()) {
                plan.diagnostics.push_back(make_diag(
                    Severity::error, ref.where, r.path, rs.input,
                    fmt::format("CMA pool size {} must become {}, but its {} property is not "
                                "one plain value fix can rewrite",
                                amount(size), amount(*new_size), ref.property)));
                plan.unfixable = true;
                blocking = true;
            } else {
                std::vector<std::uint8_t> old_bytes(
                    prop->value.begin() + static_cast<std::ptrdiff_t>(ref.offset),
                    prop->value.begin() + static_cast<std::ptrdiff_t>(ref.offset + ref.length));
                auto new_bytes = encode(old_bytes, *new_size);
                if (!new_bytes) {
                    plan.diagnostics.push_back(make_diag(
                        Severity::error, ref.where, r.path, rs.input,
                        fmt::format("CMA pool size {} must become {}, which does not fit in {} "
                                    "cell{} of {}: nothing written (use #size-cells = <2> or a "
                                    "smaller pool)",
                                    amount(size), amount(*new_size), ref.length / 4,
                                    ref.length / 4 == 1 ? "" : "s", ref.property),
                        {{ref.property, size, *new_size}}));
                    plan.unfixable = true;
                    blocking = true;
                } else if (auto placement = placement_problem(r, *new_size, alignment, rs, memory);
                           !placement.empty()) {
                    plan.diagnostics.push_back(make_diag(
                        Severity::error, ref.where, r.path, rs.input,
                        fmt::format("CMA pool size {} must become {}, but {}: nothing written",
                                    amount(size), amount(*new_size), placement),
                        {{ref.property, size, *new_size}}));
                    plan.unfixable = true;
                    blocking = true;
                } else {
                    auto made = make_edits(r, ref, *prop, *new_size, *new_bytes);
                    if (made.problem) {
                        // Written with a macro or an expression: this size is reported with the
                        // value to write; the other pools of the board are still fixed.
                        plan.diagnostics.push_back(std::move(*made.problem));
                        plan.unfixable = true;
                    }
                    for (auto& e : made.edits) {
                        // An included .dtsi, or an overlay (--overlay) that wrote the size.
                        if (!e.binary && e.file != tree.input)
                            edit_notes.push_back(make_diag(
                                Severity::note, e.where, r.path, rs.input,
                                fmt::format("the size of {} is written in {}, not in the board "
                                            "file: {} → {} changes every board that includes it "
                                            "or applies it as an overlay",
                                            r.path, e.file, e.old_text, e.new_text)));
                        plan.edits.push_back(std::move(e));
                    }
                }
            }
        }

        // A static base is never moved: report it with the nearest usable aligned bases.
        if (!r.dynamic && r.base && r.base_ref && *r.base % alignment != 0) {
            auto occupied = occupied_except(rs, r);
            std::uint64_t want = new_size.value_or(size);
            auto c = aligned_bases(*r.base, want, alignment, occupied, memory);
            std::string options;
            if (c.below) options += fmt::format("{} (below)", hex(*c.below));
            if (c.above)
                options +=
                    fmt::format("{}{} (above)", options.empty() ? "" : " or ", hex(*c.above));
            if (options.empty()) options = "none: no aligned place inside /memory overlaps nothing";
            Diagnostic d = make_diag(
                Severity::error, r.base_ref->where, r.path, rs.input,
                fmt::format("CMA pool base {} is not a multiple of {}; fix never moves a base. "
                            "The nearest aligned bases for {} that lie inside /memory{} and "
                            "overlap no other reservation: {}",
                            hex(*r.base), amount(alignment), format_size(want),
                            memory.empty() ? " (the tree has no /memory: not checked)" : "",
                            options));
            d.check = "cma-base-alignment";
            plan.diagnostics.push_back(std::move(d));
            // The size edit stays valid on its own: the base is a separate, reported decision.
            plan.unfixable = true;
        }
    }
    if (blocking)
        plan.edits.clear();
    else
        plan.diagnostics.insert(plan.diagnostics.end(), edit_notes.begin(), edit_notes.end());
    return plan;
}

} // namespace

namespace {

// A blob read once and checked, to find where a property's bytes sit in the file.
struct Blob {
    std::string bytes;
    std::vector<std::uint64_t> aligned; // the same bytes, aligned for libfdt
    bool valid = false;
};

Blob read_blob(const std::string& path) {
    Blob b;
    std::ifstream in(path, std::ios::binary);
    b.bytes.assign(std::istreambuf_iterator<char>(in), {});
    b.aligned.resize((b.bytes.size() + 7) / 8 + 1);
    std::memcpy(b.aligned.data(), b.bytes.data(), b.bytes.size());
    b.valid = b.bytes.size() >= sizeof(fdt_header) && fdt_check_header(b.aligned.data()) == 0 &&
              fdt_totalsize(b.aligned.data()) <= b.bytes.size() &&
              fdt_check_full(b.aligned.data(), fdt_totalsize(b.aligned.data())) == 0;
    return b;
}

// The edit of one value held in blob `path` at node `node_path` (the base DTB, or the .dtbo an
// overlay value came from): fdt_setprop_inplace on a copy, then fdt_check_full.
ValueEdits blob_value_edit(const std::string& path, const std::string& node_path, const Blob& blob,
                           const Region& r, const ValueRef& ref, std::uint64_t new_size,
                           const std::vector<std::uint8_t>& new_bytes, const std::string& input) {
    ValueEdits out;
    auto fail = [&](std::string why) {
        out.problem = make_diag(Severity::error, {path, 0, 0}, r.path, input,
                                fmt::format("CMA pool size {} must become {} but {}",
                                            amount(ref.value), amount(new_size), why));
    };
    if (!blob.valid) {
        fail("the blob changed since it was read");
        return out;
    }
    int node = fdt_path_offset(blob.aligned.data(), node_path.c_str());
    int len = 0;
    const void* data =
        node >= 0 ? fdt_getprop(blob.aligned.data(), node, ref.property.c_str(), &len) : nullptr;
    if (!data || static_cast<std::size_t>(len) < ref.offset + ref.length) {
        fail(fmt::format("libfdt cannot find {} in {} of {}", ref.property, node_path, path));
        return out;
    }
    std::vector<std::uint64_t> copy = blob.aligned;
    int err = fdt_setprop_inplace_namelen_partial(
        copy.data(), node, ref.property.c_str(), static_cast<int>(ref.property.size()),
        static_cast<std::uint32_t>(ref.offset), new_bytes.data(),
        static_cast<int>(new_bytes.size()));
    if (err == 0) err = fdt_check_full(copy.data(), fdt_totalsize(copy.data()));
    if (err != 0) {
        fail(fmt::format("libfdt refused the change: {}", fdt_strerror(err)));
        return out;
    }
    auto at = static_cast<std::size_t>(static_cast<const char*>(data) -
                                       reinterpret_cast<const char*>(blob.aligned.data())) +
              ref.offset;
    const char* after = reinterpret_cast<const char*>(copy.data()) + at;
    Edit e;
    e.file = path;
    e.begin = at;
    e.end = at + ref.length;
    e.old_text = blob.bytes.substr(at, ref.length);
    e.new_text.assign(after, ref.length);
    e.where = {path, 0, 0};
    e.node = r.path;
    e.property = ref.property;
    e.input = input;
    e.binary = true;
    e.old_value = ref.value;
    e.new_value = new_size;
    out.edits.push_back(std::move(e));
    return out;
}

} // namespace

Plan plan_fixes(const dt::Tree& tree, const reserved::Reservations& reservations,
                std::uint64_t alignment, dt::FileCache& cache) {
    // Each value is edited where it is written: DTS digits, or the bytes of the blob it came
    // from (the base .dtb, or an overlay's .dtbo: Property::blob_node).
    std::map<std::string, Blob> blobs;
    return plan_common(tree, reservations, alignment,
                       [&](const Region& r, const ValueRef& ref, const dt::Property& prop,
                           std::uint64_t new_size, const std::vector<std::uint8_t>& new_bytes) {
                           bool in_blob =
                               !prop.blob_node.empty() || (tree.from_dtb && prop.chunks.empty());
                           if (!in_blob)
                               return value_edits(r, ref, prop.value, new_size, new_bytes,
                                                  reservations.input, cache);
                           std::string file = prop.blob_node.empty() ? tree.input : prop.where.file;
                           std::string node = prop.blob_node.empty() ? r.path : prop.blob_node;
                           auto it = blobs.find(file);
                           if (it == blobs.end()) it = blobs.emplace(file, read_blob(file)).first;
                           return blob_value_edit(file, node, it->second, r, ref, new_size,
                                                  new_bytes, reservations.input);
                       });
}

Plan plan_dtb_fixes(const dt::Tree& tree, const reserved::Reservations& reservations,
                    std::uint64_t alignment) {
    dt::FileCache unused;
    return plan_fixes(tree, reservations, alignment, unused);
}

namespace {

// One spelling per real file: the same .dtsi reached as arch/arm64/boot/dts/x.dtsi and through
// scripts/dtc/include-prefixes/arm64/x.dtsi must merge (and never be written twice). Relative to
// the working directory when under it, else absolute.
std::string file_key(const std::string& file) {
    namespace fs = std::filesystem;
    std::error_code ec;
    auto real = fs::weakly_canonical(fs::path(file), ec);
    if (ec) return file;
    auto cwd = fs::current_path(ec);
    if (!ec) {
        auto rel = real.lexically_relative(cwd);
        if (!rel.empty() && *rel.begin() != "..") return rel.string();
    }
    return real.string();
}

} // namespace

Merged merge_edits(std::span<const Edit> edits) {
    Merged out;
    std::vector<Edit> sorted(edits.begin(), edits.end());
    std::map<std::string, std::string> keys;
    for (auto& e : sorted) {
        auto it = keys.find(e.file);
        if (it == keys.end()) it = keys.emplace(e.file, file_key(e.file)).first;
        e.file = it->second;
        e.where.file = it->second;
    }
    std::stable_sort(sorted.begin(), sorted.end(), [](const Edit& a, const Edit& b) {
        return std::tie(a.file, a.begin, a.end) < std::tie(b.file, b.begin, b.end);
    });
    for (auto& e : sorted) {
        if (!out.edits.empty()) {
            Edit& last = out.edits.back();
            if (last.file == e.file && last.begin == e.begin && last.end == e.end &&
                last.new_text == e.new_text && last.old_text == e.old_text)
                continue; // the same shared .dtsi edit asked for by another board
            if (last.file == e.file && e.begin < last.end) {
                Diagnostic d = make_diag(
                    Severity::error, e.where, e.node, e.input,
                    fmt::format("conflicting edits of the same text: {} wants '{}' → '{}' and {} "
                                "wants '{}' → '{}'; nothing is written",
                                last.input, last.old_text, last.new_text, e.input, e.old_text,
                                e.new_text));
                out.diagnostics.push_back(std::move(d));
                out.conflict = true;
                continue;
            }
        }
        out.edits.push_back(std::move(e));
    }
    return out;
}

std::vector<FileChange> render(std::span<const Edit> edits, Diagnostics& diags) {
    std::map<std::string, std::vector<const Edit*>> by_file;
    std::vector<std::string> order;
    for (const auto& e : edits) {
        if (!by_file.count(e.file)) order.push_back(e.file);
        by_file[e.file].push_back(&e);
    }
    std::vector<FileChange> out;
    for (const auto& file : order) {
        auto list = by_file[file];
        std::sort(list.begin(), list.end(),
                  [](const Edit* a, const Edit* b) { return a->begin > b->begin; });
        std::ifstream in(file, std::ios::binary);
        if (!in) {
            diags.error({file, 0, 0}, "cannot read the file to edit");
            continue;
        }
        FileChange change;
        change.file = file;
        change.old_content.assign(std::istreambuf_iterator<char>(in), {});
        change.new_content = change.old_content;
        bool ok = true;
        std::size_t previous_begin = std::string::npos;
        for (const Edit* e : list) {
            change.binary = change.binary || e->binary;
            if (e->end > change.old_content.size() || e->begin > e->end ||
                change.old_content.compare(e->begin, e->end - e->begin, e->old_text) != 0) {
                diags.error(e->where,
                            fmt::format("the file changed since it was read: '{}' is "
                                        "no longer at this place; nothing written",
                                        e->binary ? std::string("the value") : e->old_text));
                ok = false;
                break;
            }
            if (previous_begin != std::string::npos && e->end > previous_begin) {
                diags.error(e->where, "overlapping edits; nothing written");
                ok = false;
                break;
            }
            previous_begin = e->begin;
            change.new_content.replace(e->begin, e->end - e->begin, e->new_text);
        }
        if (ok && change.binary) {
            std::vector<std::uint64_t> blob((change.new_content.size() + 7) / 8 + 1);
            std::memcpy(blob.data(), change.new_content.data(), change.new_content.size());
            int err = fdt_check_header(blob.data());
            if (err == 0) err = fdt_check_full(blob.data(), change.new_content.size());
            if (err != 0) {
                diags.error({file, 0, 0},
                            fmt::format("the edited blob fails fdt_check_full: {}; nothing written",
                                        fdt_strerror(err)));
                ok = false;
            }
        }
        if (ok) out.push_back(std::move(change));
    }
    return out;
}

bool apply_edits(std::span<const Edit> edits, Diagnostics& diags) {
    Diagnostics local;
    auto changes = render(edits, local);
    diags.append(local);
    if (local.has_errors()) return false;
    return write_changes(changes, diags);
}

namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        auto nl = text.find('\n', start);
        if (nl == std::string_view::npos) {
            lines.push_back(text.substr(start));
            break;
        }
        lines.push_back(text.substr(start, nl + 1 - start));
        start = nl + 1;
    }
    return lines;
}

std::string diff_path(const std::string& file, const std::string& base_dir) {
    namespace fs = std::filesystem;
    fs::path p(file);
    if (!base_dir.empty()) {
        std::error_code ec;
        auto abs = fs::absolute(p, ec);
        auto base = fs::absolute(base_dir, ec);
        auto rel = abs.lexically_normal().lexically_relative(base.lexically_normal());
        if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
    }
    auto s = p.lexically_normal().generic_string();
    while (s.starts_with("/"))
        s.erase(0, 1);
    while (s.starts_with("./"))
        s.erase(0, 2);
    return s;
}

void put_line(std::string& out, char mark, std::string_view line) {
    out += mark;
    out += line;
    if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

} // namespace

std::string unified_diff(const FileChange& change, const std::string& base_dir) {
    if (change.old_content == change.new_content) return {};
    std::string path = diff_path(change.file, base_dir);
    if (change.binary) return fmt::format("Binary files a/{} and b/{} differ\n", path, path);
    auto a = split_lines(change.old_content);
    auto b = split_lines(change.new_content);
    std::string out = fmt::format("--- a/{}\n+++ b/{}\n", path, path);
    constexpr std::size_t context = 3;
    if (a.size() != b.size()) {
        // Edits never add or remove line breaks; should one ever do, one whole-file hunk is
        // still a correct diff.
        out += fmt::format("@@ -{},{} +{},{} @@\n", a.empty() ? 0 : 1, a.size(), b.empty() ? 0 : 1,
                           b.size());
        for (auto l : a)
            put_line(out, '-', l);
        for (auto l : b)
            put_line(out, '+', l);
        return out;
    }
    std::vector<std::size_t> changed;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) changed.push_back(i);
    std::size_t k = 0;
    while (k < changed.size()) {
        std::size_t first = changed[k] >= context ? changed[k] - context : 0;
        std::size_t last = changed[k]; // last changed line of the hunk
        std::size_t j = k + 1;
        while (j < changed.size() && changed[j] <= last + 2 * context)
            last = changed[j++];
        std::size_t end = std::min(a.size(), last + context + 1);
        std::size_t count = end - first;
        auto range = [&](std::size_t start, std::size_t n) {
            return n == 1 ? fmt::format("{}", start + 1) : fmt::format("{},{}", start + 1, n);
        };
        out += fmt::format("@@ -{} +{} @@\n", range(first, count), range(first, count));
        // Within a hunk, each changed line is shown as removed then added, context in between.
        for (std::size_t i = first; i < end;) {
            if (a[i] == b[i]) {
                put_line(out, ' ', a[i]);
                ++i;
                continue;
            }
            std::size_t run = i;
            while (run < end && a[run] != b[run])
                ++run;
            for (std::size_t x = i; x < run; ++x)
                put_line(out, '-', a[x]);
            for (std::size_t x = i; x < run; ++x)
                put_line(out, '+', b[x]);
            i = run;
        }
        k = j;
    }
    return out;
}

} // namespace cmalign::fix
