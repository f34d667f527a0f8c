// Writing a Config back out: a .config-style text and the `cmalign config` JSON of docs/json.md.
#pragma once

#include <string>

#include "cmalign/kconfig/config.hpp"

namespace cmalign::kconfig {

// A .config as conf_write() writes one (scripts/kconfig/confdata.c): the heading when the input
// had one, then one line per symbol, "# CONFIG_X is not set" for n, strings quoted with '"' and
// backslash escaped by a backslash. Symbols come in name order (the Kconfig menu order is not known
// at this layer). Reading the result back gives the same symbols and values.
std::string to_config_text(const Config& config);

} // namespace cmalign::kconfig
