// The default CMA area in explain and boot-check: check's prediction next to the kernel's
// "cma: " lines (mm/cma.c cma_declare_contiguous_nid(), printed for no node).

#include "cmalign/report/explain.hpp"

namespace cmalign::report {

DefaultAreaExplanation explain_default_area(const checks::DefaultArea& area,
                                            const std::vector<bootlog::Message>& other) {
    using Event = bootlog::Event;
    using Outcome = checks::DefaultArea::Outcome;
    DefaultAreaExplanation out;
    out.asked = area.asked;
    out.predicted = checks::to_string(area.outcome);
    out.predicted_base = area.base;
    out.predicted_size = area.size ? area.size : area.requested;
    out.predicted_lines = area.lines;
    out.reason = area.reason;
    for (const auto& m : other) {
        switch (m.event) {
        case Event::cmdline_reserved:
            out.kernel = "created";
            out.kernel_base = m.base;
            out.kernel_size = m.bytes;
            break;
        case Event::cmdline_failed:
        case Event::cmdline_misaligned:
        case Event::cmdline_size_limit:
        case Event::cmdline_boundary:
        case Event::not_enough_slots:
            out.kernel = "failed";
            break;
        default:
            continue;
        }
        out.log.push_back(m);
    }
    switch (area.outcome) {
    case Outcome::created:
        out.agree = out.kernel == "created";
        break;
    case Outcome::failed:
        out.agree = out.kernel == "failed";
        break;
    case Outcome::none:
    case Outcome::dt_pool:
    case Outcome::no_call:
        out.agree = out.kernel == "none";
        break;
    case Outcome::unknown:
        out.agree = true; // nothing predicted
        break;
    }
    return out;
}

} // namespace cmalign::report
