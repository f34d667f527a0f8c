// Renderings of the kernel model: the `calc` and `table` JSON of docs/json.md, and text/markdown.
// They are reports: implemented in the report layer (src/report/model.cpp), which may read the
// kernel layer; nothing in src/kernel includes this header.
#pragma once

#include <string>
#include <vector>

#include "cmalign/kernel/model.hpp"

namespace cmalign::kernel {

// `calc` text output: the result, then each derivation step with its rule, kernel source and
// the config lines it read, then assumptions and diagnostics.
std::string render_text(const Model& model);

// `table` text and markdown output.
std::string render_table_text(const std::vector<TableRow>& rows, Arch arch,
                              const KernelVersion& version);
std::string render_table_markdown(const std::vector<TableRow>& rows, Arch arch,
                                  const KernelVersion& version);

} // namespace cmalign::kernel
