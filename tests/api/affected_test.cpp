// check --affected-by: the inputs whose tree includes a changed file, through nested includes and
// include prefixes, compared on hand-made trees and with gcc's own dependency list (cpp -M) on
// the kernel's rockchip boards, and with dtc's (dtc -d) on the boards that use dtc's /include/.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include "cmalign/internal/dt/preprocess.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/run.hpp"
#include "support/material.hpp"

using namespace cmalign;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
    auto dir = fs::temp_directory_path() / ("cmalign-affected-" + name + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

std::set<std::string> names(const std::vector<std::string>& paths) {
    std::set<std::string> out;
    for (const auto& p : paths)
        out.insert(fs::path(p).filename().string());
    return out;
}

std::string run(const std::string& command) {
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::array<char, 4096> buffer{};
    for (size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
        out.append(buffer.data(), n);
    pclose(pipe);
    return out;
}

} // namespace

TEST_CASE("nested includes, include prefixes and symlinks reach the boards that use them") {
    auto dir = temp_dir("hand");
    // a.dts → soc.dtsi → common/mem.dtsi (nested, relative to the including file)
    // b.dts → <dt-bindings/acme.h> through -I include (an include prefix, as the kernel's)
    // c.dts → soc.dtsi through a symlinked directory
    // d.dts includes nothing
    write(dir / "common/mem.dtsi", "/ { memory@0 { reg = <0 0x1000>; }; };\n");
    write(dir / "soc/soc.dtsi", "#include \"../common/mem.dtsi\"\n/ { soc {}; };\n");
    write(dir / "include/dt-bindings/acme.h", "#define ACME 1\n");
    fs::create_directory_symlink(dir / "soc", dir / "soc-link");
    write(dir / "boards/a.dts", "/dts-v1/;\n#include \"../soc/soc.dtsi\"\n");
    write(dir / "boards/b.dts", "/dts-v1/;\n#include <dt-bindings/acme.h>\n/ { x = <ACME>; };\n");
    write(dir / "boards/c.dts", "/dts-v1/;\n#include \"../soc-link/soc.dtsi\"\n");
    write(dir / "boards/d.dts", "/dts-v1/;\n/ { };\n");
    std::vector<std::string> inputs;
    for (auto b : {"a", "b", "c", "d"})
        inputs.push_back((dir / "boards" / (std::string(b) + ".dts")).string());
    TreeOptions tree;
    tree.include_dirs = {(dir / "include").string()};

    CHECK(names(inputs_affected_by(inputs, {(dir / "common/mem.dtsi").string()}, tree)) ==
          std::set<std::string>{"a.dts", "c.dts"});
    CHECK(names(inputs_affected_by(inputs, {(dir / "soc-link/soc.dtsi").string()}, tree)) ==
          std::set<std::string>{"a.dts", "c.dts"});
    CHECK(names(inputs_affected_by(inputs, {(dir / "include/dt-bindings/acme.h").string()},
                                   tree)) == std::set<std::string>{"b.dts"});
    // A relative path with "..", as git prints it from another directory.
    auto relative = fs::relative(dir / "boards/../common/mem.dtsi", fs::current_path());
    CHECK(names(inputs_affected_by(inputs, {relative.string()}, tree)).size() == 2);
    // The board itself, and a changed -c file (everything).
    CHECK(names(inputs_affected_by(inputs, {inputs[3]}, tree)) == std::set<std::string>{"d.dts"});
    CHECK(inputs_affected_by(inputs, {"defconfig"}, tree, 0, {"defconfig"}).size() == 4);
    CHECK(inputs_affected_by(inputs, {(dir / "unrelated.txt").string()}, tree).empty());
    // Boards named through a symlinked directory and as a symlink to a file: a change to the
    // file they lead to reaches them (each input's directory is resolved once, a link whole).
    fs::create_directory_symlink(dir / "boards", dir / "boards-link");
    fs::create_symlink(dir / "boards/d.dts", dir / "e.dts");
    const std::vector<std::string> linked = {(dir / "boards-link/a.dts").string(),
                                             (dir / "boards-link/d.dts").string(),
                                             (dir / "e.dts").string()};
    CHECK(inputs_affected_by(linked, {inputs[3]}, tree) ==
          std::vector<std::string>{linked[1], linked[2]});
    CHECK(inputs_affected_by(linked, {(dir / "boards/a.dts").string()}, tree) ==
          std::vector<std::string>{linked[0]});
    fs::remove_all(dir);
}

TEST_CASE("with kept include graphs, a board that became a DTB is judged as one") {
    auto dir = temp_dir("graphs");
    const auto cache = (dir / "cache").string();
    write(dir / "soc.dtsi", "/ { soc {}; };\n");
    write(dir / "x.dts", "/dts-v1/;\n#include \"soc.dtsi\"\n");
    write(dir / "y.dts", "/dts-v1/;\n/ { };\n");
    const std::vector<std::string> inputs = {(dir / "x.dts").string(), (dir / "y.dts").string()};
    const std::vector<std::string> changed = {(dir / "soc.dtsi").string()};
    TreeOptions tree;
    CHECK(inputs_affected_by(inputs, changed, tree, 0, {}, cache) ==
          std::vector<std::string>{inputs[0]});
    CHECK(inputs_affected_by(inputs, changed, tree, 0, {}, cache) ==
          std::vector<std::string>{inputs[0]}); // from the kept graph
    // x.dts replaced by a flattened tree (FDT magic): it includes nothing any more.
    std::ofstream(dir / "x.dts", std::ios::binary | std::ios::trunc)
        << std::string("\xd0\x0d\xfe\xed\0\0\0\x48", 8) << std::string(64, '\0');
    CHECK(inputs_affected_by(inputs, changed, tree, 0, {}, cache).empty());
    fs::remove_all(dir);
}

TEST_CASE("run_check with affected_by checks only the affected inputs") {
    auto dir = temp_dir("run");
    write(dir / "soc.dtsi", "/ { };\n");
    write(dir / "a.dts", "/dts-v1/;\n#include \"soc.dtsi\"\n");
    write(dir / "b.dts", "/dts-v1/;\n/ { };\n");
    CheckRequest request;
    request.inputs = {dir.string()};
    request.config.arch = "arm64";
    request.affected_by = {(dir / "soc.dtsi").string()};
    auto outcome = run_check(request);
    CHECK(outcome.inputs == 1);
    CHECK(outcome.unaffected_inputs == 1);
    REQUIRE(outcome.results.size() == 1);
    fs::remove_all(dir);
}

TEST_CASE("run_check lists the files its outcome was computed from, or says it cannot") {
    auto dir = temp_dir("sources");
    write(dir / "soc.dtsi", "/ { };\n");
    write(dir / "inc/dt.h", "#define X 1\n");
    write(dir / "a.dts", "/dts-v1/;\n#include \"soc.dtsi\"\n#include \"dt.h\"\n/ { };\n");
    write(dir / "arm64.config", "CONFIG_ARM64_4K_PAGES=y\n");
    CheckRequest request;
    request.inputs = {(dir / "a.dts").string()};
    request.config.arch = "arm64";
    request.config.config_files = {(dir / "arm64.config").string()};
    request.tree.include_dirs = {(dir / "inc").string()};
    auto outcome = run_check(request);
    REQUIRE(outcome.sources);
    CHECK(names(*outcome.sources) ==
          std::set<std::string>{"a.dts", "soc.dtsi", "dt.h", "arm64.config"});
    // dtc's /include/ is read after the preprocessor's record: not known, so not listed at all.
    write(dir / "b.dts", "/dts-v1/;\n/include/ \"soc.dtsi\"\n");
    request.inputs = {(dir / "b.dts").string()};
    CHECK_FALSE(run_check(request).sources);
    // An input that cannot be read: nothing the answer could be kept with.
    request.inputs = {(dir / "missing.dts").string()};
    CHECK_FALSE(run_check(request).sources);
    fs::remove_all(dir);
}

TEST_CASE("on the kernel's rockchip boards the affected set is what gcc's cpp -M lists") {
    const fs::path ksrc = CMALIGN_KERNEL_SRC_DIR "/linux-source-6.12";
    REQUIRE_MESSAGE(fs::exists(ksrc / "Makefile"), "scripts/kernel-sources extracts " << ksrc);
    const auto dts_dir = ksrc / "arch/arm64/boot/dts/rockchip";
    std::vector<std::string> inputs;
    for (const auto& e : fs::directory_iterator(dts_dir))
        if (e.path().extension() == ".dts") inputs.push_back(e.path().string());
    std::sort(inputs.begin(), inputs.end());
    REQUIRE(inputs.size() > 100);
    TreeOptions tree;
    tree.kernel_tree = ksrc.string();

    // A nested SoC .dtsi (board → rk3399.dtsi → rk3399-base.dtsi) and a header reached through
    // scripts/dtc/include-prefixes/dt-bindings (a symlink to include/dt-bindings).
    const std::vector<fs::path> changed = {dts_dir / "rk3399-base.dtsi",
                                           ksrc / "include/dt-bindings/clock/rk3399-cru.h"};
    std::vector<std::string> deps; // per input: gcc's dependency list, canonical paths
    for (const auto& input : inputs) {
        // The kernel's dtc_cpp_flags (scripts/Makefile.dtbs, 6.12), dependencies only.
        deps.push_back(run("cd " + ksrc.string() +
                           " && cpp -nostdinc -I scripts/dtc/include-prefixes -undef -D__DTS__ "
                           "-x assembler-with-cpp -M " +
                           input +
                           " 2>/dev/null | tr ' \\\\' '\\n\\n' | grep . | "
                           "xargs -r realpath -e 2>/dev/null"));
    }
    for (const auto& file : changed) {
        auto got = inputs_affected_by(inputs, {file.string()}, tree);
        std::set<std::string> want;
        for (std::size_t i = 0; i < inputs.size(); ++i)
            if (deps[i].find(fs::canonical(file).string() + "\n") != std::string::npos)
                want.insert(inputs[i]);
        INFO(file);
        CHECK(want.size() > 5); // the comparison means something
        CHECK(want.size() < inputs.size());
        CHECK(std::set<std::string>(got.begin(), got.end()) == want);
    }
}

TEST_CASE("the boards preprocessed to learn their includes leave them in the cache the check "
          "reads") {
    // run_check hands its dt::FileCache to the affected pass: an include preprocessed there is
    // replayed, not preprocessed again, when the affected board is checked.
    auto dir = temp_dir("shared");
    write(dir / "soc.dtsi", "#define SOC_BASE 0x80000000\n/ { soc { reg = <SOC_BASE>; }; };\n");
    write(dir / "a.dts", "/dts-v1/;\n#include \"soc.dtsi\"\n");
    write(dir / "b.dts", "/dts-v1/;\n/ { };\n");
    const std::vector<std::string> inputs = {(dir / "a.dts").string(), (dir / "b.dts").string()};
    dt::FileCache cache;
    CHECK(detail::inputs_affected_by(inputs, {(dir / "soc.dtsi").string()}, TreeOptions{}, 1, {},
                                     "", cache) == std::vector<std::string>{inputs[0]});
    const auto soc = cache.load((dir / "soc.dtsi").string());
    REQUIRE(soc != nullptr);
    CHECK(cache.include_memos(soc.get()).size() == 1);
    // The control: a cache no pass has used holds no memo for it.
    dt::FileCache fresh;
    const auto unread = fresh.load((dir / "soc.dtsi").string());
    REQUIRE(unread != nullptr);
    CHECK(fresh.include_memos(unread.get()).empty());
    fs::remove_all(dir);
}

TEST_CASE("dtc's /include/ on the 6.12 arm64 boards: exactly the boards that read the file" *
          CMALIGN_REAL_MATERIAL(CMALIGN_KERNEL_SRC_DIR "/linux-source-6.12/Makefile")) {
    const fs::path ksrc = CMALIGN_KERNEL_SRC_DIR "/linux-source-6.12";
    if (!test::have_material(ksrc / "Makefile") || !test::have_program("dtc") ||
        !test::have_program("cpp"))
        return;
    // apm, cavium and amd hold the five boards that use /include/ (amd's nested: the SoC .dtsi
    // /include/s its clocks); arm's boards use only #include.
    std::vector<std::string> inputs;
    for (const char* dir : {"apm", "cavium", "amd", "arm"})
        for (const auto& e : fs::directory_iterator(ksrc / "arch/arm64/boot/dts" / dir))
            if (e.path().extension() == ".dts") inputs.push_back(e.path().string());
    std::sort(inputs.begin(), inputs.end());
    REQUIRE(inputs.size() > 15);
    TreeOptions tree;
    tree.kernel_tree = ksrc.string();

    // What the kernel's build reads for each board: cpp's dependencies (-M) and dtc's (-d) on
    // cpp's output, with the board's directory as dtc's -i, as scripts/Makefile.dtbs runs them.
    std::vector<std::string> deps;
    const std::string pp =
        (fs::temp_directory_path() / ("cmalign-affected-pp" + std::to_string(getpid()) + ".dts"))
            .string();
    for (const auto& input : inputs) {
        const std::string cpp =
            "cpp -nostdinc -I scripts/dtc/include-prefixes -undef -D__DTS__ -x assembler-with-cpp ";
        deps.push_back(run("cd " + ksrc.string() + " && { " + cpp + "-M " + input + "; " + cpp +
                           "-P " + input + " -o " + pp + " && dtc -q -d /dev/stdout -i " +
                           fs::path(input).parent_path().string() + " -I dts -O dtb -o /dev/null " +
                           pp + "; } 2>/dev/null | " +
                           "tr ' \\\\' '\\n\\n' | grep . | xargs -r realpath -e 2>/dev/null"));
    }
    fs::remove(pp);
    auto wanted = [&](const fs::path& file) {
        std::set<std::string> want;
        for (std::size_t i = 0; i < inputs.size(); ++i)
            if (deps[i].find(fs::canonical(file).string() + "\n") != std::string::npos)
                want.insert(fs::path(inputs[i]).filename().string());
        return want;
    };
    const auto dts = ksrc / "arch/arm64/boot/dts";
    const std::vector<std::pair<fs::path, std::set<std::string>>> cases = {
        {dts / "amd/amd-seattle-clks.dtsi",
         {"amd-overdrive-rev-b0.dts", "amd-overdrive-rev-b1.dts"}},
        {dts / "amd/amd-seattle-xgbe-b.dtsi",
         {"amd-overdrive-rev-b0.dts", "amd-overdrive-rev-b1.dts"}},
        {dts / "apm/apm-storm.dtsi", {"apm-mustang.dts"}},
        {dts / "apm/apm-shadowcat.dtsi", {"apm-merlin.dts"}},
        {dts / "cavium/thunder-88xx.dtsi", {"thunder-88xx.dts"}},
        {dts / "cavium/thunder2-99xx.dtsi", {"thunder2-99xx.dts"}},
        {ksrc / "Documentation/devicetree/bindings/reserved-memory/reserved-memory.txt", {}},
    };
    // Named, not structured bindings: clang 14 cannot capture those in doctest's lambdas.
    for (const auto& item : cases) {
        const fs::path& file = item.first;
        const std::set<std::string>& expected = item.second;
        INFO(file);
        CHECK(wanted(file) == expected); // the build's own record says the same
        CHECK(names(inputs_affected_by(inputs, {file.string()}, tree)) == expected);
    }
}
