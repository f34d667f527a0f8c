// What the kconfig layer knows about kernel versions: the one reader of a kernel tree's version
// (its top Makefile), and how scripts/kconfig itself changed across versions, as rows.
//
// The dialect rows are the one source of those facts: the Kconfig evaluation takes its Dialect
// from them, and the kernel layer reads the out-of-range row for derive()'s warnings
// (kernel::rules::kconfig_range_rules()). The kconfig layer includes nothing of the kernel layer.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/core/version.hpp"

namespace cmalign::kconfig {

// The version of a kernel tree from the first lines of its top Makefile ("VERSION = 6",
// "PATCHLEVEL = 12", "SUBLEVEL = 117", "EXTRAVERSION = -rc1"). VERSION and PATCHLEVEL are
// required, SUBLEVEL and EXTRAVERSION optional.
struct TreeVersion {
    KernelVersion version; // has_patch when the Makefile sets SUBLEVEL
    std::string text;      // KERNELVERSION: "6.12.117", "7.0.0-rc1"
};
// nullopt and an error in `diags` when the Makefile cannot be read or names no version.
std::optional<TreeVersion> read_tree_version(const std::string& tree, Diagnostics& diags);

// How the evaluation behaves for one version.
struct Dialect {
    bool choice_symbols = false;       // choices have a symbol of their own (before 6.11)
    bool drop_out_of_range = false;    // a value outside its range is dropped (before 6.8)
    bool empty_number_default = false; // int/hex without a default is empty (before 6.9)
    bool depends_if = false;           // `depends on X if Y` is part of the language (7.0+)
    bool end_of_empty_menu = false;    // "# end of" after a menu without entries (5.18+)
};

// One change of scripts/kconfig: the first release that behaves the new way.
struct DialectRow {
    int major, minor;
    bool Dialect::*field;
    bool field_is_new_way; // the field says "new way" (true) or "old way" (false)
    const char* before;    // the old way and where it was, "" when only the new way is described
    const char* since;     // the new way and where it is
    const char* note;      // the commit, "[likely]" where no tagged tree confirmed it
};
std::span<const DialectRow> dialect_rows();
// The row of one change, by its field.
const DialectRow& dialect_row(bool Dialect::*field);

Dialect dialect_of(int major, int minor);

} // namespace cmalign::kconfig
