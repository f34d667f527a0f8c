// check cmdline-params: cma_pernuma=, numa_cma=, transparent_hugepage= and the non-upstream
// pcp_batch_scale_max= read from /chosen/bootargs or --bootargs (shared with `cmalign pcp`).
#include <doctest/doctest.h>

#include <string>

#include "cmalign/checks/checks.hpp"
#include "support/dt_builder.hpp"
#include "support/models.hpp"

using namespace cmalign;
using namespace cmalign::test;

namespace {

std::vector<Diagnostic> params_findings(const std::string& args, const kernel::Model& m) {
    auto t = board({});
    t.root.children.push_back(node("chosen", {str("bootargs", {args})}));
    std::vector<Diagnostic> out;
    for (const auto& d : checks::run(t, m, {}).diagnostics)
        if (d.check == "cmdline-params") out.push_back(d);
    return out;
}

} // namespace

TEST_CASE("cmdline-params") {
    auto m = arm64_612(4096);
    SUBCASE("pcp_batch_scale_max= is not upstream and points at the Kconfig option") {
        auto f = params_findings("console=ttySC0 pcp_batch_scale_max=0", m);
        REQUIRE(f.size() == 1);
        CHECK(f[0].severity == Severity::warning);
        CHECK(f[0].node == "/chosen");
        CHECK(f[0].message.find("not an upstream kernel parameter") != std::string::npos);
        CHECK(f[0].message.find("CONFIG_PCP_BATCH_SCALE_MAX") != std::string::npos);
    }
    SUBCASE("numa_cma= that early_numa_cma() stops reading") {
        auto f = params_findings("numa_cma=0:32M;1:64M", m);
        REQUIRE(f.size() == 1);
        CHECK(f[0].message.find("\";1:64M\"") != std::string::npos);
        CHECK(params_findings("numa_cma=0:32M,1:64M cma_pernuma=16M", m).empty());
    }
    SUBCASE("numa_cma= before v6.5") {
        auto old = m;
        old.version = *KernelVersion::parse("6.1");
        auto f = params_findings("numa_cma=0:32M", old);
        REQUIRE(f.size() == 1);
        CHECK(f[0].message.find("no numa_cma=") != std::string::npos);
    }
    SUBCASE("cma_pernuma= with trailing characters, transparent_hugepage= misspelt") {
        CHECK(params_findings("cma_pernuma=16MB", m).size() == 1);
        CHECK(params_findings("transparent_hugepage=on", m).size() == 1);
        CHECK(params_findings("transparent_hugepage=madvise", m).empty());
    }
}
