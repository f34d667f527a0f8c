// Kernel image headers, decompression of gzip payloads and the embedded configuration.
#include "cmalign/boot/image.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

#include <fmt/format.h>
#include <zlib.h>

namespace cmalign::boot {

namespace {

// A decompressed kernel is far below this; a larger stream is not a kernel (or is hostile).
constexpr std::size_t max_inflated_bytes = std::size_t{512} << 20;

std::uint32_t le32(const std::vector<std::uint8_t>& b, std::size_t at) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i)
        v = (v << 8) | b[at + static_cast<std::size_t>(i)];
    return v;
}

std::uint64_t le64(const std::vector<std::uint8_t>& b, std::size_t at) {
    return static_cast<std::uint64_t>(le32(b, at)) |
           (static_cast<std::uint64_t>(le32(b, at + 4)) << 32);
}

bool is_gzip(const std::uint8_t* p, std::size_t n) {
    return n >= 3 && p[0] == 0x1f && p[1] == 0x8b;
}

// Inflates one gzip member (trailing bytes after it are ignored, as a kernel's are).
std::optional<std::vector<std::uint8_t>> gunzip(const std::uint8_t* data, std::size_t size) {
    z_stream s{};
    if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK) return std::nullopt;
    std::vector<std::uint8_t> out;
    s.next_in = const_cast<Bytef*>(data);
    s.avail_in = static_cast<uInt>(std::min<std::size_t>(size, 0xffffffffu));
    int rc = Z_OK;
    while (rc == Z_OK) {
        if (out.size() >= max_inflated_bytes) break;
        std::size_t old = out.size();
        out.resize(old + (std::size_t{1} << 20));
        s.next_out = out.data() + old;
        s.avail_out = 1u << 20;
        rc = inflate(&s, Z_NO_FLUSH);
        out.resize(out.size() - s.avail_out);
    }
    inflateEnd(&s);
    if (rc != Z_STREAM_END) return std::nullopt;
    return out;
}

std::optional<std::size_t> find(const std::vector<std::uint8_t>& b, std::string_view what,
                                std::size_t from = 0) {
    if (from >= b.size()) return std::nullopt;
    auto it = std::search(b.begin() + static_cast<std::ptrdiff_t>(from), b.end(), what.begin(),
                          what.end(),
                          [](std::uint8_t a, char c) { return a == static_cast<std::uint8_t>(c); });
    if (it == b.end()) return std::nullopt;
    return static_cast<std::size_t>(it - b.begin());
}

// init/main.c linux_banner: "Linux version %s (%s) %s\n".
std::optional<std::string> banner_of(const std::vector<std::uint8_t>& b) {
    for (auto at = find(b, "Linux version "); at; at = find(b, "Linux version ", *at + 1)) {
        std::size_t end = *at;
        while (end < b.size() && b[end] != '\n' && b[end] != 0 && end - *at < 400)
            ++end;
        std::string text(b.begin() + static_cast<std::ptrdiff_t>(*at),
                         b.begin() + static_cast<std::ptrdiff_t>(end));
        // The banner has a version digit after the prefix and a "(" for the builder.
        if (text.size() > 15 && std::isdigit(static_cast<unsigned char>(text[14])) &&
            text.find('(') != std::string::npos && text.find('%') == std::string::npos)
            return text;
    }
    return std::nullopt;
}

// kernel/configs.c: the gzip'ed .config between "IKCFG_ST" and "IKCFG_ED".
std::optional<std::string> ikconfig_of(const std::vector<std::uint8_t>& b) {
    auto start = find(b, "IKCFG_ST");
    if (!start) return std::nullopt;
    std::size_t data = *start + 8;
    auto end = find(b, "IKCFG_ED", data);
    if (!end || !is_gzip(b.data() + data, *end - data)) return std::nullopt;
    auto text = gunzip(b.data() + data, *end - data);
    if (!text) return std::nullopt;
    return std::string(text->begin(), text->end());
}

struct Recognised {
    kernel::Arch arch;
    std::string format;
};

// The header of an uncompressed image.
std::optional<Recognised> recognise(const std::vector<std::uint8_t>& b) {
    if (b.size() >= 0x40 && le32(b, 0x38) == 0x644d5241)
        return Recognised{kernel::Arch::arm64, "arm64 Image"};
    if (b.size() >= 0x40 && le32(b, 0x38) == 0x05435352)
        return Recognised{kernel::Arch::riscv, "riscv Image"};
    if (b.size() >= 0x30 && le32(b, 0x24) == 0x016f2818)
        return Recognised{kernel::Arch::arm, "arm zImage"};
    return std::nullopt;
}

// A little-endian zImage's data table (arch/arm/boot/compressed/head.S and vmlinux.lds.S, read
// in 5.10.223, 6.1.192 and 6.12.117): 0x38 holds its offset when 0x34 holds 0x45454545; the table
// is {word count, "KSLZ", offset of the decompressed size, bss size, TEXT_OFFSET, malloc size}.
// The running kernel takes the decompressed size plus the bss at TEXT_OFFSET.
void arm_zimage_table(const std::vector<std::uint8_t>& b, KernelImage& image) {
    if (b.size() < 0x3c || le32(b, 0x34) != 0x45454545) return;
    const std::size_t table = le32(b, 0x38);
    if (table > b.size() || b.size() - table < 24 || le32(b, table + 4) != 0x5a534c4b) return;
    const std::size_t size_at = le32(b, table + 8);
    if (size_at > b.size() || b.size() - size_at < 4) return;
    image.arm_running_size = std::uint64_t{le32(b, size_at)} + le32(b, table + 12);
    image.text_offset = le32(b, table + 16);
}

} // namespace

std::optional<KernelImage> read_kernel_image(const std::string& path, Diagnostics& diags) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        diags.error({path, 0, 0}, "cannot read the kernel image");
        return std::nullopt;
    }
    std::vector<std::uint8_t> raw((std::istreambuf_iterator<char>(in)), {});
    KernelImage image;
    image.path = path;
    std::vector<std::uint8_t> bytes = raw;
    std::string wrapper;
    if (is_gzip(raw.data(), raw.size())) {
        auto inflated = gunzip(raw.data(), raw.size());
        if (!inflated) {
            diags.error({path, 0, 0}, "a gzip file that does not inflate: not a kernel image");
            return std::nullopt;
        }
        bytes = std::move(*inflated);
        wrapper = "gzip";
    } else if (raw.size() >= 0x40 && raw[0] == 'M' && raw[1] == 'Z' &&
               std::memcmp(raw.data() + 4, "zimg", 4) == 0) {
        std::uint32_t offset = le32(raw, 8), size = le32(raw, 12);
        std::string method(reinterpret_cast<const char*>(raw.data() + 0x18),
                           strnlen(reinterpret_cast<const char*>(raw.data() + 0x18), 32));
        if (method != "gzip" || std::uint64_t{offset} + size > raw.size()) {
            diags.error({path, 0, 0},
                        fmt::format("an EFI zboot image compressed with '{}': only gzip payloads "
                                    "are read (decompress it to an Image first)",
                                    method));
            return std::nullopt;
        }
        auto inflated = gunzip(raw.data() + offset, size);
        if (!inflated) {
            diags.error({path, 0, 0}, "an EFI zboot image whose gzip payload does not inflate");
            return std::nullopt;
        }
        bytes = std::move(*inflated);
        wrapper = "EFI zboot(gzip)";
    }
    auto what = recognise(bytes);
    if (!what) {
        diags.error({path, 0, 0},
                    "not a kernel image QEMU can boot here: no arm64 or riscv Image header, no "
                    "arm zImage magic (gzip and gzip EFI zboot wrappers are unpacked first)");
        return std::nullopt;
    }
    image.arch = what->arch;
    image.format = wrapper.empty() ? what->format : fmt::format("{} in {}", what->format, wrapper);
    if (what->arch == kernel::Arch::arm64 || what->arch == kernel::Arch::riscv) {
        image.text_offset = le64(bytes, 8);
        image.image_size = le64(bytes, 16);
        if (what->arch == kernel::Arch::arm64) {
            // arch/arm64/booting.rst: flags bits 1-2, 0 unspecified, 1 4K, 2 16K, 3 64K.
            static constexpr std::uint64_t sizes[] = {0, 4096, 16384, 65536};
            image.page_size = sizes[(le64(bytes, 24) >> 1) & 3];
        }
    }
    if (what->arch == kernel::Arch::arm) arm_zimage_table(bytes, image);
    if (image.image_size == 0) image.image_size = bytes.size();
    image.banner = banner_of(bytes);
    image.config = ikconfig_of(bytes);
    image.bytes = std::move(bytes);
    return image;
}

} // namespace cmalign::boot
