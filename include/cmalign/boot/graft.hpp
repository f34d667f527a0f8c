// A board's memory reservations grafted onto QEMU's virt machine tree, so that a kernel booted
// in QEMU sees the board's RAM and reservations and nothing else of it.
//
// Grafted: the /memory banks (replacing virt's), the /memreserve/ entries, the whole
// /reserved-memory node (every child and property, byte for byte unless it must be re-encoded:
// see below) and /chosen/bootargs = console + panic=-1 + the board's cma=/cma_pernuma=. Not
// grafted: devices, /cpus, NUMA, anything else of the board (the virt machine's own devices stay).
//
// Re-encoding: the kernel reads reg, size, alignment and alloc-ranges with the root's
// #address-cells/#size-cells (drivers/of/of_reserved_mem.c). virt's root is 2/2; a board whose
// root differs has those properties rewritten with 2/2 cells (same values), and a board moved into
// virt's RAM window has every base moved by the same multiple of 1 GiB.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/dt/tree.hpp"
#include "cmalign/kernel/model.hpp"
#include "cmalign/reserved/regions.hpp"

namespace cmalign::boot {

// Where QEMU's virt machine puts RAM for an arch (hw/arm/virt.c, hw/riscv/virt.c of QEMU 7.2).
struct RamWindow {
    std::uint64_t base = 0;
    std::uint64_t limit = 0; // highest address + 1 the window may reach
};
std::optional<RamWindow> virt_ram_window(kernel::Arch arch);

struct GraftOptions {
    kernel::Arch arch = kernel::Arch::arm64;
    std::string console = "ttyAMA0";
    std::uint64_t image_size = 0;  // bytes the kernel needs where it is loaded (bss included)
    std::uint64_t text_offset = 0; // arm64: the Image goes text_offset bytes above a 2 MiB boundary
    std::string extra_bootargs;    // appended (tests: "memblock=debug")
};

struct Graft {
    std::vector<std::uint8_t> dtb;
    std::int64_t shift = 0;     // added to every board address (a multiple of 1 GiB)
    std::uint64_t ram_base = 0; // QEMU's RAM: [ram_base, ram_base + ram_size)
    std::uint64_t ram_size = 0;
    std::uint64_t kernel_address = 0; // where the image is loaded (arm64: base + text_offset)
    std::uint64_t dtb_address = 0;
    std::uint64_t stub_address = 0; // the few instructions that enter the kernel with x0 = DTB
    std::vector<std::uint8_t> stub;
    std::string bootargs;
    std::vector<std::string> notes; // what was moved or re-encoded, in words
};

// nullopt and an error in diags when the board has no /memory, the banks do not fit the window
// even moved, or no free 2 MiB-aligned place for the kernel and its DTB is left in the banks.
std::optional<Graft> graft(const std::vector<std::uint8_t>& virt_dtb, const dt::Tree& board,
                           const reserved::Reservations& reservations, const GraftOptions& options,
                           Diagnostics& diags);

} // namespace cmalign::boot
