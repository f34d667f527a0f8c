// Whole answers of `check` in the on-disk cache (ConfigOptions::cache_dir): what one command line
// printed and its exit status, keyed by that command line as the request reader saw it, and
// valid while every file the answer was computed from is unchanged (core/disk_cache.hpp): the
// -c inputs, the Kconfig files and top Makefile of an evaluated tree, each board and everything
// its preprocessing read, the overlays. A repeated pre-commit or CI run over unchanged boards then
// costs a few stat(2) calls instead of a Kconfig evaluation and a parse.
//
// Like ccache's direct mode, an answer cannot see a new file that would shadow an included one
// earlier in the search path; --no-cache (or touching the including file) recomputes it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmalign/core/exit_code.hpp"
#include "cmalign/run.hpp"

namespace cmalign::cli::answers {

struct Answer {
    // What the command printed, in order: (1 for stdout or 2 for stderr, the bytes).
    std::vector<std::pair<int, std::string>> chunks;
    ExitCode exit = ExitCode::clean;
};

// The key of an answer: the build (source_stamp()), the command, the request as given (its JSON
// text and the command-line-only values), the working directory (relative paths) and
// `context` (the environment and terminal facts that change the output).
std::string key(std::string_view command, std::string_view request, std::string_view context);

// The stored answer for `key`, or nullopt: none, another key, a changed file, a damaged entry.
std::optional<Answer> find(const std::string& dir, const std::string& key);

// Keeps `answer` with the identities of `sources`; nothing is kept (false) when one cannot be
// read or is not a regular file (a pipe, /proc), or the entry cannot be written.
bool store(const std::string& dir, const std::string& key, const std::vector<std::string>& sources,
           const Answer& answer);

// The command line as typed, before any parsing: `typed` is a key() of the words, so it holds
// the build, the working directory and the context as well. A typed command line that was
// parsed into the answer key `key` always is (parsing reads nothing else), so the key of a
// stored answer can be found without building the parser (a warm one-board run spent a tenth of
// its time on that): store_alias() keeps the pair, find_alias() gives the answer key back. The
// pair holds no stamps: whether the answer still holds is find()'s to say.
std::optional<std::string> find_alias(const std::string& dir, const std::string& typed);
void store_alias(const std::string& dir, const std::string& typed, const std::string& key);

// Every file check's answer to `request` depends on (what `outcome`, its run, read), or nullopt
// when the answer is not kept: a directory among the inputs (a new board would not be seen),
// --affected-by (its include graphs are cached on their own), --kconfig-shell (the toolchain is
// part of the answer), or an outcome whose sources are not known (CheckOutcome::sources).
std::optional<std::vector<std::string>> check_sources(const CheckRequest& request,
                                                      const CheckOutcome& outcome);
// Whether check's answer to `request` can be kept at all (the request alone, before the run):
// false for the first three reasons above, so nothing is looked up or recorded.
bool check_keepable(const CheckRequest& request);

} // namespace cmalign::cli::answers
