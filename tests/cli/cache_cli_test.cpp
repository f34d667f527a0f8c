// The command line's on-disk cache (--cache-dir, --no-cache, the XDG default): answers change
// with the files they were computed from (a Kconfig file, an included .dtsi, a -c input), a
// repeated command line is printed again from the kept answer, two concurrent runs share a
// directory, and --affected-by reads the include graphs it kept.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "support/cli.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

struct Scratch {
    fs::path root = temp_path("cache-" + std::to_string(::getpid()));
    Scratch() {
        fs::remove_all(root);
        fs::create_directories(root / "linux/arch/arm64");
        fs::create_directories(root / "boards");
        write("linux/Makefile", "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\nEXTRAVERSION =\n");
        write("linux/Kconfig", "config ARM64\n\tdef_bool y\nsource \"arch/arm64/Kconfig\"\n");
        pages("ARM64_4K_PAGES");
        write("boards/soc.dtsi",
              "/ { #address-cells = <2>; #size-cells = <2>;\n"
              "memory@40000000 { device_type = \"memory\"; reg = <0 0x40000000 0 0x40000000>; };\n"
              "reserved-memory { #address-cells = <2>; #size-cells = <2>; ranges;\n"
              "pool { compatible = \"shared-dma-pool\"; reusable; size = <0 0x400000>; }; }; };\n");
        write("boards/a.dts", "/dts-v1/;\n#include \"soc.dtsi\"\n");
        write("boards/b.dts", "/dts-v1/;\n/ { model = \"b\"; };\n");
        write("empty.config", "CONFIG_CMA=y\nCONFIG_DMA_CMA=y\n");
    }
    ~Scratch() { fs::remove_all(root); }
    void write(const std::string& rel, const std::string& text) {
        std::ofstream(root / rel, std::ios::trunc) << text;
    }
    // The arch Kconfig whose choice default is `page`: 4K pages (2 MiB CMA alignment) or 16K.
    void pages(const std::string& page) {
        write("linux/arch/arm64/Kconfig",
              "choice\n\tprompt \"page size\"\n\tdefault " + page +
                  "\nconfig ARM64_4K_PAGES\n\tbool \"4K\"\nconfig ARM64_16K_PAGES\n\tbool "
                  "\"16K\"\nendchoice\nconfig CMA\n\tbool \"cma\"\nconfig DMA_CMA\n\tbool "
                  "\"dma cma\"\n\tdepends on CMA\n");
    }
    // stdout and stderr (the summary line) of one check of a.dts; concurrent calls use their
    // own stderr file.
    std::string check(const std::string& extra) {
        static std::atomic<int> n{0};
        auto err = (root / ("err-" + std::to_string(n++))).string();
        auto out = run_cli_in(root.string(),
                              "check boards/a.dts --arch arm64 --kernel-tree linux -c "
                              "empty.config " +
                                  extra,
                              err)
                       .out;
        return out + read_file(err);
    }
};

} // namespace

TEST_CASE("cache: the answer follows a changed Kconfig file; --no-cache writes nothing") {
    Scratch s;
    auto dir = (s.root / "cache").string();
    CHECK(s.check("--cache-dir " + dir).find("no findings") != std::string::npos);
    CHECK(s.check("--cache-dir " + dir).find("no findings") != std::string::npos);
    REQUIRE(fs::exists(dir));
    s.pages("ARM64_16K_PAGES"); // the same tree, now 16K pages: the 4 MiB pool is lost
    CHECK(s.check("--cache-dir " + dir).find("cma-size-alignment") != std::string::npos);
    s.pages("ARM64_4K_PAGES");
    CHECK(s.check("--cache-dir " + dir).find("no findings") != std::string::npos);

    auto other = (s.root / "unused").string();
    CHECK(s.check("--cache-dir " + other + " --no-cache").find("no findings") != std::string::npos);
    CHECK_FALSE(fs::exists(other));
    // The default: $XDG_CACHE_HOME/cmalign.
    auto xdg = s.root / "xdg";
    auto r = run_shell("cd '" + s.root.string() + "' && XDG_CACHE_HOME='" + xdg.string() + "' " +
                       CMALIGN_CLI +
                       " check boards/a.dts --arch arm64 --kernel-tree linux -c empty.config 2>&1");
    CHECK(r.out.find("no findings") != std::string::npos);
    CHECK(fs::exists(xdg / "cmalign"));
}

TEST_CASE("cache: two concurrent runs share a directory and both answer right") {
    Scratch s;
    auto dir = (s.root / "cache").string();
    std::string four, sixteen;
    std::thread a([&] { four = s.check("--cache-dir " + dir); });
    std::thread b(
        [&] { sixteen = s.check("--cache-dir " + dir + " --set CONFIG_ARM64_16K_PAGES=y"); });
    a.join();
    b.join();
    CHECK(four.find("no findings") != std::string::npos);
    CHECK(sixteen.find("cma-size-alignment") != std::string::npos);
    for (const auto& e : fs::directory_iterator(dir))
        CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("cache: --affected-by reads the kept include graphs and sees an edited include") {
    Scratch s;
    auto dir = (s.root / "cache").string();
    auto affected = [&] {
        return run_cli_in(s.root.string(),
                          "check boards --arch arm64 --kernel-tree linux -c empty.config "
                          "--cache-dir " +
                              dir + " --affected-by boards/soc.dtsi --",
                          (s.root / "err.txt").string())
            .out;
    };
    auto summary = [&] { return read_file((s.root / "err.txt").string()); };
    affected();
    CHECK(summary().find("1 board checked") != std::string::npos);
    // b.dts now includes the .dtsi too: its graph is stale, read again, and it is affected.
    s.write("boards/b.dts", "/dts-v1/;\n#include \"soc.dtsi\"\n/ { model = \"b\"; };\n");
    affected();
    CHECK(summary().find("2 boards checked") != std::string::npos);
}

TEST_CASE("cache: a command line answered before is printed again until one of its files changes") {
    Scratch s;
    auto dir = s.root / "cache";
    auto answers = [&] {
        std::vector<fs::path> out;
        if (fs::exists(dir))
            for (const auto& e : fs::directory_iterator(dir))
                if (e.path().filename().string().starts_with("answer-")) out.push_back(e.path());
        return out;
    };
    // stdout and stderr as one stream: the replay interleaves them as the run did.
    auto both = [&](const std::string& args) {
        return run_shell("cd '" + s.root.string() + "' && env -u ARCH " + CMALIGN_CLI + " check " +
                         args + " --arch arm64 --kernel-tree linux -c empty.config --cache-dir '" +
                         dir.string() + "' 2>&1");
    };
    auto first = both("boards/a.dts");
    REQUIRE(answers().size() == 1);
    auto again = both("boards/a.dts");
    CHECK(again.out == first.out);
    CHECK(again.exit_code == first.exit_code);
    CHECK(first.out.find("no findings") != std::string::npos);

    // The kept answer is what the second run printed (the read path, not a recomputation).
    auto entry = answers().front();
    auto text = read_file(entry.string());
    auto at = text.find("no findings");
    REQUIRE(at != std::string::npos);
    text.replace(at, 11, "NO FINDINGS");
    std::ofstream(entry, std::ios::trunc) << text;
    CHECK(both("boards/a.dts").out.find("NO FINDINGS") != std::string::npos);

    // An included file: a 3 MiB pool is not a multiple of the 2 MiB alignment.
    s.write("boards/soc.dtsi",
            "/ { #address-cells = <2>; #size-cells = <2>;\n"
            "memory@40000000 { device_type = \"memory\"; reg = <0 0x40000000 0 0x40000000>; };\n"
            "reserved-memory { #address-cells = <2>; #size-cells = <2>; ranges;\n"
            "pool { compatible = \"shared-dma-pool\"; reusable; size = <0 0x300000>; }; }; };\n");
    auto edited = both("boards/a.dts");
    CHECK(edited.exit_code == 1);
    CHECK(edited.out.find("cma-size-alignment") != std::string::npos);
    CHECK(both("boards/a.dts").out == edited.out);

    // A -c input: 16K pages make the alignment 32 MiB.
    s.write("empty.config", "CONFIG_CMA=y\nCONFIG_DMA_CMA=y\nCONFIG_ARM64_16K_PAGES=y\n");
    CHECK(both("boards/a.dts").out.find("32 MiB") != std::string::npos);

    // Another format is another answer, kept the same way.
    auto json = both("boards/a.dts --format json");
    CHECK(both("boards/a.dts --format json").out == json.out);
    CHECK(json.out.find("\"summary\"") != std::string::npos);

    // A directory of boards is never answered from the cache (a new board would not be seen),
    // nor --kconfig-shell (the toolchain is part of the answer), nor a -c that is not a regular
    // file (a pipe keeps its identity with other content).
    auto kept = answers().size();
    both("boards");
    CHECK(answers().size() == kept);
    both("boards/a.dts --kconfig-shell");
    CHECK(answers().size() == kept);
    auto piped =
        run_shell("cd '" + s.root.string() + "' && cat empty.config | env -u ARCH " + CMALIGN_CLI +
                  " check boards/a.dts --arch arm64 --kernel-tree linux -c /dev/stdin "
                  "--cache-dir '" +
                  dir.string() + "' 2>&1");
    CHECK(piped.out.find("32 MiB") != std::string::npos); // it was read and checked
    CHECK(answers().size() == kept);
}
