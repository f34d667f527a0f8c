// A guess never hides a finding. CMA/DMA_CMA left out of a defconfig or fragment
// are assumed on (so pools are checked), believed when the inputs say off, and taken as n only
// where absence means n: a .config kconfig wrote, or one evaluated from a kernel tree.
#include <doctest/doctest.h>

#include <algorithm>

#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"

using namespace cmalign;

namespace {

struct Derived {
    std::optional<kernel::Model> model;
    Diagnostics diags;
};

Derived derive_text(const std::string& text, bool with_tree = false) {
    Derived out;
    kconfig::Config config;
    REQUIRE(kconfig::read_fragment(text, "input.config", config, out.diags));
    kernel::Options options;
    options.arch = kernel::Arch::arm64;
    options.version = KernelVersion::parse("6.12");
    if (with_tree) options.tree_version = KernelVersion::parse("6.12.117");
    out.model = kernel::derive(config, options, out.diags);
    REQUIRE(out.model);
    return out;
}

std::size_t assumed_notes(const Diagnostics& d) {
    return static_cast<std::size_t>(
        std::count_if(d.items().begin(), d.items().end(), [](const auto& x) {
            return x.check == "kernel-config-assumed" && x.severity == Severity::note;
        }));
}

const std::string header = "#\n# Automatically generated file; DO NOT EDIT.\n# Linux/arm64 "
                           "6.12.117 Kernel Configuration\n#\n";

} // namespace

TEST_CASE("a fragment without CMA/DMA_CMA: both assumed on, said in one note") {
    auto d = derive_text("CONFIG_ARM64_16K_PAGES=y\n");
    CHECK(d.model->cma);
    CHECK(d.model->dma_cma);
    CHECK(d.model->cma_assumed);
    CHECK(d.model->dma_cma_assumed);
    REQUIRE(assumed_notes(d.diags) == 1);
    const auto& note =
        *std::find_if(d.diags.items().begin(), d.diags.items().end(),
                      [](const auto& x) { return x.check == "kernel-config-assumed"; });
    CHECK(note.message.find("CONFIG_CMA=y") != std::string::npos);
    CHECK(note.message.find("CONFIG_DMA_CMA=y") != std::string::npos);
    CHECK(note.message.find("--kernel-tree") != std::string::npos);
    CHECK(note.message.find("CONFIG_ARM64_16K_PAGES") == std::string::npos); // given, not assumed
}

TEST_CASE("CMA given, DMA_CMA left out: DMA_CMA assumed on") {
    auto d = derive_text("CONFIG_ARM64_16K_PAGES=y\nCONFIG_CMA=y\n");
    CHECK(d.model->dma_cma);
    CHECK_FALSE(d.model->cma_assumed);
    CHECK(d.model->dma_cma_assumed);
}

TEST_CASE("the inputs saying off are believed") {
    for (const char* off : {"# CONFIG_CMA is not set\n", "CONFIG_CMA=n\n"}) {
        auto d = derive_text(std::string("CONFIG_ARM64_16K_PAGES=y\n") + off);
        CHECK_FALSE(d.model->cma);
        CHECK_FALSE(d.model->cma_assumed);
    }
    auto d = derive_text("CONFIG_CMA=y\n# CONFIG_DMA_CMA is not set\n");
    CHECK(d.model->cma);
    CHECK_FALSE(d.model->dma_cma);
    CHECK_FALSE(d.model->dma_cma_assumed);
}

TEST_CASE("a full .config: absent means n, and no assumption note") {
    auto full = derive_text(header + "CONFIG_ARM64=y\nCONFIG_ARM64_16K_PAGES=y\n");
    CHECK_FALSE(full.model->cma);
    CHECK_FALSE(full.model->cma_assumed);
    CHECK(assumed_notes(full.diags) == 0);
    // A kernel tree that only gave its version (its Kconfig was not evaluated: no top Kconfig or
    // no arch) does not complete a fragment: CMA stays assumed on, and the note says so. An
    // evaluated tree writes kconfig's header and counts as a full .config (kconfig walkthrough).
    auto tree = derive_text("CONFIG_ARM64_16K_PAGES=y\n", true);
    CHECK(tree.model->cma);
    CHECK(tree.model->cma_assumed);
    CHECK(assumed_notes(tree.diags) == 1);
}

TEST_CASE("DMA_DECLARE_COHERENT: read when given, n in a full .config, unknown in a fragment") {
    CHECK_FALSE(derive_text("CONFIG_CMA=y\n").model->dma_declare_coherent.has_value());
    CHECK(derive_text("CONFIG_DMA_DECLARE_COHERENT=y\n").model->dma_declare_coherent == true);
    CHECK(derive_text(header + "CONFIG_ARM64=y\n").model->dma_declare_coherent == false);
}
