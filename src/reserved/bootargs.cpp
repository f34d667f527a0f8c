#include "cmalign/reserved/bootargs.hpp"

#include <algorithm>
#include <cctype>

#include "cmalign/internal/kernel/calc_rules.hpp"

namespace cmalign::reserved {

namespace {

// sscanf("%lu%n"): optional blanks, optional sign, decimal digits.
std::optional<std::pair<std::uint64_t, std::size_t>> scan_ulong(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
        ++i;
    std::size_t start = i;
    std::uint64_t v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        v = v * 10 + static_cast<std::uint64_t>(s[i] - '0');
        ++i;
    }
    if (i == start) return std::nullopt;
    return std::make_pair(v, i);
}

} // namespace

BootParams parse_boot_params(std::string_view bootargs) {
    BootParams out;
    out.cma = parse_cma_cmdline(bootargs);
    for (const auto& [name, value] : split_cmdline(bootargs)) {
        if (name == "cma_pernuma" && value) {
            out.cma_pernuma_text = *value;
            auto parsed = memparse(*value);
            out.cma_pernuma = parsed.value;
            out.cma_pernuma_trailing = value->substr(parsed.consumed);
        } else if (name == "numa_cma" && value) {
            // kernel/dma/contiguous.c early_numa_cma(); node ids beyond MAX_NUMNODES also stop
            // it, which needs CONFIG_NODES_SHIFT and is left to the caller.
            out.numa_cma_text = *value;
            out.numa_cma.clear();
            std::string_view s = *value;
            while (!s.empty()) {
                auto node = scan_ulong(s);
                if (!node || node->second >= s.size() || s[node->second] != ':') break;
                s.remove_prefix(node->second + 1);
                auto size = memparse(s);
                s.remove_prefix(size.consumed);
                out.numa_cma.push_back({node->first, size.value});
                if (!s.empty() && s.front() == ',')
                    s.remove_prefix(1);
                else
                    break;
            }
            out.numa_cma_ignored = std::string(s);
        } else if (name == "pcp_batch_scale_max") {
            out.pcp_batch_scale_max_text = value.value_or("");
            out.pcp_batch_scale_max.reset();
            out.pcp_batch_scale_max_clamped = false;
            std::string_view s = value ? std::string_view(*value) : std::string_view{};
            bool digits = !s.empty();
            std::uint64_t v = 0;
            for (char c : s) {
                if (!std::isdigit(static_cast<unsigned char>(c))) {
                    digits = false;
                    break;
                }
                v = std::min<std::uint64_t>(v * 10 + static_cast<std::uint64_t>(c - '0'), 1000);
            }
            if (digits) {
                // The RFC clamps to CONFIG_PCP_BATCH_SCALE_MAX's Kconfig range (the kernel's).
                const auto limit =
                    static_cast<std::uint64_t>(kernel::calc_rules::pcp_batch_scale_max().hi);
                out.pcp_batch_scale_max_clamped = v > limit;
                out.pcp_batch_scale_max = static_cast<int>(std::min<std::uint64_t>(v, limit));
            }
        } else if (name == "transparent_hugepage") {
            out.transparent_hugepage = value.value_or("");
            out.transparent_hugepage_valid =
                value && (*value == "always" || *value == "madvise" || *value == "never");
        }
    }
    return out;
}

} // namespace cmalign::reserved
