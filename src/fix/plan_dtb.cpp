// Fixing sizes in .dtb/.dtbo blobs: the value's bytes located with libfdt, changed in place on a
// copy and checked with fdt_check_full before the edit is kept.
#include <cstring>

#include <fmt/format.h>
#include <libfdt.h>

#include "cmalign/internal/core/amount.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/fix/detail.hpp"

namespace cmalign::fix::detail {

using reserved::Region;
using reserved::ValueRef;

Blob read_blob(const std::string& path) {
    Blob b;
    auto content = read_whole_input(path); // a piped DTB: the bytes it was read as
    if (content) b.bytes.assign(content->begin(), content->end());
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

} // namespace cmalign::fix::detail
