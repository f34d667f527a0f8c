// The board's RAM and reservations grafted onto QEMU's virt tree through libfdt.
#include "cmalign/boot/graft.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/core/bytes.hpp"
#include "cmalign/reserved/regions.hpp"

extern "C" {
#include <libfdt.h>
}

namespace cmalign::boot {

namespace {

constexpr std::uint64_t one_gib = std::uint64_t{1} << 30;
constexpr std::uint64_t two_mib = std::uint64_t{2} << 20;
constexpr std::uint32_t virt_cells = 2; // virt's root #address-cells and #size-cells

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) {
    return (v + a - 1) / a * a;
}

struct Interval {
    std::uint64_t begin = 0, end = 0; // [begin, end)
};

std::vector<std::uint8_t> cells_of(const std::vector<std::uint64_t>& values) {
    std::vector<std::uint8_t> out(values.size() * 8);
    for (std::size_t i = 0; i < values.size(); ++i) {
        bytes::put_be32(out.data() + 8 * i, static_cast<std::uint32_t>(values[i] >> 32));
        bytes::put_be32(out.data() + 8 * i + 4, static_cast<std::uint32_t>(values[i]));
    }
    return out;
}

// A property of `count` values per tuple, each `cells[k]` cells wide, re-encoded with two cells
// per value; the values at `moved` positions of each tuple get `shift` added. nullopt when the
// length is not a whole number of tuples (left as written).
std::optional<std::vector<std::uint8_t>> reencode(const std::vector<std::uint8_t>& value,
                                                  const std::vector<std::uint32_t>& cells,
                                                  const std::vector<bool>& moved,
                                                  std::int64_t shift) {
    std::size_t tuple = 0;
    for (auto c : cells)
        tuple += 4u * c;
    if (tuple == 0 || value.empty() || value.size() % tuple != 0) return std::nullopt;
    std::vector<std::uint64_t> numbers;
    for (std::size_t at = 0; at < value.size();) {
        for (std::size_t k = 0; k < cells.size(); ++k) {
            auto v = bytes::be_number(value, at, at + 4u * cells[k]);
            if (moved[k]) v = static_cast<std::uint64_t>(static_cast<std::int64_t>(v) + shift);
            numbers.push_back(v);
            at += 4u * cells[k];
        }
    }
    return cells_of(numbers);
}

int set_prop(void* fdt, int node, const std::string& name, const std::vector<std::uint8_t>& v) {
    return fdt_setprop(fdt, node, name.c_str(), v.data(), static_cast<int>(v.size()));
}

// Copies `from` (and, verbatim, its subtree) under `parent`; reg/size/alignment/alloc-ranges of
// `from` itself re-encoded when `reencode_cells`.
int copy_node(void* fdt, int parent, const dt::Node& from, const reserved::Reservations& r,
              bool reencode_cells, std::int64_t shift, const std::string& path,
              std::vector<std::string>& notes) {
    int node = fdt_add_subnode(fdt, parent, from.name.c_str());
    if (node < 0) return node;
    for (const auto& p : from.properties) {
        // Phandles of the board would collide with virt's; nothing grafted refers to them.
        if (p.name == "phandle" || p.name == "linux,phandle") continue;
        std::vector<std::uint8_t> value = p.value;
        if (reencode_cells) {
            std::optional<std::vector<std::uint8_t>> re;
            const std::uint32_t ac = r.address_cells, sc = r.size_cells;
            if (p.name == "reg" || p.name == "alloc-ranges")
                re = reencode(p.value, {ac, sc}, {true, false}, shift);
            else if (p.name == "size")
                re = reencode(p.value, {sc}, {false}, 0);
            else if (p.name == "alignment")
                re = reencode(p.value, {ac}, {false}, 0);
            if (re)
                value = std::move(*re);
            else if (p.name == "reg" || p.name == "alloc-ranges" || p.name == "size" ||
                     p.name == "alignment")
                notes.push_back(fmt::format("{}/{}: {} bytes are no whole number of {}/{}-cell "
                                            "values: grafted as written",
                                            path, p.name, p.value.size(), ac, sc));
        }
        if (int err = set_prop(fdt, node, p.name, value); err < 0) return err;
    }
    return node;
}

int add_cells_prop(void* fdt, int node, const char* name, std::uint32_t v) {
    return fdt_setprop_u32(fdt, node, name, v);
}

std::vector<std::uint8_t> arm64_stub(std::uint64_t dtb, std::uint64_t entry) {
    // ldr x0, =dtb; mov x1, xzr; mov x2, xzr; mov x3, xzr; ldr x4, =entry; br x4
    // (arch/arm64/booting.rst: x0 = DTB address, x1-x3 = 0, MMU off).
    auto ldr_literal = [](std::uint32_t rt, std::uint32_t offset) {
        return 0x58000000u | ((offset / 4) << 5) | rt;
    };
    const std::uint32_t code[] = {ldr_literal(0, 24), 0xaa1f03e1,         0xaa1f03e2,
                                  0xaa1f03e3,         ldr_literal(4, 16), 0xd61f0080};
    std::vector<std::uint8_t> out;
    for (auto c : code)
        for (int i = 0; i < 4; ++i)
            out.push_back(static_cast<std::uint8_t>(c >> (8 * i)));
    for (auto v : {dtb, entry})
        for (int i = 0; i < 8; ++i)
            out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    return out;
}

std::vector<std::uint8_t> arm_stub(std::uint64_t dtb, std::uint64_t entry) {
    // mov r0, #0; mvn r1, #0; ldr r2, =dtb; ldr pc, =entry (arch/arm/booting.rst: r0 = 0,
    // r1 = machine type, ignored with a DTB; r2 = the DTB's physical address; SVC, MMU off).
    const std::uint32_t code[] = {0xe3a00000,
                                  0xe3e01000,
                                  0xe59f2004,
                                  0xe59ff004,
                                  0,
                                  static_cast<std::uint32_t>(dtb),
                                  static_cast<std::uint32_t>(entry)};
    std::vector<std::uint8_t> out;
    for (auto c : code)
        for (int i = 0; i < 4; ++i)
            out.push_back(static_cast<std::uint8_t>(c >> (8 * i)));
    return out;
}

struct Placement {
    std::uint64_t kernel = 0, dtb = 0, stub = 0;
};

// Where the image, the DTB and the stub go: the lowest place in the banks that keeps every
// reservation (`busy`) free and loads nothing over QEMU's own DTB (`qemu_dtb`).
//  arm64: the Image at a 2 MiB boundary + text_offset, then the DTB, the stub 1 MiB above it.
//  arm: a zImage decompresses itself to (its address & ~(128 MiB - 1)) + 0x8000
//       (AUTO_ZRELADDR), so the region starts at a 128 MiB boundary; the zImage goes above
//       room for the decompressed kernel (booting.rst: "above 32MiB"), then the DTB and stub.
std::optional<Placement> place(kernel::Arch arch, const std::vector<Interval>& banks,
                               const std::vector<Interval>& busy, const Interval& qemu_dtb,
                               const GraftOptions& options) {
    const bool arm = arch == kernel::Arch::arm;
    const std::uint64_t align = arm ? std::uint64_t{128} << 20 : two_mib;
    // arm: the decompressed kernel (with its bss) stays below 4 × the zImage in practice.
    const std::uint64_t kernel_span =
        arm ? std::max<std::uint64_t>(std::uint64_t{32} << 20,
                                      round_up(4 * options.image_size, two_mib))
            : round_up(options.text_offset + options.image_size, two_mib);
    // arm: the zImage itself, its stack and heap (decompressor) before the DTB.
    const std::uint64_t loaded =
        arm ? round_up(options.image_size + (std::uint64_t{1} << 20), two_mib) : 0;
    const std::uint64_t need = kernel_span + loaded + two_mib; // then the DTB and the stub
    auto overlaps = [](const Interval& x, std::uint64_t b, std::uint64_t e) {
        return x.begin < e && b < x.end;
    };
    // arm: the kernel takes PHYS_OFFSET from where it runs (AUTO_ZRELADDR) and ignores the RAM
    // below it ("OF: fdt: Ignoring memory range"), so it must run in the first 128 MiB of the
    // lowest bank, as a bootloader puts it; the rest of RAM would not be the board's.
    const std::size_t bank_count = arm ? std::min<std::size_t>(banks.size(), 1) : banks.size();
    for (std::size_t bank = 0; bank < bank_count; ++bank) {
        const auto& b = banks[bank];
        std::vector<std::uint64_t> candidates{round_up(b.begin, align)};
        for (const auto& x : busy)
            if (!arm && x.end > b.begin && x.end < b.end)
                candidates.push_back(round_up(x.end, align));
        if (!arm && qemu_dtb.end > b.begin && qemu_dtb.end < b.end)
            candidates.push_back(round_up(qemu_dtb.end, align));
        std::sort(candidates.begin(), candidates.end());
        for (auto c : candidates) {
            if (c + need > b.end) continue;
            if (std::any_of(busy.begin(), busy.end(),
                            [&](const Interval& x) { return overlaps(x, c, c + need); }))
                continue;
            // arm: the decompressor writes over QEMU's DTB at run time; only loads must avoid it.
            if (overlaps(qemu_dtb, arm ? c + kernel_span : c, c + need)) continue;
            Placement p;
            p.kernel = arm ? c + kernel_span : c + options.text_offset;
            p.dtb = c + kernel_span + loaded;
            p.stub = p.dtb + (std::uint64_t{1} << 20);
            return p;
        }
    }
    return std::nullopt;
}

// riscv64 (hw/riscv/virt.c of QEMU 7.2, -bios default -kernel Image -dtb board.dtb): OpenSBI
// (fw_dynamic) runs from the start of RAM and enters the Image, which QEMU loads at the next
// 2 MiB boundary, in S-mode with a1 = the DTB; QEMU copies the DTB below min(end of its RAM,
// 3 GiB), 2 MiB-aligned, and leaves the tree's memory nodes as they are. Both places are
// fixed, so a reservation there cannot be booted; QEMU gets 2 MiB more RAM than the banks so
// that the DTB lies outside them (the kernel maps it wherever it is).
bool place_riscv(Graft& g, const std::vector<Interval>& banks, const std::vector<Interval>& busy,
                 const RamWindow& window, const GraftOptions& options, const Location& at,
                 Diagnostics& diags) {
    const Interval fixed{window.base,
                         window.base + two_mib + round_up(options.image_size, two_mib)};
    bool in_bank = std::any_of(banks.begin(), banks.end(), [&](const Interval& b) {
        return b.begin <= fixed.begin && fixed.end <= b.end;
    });
    auto taken = std::find_if(busy.begin(), busy.end(), [&](const Interval& x) {
        return x.begin < fixed.end && fixed.begin < x.end;
    });
    if (!in_bank || taken != busy.end()) {
        diags.error(at, fmt::format("QEMU's riscv virt machine puts OpenSBI and the kernel at "
                                    "{:#x}..{:#x}: {}",
                                    fixed.begin, fixed.end,
                                    !in_bank ? "no /memory bank holds that range"
                                             : fmt::format("a reservation covers {:#x}..{:#x} "
                                                           "there",
                                                           taken->begin, taken->end)));
        return false;
    }
    g.kernel_address = window.base + two_mib;
    const std::uint64_t three_gib = 3 * one_gib;
    if (g.ram_base + g.ram_size < three_gib) g.ram_size += two_mib;
    g.dtb_address = std::min(g.ram_base + g.ram_size, three_gib) - two_mib;
    const Interval dtb{g.dtb_address, g.dtb_address + two_mib};
    if (std::any_of(busy.begin(), busy.end(),
                    [&](const Interval& x) { return x.begin < dtb.end && dtb.begin < x.end; })) {
        diags.error(at, fmt::format("QEMU's riscv virt machine copies the DTB to {:#x}, which a "
                                    "reservation covers",
                                    g.dtb_address));
        return false;
    }
    if (std::any_of(banks.begin(), banks.end(),
                    [&](const Interval& b) { return b.begin < dtb.end && dtb.begin < b.end; }))
        g.notes.push_back(fmt::format(
            "QEMU's riscv virt machine copies the DTB to {:#x} (below 3 GiB), inside the banks: "
            "the kernel keeps it reserved there, where a dynamic pool of the board might "
            "otherwise go",
            g.dtb_address));
    return true;
}

std::string quoted_if_needed(const std::string& key, const std::optional<std::string>& value) {
    if (!value) return key;
    if (value->find(' ') != std::string::npos) return key + "=\"" + *value + "\"";
    return key + "=" + *value;
}

} // namespace

std::optional<RamWindow> virt_ram_window(kernel::Arch arch) {
    switch (arch) {
    case kernel::Arch::arm64:
        // hw/arm/virt.c: RAM from 1 GiB; we stay well below its 255 GiB top.
        return RamWindow{one_gib, one_gib + 64 * one_gib};
    case kernel::Arch::arm:
        return RamWindow{one_gib, 4 * one_gib};
    case kernel::Arch::riscv:
        // hw/riscv/virt.c: RAM from 2 GiB.
        return RamWindow{2 * one_gib, 2 * one_gib + 64 * one_gib};
    default:
        return std::nullopt;
    }
}

namespace {

// A libfdt call that failed, and on what.
struct FdtFailure {
    int err;
    std::string what;
};

std::uint64_t moved_by(std::uint64_t a, std::int64_t shift) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(a) + shift);
}

// The shift that brings the banks into the window (a multiple of 1 GiB, noted), and the RAM QEMU
// gives; false (with an error) when there are no banks or they do not fit even moved.
bool fit_ram(const reserved::Reservations& r, const RamWindow& window, Graft& g, const Location& at,
             Diagnostics& diags) {
    if (r.memory.empty()) {
        diags.error(at, "the board has no /memory bank: nothing to boot in");
        return false;
    }
    std::uint64_t low = UINT64_MAX, high = 0;
    for (const auto& m : r.memory) {
        if (m.range.size == 0) continue;
        low = std::min(low, m.range.base);
        high = std::max(high, m.range.base + m.range.size);
    }
    if (low == UINT64_MAX) {
        diags.error(at, "every /memory bank is empty: nothing to boot in");
        return false;
    }
    if (low < window.base)
        g.shift = static_cast<std::int64_t>(round_up(window.base - low, one_gib));
    else if (high > window.limit)
        g.shift = -static_cast<std::int64_t>((low - window.base) / one_gib * one_gib);
    if (moved_by(low, g.shift) < window.base || moved_by(high, g.shift) > window.limit) {
        diags.error(at, fmt::format("the /memory banks span {:#x}..{:#x}, more than QEMU's virt "
                                    "RAM window {:#x}..{:#x} holds",
                                    low, high, window.base, window.limit));
        return false;
    }
    if (g.shift != 0)
        g.notes.push_back(fmt::format(
            "the board's RAM {:#x}..{:#x} lies outside QEMU's virt RAM window ({:#x}..): every "
            "address (banks, reservations, /memreserve/) is moved by {}{} GiB, which keeps every "
            "alignment up to 1 GiB; the kernel's lines show the moved addresses",
            low, high, window.base, g.shift > 0 ? "+" : "-",
            (g.shift > 0 ? g.shift : -g.shift) / static_cast<std::int64_t>(one_gib)));
    g.ram_base = window.base;
    g.ram_size = round_up(moved_by(high, g.shift) - window.base, two_mib);
    return true;
}

// Where the kernel may not go: every reservation, as placed.
// What the kernel image must not be loaded over: every reg and /memreserve/, and (arm64) the
// alloc-ranges windows, so a dynamic pool finds the room it would find on the board. 32-bit arm
// runs in its first 128 MiB anyway, where memblock allocates around it as on the board.
std::vector<Interval> busy_ranges(const reserved::Reservations& r, std::int64_t shift,
                                  bool alloc_ranges) {
    std::vector<Interval> busy;
    for (const auto& region : r.regions) {
        for (const auto& t : region.reg)
            if (t.size) busy.push_back({moved_by(t.base, shift), moved_by(t.base, shift) + t.size});
        if (alloc_ranges)
            for (const auto& t : region.alloc_ranges)
                if (t.size)
                    busy.push_back({moved_by(t.base, shift), moved_by(t.base, shift) + t.size});
    }
    for (const auto& m : r.memreserve)
        if (m.size)
            busy.push_back({moved_by(m.address, shift), moved_by(m.address, shift) + m.size});
    return busy;
}

// The banks, moved, in address order.
std::vector<Interval> moved_banks(const reserved::Reservations& r, std::int64_t shift) {
    std::vector<Interval> banks;
    for (const auto& m : r.memory)
        if (m.range.size)
            banks.push_back(
                {moved_by(m.range.base, shift), moved_by(m.range.base, shift) + m.range.size});
    std::sort(banks.begin(), banks.end(), [](auto& a, auto& b) { return a.begin < b.begin; });
    return banks;
}

// Where the kernel image, its DTB and the entry stub go; false (with an error) without room.
bool place_kernel(Graft& g, const std::vector<Interval>& banks, const std::vector<Interval>& busy,
                  const RamWindow& window, const GraftOptions& options, const Location& at,
                  Diagnostics& diags) {
    if (options.arch == kernel::Arch::riscv)
        return place_riscv(g, banks, busy, window, options, at, diags);
    // Without -kernel, QEMU's virt still loads its own DTB at the start of RAM
    // (hw/arm/virt.c: for a firmware's use), and refuses to load anything over it.
    const Interval qemu_dtb{window.base, window.base + two_mib};
    auto placed = place(options.arch, banks, busy, qemu_dtb, options);
    if (!placed) {
        diags.error(at, options.arch == kernel::Arch::arm
                            ? fmt::format("QEMU's arm virt machine: the kernel image ({}) and its "
                                          "DTB must sit in the first 128 MiB of the lowest bank "
                                          "(the kernel ignores RAM below itself), and a "
                                          "reservation covers that room",
                                          format_size(options.image_size, ByteUnit::bytes))
                            : fmt::format("no room in RAM outside every reservation is left for "
                                          "the kernel image ({}) and its DTB",
                                          format_size(options.image_size, ByteUnit::bytes)));
        return false;
    }
    g.kernel_address = placed->kernel;
    g.dtb_address = placed->dtb;
    g.stub_address = placed->stub;
    return true;
}

// virt's own /memory and /reserved-memory removed; the board's banks and /memreserve/ added.
std::optional<FdtFailure> replace_memory(void* fdt, const std::vector<Interval>& banks,
                                         const reserved::Reservations& r, std::int64_t shift) {
    for (bool again = true; again;) {
        again = false;
        int child;
        fdt_for_each_subnode(child, fdt, 0) {
            int len = 0;
            const char* name = fdt_get_name(fdt, child, &len);
            const void* type = fdt_getprop(fdt, child, "device_type", &len);
            bool memory =
                type && len >= 6 && std::string_view(static_cast<const char*>(type)) == "memory";
            if (memory || (name && std::string_view(name) == "reserved-memory")) {
                if (int err = fdt_del_node(fdt, child); err < 0)
                    return FdtFailure{err, "removing a node"};
                again = true;
                break;
            }
        }
    }
    for (const auto& b : banks) {
        int node = fdt_add_subnode(fdt, 0, fmt::format("memory@{:x}", b.begin).c_str());
        if (node < 0) return FdtFailure{node, "adding a memory node"};
        if (int err = fdt_setprop_string(fdt, node, "device_type", "memory"); err < 0)
            return FdtFailure{err, "memory device_type"};
        if (int err = set_prop(fdt, node, "reg", cells_of({b.begin, b.end - b.begin})); err < 0)
            return FdtFailure{err, "memory reg"};
    }
    for (const auto& m : r.memreserve)
        if (int err = fdt_add_mem_rsv(fdt, moved_by(m.address, shift), m.size); err < 0)
            return FdtFailure{err, "/memreserve/"};
    return std::nullopt;
}

// The board's /reserved-memory copied in, cells re-encoded for virt's root when they differ.
std::optional<FdtFailure> copy_reserved_memory(void* fdt, const dt::Tree& board,
                                               const reserved::Reservations& r, Graft& g) {
    const bool reencode_cells =
        r.address_cells != virt_cells || r.size_cells != virt_cells || g.shift != 0;
    if (reencode_cells && (r.address_cells != virt_cells || r.size_cells != virt_cells))
        g.notes.push_back(fmt::format("the board's root has #address-cells = <{}>, #size-cells = "
                                      "<{}>; virt's has <2>, <2>: reg, size, alignment and "
                                      "alloc-ranges under /reserved-memory are re-encoded with "
                                      "2 cells each (same values)",
                                      r.address_cells, r.size_cells));
    const dt::Node* rm = board.find(r.reserved_memory_path);
    if (!rm || !r.has_reserved_memory || r.reserved_memory_path != "/reserved-memory")
        return std::nullopt;
    int node = fdt_add_subnode(fdt, 0, rm->name.c_str());
    if (node < 0) return FdtFailure{node, "adding /reserved-memory"};
    for (const auto& p : rm->properties) {
        if (p.name == "phandle" || p.name == "linux,phandle") continue;
        std::vector<std::uint8_t> value = p.value;
        // The kernel wants /reserved-memory's cells equal to the root's: cells that matched the
        // board's root match virt's root.
        if (reencode_cells && p.name == "#address-cells" && p.u32() == r.address_cells)
            value = {0, 0, 0, virt_cells};
        if (reencode_cells && p.name == "#size-cells" && p.u32() == r.size_cells)
            value = {0, 0, 0, virt_cells};
        if (int err = set_prop(fdt, node, p.name, value); err < 0)
            return FdtFailure{err, "/reserved-memory property " + p.name};
    }
    // fdt_add_subnode inserts first: add children in reverse so they keep the board's order (the
    // kernel inits nodes in tree order, and that order is in the log).
    for (auto it = rm->children.rbegin(); it != rm->children.rend(); ++it) {
        std::function<int(int, const dt::Node&, const std::string&, bool)> copy =
            [&](int parent, const dt::Node& n, const std::string& path, bool top) -> int {
            int made = copy_node(fdt, parent, n, r, reencode_cells && top, g.shift, path, g.notes);
            if (made < 0) return made;
            for (auto c = n.children.rbegin(); c != n.children.rend(); ++c)
                if (int err = copy(made, *c, path + "/" + c->name, false); err < 0) return err;
            return made;
        };
        if (int err = copy(node, *it, r.reserved_memory_path + "/" + it->name, true); err < 0)
            return FdtFailure{err, "copying " + it->name};
    }
    return std::nullopt;
}

// The command line: the console, stop at the root-mount panic, and the board's CMA options.
// earlycon: a kernel that dies before its console driver runs still says why.
std::optional<FdtFailure> set_bootargs(void* fdt, const reserved::Reservations& r,
                                       const GraftOptions& options, Graft& g) {
    g.bootargs = fmt::format("console={} earlycon panic=-1 ignore_loglevel", options.console);
    if (r.bootargs) {
        // A cma= base (and limit) is an address in the board's RAM: it moves with the banks.
        const auto& cma = r.cma_cmdline;
        const bool move_cma = g.shift != 0 && cma && cma->base;
        for (const auto& [key, value] : reserved::split_cmdline(*r.bootargs)) {
            if (key == "cma" && move_cma) {
                g.bootargs +=
                    fmt::format(" cma={:#x}@{:#x}", cma->size, moved_by(*cma->base, g.shift));
                if (cma->limit) g.bootargs += fmt::format("-{:#x}", moved_by(*cma->limit, g.shift));
            } else if (key == "cma" || key == "cma_pernuma" || key == "numa_cma") {
                g.bootargs += " " + quoted_if_needed(key, value);
            }
        }
        if (move_cma)
            g.notes.push_back(fmt::format("cma={} names addresses in the board's RAM: moved with "
                                          "the banks",
                                          cma->text));
    }
    if (!options.extra_bootargs.empty()) g.bootargs += " " + options.extra_bootargs;
    int chosen = fdt_path_offset(fdt, "/chosen");
    if (chosen < 0) chosen = fdt_add_subnode(fdt, 0, "chosen");
    if (chosen < 0) return FdtFailure{chosen, "/chosen"};
    if (int err = fdt_setprop_string(fdt, chosen, "bootargs", g.bootargs.c_str()); err < 0)
        return FdtFailure{err, "/chosen/bootargs"};
    return std::nullopt;
}

// virt's tree with the board's memory, reservations and command line grafted on, packed.
std::optional<FdtFailure> write_tree(std::vector<std::uint8_t>& buf,
                                     const std::vector<std::uint8_t>& virt_dtb,
                                     const dt::Tree& board, const reserved::Reservations& r,
                                     const std::vector<Interval>& banks,
                                     const GraftOptions& options, Graft& g) {
    void* fdt = buf.data();
    if (int err = fdt_open_into(virt_dtb.data(), fdt, static_cast<int>(buf.size())); err < 0)
        return FdtFailure{err, "QEMU's tree"};
    if (auto failure = replace_memory(fdt, banks, r, g.shift)) return failure;
    if (auto failure = copy_reserved_memory(fdt, board, r, g)) return failure;
    if (auto failure = set_bootargs(fdt, r, options, g)) return failure;
    if (int err = fdt_pack(fdt); err < 0) return FdtFailure{err, "packing"};
    buf.resize(fdt_totalsize(fdt));
    return std::nullopt;
}

} // namespace

std::optional<Graft> graft(const std::vector<std::uint8_t>& virt_dtb, const dt::Tree& board,
                           const reserved::Reservations& r, const GraftOptions& options,
                           Diagnostics& diags) {
    Location at{board.input, 0, 0};
    auto window = virt_ram_window(options.arch);
    if (!window) {
        diags.error(at, fmt::format("boot-check cannot boot {} kernels: QEMU's virt machine is "
                                    "modelled for arm64, arm and riscv only",
                                    kernel::to_string(options.arch)));
        return std::nullopt;
    }
    Graft g;
    if (!fit_ram(r, *window, g, at, diags)) return std::nullopt;
    auto banks = moved_banks(r, g.shift);
    if (!place_kernel(g, banks, busy_ranges(r, g.shift, options.arch != kernel::Arch::arm), *window,
                      options, at, diags))
        return std::nullopt;

    std::vector<std::uint8_t> buf(virt_dtb.size() + (std::size_t{4} << 20));
    if (auto failure = write_tree(buf, virt_dtb, board, r, banks, options, g)) {
        diags.error(at, fmt::format("grafting onto QEMU's virt tree: {}: {}", failure->what,
                                    fdt_strerror(failure->err)));
        return std::nullopt;
    }
    if (buf.size() >= (std::size_t{1} << 20)) {
        diags.error(at, "the grafted DTB exceeds 1 MiB");
        return std::nullopt;
    }
    g.dtb = std::move(buf);
    if (options.arch == kernel::Arch::arm)
        g.stub = arm_stub(g.dtb_address, g.kernel_address);
    else if (options.arch == kernel::Arch::arm64)
        g.stub = arm64_stub(g.dtb_address, g.kernel_address);
    // riscv: no stub, OpenSBI enters the kernel.
    (void)add_cells_prop;
    return g;
}

} // namespace cmalign::boot
