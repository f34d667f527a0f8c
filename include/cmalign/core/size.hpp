// Sizes as users write them and as we print them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cmalign {

// Accepts 4194304, 0x400000, 4M, 4MiB, 4 MiB, 4K, 1G, SZ_4M (binary units only: the kernel's
// memparse() treats K/M/G as powers of 1024). nullopt on anything else or overflow.
std::optional<std::uint64_t> parse_size(std::string_view text);

// How a size that is no whole number of KiB is spelled: "4096 B" in findings, maps and fixes,
// "4096 bytes" in calc's derivation and its notes (both are in users' scripts and CI logs).
enum class ByteUnit { b, bytes };

// "2 MiB", "512 KiB", "4096 B" (or "4096 bytes"); exact (no rounding): 3 MiB + 1 byte prints in
// bytes.
std::string format_size(std::uint64_t bytes, ByteUnit unit = ByteUnit::b);

// Smallest multiple of `align` that is >= value; nullopt on overflow. align must be > 0.
std::optional<std::uint64_t> round_up(std::uint64_t value, std::uint64_t align);

} // namespace cmalign
