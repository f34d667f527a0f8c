// A throw-away kernel tree for Kconfig tests: top Makefile, arch/test, and the given Kconfig
// files (tests/kconfig).
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>

#include "cmalign/kconfig/kconfig_tree.hpp"

namespace cmalign::test {

namespace fs = std::filesystem;
using cmalign::Diagnostics;
using cmalign::kconfig::Config;
using cmalign::kconfig::EvalOptions;
using cmalign::kconfig::Evaluation;

// A throw-away kernel tree: top Makefile, arch/test, and the given Kconfig files.
class MiniTree {
public:
    explicit MiniTree(const std::string& version = "6.12") {
        static std::atomic<int> counter{0};
        root_ = fs::temp_directory_path() /
                ("cmalign-kconfig-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::create_directories(root_ / "arch" / "test");
        auto dot = version.find('.');
        write("Makefile", "VERSION = " + version.substr(0, dot) + "\nPATCHLEVEL = " +
                              version.substr(dot + 1) + "\nSUBLEVEL = 0\nEXTRAVERSION =\n");
    }
    ~MiniTree() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    void write(const std::string& rel, const std::string& text) {
        fs::create_directories((root_ / rel).parent_path());
        std::ofstream(root_ / rel) << text;
    }
    std::string path() const { return root_.string(); }

    std::optional<Evaluation> eval(const std::string& config, Diagnostics& diags,
                                   EvalOptions options = {}) {
        Config inputs;
        cmalign::kconfig::read_fragment(config, "in.config", inputs, diags);
        options.input_order = {"in.config"};
        return cmalign::kconfig::evaluate(path(), "test", inputs, options, diags);
    }
    // The value kconfig writes for a symbol; "" when it writes no line.
    std::string value(const std::string& kconfig, const std::string& config,
                      const std::string& symbol) {
        write("Kconfig", kconfig);
        Diagnostics diags;
        auto r = eval(config, diags);
        REQUIRE_MESSAGE(r, (diags.items().empty() ? "" : diags.items().front().message));
        auto* e = r->config.find(symbol);
        return e ? e->value : "";
    }

private:
    fs::path root_;
};

} // namespace cmalign::test
