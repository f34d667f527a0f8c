// Kconfig evaluations in the on-disk cache (EvalOptions::cache_dir): an entry holds the
// Evaluation and the diagnostics the evaluation reported, keyed by everything that can change
// them (see disk_key()), and valid while every Kconfig file the parse read and the top Makefile
// are unchanged (core/disk_cache.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/kconfig/kconfig_tree.hpp"

namespace cmalign::kconfig::detail {

// The key: the build (a hash of the library's sources), the tree, ARCH, the environment, the
// limits, the input order, the tree's version (which decides the Kconfig dialect) and every
// input entry with where it was set.
std::string disk_key(const std::string& tree, const std::string& arch, const Config& inputs,
                     const EvalOptions& options, const std::string& version_text);

// The cached evaluation (its diagnostics appended to `diags`), or nullopt: no entry, another
// key in it, a file changed, or an entry that does not read back.
std::optional<Evaluation> load_evaluation(const std::string& dir, const std::string& key,
                                          Diagnostics& diags);

// Stores `result` with the diagnostics its computation reported and the files it read.
void store_evaluation(const std::string& dir, const std::string& key, const Evaluation& result,
                      const std::vector<Diagnostic>& reported,
                      const std::vector<std::string>& files);

} // namespace cmalign::kconfig::detail
