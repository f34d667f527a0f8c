// Kconfig language and evaluation rules on small hand-made trees: each case is a rule of
// scripts/kconfig (named in the test), checked through olddefconfig()/evaluate().
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "cmalign/kconfig/kconfig_tree.hpp"
#include "support/kconfig_mini_tree.hpp"

namespace fs = std::filesystem;
using cmalign::Diagnostics;
using cmalign::Severity;
using cmalign::kconfig::Config;
using cmalign::kconfig::EvalOptions;
using cmalign::kconfig::Evaluation;
using cmalign::test::MiniTree;

namespace {

std::string first_error(const Diagnostics& diags) {
    for (const auto& d : diags.items())
        if (d.severity == Severity::error)
            return d.where.file + ":" + std::to_string(d.where.line) + ": " + d.message;
    return {};
}

} // namespace

TEST_CASE("kconfig: default, depends on and visibility (sym_calc_value)") {
    MiniTree t;
    const std::string k = R"K(
config B
	bool "b"
config A
	bool "a"
	default y
	depends on B
config C
	bool
	default y if B
	default n
)K";
    CHECK(t.value(k, "CONFIG_B=y\n", "A") == "y");
    CHECK(t.value(k, "CONFIG_B=y\n", "C") == "y");
    CHECK(t.value(k, "", "A") == "");  // invisible, no default: not written at all
    CHECK(t.value(k, "", "B") == "n"); // visible: written as "is not set"
    CHECK(t.value(k, "CONFIG_B=y\nCONFIG_A=n\n", "A") == "n"); // the user's n wins over default
}

TEST_CASE("kconfig: select forces a value past dependencies; the provenance names it") {
    MiniTree t;
    t.write("Kconfig", R"K(
config DEP
	bool "dep"
config CMA
	bool "cma"
	depends on DEP
config DMA_CMA
	bool "dma cma"
	select CMA
)K");
    Diagnostics diags;
    auto r = t.eval("CONFIG_DMA_CMA=y\n", diags);
    REQUIRE(r);
    CHECK(r->config.find("CMA")->value == "y");
    CHECK(r->config.find("CMA")->where.file == "Kconfig");
    CHECK(r->config.find("CMA")->where.line == 9); // the `select` line
    CHECK(r->config.decided_by.at("CMA") == "selected by DMA_CMA");
    // The input's own entry keeps its location.
    CHECK(r->config.find("DMA_CMA")->where.file == "in.config");
}

TEST_CASE("kconfig: imply gives a default the user can refuse, within dependencies") {
    MiniTree t;
    const std::string k = R"K(
config OK
	bool "ok"
config X
	bool "x"
	imply Y
config Y
	bool "y"
	depends on OK
)K";
    CHECK(t.value(k, "CONFIG_X=y\nCONFIG_OK=y\n", "Y") == "y");
    CHECK(t.value(k, "CONFIG_X=y\nCONFIG_OK=y\nCONFIG_Y=n\n", "Y") == "n");
    // Dependency off: the imply still makes kconfig write it (SYMBOL_WRITE), as n.
    CHECK(t.value(k, "CONFIG_X=y\n", "Y") == "n");
    CHECK(t.value(k, "", "Y") == ""); // no imply active, invisible: no line at all
}

TEST_CASE("kconfig: tristate m becomes y without MODULES; m stays with it") {
    MiniTree t;
    const std::string k = R"K(
config MODULES
	bool "modules"
	modules
config T
	tristate "t"
	default m
)K";
    CHECK(t.value(k, "", "T") == "y");
    CHECK(t.value(k, "CONFIG_MODULES=y\n", "T") == "m");
}

TEST_CASE("kconfig: choices take the user's y, else the default, else the first visible") {
    MiniTree t;
    const std::string k = R"K(
choice
	prompt "page size"
	default P16 if BIG
config P4
	bool "4k"
config P16
	bool "16k"
config P64
	bool "64k"
endchoice
config BIG
	bool "big"
)K";
    CHECK(t.value(k, "", "P4") == "y");
    CHECK(t.value(k, "", "P16") == "n");
    CHECK(t.value(k, "CONFIG_BIG=y\n", "P16") == "y");
    CHECK(t.value(k, "CONFIG_P64=y\n", "P64") == "y");
    CHECK(t.value(k, "CONFIG_P64=y\n", "P4") == "n");
    // Two members set to y: the later line wins (confdata.c moves it to the front).
    CHECK(t.value(k, "CONFIG_P64=y\nCONFIG_P16=y\n", "P16") == "y");
}

TEST_CASE("kconfig: 6.1 choices (a choice symbol) pick the same way") {
    MiniTree t("6.1");
    const std::string k = R"K(
choice
	prompt "page size"
	default P16 if BIG
config P4
	bool "4k"
config P16
	bool "16k"
endchoice
config BIG
	bool "big"
)K";
    CHECK(t.value(k, "", "P4") == "y");
    CHECK(t.value(k, "CONFIG_BIG=y\n", "P16") == "y");
    CHECK(t.value(k, "CONFIG_P16=y\n", "P4") == "n");
}

TEST_CASE("kconfig: 6.1: entries after a choice value that depend on it are its submenu") {
    // 6.1 menu_finalize(): automatic submenu creation runs before the choice's values are
    // collected, so A_WORKAROUND (depends on CPU_A) sits under CPU_A and keeps its own default
    // (6.1 mips loongson3_defconfig: CPU_LOONGSON3_WORKAROUNDS). From 6.11 every entry of a
    // choice is a member (and the kernel moved such entries out of their choices).
    const std::string k = R"K(
choice
	prompt "cpu"
config CPU_A
	bool "a"
config A_WORKAROUND
	bool "a workaround"
	default y
	depends on CPU_A
config A_EXTRA
	bool "a extra"
	default y
	depends on A_WORKAROUND
config CPU_B
	bool "b"
endchoice
)K";
    MiniTree t("6.1");
    CHECK(t.value(k, "", "CPU_A") == "y");
    CHECK(t.value(k, "", "A_WORKAROUND") == "y");
    CHECK(t.value(k, "", "A_EXTRA") == "y");
    CHECK(t.value(k, "", "CPU_B") == "n");
    CHECK(t.value(k, "CONFIG_CPU_B=y\n", "A_WORKAROUND") == "");
    CHECK(t.value(k, "CONFIG_A_WORKAROUND=n\n", "A_EXTRA") == "");
    MiniTree t12("6.12");
    CHECK(t12.value(k, "", "CPU_A") == "y");
    CHECK(t12.value(k, "", "A_WORKAROUND") == "n"); // a member, not chosen
    CHECK(t12.value(k, "", "A_EXTRA") == "");
}

TEST_CASE("kconfig: int ranges: 6.8+ clamps a user value, 6.1 drops it for the default") {
    const std::string k = R"K(
config ORDER
	int "order"
	range 1 10
	default 5
)K";
    MiniTree new_tree("6.12");
    CHECK(new_tree.value(k, "CONFIG_ORDER=42\n", "ORDER") == "10");
    CHECK(new_tree.value(k, "CONFIG_ORDER=7\n", "ORDER") == "7");
    MiniTree old_tree("6.1");
    CHECK(old_tree.value(k, "CONFIG_ORDER=42\n", "ORDER") == "5");
    CHECK(old_tree.value(k, "CONFIG_ORDER=0\n", "ORDER") == "5");
}

TEST_CASE("kconfig: int/hex defaults come from symbols; invalid user values are ignored") {
    MiniTree t;
    const std::string k = R"K(
config BASE
	hex
	default 0x1000
config SIZE
	hex "size"
	default BASE
config COUNT
	int "count"
	default 3
)K";
    CHECK(t.value(k, "", "SIZE") == "0x1000");
    CHECK(t.value(k, "CONFIG_COUNT=07\n", "COUNT") ==
          "3"); // leading zero: sym_string_valid() says no
    CHECK(t.value(k, "CONFIG_COUNT=-4\n", "COUNT") == "-4");
}

TEST_CASE("kconfig: an int/hex without a default: empty before 6.9, 0 / 0x0 since") {
    const std::string k = R"K(
config PHYS
	hex "phys"
config COUNT
	int "count"
)K";
    MiniTree t61("6.1");
    CHECK(t61.value(k, "", "PHYS") == ""); // written as CONFIG_PHYS= (6.1 arm rpc_defconfig)
    CHECK(t61.value(k, "", "COUNT") == "");
    MiniTree t612("6.12");
    CHECK(t612.value(k, "", "PHYS") == "0x0");
    CHECK(t612.value(k, "", "COUNT") == "0");
}

TEST_CASE("kconfig: comparisons compare numbers as numbers and strings as strings") {
    MiniTree t;
    const std::string k = R"K(
config N
	int "n"
	default 12
config S
	string "s"
	default "abc"
config BIGGER
	def_bool N > 9
config SAME
	def_bool S = "abc"
config HEXCMP
	def_bool 0x10 = 16
config OFFSET
	hex "offset"
	default 0x80000000
config BITS
	int
	default 14 if OFFSET=0x40000000
	default 15 if OFFSET=0x80000000
	default 16
)K";
    CHECK(t.value(k, "", "BIGGER") == "y"); // 12 > 9 numerically, "12" < "9" as text
    CHECK(t.value(k, "", "SAME") == "y");
    CHECK(t.value(k, "", "HEXCMP") == "y"); // both constants: strtoll(.., 0) reads 0x10
    // A hex symbol against a constant: unsigned against signed, compared by the same bits
    // (expr.c's union; arm ARCH_MMAP_RND_BITS_MAX with PAGE_OFFSET=0x80000000).
    CHECK(t.value(k, "", "BITS") == "15");
    CHECK(t.value(k, "CONFIG_OFFSET=0x40000000\n", "BITS") == "14");
}

TEST_CASE("kconfig: macros: :=, =, +=, user functions, $(filename), $(lineno), $(info)") {
    MiniTree t;
    const std::string k = R"K(
simple := one
recursive = $(simple)-$(1)
simple := two
list := a
list += b
join = $(1)+$(2)
config TEXT
	string "t"
	default "$(recursive,x) $(list) $(join,p,q) $(filename):$(lineno)$(info,hello)"
)K";
    CHECK(t.value(k, "", "TEXT") == "two-x a b p+q Kconfig:10");
}

TEST_CASE("kconfig: $(shell,...) is assumed by default and run with run_shell") {
    MiniTree t;
    t.write("Kconfig", R"K(
if-success = $(shell,{ $(1); } >/dev/null 2>&1 && echo "$(2)" || echo "$(3)")
success = $(if-success,$(1),y,n)
config FROM_SHELL
	string "s"
	default "$(shell,echo hello)"
config TESTED
	def_bool $(success,test "a" = "a")
)K");
    {
        Diagnostics diags;
        auto r = t.eval("", diags);
        REQUIRE(r);
        CHECK(r->config.find("FROM_SHELL")->value == ""); // not run
        CHECK(r->config.find("TESTED")->value == "y");    // plain `test`: answered exactly
        REQUIRE(r->assumptions.size() == 1);
        CHECK(r->assumptions.front().command == "echo hello");
    }
    {
        Diagnostics diags;
        EvalOptions options;
        options.run_shell = true;
        auto r = t.eval("", diags, options);
        REQUIRE(r);
        CHECK(r->config.find("FROM_SHELL")->value == "hello");
        CHECK(r->config.find("TESTED")->value == "y");
        CHECK(r->assumptions.empty());
    }
}

TEST_CASE("kconfig: if/endif and menus propagate dependencies; .config text has menu comments") {
    MiniTree t;
    t.write("Kconfig", R"K(
mainmenu "Test $(ARCH) Kernel Configuration"
config GATE
	bool "gate"
if GATE
config INNER
	bool "inner"
	default y
endif
menu "Things"
	visible if GATE
config SHOWN
	bool "shown"
	default y
endmenu
comment "a comment"
	depends on GATE
)K");
    Diagnostics diags;
    auto r = t.eval("", diags);
    REQUIRE(r);
    CHECK(r->config.find("INNER") == nullptr);
    CHECK(r->config.find("SHOWN") != nullptr); // menu invisible, symbol still written (default y)
    CHECK(r->dotconfig ==
          "#\n# Automatically generated file; DO NOT EDIT.\n# Test test Kernel Configuration\n#\n"
          "# CONFIG_GATE is not set\nCONFIG_SHOWN=y\n");
    Diagnostics d2;
    auto on = t.eval("CONFIG_GATE=y\n", d2);
    REQUIRE(on);
    CHECK(on->dotconfig ==
          "#\n# Automatically generated file; DO NOT EDIT.\n# Test test Kernel Configuration\n#\n"
          "CONFIG_GATE=y\nCONFIG_INNER=y\n\n#\n# Things\n#\nCONFIG_SHOWN=y\n# end of Things\n"
          "\n#\n# a comment\n#\n");
}

TEST_CASE("kconfig: help text ends by indentation; keywords inside it are text") {
    MiniTree t;
    const std::string k = "config A\n\tbool \"a\"\n\tdefault y\n\thelp\n\t  config NOT_A_SYMBOL\n\n"
                          "\t  endif is fine here\nconfig B\n\tbool \"b\"\n";
    CHECK(t.value(k, "", "A") == "y");
    CHECK(t.value(k, "", "B") == "n");
    CHECK(t.value(k, "", "NOT_A_SYMBOL") == "");
}

TEST_CASE("kconfig: source, rsource and osource with globs") {
    MiniTree t;
    t.write("Kconfig", "source \"sub/Kconfig\"\nosource \"missing/Kconfig\"\n");
    t.write("sub/Kconfig", "rsource \"parts/*.kconfig\"\n");
    t.write("sub/parts/a.kconfig", "config PA\n\tdef_bool y\n");
    t.write("sub/parts/b.kconfig", "config PB\n\tdef_bool PA\n");
    Diagnostics diags;
    auto r = t.eval("", diags);
    REQUIRE_MESSAGE(r, first_error(diags));
    CHECK(r->config.find("PB")->value == "y");
    CHECK(r->config.find("PB")->where.file == "sub/parts/b.kconfig");
}

// A sourced name is opened once, without a stat first: what is not a regular file is told apart
// only when the read fails. A directory or a FIFO is refused where it is sourced (a FIFO without
// waiting for a writer), and skipped by osource.
TEST_CASE("kconfig: a sourced directory or FIFO is refused, osource skips them") {
    for (const std::string kind : {"directory", "fifo"}) {
        CAPTURE(kind);
        MiniTree t;
        const std::string odd = t.path() + "/odd";
        if (kind == "directory")
            fs::create_directories(odd);
        else
            REQUIRE(::mkfifo(odd.c_str(), 0600) == 0);
        t.write("Kconfig", "config A\n\tdef_bool y\nosource \"odd\"\n");
        Diagnostics diags;
        auto r = t.eval("", diags);
        REQUIRE_MESSAGE(r, first_error(diags));
        CHECK(r->config.find("A")->value == "y");
        t.write("Kconfig", "config A\n\tdef_bool y\n\nsource \"odd\"\n");
        Diagnostics refused;
        CHECK_FALSE(t.eval("", refused));
        REQUIRE(refused.has_errors());
        CHECK(first_error(refused).find("can't open file \"odd\"") != std::string::npos);
        CHECK(refused.items().front().where.line == 4);
    }
}

TEST_CASE("kconfig: bad input gives a located error, never a crash") {
    struct Case {
        const char* name;
        std::string kconfig;
        const char* message;
        int line;
    };
    const Case cases[] = {
        {"unterminated if", "config A\n\tbool \"a\"\nif A\nconfig B\n\tbool \"b\"\n",
         "'if' without a matching 'endif'", 3},
        {"unknown keyword", "config A\n\tbool \"a\"\n\tfrobnicate y\n",
         "unknown statement \"frobnicate\"", 3},
        {"macro recursion", "X = $(X)\nconfig A\n\tbool \"$(X)\"\n", "recursive variable", 3},
        {"missing source", "\n\nsource \"nowhere/Kconfig\"\n",
         "can't open file \"nowhere/Kconfig\"", 3},
        {"stray endmenu", "endmenu\n", "unexpected 'endmenu'", 1},
        {"unterminated reference", "config A\n\tbool \"$(shell,echo\"\n", "missing ')'", 2},
        {"error-if", "$(error-if,y,stop here)\n", "stop here", 1},
        {"self-sourcing", "source \"Kconfig\"\n", "recursive inclusion", 1},
    };
    for (const auto& c : cases) {
        CAPTURE(c.name);
        MiniTree t;
        t.write("Kconfig", c.kconfig);
        Diagnostics diags;
        auto r = t.eval("", diags);
        CHECK(!r);
        REQUIRE(diags.has_errors());
        const auto* err = &diags.items().front();
        for (const auto& d : diags.items())
            if (d.severity == Severity::error) err = &d;
        CHECK(err->message.find(c.message) != std::string::npos);
        CHECK(err->where.line == c.line);
        CHECK(err->where.file.ends_with("Kconfig"));
    }
}

TEST_CASE("kconfig: hostile nesting is bounded") {
    MiniTree t;
    std::string deep(200000, '(');
    t.write("Kconfig", "config A\n\tdef_bool " + deep + "y\n");
    Diagnostics diags;
    CHECK(!t.eval("", diags));
    CHECK(first_error(diags).find("nested too deeply") != std::string::npos);

    std::string macro = "X := ";
    for (int i = 0; i < 5000; ++i)
        macro += "$(";
    MiniTree t2;
    t2.write("Kconfig", macro + "\n");
    Diagnostics d2;
    CHECK(!t2.eval("", d2));
    CHECK(d2.has_errors());
    // The message quotes the reference cut short, not the 10,000 bytes of it.
    CHECK(first_error(d2).find("missing ')'") != std::string::npos);
    CHECK(first_error(d2).size() < 300);
}

TEST_CASE("kconfig: 7.0+ `depends on X if Y` is X || Y = n; a syntax error before 7.0") {
    // menu_add_dep(dep, cond) of 7.2's menu.c: expr_alloc_or(dep, expr_trans_compare(cond,
    // E_EQUAL, &symbol_no)).
    const std::string k = R"K(
config MODULES
	bool "modules"
	modules
config GADGET
	tristate "gadget"
config USB
	tristate "usb"
config DRIVER
	tristate "driver"
	depends on USB if !GADGET
	default y
config BOTH
	bool "both"
	depends on USB if GADGET && MODULES
	default y
)K";
    MiniTree t("7.2");
    // !GADGET is y when GADGET=n: DRIVER depends on USB.
    CHECK(t.value(k, "CONFIG_USB=n\nCONFIG_GADGET=n\n", "DRIVER") == "");
    CHECK(t.value(k, "CONFIG_USB=y\nCONFIG_GADGET=n\n", "DRIVER") == "y");
    // GADGET=y: !GADGET = n, so the dependency does not apply.
    CHECK(t.value(k, "CONFIG_USB=n\nCONFIG_GADGET=y\n", "DRIVER") == "y");
    // GADGET=m (with MODULES): !GADGET is m, not n, so DRIVER depends on USB; it is not
    // DRIVER's dependency `USB || m` (expr_trans_compare rewrites !GADGET = n as GADGET != n).
    CHECK(t.value(k, "CONFIG_MODULES=y\nCONFIG_USB=n\nCONFIG_GADGET=m\n", "DRIVER") == "y");
    // An && condition: (GADGET && MODULES) = n is (GADGET = n || MODULES = n).
    CHECK(t.value(k, "CONFIG_MODULES=y\nCONFIG_USB=n\nCONFIG_GADGET=y\n", "BOTH") == "");
    CHECK(t.value(k, "CONFIG_USB=n\nCONFIG_GADGET=y\n", "BOTH") == "y");

    MiniTree old("6.12");
    old.write("Kconfig", k);
    Diagnostics diags;
    CHECK_FALSE(old.eval("", diags));
    CHECK(first_error(diags).find("Kconfig:11: syntax error: unexpected 'if'") !=
          std::string::npos);
}

TEST_CASE("kconfig: transitional symbols are read, never written, and hand their value on") {
    // 7.2's symbol.c: SYMBOL_TRANS is always visible, not written, and a symbol whose default is
    // a transitional symbol the user set counts as set by the user.
    MiniTree t("7.2");
    const std::string k = R"K(
config OLD_NAME
	bool
	transitional
	help
	  The old name.
config NEW_NAME
	bool "new"
	default OLD_NAME
config OTHER
	bool
	default OLD_NAME
)K";
    CHECK(t.value(k, "CONFIG_OLD_NAME=y\n", "OLD_NAME") == "");
    CHECK(t.value(k, "CONFIG_OLD_NAME=y\n", "NEW_NAME") == "y");
    CHECK(t.value(k, "CONFIG_OLD_NAME=y\n", "OTHER") == "y");
    CHECK(t.value(k, "", "NEW_NAME") == "n");
    CHECK(t.value(k, "CONFIG_OLD_NAME=y\nCONFIG_NEW_NAME=n\n", "NEW_NAME") == "n");
}

TEST_CASE("kconfig: 5.10's `option defconfig_list` symbol is not written; `option modules` works") {
    MiniTree t("5.10");
    const std::string k = R"K(
config DEFCONFIG_LIST
	string
	option defconfig_list
	default "/lib/modules/$(shell,uname -r)/.config"
config MODULES
	bool "modules"
	option modules
config DRV
	tristate "drv"
	default m
)K";
    CHECK(t.value(k, "", "DEFCONFIG_LIST") == "");
    CHECK(t.value(k, "CONFIG_MODULES=y\n", "DRV") == "m");
    CHECK(t.value(k, "CONFIG_MODULES=n\n", "DRV") == "y");
}

TEST_CASE("kconfig: `expr` arithmetic in $(shell,...) is answered exactly, not assumed") {
    MiniTree t("7.2");
    const std::string k = R"K(
major := $(shell,expr 120200 / 10000)
config MAJOR
	int
	default $(major)
config CLANG_LLVM
	def_bool 0 = $(shell,expr 0 / 10000)
config HUGE
	string
	default "$(shell,expr 9999999999999999999999 * 2)"
)K";
    CHECK(t.value(k, "", "MAJOR") == "12");
    CHECK(t.value(k, "", "CLANG_LLVM") == "y");
    CHECK(t.value(k, "", "HUGE") == ""); // not a number expr(1) can hold: assumed empty
}

TEST_CASE("kconfig: an $(error-if) that fires on an assumed probe warns instead of stopping") {
    MiniTree t("5.10");
    t.write("Kconfig", R"K(
if-success = $(shell,{ $(1); } >/dev/null 2>&1 && echo "$(2)" || echo "$(3)")
success = $(if-success,$(1),y,n)
$(error-if,$(success,frobnicate-tool --probe),probe says stop)
config A
	def_bool y
)K");
    Diagnostics diags;
    auto r = t.eval("", diags);
    REQUIRE(r); // assumed: the unknown tool succeeds, error-if fires, evaluation goes on
    CHECK(r->config.find("A")->value == "y");
    bool warned = false;
    for (const auto& d : diags.items())
        warned |= d.severity == Severity::warning && d.message.find("probe says stop") == 0;
    CHECK(warned);
    // Run for real, the probe fails: no error either; and a literal y still stops.
    Diagnostics shell_diags;
    EvalOptions shell;
    shell.run_shell = true;
    CHECK(t.eval("", shell_diags, shell));
}

TEST_CASE("kconfig: an empty menu gets its '# end of' from 5.18 on, not in 5.10") {
    const std::string k = R"K(
menu "Empty"
endmenu
menu "Full"
config A
	bool "a"
endmenu
)K";
    auto dotconfig = [&](const std::string& version) {
        MiniTree t(version);
        t.write("Kconfig", k);
        Diagnostics diags;
        auto r = t.eval("", diags);
        REQUIRE(r);
        return r->dotconfig;
    };
    std::string old = dotconfig("5.10"), now = dotconfig("6.1");
    CHECK(old.find("# Empty\n#\n") != std::string::npos);
    CHECK(old.find("# end of Empty") == std::string::npos);
    CHECK(now.find("# end of Empty") != std::string::npos);
    CHECK(old.find("# end of Full") != std::string::npos);
    CHECK(now.find("# end of Full") != std::string::npos);
}

TEST_CASE("the parse cache keeps a few trees, least recently used dropped, and can be emptied") {
    cmalign::kconfig::clear_cache();
    MiniTree tree;
    tree.write("Kconfig", "config A\n\tbool \"a\"\n\tdefault y\n");
    // Six distinct parses (the environment is part of the cache key), one tree each.
    for (int i = 0; i < 6; ++i) {
        EvalOptions options;
        options.env["CMALIGN_TEST_KEY"] = std::to_string(i);
        Diagnostics diags;
        auto got = tree.eval("", diags, options);
        REQUIRE(got);
        CHECK(got->config.get_bool("A") == true);
        CHECK(cmalign::kconfig::cached_trees() == static_cast<std::size_t>(std::min(i + 1, 4)));
    }
    cmalign::kconfig::clear_cache();
    CHECK(cmalign::kconfig::cached_trees() == 0);
}

// A kept tree is used while every file it read is unchanged (size, time, and the content of a
// file written within the last two seconds): an edit right after an evaluation is seen.
TEST_CASE("the parse cache drops a tree whose Kconfig file changed, even at once") {
    cmalign::kconfig::clear_cache();
    MiniTree tree;
    tree.write("Kconfig", "source \"sub/Kconfig\"\n");
    tree.write("sub/Kconfig", "config A\n\tbool \"a\"\n\tdefault y\n");
    Diagnostics diags;
    auto first = tree.eval("", diags);
    REQUIRE(first);
    CHECK(first->config.get_bool("A") == true);
    CHECK(cmalign::kconfig::cached_trees() == 1);
    tree.write("sub/Kconfig", "config A\n\tbool \"a\"\n\tdefault n\n"); // same size, same second
    auto second = tree.eval("", diags);
    REQUIRE(second);
    CHECK(second->config.get_bool("A") == false);
    CHECK(cmalign::kconfig::cached_trees() == 1); // the stale tree replaced
    cmalign::kconfig::clear_cache();
}
