// Rewriting size literals in DTS source: the digits of one value, chunk by chunk, keeping the
// spelling (base, case, padding, suffix) the author used.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "cmalign/internal/core/amount.hpp"
#include "cmalign/internal/core/bytes.hpp"
#include "cmalign/internal/fix/detail.hpp"

namespace cmalign::fix {

using namespace detail;
using reserved::Kind;
using reserved::Region;
using reserved::ValueRef;

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

namespace detail {

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
    std::size_t count = length / 4;
    if (count <= 1) return bytes::cells_text(std::vector<std::uint64_t>{value});
    std::vector<std::uint64_t> cells;
    for (std::size_t i = 0; i < count; ++i) {
        std::size_t shift = 32 * (count - 1 - i);
        cells.push_back(shift >= 64 ? 0 : (value >> shift) & 0xffffffffu);
    }
    return bytes::cells_text(cells);
}

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
        auto old_chunk = bytes::be_number(value, cb, ce);
        // The chunk's bytes after the edit: the new value where it overlaps the size.
        std::vector<std::uint8_t> after(value.begin() + static_cast<std::ptrdiff_t>(cb),
                                        value.begin() + static_cast<std::ptrdiff_t>(ce));
        for (std::size_t i = std::max(cb, begin); i < std::min(ce, end); ++i)
            after[i - cb] = new_bytes[i - begin];
        auto new_chunk = bytes::be_number(after, 0, after.size());
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

} // namespace detail

} // namespace cmalign::fix
