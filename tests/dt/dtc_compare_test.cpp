// The resolved tree against what cpp + dtc build, on the kernel's own boards.
//
// For each board: gcc's cpp and the installed dtc make a DTB exactly as scripts/Makefile.dtbs
// does; our tree is built from the same source (built-in preprocessor via load_dts, and also from
// the cpp output through the line-marker path) and compared node by node, property by property,
// byte by byte — phandle numbers included, since they are assigned in dtc's order.
//
// By default a sample of ~30 boards runs (SKIPs without the kernel tree, cpp or dtc).
// tests/differential/compare-dtc.sh runs every board: CMALIGN_DTC_COMPARE=all (or a comma list of
// arches), CMALIGN_DTC_JOBS=N, CMALIGN_DTC_SOURCE=cpp|builtin|both (default both), CMALIGN_DTC=<dtc
// program> (default: dtc on PATH; the kernel's own scripts/dtc accepts label-relative paths
// &{label/path} that dtc 1.6 rejects).
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <sys/resource.h>
#include <thread>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cmalign/internal/dt/dts.hpp"
#include "cmalign/internal/dt/write.hpp"
#include "cmalign/internal/run_inputs.hpp"
#include "cmalign/run.hpp"

extern "C" {
#include <libfdt.h>
}

using namespace cmalign;
using namespace cmalign::dt;
namespace fs = std::filesystem;

namespace {

// The tree the whole-tree comparison reads: linux-source-6.12, or CMALIGN_DTC_TREE (a tree name
// under CMALIGN_KERNEL_SRC_DIR, e.g. linux-source-7.2) from tests/differential/compare-dtc.sh.
std::string compared_tree() {
    const char* name = std::getenv("CMALIGN_DTC_TREE");
    return std::string(CMALIGN_KERNEL_SRC_DIR) + "/" +
           (name && *name ? std::string(name) : std::string("linux-source-6.12"));
}
const std::string kernel_root = compared_tree();

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct BoardResult {
    std::string board;
    std::string arch;
    bool dtc_ok = false;
    bool ours_ok_cpp = false;     // our parse of cpp's output succeeded
    bool ours_ok_builtin = false; // load_dts succeeded
    bool equal_cpp = false;       // ... and equals dtc's tree
    bool equal_builtin = false;
    std::string difference; // first difference or error
    std::string our_error;  // when dtc failed: what we said, if anything
    double cpu_cpp_in = 0;  // thread CPU seconds of our parse+resolve alone
    double cpu_builtin = 0; // of load_dts alone
};

// Seconds for a whole phase: wall clock, and CPU time (immune to other load on the machine;
// for cpp+dtc that of the child processes, for us that of this process).
struct Phase {
    double wall = 0;
    double cpu = 0;
};
struct Timing {
    Phase dtc;     // cpp + dtc
    Phase cpp_in;  // our parse+resolve of cpp's output
    Phase builtin; // our preprocess+parse+resolve
};

double thread_cpu() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double cpu_seconds(int who) {
    rusage u{};
    getrusage(who, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Compares our node with the DTB node at `offset`; appends the first difference to `diff`.
bool same_node(const void* fdt, int offset, const Node& node, const std::string& path,
               std::string& diff) {
    // properties, in order
    std::size_t i = 0;
    int prop = 0;
    fdt_for_each_property_offset(prop, fdt, offset) {
        const char* name = nullptr;
        int len = 0;
        const void* data = fdt_getprop_by_offset(fdt, prop, &name, &len);
        if (i >= node.properties.size()) {
            diff = fmt::format("{}: dtc has extra property '{}'", path, name);
            return false;
        }
        const Property& p = node.properties[i++];
        if (p.name != name) {
            diff = fmt::format("{}: property #{} is '{}', dtc has '{}'", path, i, p.name, name);
            return false;
        }
        const auto* bytes = static_cast<const std::uint8_t*>(data);
        if (p.value.size() != static_cast<std::size_t>(len) ||
            !std::equal(p.value.begin(), p.value.end(), bytes)) {
            std::vector<std::uint8_t> theirs(bytes, bytes + len);
            diff = fmt::format("{}:{}: value {} but dtc has {}", path, p.name,
                               to_hex(p.value).substr(0, 96), to_hex(theirs).substr(0, 96));
            return false;
        }
    }
    if (i != node.properties.size()) {
        diff = fmt::format("{}: extra property '{}' (not in dtc's output)", path,
                           node.properties[i].name);
        return false;
    }
    std::size_t c = 0;
    int child = 0;
    fdt_for_each_subnode(child, fdt, offset) {
        const char* name = fdt_get_name(fdt, child, nullptr);
        if (c >= node.children.size()) {
            diff = fmt::format("{}: dtc has extra node '{}'", path, name);
            return false;
        }
        const Node& n = node.children[c++];
        if (n.name != name) {
            diff = fmt::format("{}: child #{} is '{}', dtc has '{}'", path, c, n.name, name);
            return false;
        }
        if (!same_node(fdt, child, n, path == "/" ? "/" + n.name : path + "/" + n.name, diff))
            return false;
    }
    if (c != node.children.size()) {
        diff =
            fmt::format("{}: extra node '{}' (not in dtc's output)", path, node.children[c].name);
        return false;
    }
    return true;
}

bool same_tree(const std::string& dtb, const Tree& tree, std::string& diff) {
    const void* fdt = dtb.data();
    if (fdt_check_header(fdt) != 0) {
        diff = "dtc output is not a valid DTB";
        return false;
    }
    if (static_cast<std::size_t>(fdt_num_mem_rsv(fdt)) != tree.memreserve.size()) {
        diff = fmt::format("{} /memreserve/ entries, dtc has {}", tree.memreserve.size(),
                           fdt_num_mem_rsv(fdt));
        return false;
    }
    for (int i = 0; i < fdt_num_mem_rsv(fdt); ++i) {
        uint64_t a = 0, s = 0;
        fdt_get_mem_rsv(fdt, i, &a, &s);
        if (a != tree.memreserve[static_cast<std::size_t>(i)].address ||
            s != tree.memreserve[static_cast<std::size_t>(i)].size) {
            diff = fmt::format("/memreserve/ #{} differs", i);
            return false;
        }
    }
    if (fdt_boot_cpuid_phys(fdt) != tree.boot_cpuid) {
        diff =
            fmt::format("boot cpuid {} but dtc has {}", tree.boot_cpuid, fdt_boot_cpuid_phys(fdt));
        return false;
    }
    return same_node(fdt, 0, tree.root, "/", diff);
}

struct Mode {
    bool cpp_path = true;
    bool builtin_path = true;
};

// Phase 1: cpp + dtc as scripts/Makefile.dtbs does (without -b 0, so dtc guesses the boot
// cpu as we do). Leaves <work>/<i>.i and <i>.dtb.
std::string dtc_program() {
    const char* d = std::getenv("CMALIGN_DTC");
    return d && *d ? d : "dtc";
}

bool run_dtc(const fs::path& dts, const fs::path& work, std::size_t i) {
    const std::string prefixes = kernel_root + "/scripts/dtc/include-prefixes";
    const fs::path pre = work / fmt::format("{}.i", i);
    const fs::path dtb = work / fmt::format("{}.dtb", i);
    const std::string cmd = fmt::format(
        "cpp -nostdinc -I '{}' -undef -D__DTS__ -x assembler-with-cpp -o '{}' '{}' 2>/dev/null && "
        "'{}' -q -O dtb -o '{}' -i '{}' -i '{}' '{}' 2>/dev/null",
        prefixes, pre.string(), dts.string(), dtc_program(), dtb.string(),
        dts.parent_path().string(), prefixes, pre.string());
    return std::system(cmd.c_str()) == 0 && fs::exists(dtb);
}

// Phase 2a: our parser on cpp's own output (line markers give the original locations).
void ours_on_cpp_output(const fs::path& dts, const fs::path& work, std::size_t i, FileCache& cache,
                        BoardResult& r) {
    const std::string prefixes = kernel_root + "/scripts/dtc/include-prefixes";
    const fs::path pre = work / fmt::format("{}.i", i);
    const std::string text = read_file(pre);
    Preprocessed pp = identity(make_source(pre.string(), text));
    ParseOptions po;
    po.include_dirs = {dts.parent_path().string(), prefixes};
    Diagnostics diags;
    const double c0 = thread_cpu();
    auto file = parse(pp, po, cache, diags);
    std::optional<Tree> tree;
    if (file) tree = resolve(*file, diags);
    r.cpu_cpp_in = thread_cpu() - c0;
    r.ours_ok_cpp = tree.has_value();
    if (!r.dtc_ok) {
        if (!diags.items().empty()) r.our_error = format_gcc(diags.items().front());
        return;
    }
    std::string diff;
    if (!tree)
        diff = diags.items().empty() ? "failed" : format_gcc(diags.items().front());
    else
        r.equal_cpp = same_tree(read_file(work / fmt::format("{}.dtb", i)), *tree, diff);
    if (!r.equal_cpp) r.difference = "[cpp output] " + diff;
}

// Phase 2b: the built-in preprocessor, parse and resolve (what `cmalign check` does).
void ours_builtin(const fs::path& dts, const fs::path& work, std::size_t i, FileCache& cache,
                  BoardResult& r) {
    PreprocessOptions opts;
    opts.include_dirs = {kernel_root + "/scripts/dtc/include-prefixes"};
    Diagnostics diags;
    const double c0 = thread_cpu();
    auto tree = load_dts(dts.string(), opts, cache, diags);
    r.cpu_builtin = thread_cpu() - c0;
    r.ours_ok_builtin = tree.has_value();
    if (!r.dtc_ok) {
        if (r.our_error.empty() && !diags.items().empty())
            r.our_error = format_gcc(diags.items().front());
        return;
    }
    std::string diff;
    if (!tree)
        diff = diags.items().empty() ? "failed" : format_gcc(diags.items().front());
    else
        r.equal_builtin = same_tree(read_file(work / fmt::format("{}.dtb", i)), *tree, diff);
    if (!r.equal_builtin && r.difference.empty()) r.difference = "[built-in cpp] " + diff;
}

std::vector<std::pair<fs::path, std::string>> boards(const std::vector<std::string>& arches) {
    std::vector<std::pair<fs::path, std::string>> out;
    for (const auto& arch : arches) {
        std::vector<fs::path> found;
        const fs::path dir = fs::path(kernel_root) / "arch" / arch / "boot/dts";
        if (!fs::is_directory(dir)) continue;
        for (const auto& e : fs::recursive_directory_iterator(dir))
            if (e.is_regular_file() &&
                (e.path().extension() == ".dts" || e.path().extension() == ".dtso"))
                found.push_back(e.path());
        std::sort(found.begin(), found.end());
        for (auto& f : found)
            out.emplace_back(f, arch);
    }
    return out;
}

template <typename F> Phase parallel(std::size_t n, unsigned jobs, int who, F&& f) {
    std::atomic<std::size_t> next{0};
    const double cpu0 = cpu_seconds(who);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (unsigned j = 0; j < jobs; ++j)
        threads.emplace_back([&] {
            for (std::size_t i; (i = next++) < n;)
                f(i);
        });
    for (auto& t : threads)
        t.join();
    return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
            cpu_seconds(who) - cpu0};
}

std::vector<BoardResult> run_all(const std::vector<std::pair<fs::path, std::string>>& list,
                                 unsigned jobs, const Mode& mode, Timing& timing) {
    std::vector<BoardResult> results(list.size());
    const fs::path work =
        fs::temp_directory_path() / fmt::format("cmalign-dtc-{}", static_cast<long>(getpid()));
    fs::create_directories(work);
    for (std::size_t i = 0; i < list.size(); ++i) {
        results[i].board = fs::relative(list[i].first, kernel_root).string();
        results[i].arch = list[i].second;
    }
    timing.dtc = parallel(list.size(), jobs, RUSAGE_CHILDREN, [&](std::size_t i) {
        results[i].dtc_ok = run_dtc(list[i].first, work, i);
    });
    if (mode.cpp_path) {
        FileCache cache;
        timing.cpp_in = parallel(list.size(), jobs, RUSAGE_SELF, [&](std::size_t i) {
            ours_on_cpp_output(list[i].first, work, i, cache, results[i]);
        });
    }
    if (mode.builtin_path) {
        FileCache cache; // shared by every board, as a bulk `check` shares it
        timing.builtin = parallel(list.size(), jobs, RUSAGE_SELF, [&](std::size_t i) {
            ours_builtin(list[i].first, work, i, cache, results[i]);
        });
    }
    fs::remove_all(work);
    return results;
}

bool environment_ready() {
    return cmalign::test::have_material(kernel_root + "/arch") &&
           cmalign::test::have_program("cpp") && cmalign::test::have_program(dtc_program().c_str());
}

Mode mode_from_env() {
    Mode m;
    if (const char* s = std::getenv("CMALIGN_DTC_SOURCE")) {
        std::string v = s;
        m.cpp_path = v == "cpp" || v == "both";
        m.builtin_path = v == "builtin" || v == "both";
    }
    return m;
}

void report(const std::vector<BoardResult>& results, const Mode& mode, const Timing& timing,
            std::size_t max_diffs) {
    std::map<std::string, std::array<std::size_t, 4>> per_arch; // total, dtc ok, cpp eq, builtin eq
    std::size_t shown = 0;
    for (const auto& r : results) {
        auto& a = per_arch[r.arch];
        ++a[0];
        if (r.dtc_ok) ++a[1];
        if (r.equal_cpp) ++a[2];
        if (r.equal_builtin) ++a[3];
        if (r.dtc_ok && !r.difference.empty() && shown < max_diffs) {
            ++shown;
            MESSAGE(r.board << ": " << r.difference);
        }
        if (!r.dtc_ok)
            MESSAGE(r.board << ": dtc fails; ours: "
                            << ((mode.cpp_path && r.ours_ok_cpp) ||
                                        (mode.builtin_path && r.ours_ok_builtin)
                                    ? std::string("accepted")
                                    : "rejected: " + r.our_error));
    }
    for (const auto& [arch, a] : per_arch) {
        std::string line = fmt::format("{}: {} boards, dtc built {}", arch, a[0], a[1]);
        if (mode.cpp_path)
            line += fmt::format("; equal (our parser on cpp output) {}/{}", a[2], a[1]);
        if (mode.builtin_path)
            line += fmt::format("; equal (built-in preprocessor) {}/{}", a[3], a[1]);
        MESSAGE(line);
    }
    const double n = static_cast<double>(std::max<std::size_t>(results.size(), 1));
    double own_cpp_in = 0;
    double own_builtin = 0;
    for (const auto& r : results) {
        own_cpp_in += r.cpu_cpp_in;
        own_builtin += r.cpu_builtin;
    }
    auto line = [&](const char* what, double dtc, double cpp_in, double builtin) {
        MESSAGE(fmt::format("{} per board: cpp+dtc {:.2f} ms; our parse+resolve of cpp output "
                            "{:.2f} ms; our preprocess+parse+resolve {:.2f} ms => {:.1f}x "
                            "faster than cpp+dtc",
                            what, 1000 * dtc / n, 1000 * cpp_in / n, 1000 * builtin / n,
                            builtin > 0 ? dtc / builtin : 0.0));
    };
    line("wall time", timing.dtc.wall, timing.cpp_in.wall, timing.builtin.wall);
    line("CPU time", timing.dtc.cpu, timing.cpp_in.cpu, timing.builtin.cpu);
    // The phases above also read dtc's DTB and compare; this is the load alone.
    line("CPU time without the comparison", timing.dtc.cpu, own_cpp_in, own_builtin);
}

} // namespace

TEST_CASE("dts vs dtc: a sample of the kernel's boards build the same tree" *
          CMALIGN_REAL_MATERIAL(kernel_root)) {
    if (std::getenv("CMALIGN_DTC_COMPARE")) {
        MESSAGE("sample skipped: the full comparison runs instead");
        return;
    }
    if (!environment_ready()) return;
    std::vector<std::pair<fs::path, std::string>> sample;
    for (const auto& [arch, count] : std::vector<std::pair<std::string, std::size_t>>{
             {"arm64", 12}, {"arm", 12}, {"riscv", 6}}) {
        auto all = boards({arch});
        if (all.empty()) continue;
        const std::size_t step = std::max<std::size_t>(1, all.size() / count);
        for (std::size_t i = step / 2; i < all.size() && sample.size() < 1000; i += step)
            sample.push_back(all[i]);
        // and a few overlays (/plugin/: fragments, __fixups__, __local_fixups__)
        std::size_t overlays = 0;
        for (const auto& b : all)
            if (b.first.extension() == ".dtso" && overlays++ < 2) sample.push_back(b);
    }
    Mode mode = mode_from_env();
    Timing timing;
    auto results = run_all(sample, 2, mode, timing);
    report(results, mode, timing, 10);
    for (const auto& r : results) {
        CAPTURE(r.board);
        CAPTURE(r.difference);
        REQUIRE(r.dtc_ok);
        if (mode.cpp_path) CHECK(r.equal_cpp);
        if (mode.builtin_path) CHECK(r.equal_builtin);
    }
}

namespace {

// CMALIGN_DTC_COMPARE: "all" (or "1") or a comma-separated list of arches.
std::vector<std::string> arches_to_compare(const std::string& what) {
    if (what == "all" || what == "1") return {"arm64", "arm", "riscv"};
    std::vector<std::string> arches;
    std::stringstream ss(what);
    for (std::string a; std::getline(ss, a, ',');)
        arches.push_back(a);
    return arches;
}

// CMALIGN_DTC_JOBS, default all cores.
unsigned compare_jobs() {
    if (const char* j = std::getenv("CMALIGN_DTC_JOBS")) return static_cast<unsigned>(std::atoi(j));
    return std::max(1u, std::thread::hardware_concurrency());
}

} // namespace

TEST_CASE("dts vs dtc: every board (CMALIGN_DTC_COMPARE=all|arm64,arm,...)" *
          CMALIGN_REAL_MATERIAL(kernel_root)) {
    const char* what = std::getenv("CMALIGN_DTC_COMPARE");
    if (!what) return;
    if (!environment_ready()) return;
    auto arches = arches_to_compare(what);
    unsigned jobs = compare_jobs();
    Mode mode = mode_from_env();
    Timing timing;
    auto results = run_all(boards(arches), std::max(1u, jobs), mode, timing);
    report(results, mode, timing, 25);
    std::size_t bad = 0;
    for (const auto& r : results)
        if (r.dtc_ok &&
            ((mode.cpp_path && !r.equal_cpp) || (mode.builtin_path && !r.equal_builtin)))
            ++bad;
    CHECK(bad == 0);
}

// ---------------------------------------------------------------------------------------------
// Overlays: every composite DTB of the kernel's Makefiles (`name-dtbs := base.dtb a.dtbo ...`)
// built as Kbuild builds it (base with dtc -@, overlays without, then fdtoverlay) and compared
// with our base + --overlay tree, from the DTS sources and from the same DTB/DTBO blobs.

namespace {

struct Composite {
    fs::path dir;
    std::string name;
    fs::path base;                  // .dts
    std::vector<fs::path> overlays; // .dtso
};

std::vector<Composite> composites(const std::vector<std::string>& arches) {
    std::vector<Composite> out;
    for (const auto& arch : arches) {
        const fs::path root = fs::path(kernel_root) / "arch" / arch / "boot/dts";
        if (!fs::is_directory(root)) continue;
        std::vector<fs::path> makefiles;
        for (const auto& e : fs::recursive_directory_iterator(root))
            if (e.is_regular_file() && e.path().filename() == "Makefile")
                makefiles.push_back(e.path());
        std::sort(makefiles.begin(), makefiles.end());
        for (const auto& mk : makefiles) {
            std::string text = read_file(mk);
            // Join continuation lines.
            std::string joined;
            for (std::size_t i = 0; i < text.size(); ++i) {
                if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
                    joined += ' ';
                    ++i;
                } else {
                    joined += text[i];
                }
            }
            std::stringstream lines(joined);
            for (std::string line; std::getline(lines, line);) {
                auto assign = line.find(":=");
                auto dtbs = line.find("-dtbs");
                if (assign == std::string::npos || dtbs == std::string::npos || dtbs > assign)
                    continue;
                Composite c;
                c.dir = mk.parent_path();
                c.name = line.substr(0, dtbs);
                std::stringstream words(line.substr(assign + 2));
                bool ok = true;
                for (std::string w; words >> w;) {
                    fs::path p = c.dir / w;
                    if (w.size() > 4 && w.ends_with(".dtb") && c.base.empty())
                        c.base = p.replace_extension(".dts");
                    else if (w.ends_with(".dtbo"))
                        c.overlays.push_back(p.replace_extension(".dtso"));
                    else
                        ok = false;
                }
                ok = ok && !c.base.empty() && !c.overlays.empty() && fs::exists(c.base) &&
                     std::all_of(c.overlays.begin(), c.overlays.end(),
                                 [](const fs::path& p) { return fs::exists(p); });
                if (ok) out.push_back(std::move(c));
            }
        }
    }
    return out;
}

struct OverlayResult {
    std::string name;
    bool fdtoverlay_ok = false;
    bool equal_dts = false;  // base.dts + overlays .dtso
    bool equal_blob = false; // base.dtb + overlays .dtbo (the same blobs fdtoverlay read)
    std::string difference;
};

// CMALIGN_FDTOVERLAY: the fdtoverlay to compare with (default: fdtoverlay on PATH; Kbuild uses
// the kernel's own scripts/dtc/fdtoverlay, libfdt 1.7).
std::string fdtoverlay_program() {
    const char* d = std::getenv("CMALIGN_FDTOVERLAY");
    return d && *d ? d : "fdtoverlay";
}

bool compile(const fs::path& src, const fs::path& out, bool symbols) {
    const std::string prefixes = kernel_root + "/scripts/dtc/include-prefixes";
    const std::string cmd = fmt::format(
        "cpp -nostdinc -I '{0}' -undef -D__DTS__ -x assembler-with-cpp -o '{1}.i' '{2}' "
        "2>/dev/null && '{3}' -q {4} -O dtb -o '{1}' -i '{5}' -i '{0}' '{1}.i' 2>/dev/null",
        prefixes, out.string(), src.string(), dtc_program(), symbols ? "-@" : "",
        src.parent_path().string());
    return std::system(cmd.c_str()) == 0 && fs::exists(out);
}

// Which libfdt the fdtoverlay under test has: "Version: DTC 1.6.1" overwrites a base node's
// phandle, 1.7.0 keeps it.
OverlayOptions libfdt_of_fdtoverlay() {
    OverlayOptions o;
    std::string cmd = "'" + fdtoverlay_program() + "' --version 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string text;
    char buffer[256];
    if (pipe) {
        while (fgets(buffer, sizeof buffer, pipe))
            text += buffer;
        pclose(pipe);
    }
    int major = 0, minor = 0;
    auto at = text.find("DTC ");
    if (at != std::string::npos) std::sscanf(text.c_str() + at + 4, "%d.%d", &major, &minor);
    o.keep_target_phandles = major > 1 || (major == 1 && minor >= 7);
    return o;
}

OverlayResult compare_composite(const Composite& c, const fs::path& work,
                                const OverlayOptions& libfdt) {
    OverlayResult r;
    r.name = fs::relative(c.dir, kernel_root).string() + "/" + c.name;
    fs::create_directories(work);
    const fs::path base_dtb = work / "base.dtb";
    std::vector<fs::path> dtbos;
    bool built = compile(c.base, base_dtb, true);
    for (std::size_t i = 0; built && i < c.overlays.size(); ++i) {
        dtbos.push_back(work / fmt::format("{}.dtbo", i));
        built = compile(c.overlays[i], dtbos.back(), false);
    }
    const fs::path merged = work / "merged.dtb";
    std::string cmd = fmt::format("'{}' -i '{}' -o '{}'", fdtoverlay_program(), base_dtb.string(),
                                  merged.string());
    for (const auto& o : dtbos)
        cmd += " '" + o.string() + "'";
    r.fdtoverlay_ok = built && std::system((cmd + " 2>/dev/null").c_str()) == 0;
    if (!r.fdtoverlay_ok) return r;
    const std::string expected = read_file(merged);

    FileCache cache;
    PreprocessOptions pp;
    pp.include_dirs = {kernel_root + "/scripts/dtc/include-prefixes"};
    auto ours = [&](const fs::path& base, const std::vector<fs::path>& overlays, bool& equal,
                    const char* what) {
        Diagnostics diags;
        std::vector<std::string> names;
        for (const auto& o : overlays)
            names.push_back(o.string());
        auto loaded = cmalign::detail::load_overlays(names, pp, cache, diags);
        std::optional<Tree> tree;
        if (loaded)
            tree =
                cmalign::detail::load_board(base.string(), pp, cache, diags, {}, *loaded, libfdt);
        std::string diff;
        if (!tree || diags.has_errors())
            diff = diags.items().empty() ? "failed" : format_gcc(diags.items().front());
        else
            equal = same_tree(expected, *tree, diff);
        if (!equal && r.difference.empty()) r.difference = fmt::format("[{}] {}", what, diff);
    };
    ours(c.base, c.overlays, r.equal_dts, "dts");
    ours(base_dtb, dtbos, r.equal_blob, "dtb");
    return r;
}

void compare_overlays(const std::vector<Composite>& list, unsigned jobs, std::size_t& equal_dts,
                      std::size_t& equal_blob, std::size_t& built) {
    const fs::path work =
        fs::temp_directory_path() / fmt::format("cmalign-ovl-{}", static_cast<long>(getpid()));
    std::vector<OverlayResult> results(list.size());
    const auto libfdt = libfdt_of_fdtoverlay();
    MESSAGE(fmt::format("fdtoverlay: {} (libfdt {})", fdtoverlay_program(),
                        libfdt.keep_target_phandles ? ">= 1.7" : "< 1.7"));
    parallel(list.size(), jobs, RUSAGE_CHILDREN, [&](std::size_t i) {
        results[i] = compare_composite(list[i], work / std::to_string(i), libfdt);
    });
    fs::remove_all(work);
    equal_dts = equal_blob = built = 0;
    for (const auto& r : results) {
        if (!r.fdtoverlay_ok) {
            MESSAGE(r.name << ": cpp/dtc/fdtoverlay failed");
            continue;
        }
        ++built;
        if (r.equal_dts) ++equal_dts;
        if (r.equal_blob) ++equal_blob;
        if (!r.equal_dts || !r.equal_blob) MESSAGE(r.name << ": " << r.difference);
    }
    MESSAGE(
        fmt::format("overlays: {} composites, fdtoverlay built {}; equal from .dts+.dtso {}/{}, "
                    "from .dtb+.dtbo {}/{}",
                    list.size(), built, equal_dts, built, equal_blob, built));
}

bool fdtoverlay_ready() {
    if (!environment_ready()) return false;
    return cmalign::test::have_program(fdtoverlay_program().c_str());
}

} // namespace

TEST_CASE("overlays vs fdtoverlay: a sample of the kernel's composite DTBs merge the same") {
    if (std::getenv("CMALIGN_DTC_COMPARE")) {
        MESSAGE("sample skipped: the full comparison runs instead");
        return;
    }
    if (!fdtoverlay_ready()) return;
    auto all = composites({"arm64"});
    REQUIRE(all.size() > 20); // the 6.12 arm64 Makefiles list ~80
    std::vector<Composite> sample;
    for (std::size_t i = 0; i < all.size(); i += all.size() / 8)
        sample.push_back(all[i]);
    std::size_t eq_dts = 0, eq_blob = 0, built = 0;
    compare_overlays(sample, 2, eq_dts, eq_blob, built);
    CHECK(built == sample.size());
    CHECK(eq_dts == built);
    CHECK(eq_blob == built);
}

TEST_CASE("overlays vs fdtoverlay: every composite DTB (CMALIGN_DTC_COMPARE=all|arm64,...)") {
    const char* what = std::getenv("CMALIGN_DTC_COMPARE");
    if (!what) return;
    if (!fdtoverlay_ready()) return;
    auto arches = arches_to_compare(what);
    unsigned jobs = compare_jobs();
    std::size_t eq_dts = 0, eq_blob = 0, built = 0;
    compare_overlays(composites(arches), jobs, eq_dts, eq_blob, built);
    CHECK(eq_dts == built);
    CHECK(eq_blob == built);
}
