// `cmalign heap`: the dma-buf system heap's chunk plan for one allocation, as JSON and text.
#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/report/tune_report.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/tune.hpp"

namespace cmalign {

using nlohmann::json;

HeapOutcome run_heap(const HeapRequest& request) {
    const RunScope run_scope; // pipes read once, files stamped once
    HeapOutcome out;
    out.model = load_model(request.config, out.diags);
    if (!out.model || out.diags.has_errors()) return out;
    auto size = parse_size(request.size);
    if (!size) {
        out.diags.error({}, fmt::format("--size {}: expected a size (4194304, 0x400000, 4M, "
                                        "4MiB, SZ_4M)",
                                        request.size));
        return out;
    }
    calc::HeapInput in;
    in.version = out.model->version;
    in.page_size = out.model->page_size;
    in.max_page_order = out.model->max_page_order;
    in.size = *size;
    in.available_order = request.available_order;
    std::string error;
    out.plan = calc::compute_heap(in, error);
    if (!out.plan) out.diags.error({}, error);
    return out;
}

json heap_json(const HeapOutcome& o) {
    return report::heap_json(*o.plan, *o.model);
}

std::string heap_text(const HeapOutcome& o) {
    return report::heap_text(*o.plan, *o.model);
}

} // namespace cmalign
