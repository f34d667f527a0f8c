// Evaluating a kernel tree's Kconfig with the semantics of the kernel's own scripts/kconfig.
//
// olddefconfig() answers what `make ARCH=<arch> olddefconfig` writes when `inputs` is the .config
// (and so what `make <name>_defconfig` writes for a defconfig, which conf reads the same way).
// The parser follows scripts/kconfig/{lexer.l,parser.y,preprocess.c,menu.c} and the evaluation
// scripts/kconfig/{symbol.c,expr.c,confdata.c} of the tree's own version (6.1 and 6.12 differ in
// choices and in out-of-range values).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/limits.hpp"
#include "cmalign/kconfig/config.hpp"

namespace cmalign::kconfig {

struct EvalOptions {
    // --kconfig-shell: run $(shell,...) as kconfig does. Off: toolchain probes take the answer of
    // a typical build with Debian's cross gcc 12 for the arch, and each one is listed.
    bool run_shell = false;
    // Variables as kbuild passes them (CC, CROSS_COMPILE, LLVM, LD, ...); the process environment
    // is not read, so callers decide what counts.
    std::map<std::string, std::string> env;
    // The input files in the order they were given (Entry::where.file), so that the merged
    // inputs are read in the order of the .config merge_config.sh would write.
    std::vector<std::string> input_order;
    // macro_depth, kconfig_source_depth, kconfig_symbols, and file_bytes/line_bytes of every
    // Kconfig file read.
    InputLimits limits;
    // A directory for the on-disk cache of evaluations ("" off): an evaluation with the same
    // inputs on an unchanged tree is read back instead of computed. Not with run_shell (the
    // probes' answers depend on the toolchain, which no entry records).
    std::string cache_dir;
};

// One toolchain probe answered without running it.
struct Assumption {
    std::string command; // the $(shell,...) text after expansion
    std::string result;  // what we took it to print
    Location where;      // the Kconfig line that asked
};

struct Evaluation {
    Config config;         // every symbol kconfig writes, n included, with provenance
    std::string dotconfig; // the .config text exactly as conf_write() would write it
    std::string arch;      // make's ARCH
    std::string srcarch;   // arch/<srcarch>
    std::string kernel_version;
    std::vector<Assumption> assumptions;
    // The files the evaluation was computed from besides the inputs: every Kconfig file read and
    // the top Makefile (what a cached answer must find unchanged).
    std::vector<std::string> sources;
};

// The SRCARCH the top Makefile derives from ARCH ("x86_64" → "x86", "arm64" → "arm64").
std::string srcarch_of(const std::string& arch);

// The in-process cache of parsed kernel trees (at most a few, least recently used dropped):
// emptied, and how many trees it holds.
void clear_cache();
std::size_t cached_trees();

// Parses (or takes from the in-process cache) `tree`'s Kconfig for `arch` and evaluates it with
// `inputs` as the user's .config. Errors in the Kconfig files are reported at file:line:col.
std::optional<Evaluation> evaluate(const std::string& tree, const std::string& arch,
                                   const Config& inputs, const EvalOptions& options,
                                   Diagnostics& diags);

// evaluate().config: the full configuration as `make olddefconfig` writes it. Entries set by the
// inputs keep their Location; the others name the Kconfig file:line of the default, select or
// imply that decided them. Toolchain assumptions are added to `diags` as notes.
std::optional<Config> olddefconfig(const std::string& tree, const std::string& arch,
                                   const Config& inputs, const EvalOptions& options,
                                   Diagnostics& diags);

} // namespace cmalign::kconfig
