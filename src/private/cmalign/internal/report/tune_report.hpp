// The memory-tuning calculators' output: `cmalign pcp` and `cmalign heap` as JSON (docs/json.md)
// and text. The api's pcp_json()/heap_json() (cmalign/tune.hpp) hand their outcomes here.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp> // IWYU pragma: export (callers take the JSON apart)

#include "cmalign/calc/heap.hpp"
#include "cmalign/calc/pcp_analysis.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::report {

nlohmann::json pcp_json(const calc::PcpAnalysis& analysis,
                        const std::optional<kernel::Model>& model);
std::string pcp_text(const calc::PcpAnalysis& analysis, const std::optional<kernel::Model>& model);

nlohmann::json heap_json(const calc::HeapPlan& plan, const kernel::Model& model);
std::string heap_text(const calc::HeapPlan& plan, const kernel::Model& model);

} // namespace cmalign::report
