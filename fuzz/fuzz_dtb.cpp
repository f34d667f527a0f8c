// DTB/DTBO reader (libfdt) and the /reserved-memory model and checks on what it read.
#include <cstdint>
#include <span>

#include "cmalign/checks/checks.hpp"
#include "cmalign/dt/dtb.hpp"
#include "cmalign/reserved/regions.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    cmalign::Diagnostics diags;
    auto tree =
        cmalign::dt::parse_dtb(std::span<const std::uint8_t>(data, size), "fuzz.dtb", diags);
    if (!tree) return 0;
    static const auto model = cmalign::fuzz::arm64_16k_model();
    auto reservations = cmalign::reserved::read(*tree);
    (void)cmalign::checks::run(std::move(reservations), model, cmalign::checks::Options{});
    return 0;
}
