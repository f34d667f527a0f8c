// The internal half of run.hpp: how the commands read their inputs (the preprocessor's options,
// a tree from DTS or DTB through a shared FileCache; run_inputs.cpp) and the parallel loop over
// inputs (core/work_queue.hpp). Private to the library, the CLI and the tests: these types are
// not installed, and they live in cmalign::detail so that a call to one reads as internal.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cmalign/api.hpp"
#include "cmalign/internal/core/work_queue.hpp" // IWYU pragma: export (for_each_input)
#include "cmalign/internal/dt/dts.hpp"
#include "cmalign/internal/dt/overlay.hpp"
#include "cmalign/internal/dt/preprocess.hpp"
#include "cmalign/run.hpp"

namespace cmalign::detail {

// The root of the kernel source tree that `path` (file or directory) lies in: the nearest
// ancestor with a top Makefile setting VERSION and PATCHLEVEL and a Kconfig file.
std::optional<std::string> find_kernel_tree(const std::string& path);

// The make ARCH for Kconfig: --arch, else the config header, else CONFIG_<ARCH> symbols of the
// inputs; nullopt when none says it.
std::optional<std::string> kconfig_arch(const ConfigOptions& options,
                                        const kconfig::Config& inputs);

// What run_check() does with one input once it is read and checked: a failed read goes to
// input_errors, else the reading warnings are prepended to the result. Shared by the sweep so
// that each of its cells is assembled exactly as a single check.
void add_input_result(CheckOutcome& outcome, std::optional<checks::Result> result,
                      std::vector<Diagnostic> read_diagnostics);

// What check and fix start from: the configuration completed from the inputs
// (resolve_config_options()), its model (load_model(); nullopt when unusable) and the
// diagnostics of both.
struct CommandModel {
    ConfigOptions config;
    std::optional<kernel::Model> model;
    std::vector<Diagnostic> diagnostics;
    // The files the model was computed from: the -c inputs, the Kconfig files of an evaluated
    // tree, and the tree's Makefile (its version) when one is given.
    std::vector<std::string> sources;
};
CommandModel command_model(const ConfigOptions& given, const std::vector<std::string>& inputs);
// command_model() in two steps: the options resolved (kernel tree, arch: quick), then the
// configuration evaluated and the model derived (the Kconfig tree: the slow part, which a bulk
// check runs beside the boards it reads).
CommandModel command_config(const ConfigOptions& given, const std::vector<std::string>& inputs);
void evaluate_command_model(CommandModel& out);

dt::PreprocessOptions preprocess_options(const TreeOptions& options);

// A DTS (through the built-in preprocessor) or a DTB/DTBO (libfdt), chosen by content: a file
// starting with the FDT magic is a blob whatever its name.
std::optional<dt::Tree> load_tree(const std::string& path, const dt::PreprocessOptions& options,
                                  dt::FileCache& cache, Diagnostics& diags,
                                  const dt::ResolveOptions& resolve = {});

// The --overlay files, read once (a DTS overlay resolved as dtc builds a .dtbo, every cell
// located). nullopt (errors in diags) when one cannot be read or is not an overlay.
std::optional<std::vector<dt::Tree>> load_overlays(const std::vector<std::string>& paths,
                                                   const dt::PreprocessOptions& options,
                                                   dt::FileCache& cache, Diagnostics& diags);

// One board as the commands see it. With overlays: the base read whole with its labels as
// /__symbols__ (dtc -@), then each overlay applied (dt::apply_overlay). Without: load_tree(),
// and a lone overlay becomes the part of it that needs no base (dt::overlay_without_base) with
// a note saying the base is unknown.
std::optional<dt::Tree> load_board(const std::string& path, const dt::PreprocessOptions& options,
                                   dt::FileCache& cache, Diagnostics& diags,
                                   const dt::ResolveOptions& resolve,
                                   const std::vector<dt::Tree>& overlays,
                                   const dt::OverlayOptions& overlay_options = {});

// Every file reading `input` reads: a DTS, everything its preprocessing includes (#include at
// any depth) and the files dtc's /include/ and /incbin/ read (found by parsing it), a DTB
// itself; absolute, symlinks resolved. nullopt when the preprocessor refuses the file, or it
// uses /include/ or /incbin/ and does not parse.
std::optional<std::vector<std::string>>
board_sources(const std::string& input, const dt::PreprocessOptions& options, dt::FileCache& cache);

// inputs_affected_by() preprocessing into `cache`: run_check passes the cache it checks the
// affected boards with, so a board preprocessed to learn its includes (its graph was stale or
// missing) replays those includes instead of preprocessing them a second time.
std::vector<std::string> inputs_affected_by(const std::vector<std::string>& inputs,
                                            const std::vector<std::string>& changed,
                                            const TreeOptions& tree, unsigned jobs,
                                            const std::vector<std::string>& config_files,
                                            const std::string& cache_dir, dt::FileCache& cache);

// What check and fix need from a DTS: source locations of the cells under /reserved-memory,
// /memory and /chosen only (locating every cell of a board costs about 40% of resolving it).
dt::ResolveOptions reservation_resolve_options();

} // namespace cmalign::detail
