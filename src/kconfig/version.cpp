// A kernel tree's version (its top Makefile) and the rows of how scripts/kconfig changed across
// versions (cmalign/internal/kconfig/version.hpp).
#include "cmalign/internal/kconfig/version.hpp"

#include <array>
#include <cctype>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "cmalign/internal/core/integer.hpp"

namespace cmalign::kconfig {

std::optional<TreeVersion> read_tree_version(const std::string& tree, Diagnostics& diags) {
    const std::string path = tree + "/Makefile";
    std::ifstream in(path);
    if (!in) {
        diags.error({path, 0, 0}, "cannot read the kernel tree's Makefile");
        return std::nullopt;
    }
    // "KEY = value" (blanks allowed before the '='), in the first lines of every kernel's Makefile.
    std::map<std::string, std::string> v;
    std::string line;
    for (int n = 0; n < 30 && std::getline(in, line); ++n) {
        for (const char* key : {"VERSION", "PATCHLEVEL", "SUBLEVEL", "EXTRAVERSION"}) {
            std::string k = key;
            if (line.rfind(k, 0) != 0) continue;
            auto rest = line.substr(k.size());
            auto eq = rest.find('=');
            if (eq == std::string::npos || rest.find_first_not_of(" \t") != eq) continue;
            auto value = rest.substr(eq + 1);
            value.erase(0, value.find_first_not_of(" \t"));
            while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
                value.pop_back();
            v[k] = value;
        }
    }
    if (v["VERSION"].empty() || v["PATCHLEVEL"].empty()) {
        diags.error({path, 0, 0}, "no VERSION/PATCHLEVEL in the kernel tree's Makefile");
        return std::nullopt;
    }
    auto number = [](const std::string& text) -> std::optional<int> {
        auto n = parse_integer(text, IntegerSyntax::decimal);
        if (!n || *n < 0 || *n > 999) return std::nullopt;
        return static_cast<int>(*n);
    };
    auto major = number(v["VERSION"]);
    auto minor = number(v["PATCHLEVEL"]);
    auto patch = v["SUBLEVEL"].empty() ? std::optional<int>(0) : number(v["SUBLEVEL"]);
    if (!major || !minor || !patch) {
        diags.error({path, 0, 0},
                    fmt::format("VERSION = {} / PATCHLEVEL = {} / SUBLEVEL = {} in the kernel "
                                "tree's Makefile is not a kernel version",
                                v["VERSION"], v["PATCHLEVEL"], v["SUBLEVEL"]));
        return std::nullopt;
    }
    TreeVersion out;
    out.version = {*major, *minor, *patch, !v["SUBLEVEL"].empty()};
    // KERNELVERSION = $(VERSION)$(if $(PATCHLEVEL),.$(PATCHLEVEL)$(if
    // $(SUBLEVEL),.$(SUBLEVEL)))$(EXTRAVERSION)
    out.text = v["VERSION"] + "." + v["PATCHLEVEL"];
    if (!v["SUBLEVEL"].empty()) out.text += "." + v["SUBLEVEL"];
    out.text += v["EXTRAVERSION"];
    return out;
}

std::span<const DialectRow> dialect_rows() {
    static constexpr std::array rows = {
        DialectRow{6, 11, &Dialect::choice_symbols, false,
                   "a choice is a symbol of its own (its type from its first member, its value "
                   "the chosen member)",
                   "choices have no symbol (scripts/kconfig/menu.c, symbol.c)", "v6.11"},
        DialectRow{6, 8, &Dialect::drop_out_of_range, false,
                   "scripts/kconfig/confdata.c conf_read()",
                   "scripts/kconfig/symbol.c sym_validate_range()",
                   "\"kconfig: do not clear SYMBOL_DEF_USER when the value is out of range\" "
                   "[likely v6.8]"},
        DialectRow{6, 9, &Dialect::empty_number_default, false,
                   "an int/hex symbol without a default is empty",
                   "an int/hex symbol without a default is 0/0x0 (scripts/kconfig/symbol.c "
                   "sym_calc_value())",
                   "v6.9"},
        // In 7.2's parser.y, not in 6.12's; posted to linux-kbuild in December 2025.
        DialectRow{7, 0, &Dialect::depends_if, true, "",
                   "`depends on X if Y` means `depends on X || Y = n` (scripts/kconfig/parser.y "
                   "depends: T_DEPENDS T_ON expr if_expr)",
                   "first in v7.0 [likely]"},
        // 5.10 lacks it.
        DialectRow{5, 18, &Dialect::end_of_empty_menu, true, "",
                   "\"# end of\" written for a menu without entries too (scripts/kconfig/"
                   "confdata.c end_check)",
                   "\"kconfig: fix missing '# end of' for empty menu\", merged for v5.18"},
    };
    return rows;
}

const DialectRow& dialect_row(bool Dialect::*field) {
    for (const auto& row : dialect_rows())
        if (row.field == field) return row;
    return dialect_rows().front();
}

Dialect dialect_of(int major, int minor) {
    Dialect out;
    for (const auto& row : dialect_rows()) {
        bool before = major < row.major || (major == row.major && minor < row.minor);
        out.*row.field = row.field_is_new_way ? !before : before;
    }
    return out;
}

} // namespace cmalign::kconfig
