// Out-of-range ints as the real kconfig handled them: the oracle asked kconfig for a max order
// (fragment_status.requested) and recorded what it wrote (final) and what the headers computed.
// Feeding the *requested* value on top of the generated .config must give the same max order:
// ≤ v6.7 kconfig forgot such a value (the default applies), ≥ v6.8 it clamps to the nearer bound.
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"

using namespace cmalign;
namespace fs = std::filesystem;

namespace {
std::optional<std::string> xz_text(const fs::path& p) {
    std::string cmd = "xz -dc '" + p.string() + "' 2>/dev/null";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return std::nullopt;
    std::string out;
    char buffer[65536];
    size_t n = 0;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
        out.append(buffer, n);
    if (pclose(pipe) != 0) return std::nullopt;
    return out;
}
} // namespace

TEST_CASE("out-of-range ARCH_FORCE_MAX_ORDER requests end where the real kconfig put them") {
    fs::path dir = fs::path(CMALIGN_TEST_DATA) / "oracle";
    std::ifstream in(dir / "cases.jsonl");
    REQUIRE(in);
    int checked = 0, out_of_range = 0;
    for (std::string line; std::getline(in, line);) {
        auto c = nlohmann::json::parse(line);
        const auto& status = c["fragment_status"];
        if (!status.contains("CONFIG_ARCH_FORCE_MAX_ORDER")) continue;
        // arm64 has no prompt for the symbol: a fragment value is not a user value there.
        if (c["arch"] == "arm64") continue;
        if (!c["truth"].contains("MAX_PAGE_ORDER")) continue;
        auto text = xz_text(dir / "configs" / (c["id"].get<std::string>() + ".config.xz"));
        if (!text && !cmalign::test::have_program("xz")) return;
        REQUIRE(text);
        CAPTURE(c["id"].get<std::string>());
        kconfig::Config config;
        Diagnostics diags;
        REQUIRE(kconfig::read_fragment(*text, c["id"].get<std::string>(), config, diags));
        auto requested = status["CONFIG_ARCH_FORCE_MAX_ORDER"]["requested"].get<std::string>();
        REQUIRE(kconfig::apply_set("CONFIG_ARCH_FORCE_MAX_ORDER=" + requested, config, diags));
        kernel::Options options;
        options.version = KernelVersion::parse(c["kernel"].get<std::string>());
        auto model = kernel::derive(config, options, diags);
        REQUIRE(model);
        CHECK(model->max_page_order == c["truth"]["MAX_PAGE_ORDER"].get<int>());
        ++checked;
        if (!status["CONFIG_ARCH_FORCE_MAX_ORDER"]["applied"].get<bool>()) ++out_of_range;
    }
    MESSAGE(checked << " requested max orders checked, " << out_of_range
                    << " of them out of range");
    CHECK(out_of_range >= 4); // 6.1 and 6.12 cases on both sides of the v6.8 change
}

TEST_CASE("the v6.7/v6.8 kconfig change: out-of-range ints fall back, then clamp") {
    // powerpc Book3S-64 with 64K pages: ARCH_FORCE_MAX_ORDER range 7..8, default 8 (≥ v6.4,
    // arch/powerpc/Kconfig). A requested 6: v6.7's conf_read() forgets it → 8; v6.8's
    // sym_validate_range() clamps it to the lower bound → 7. 20 clamps to the upper bound 8.
    auto max_order = [](const char* version, const char* value) {
        kconfig::Config config;
        Diagnostics diags;
        for (const char* s : {"CONFIG_PPC64=y", "CONFIG_PPC_BOOK3S_64=y", "CONFIG_PPC_64K_PAGES=y"})
            REQUIRE(kconfig::apply_set(s, config, diags));
        REQUIRE(
            kconfig::apply_set(std::string("CONFIG_ARCH_FORCE_MAX_ORDER=") + value, config, diags));
        kernel::Options options;
        options.arch = kernel::Arch::powerpc;
        options.version = KernelVersion::parse(version);
        auto model = kernel::derive(config, options, diags);
        REQUIRE(model);
        bool warned = false;
        for (const auto& d : model->diagnostics)
            warned = warned || d.check == "kernel-config-range";
        CHECK(warned);
        return model->max_page_order;
    };
    CHECK(max_order("6.7", "6") == 8);
    CHECK(max_order("6.8", "6") == 7);
    CHECK(max_order("6.7", "20") == 8);
    CHECK(max_order("6.8", "20") == 8);
}
