// Small text helpers every layer shares.
#pragma once

#include <string_view>

namespace cmalign {

// `s` without the white space (std::isspace: blank, tab, CR, LF, …) at either end.
std::string_view trim(std::string_view s);

} // namespace cmalign
