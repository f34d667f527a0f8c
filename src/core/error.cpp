#include "cmalign/core/error.hpp"

#include <fmt/format.h>

namespace cmalign {

std::string internal_error_message(std::string_view what, std::string_view input) {
    constexpr std::size_t shown = 400; // a request can be megabytes: its start names it
    std::string_view head = input.substr(0, shown);
    return fmt::format("cmalign: internal error: {} (input: {}{}); this is a bug in cmalign, "
                       "please report it with that input",
                       what.empty() ? "unknown exception" : what, head,
                       input.size() > shown ? "…" : "");
}

} // namespace cmalign
