// The command line's on-disk cache (--cache-dir, --no-cache, the XDG default): answers change
// with the files they were computed from (a Kconfig file, an included .dtsi, a -c input), a
// repeated command line is printed again from the kept answer, two concurrent runs share a
// directory, and --affected-by reads the include graphs it kept.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>
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

TEST_CASE("cache: a typed command line finds its kept answer before parsing, and only its own") {
    Scratch s;
    auto dir = s.root / "cache";
    auto entries = [&](const std::string& kind) {
        std::vector<fs::path> out;
        if (fs::exists(dir))
            for (const auto& e : fs::directory_iterator(dir))
                if (e.path().filename().string().starts_with(kind + "-")) out.push_back(e.path());
        return out;
    };
    auto run_in = [&](const fs::path& root, const std::string& words) {
        return run_shell("cd '" + root.string() + "' && env -u ARCH " + CMALIGN_CLI + " " + words +
                         " 2>&1");
    };
    const std::string common = " --arch arm64 --kernel-tree linux -c empty.config --format json";
    const std::string tail = common + " --cache-dir '" + dir.string() + "'";
    const std::string misaligned_soc =
        "/ { #address-cells = <2>; #size-cells = <2>;\n"
        "memory@40000000 { device_type = \"memory\"; reg = <0 0x40000000 0 0x40000000>; };\n"
        "reserved-memory { #address-cells = <2>; #size-cells = <2>; ranges;\n"
        "pool { compatible = \"shared-dma-pool\"; reusable; size = <0 0x300000>; }; }; };\n";
    s.write("boards/soc.dtsi", misaligned_soc);
    auto a = run_in(s.root, "check boards/a.dts" + tail);
    CHECK(a.exit_code == 1);
    CHECK(a.out.find("cma-size-alignment") != std::string::npos);
    REQUIRE(entries("typed").size() == 1);
    auto b = run_in(s.root, "check boards/b.dts" + tail);
    CHECK(b.exit_code == 0);
    REQUIRE(entries("typed").size() == 2);
    CHECK(run_in(s.root, "check boards/a.dts" + tail).out == a.out);

    // The typed entry is what a run reads first: pointed at b's answer (which still holds),
    // a's words print b's answer.
    auto text_of = [&](const fs::path& p) { return read_file(p.string()); };
    fs::path a_typed, b_typed;
    for (const auto& p : entries("typed"))
        (text_of(p).find("boards/a.dts") != std::string::npos ? a_typed : b_typed) = p;
    REQUIRE_FALSE(a_typed.empty());
    REQUIRE_FALSE(b_typed.empty());
    auto answer_line = [&](const fs::path& p) {
        const auto text = text_of(p);
        const auto at = text.find("\nanswer\t");
        return at == std::string::npos ? std::string()
                                       : text.substr(at + 1, text.find('\n', at + 1) - at);
    };
    const std::string a_answer = answer_line(a_typed), b_answer = answer_line(b_typed);
    REQUIRE_FALSE(a_answer.empty());
    REQUIRE(a_answer != b_answer);
    {
        auto text = text_of(a_typed);
        text.replace(text.find(a_answer), a_answer.size(), b_answer);
        std::ofstream(a_typed, std::ios::trunc) << text;
    }
    CHECK(run_in(s.root, "check boards/a.dts" + tail).out == b.out);

    // A changed include still counts: a's own answer, found through its typed entry, is stale.
    {
        auto text = text_of(a_typed);
        text.replace(text.find(b_answer), b_answer.size(), a_answer);
        std::ofstream(a_typed, std::ios::trunc) << text;
    }
    s.write("boards/soc.dtsi", "/ { };\n"); // no pool left to check
    auto recomputed = run_in(s.root, "check boards/a.dts" + tail);
    CHECK(recomputed.exit_code == 0);
    CHECK(recomputed.out != a.out);
    CHECK(recomputed.out.find("cma-size-alignment") == std::string::npos);

    // Damaged or truncated: ignored, the parser's way answers, and the entry is written again.
    std::ofstream(a_typed, std::ios::trunc) << text_of(a_typed).substr(0, 40);
    CHECK(run_in(s.root, "check boards/a.dts" + tail).out == recomputed.out);
    CHECK_FALSE(answer_line(a_typed).empty());
    CHECK(run_in(s.root, "check boards/a.dts" + tail).out == recomputed.out);

    // The same words in another directory (relative paths) are another typed command line.
    const fs::path copy = s.root / "copy";
    fs::create_directories(copy);
    fs::copy(s.root / "linux", copy / "linux", fs::copy_options::recursive);
    fs::copy(s.root / "boards", copy / "boards", fs::copy_options::recursive);
    fs::copy(s.root / "empty.config", copy / "empty.config");
    std::ofstream(copy / "boards/soc.dtsi", std::ios::trunc) << misaligned_soc;
    auto elsewhere = run_in(copy, "check boards/a.dts" + tail);
    CHECK(elsewhere.exit_code == 1);
    CHECK(elsewhere.out.find("cma-size-alignment") != std::string::npos);
    CHECK(run_in(copy, "check boards/a.dts" + tail).out == elsewhere.out);

    // --cache-dir=DIR is read the same way; --no-cache reads and writes no entry.
    const std::string joined = common + " --cache-dir='" + dir.string() + "'";
    CHECK(run_in(copy, "check boards/a.dts" + joined).out == elsewhere.out);
    CHECK(run_in(copy, "check boards/a.dts" + joined).out == elsewhere.out);
    const auto typed_before = entries("typed").size();
    CHECK(run_in(s.root, "check boards/a.dts" + tail + " --no-cache").out == recomputed.out);
    CHECK(entries("typed").size() == typed_before);
}
