// `table` and every command that derives a model share one policy for a kernel version outside
// the modelled range: older is an error, newer a warning.
#include <doctest/doctest.h>

#include "cmalign/api.hpp"

using namespace cmalign;

namespace {

bool has(const Diagnostics& diags, Severity severity, const std::string& words) {
    for (const auto& d : diags.items())
        if (d.severity == severity && d.message.find(words) != std::string::npos) return true;
    return false;
}

} // namespace

TEST_CASE("table_version and load_model agree outside the modelled range") {
    for (const char* text : {"4.4", "9.1"}) {
        CAPTURE(text);
        const bool older = std::string(text) == "4.4";
        Diagnostics table;
        auto version = table_version(std::string(text), std::nullopt, table, "/");
        ConfigOptions options;
        options.arch = "arm64";
        options.kernel_version = text;
        Diagnostics derive;
        auto model = load_model(options, derive);
        CHECK(version.has_value() == !older);
        CHECK(model.has_value() == !older);
        const auto severity = older ? Severity::error : Severity::warning;
        const std::string words = older ? "older than the oldest modelled version"
                                        : "newer than the newest modelled version";
        CHECK(has(table, severity, words));
        CHECK(has(derive, severity, words));
    }
}
