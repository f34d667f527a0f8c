// `cmalign fix`: CMA pool sizes rounded up to the kernel's alignment, as edits of the bytes where
// each size is written.
//
// Edits are data: plan_fixes() reads a resolved tree and its reservations and returns byte-span
// replacements (no file is written); merge_edits() joins the plans of many boards (a shared .dtsi
// edited once); apply_edits() writes them atomically; unified_diff() shows them. BSP tools can use
// any of the steps alone.
//
// Only the characters of the number change: "0x400000" → "0x2000000" (hex stays hex with its case
// and prefix, decimal stays decimal, zero padding and U/L suffixes are kept). A value written with
// a macro or an expression has no literal to rewrite: the plan says which number to write instead.
// Bases are never moved: a misaligned base is reported with the nearest aligned bases that
// overlap nothing and lie inside /memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/dt/tree.hpp"
#include "cmalign/kernel/model.hpp"
#include "cmalign/reserved/regions.hpp"

namespace cmalign::fix {

// One replacement of bytes [begin, end) of `file`.
struct Edit {
    std::string file; // path as the preprocessor opened it (an included .dtsi, or the .dtb)
    std::size_t begin = 0;
    std::size_t end = 0;
    std::string old_text; // the bytes there now (for a DTB: the raw cell bytes)
    std::string new_text;
    Location where;       // line/column of old_text (DTB: file only)
    std::string node;     // "/reserved-memory/linux,cma"
    std::string property; // "size" or "reg"
    std::string input;    // the board (file named on the command line) that asked for it
    bool binary = false;  // a DTB edit: re-validated with libfdt before it is written
    // The whole size the edit belongs to (both cells of a 2-cell size), before and after.
    std::uint64_t old_value = 0;
    std::uint64_t new_value = 0;
};

struct Plan {
    std::vector<Edit> edits;
    // Errors: what could not be fixed (a size written with a macro, a new value that does not fit
    // the cells, a misaligned base). Notes: edits in included files that other boards share.
    std::vector<Diagnostic> diagnostics;
    // True when some problem could not be fixed. When a SIZE cannot be fixed (macro, overflow),
    // `edits` is empty: a board's sizes are fixed completely or not at all. A misaligned base is
    // reported (never moved) and does not hold back the size edits.
    bool unfixable = false;
};

// The alignment fix rounds to: CMA_MIN_ALIGNMENT_BYTES, or when the kernel decides it at boot,
// the largest value it may choose (as the cma-size-alignment check advises). nullopt: unbounded.
std::optional<std::uint64_t> required_alignment(const kernel::Model& model);

// Plans for a board read from DTS: plan_fixes() in cmalign/internal/fix/plan.hpp (private: it reads
// the sources through the preprocessor's file cache); run_fix() (cmalign/run_fix.hpp) is the public
// way.

// Same for a board read from a DTB/DTBO (`tree.from_dtb`): edits of the blob's cell bytes, made
// with fdt_setprop_inplace on a copy and checked with fdt_check_full.
Plan plan_dtb_fixes(const dt::Tree& tree, const reserved::Reservations& reservations,
                    std::uint64_t alignment);

// "0x400000" rewritten to hold `value` in the same style ("0x2000000"); "0X00400000UL" →
// "0X02000000UL"; "4194304" → "33554432"; octal stays octal. nullopt if `literal` is not a
// plain integer literal.
std::optional<std::string> rewrite_literal(std::string_view literal, std::uint64_t value);

// Joins plans of many boards: identical edits (same file, span and new text) are kept once; two
// different edits of overlapping bytes are an error (and then nothing should be written).
struct Merged {
    std::vector<Edit> edits; // sorted by file, then begin
    std::vector<Diagnostic> diagnostics;
    bool conflict = false;
};
Merged merge_edits(std::span<const Edit> edits);

// The files an edit set touches, in order, each with its new content.
struct FileChange {
    std::string file;
    std::string old_content;
    std::string new_content;
    bool binary = false;
};
// Reads each file and applies its edits in memory. An error (file unreadable, bytes at a span not
// what the edit expects, an edited DTB that fails fdt_check_full) leaves `diags` with an error.
std::vector<FileChange> render(std::span<const Edit> edits, Diagnostics& diags);

// Writes changes atomically, each file as: temp file in the same directory, same permissions,
// fsync, rename over the real file (symlinks are followed, so the link stays a link). All temp
// files are written before the first rename; if any fails, nothing is renamed. `out_path`
// (optional, only with exactly one change) writes that change there instead of over its file.
bool write_changes(std::span<const FileChange> changes, Diagnostics& diags,
                   const std::optional<std::string>& out_path = std::nullopt);

// render() + write_changes().
bool apply_edits(std::span<const Edit> edits, Diagnostics& diags);

// `diff -u` output for one change, headers "--- a/PATH" and "+++ b/PATH" (PATH relative to
// `base_dir` when the file is under it, else as given) so `patch -p1` and `git apply` take it.
// Three lines of context; "\ No newline at end of file" where needed. Empty when equal.
std::string unified_diff(const FileChange& change, const std::string& base_dir = {});

// Writes `bytes` to `path` atomically (see write_changes).
bool write_file_atomically(const std::string& path, std::string_view bytes, Diagnostics& diags);

} // namespace cmalign::fix
