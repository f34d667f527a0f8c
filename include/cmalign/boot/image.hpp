// Linux kernel images as QEMU boots them: the arch and page size from the image header, the
// kernel's own version banner, and the configuration the image embeds (CONFIG_IKCONFIG).
//
// Headers read (kernel Documentation, v6.12): arm64 Image (arch/arm64/booting.rst: magic "ARM\x64"
// at 0x38, flags bits 1-2 the page size), riscv Image (arch/riscv/boot-image-header.rst: magic2
// "RSC\x05" at 0x38), arm zImage (magic 0x016f2818 at 0x24), EFI zboot (drivers/firmware/efi/
// libstub/zboot-header.S: "zimg" at 4, payload offset/size at 8/12, compression name at 0x18) and
// gzip (RFC 1952) around any of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::boot {

struct KernelImage {
    std::string path;
    kernel::Arch arch = kernel::Arch::arm64;
    std::string format;            // "arm64 Image", "gzip(arm64 Image)", "EFI zboot(gzip)", …
    std::uint64_t page_size = 0;   // arm64 header flags; 0 when the header does not say
    std::uint64_t text_offset = 0; // arm64/riscv header
    std::uint64_t image_size = 0;  // bytes the kernel occupies when running (bss included)
    // arm: the decompressed kernel and its bss (the zImage's data table), at text_offset; 0 when
    // the zImage has no table (image_size is then the zImage's own size).
    std::uint64_t arm_running_size = 0;
    std::vector<std::uint8_t> bytes;   // what is loaded: the decompressed Image, or the zImage
    std::optional<std::string> banner; // "Linux version 6.12.117+deb12-arm64 (…) …"
    std::optional<std::string> config; // the IKCONFIG text, when embedded
};

// Reads and recognises an image; nullopt and an error in diags when the file is unreadable or no
// header above matches ("not a kernel image QEMU can boot: …").
std::optional<KernelImage> read_kernel_image(const std::string& path, Diagnostics& diags);

} // namespace cmalign::boot
