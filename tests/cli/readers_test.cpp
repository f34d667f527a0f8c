// Every reader bounded the same way: logs under file-bytes/line-bytes, devices and
// named FIFOs read to their current end, anonymous pipes to their writer's end, binary junk one
// located error, an error cap per input, and the configurations users have (/proc/config.gz,
// .xz, .zst, a kernel image with IKCONFIG) read as the text they hold.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli.hpp"
#include "support/material.hpp"

namespace fs = std::filesystem;
using cli_test::read_file;
using cli_test::run_cli;
using cmalign::test::have_material;
using cmalign::test::have_program;
using cmalign::test::run_shell;

namespace {

struct Scratch {
    fs::path dir;
    explicit Scratch(const std::string& name) : dir(cli_test::temp_path("readers-" + name)) {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~Scratch() { fs::remove_all(dir); }
    std::string path(const std::string& name) const { return (dir / name).string(); }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(dir / name, std::ios::binary) << text;
        return path(name);
    }
    std::string err() const { return path("stderr"); }
};

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

const std::string board = std::string(CMALIGN_SOURCE_DIR) + "/examples/boards/seed-board.dts";
const std::string log = std::string(CMALIGN_SOURCE_DIR) + "/examples/logs/seed-board-16k.dmesg";
const std::string defconfig =
    std::string(CMALIGN_KERNEL_SRC_DIR) + "/linux-source-6.12/arch/arm64/configs/defconfig";

} // namespace

TEST_CASE("-c reads gzip, xz and zstd configurations as the text they hold") {
    if (!have_material(defconfig, "a real defconfig to compress")) return;
    Scratch s("compressed");
    std::string plain = s.path("defconfig");
    fs::copy_file(defconfig, plain);
    auto expected = run_cli("config --arch arm64 -c '" + plain + "' --format json");
    REQUIRE(expected.exit_code == 0);
    REQUIRE(expected.out.find("\"CONFIG_ACPI\": \"y\"") != std::string::npos);
    for (const char* tool : {"gzip", "xz", "zstd"}) {
        CAPTURE(tool);
        if (!have_program(tool)) continue;
        std::string packed = s.path(std::string("config.") + tool);
        REQUIRE(run_shell(std::string(tool) + " -c '" + plain + "' > '" + packed + "'").exit_code ==
                0);
        auto run = run_cli("config --arch arm64 -c '" + packed + "' --format json", s.err());
        CAPTURE(read_file(s.err()));
        CHECK(run.exit_code == 0);
        CHECK(run.out == expected.out);
    }
    // /proc/config.gz is what a running kernel offers; the name does not matter, the bytes do.
    if (fs::exists("/proc/config.gz")) {
        auto run = run_cli("config --arch x86_64 -c /proc/config.gz --format json", s.err());
        CAPTURE(read_file(s.err()));
        CHECK(run.exit_code == 0);
        CHECK(run.out.find("\"CONFIG_") != std::string::npos);
    }
}

TEST_CASE("a kernel image built with IKCONFIG gives its configuration, compressed or not") {
    if (!have_material(defconfig, "a real defconfig to embed") || !have_program("xz")) return;
    Scratch s("ikconfig");
    std::string plain = s.path("defconfig");
    fs::copy_file(defconfig, plain);
    REQUIRE(
        run_shell("gzip -9 -c '" + plain + "' > '" + s.path("config_data.gz") + "'").exit_code ==
        0);
    // kernel/configs.c (6.12): .ascii "IKCFG_ST", .incbin "kernel/config_data.gz",
    // .ascii "IKCFG_ED", somewhere inside the image's binary data.
    std::string image(4096, '\0');
    for (std::size_t i = 0; i < image.size(); ++i)
        image[i] = static_cast<char>((i * 131) % 7 == 0 ? 0 : (i * 37) & 0xff);
    image += "IKCFG_ST" + read_file(s.path("config_data.gz")) + "IKCFG_ED";
    image += std::string(1000, '\0');
    std::string vmlinux = s.write("Image", image);
    REQUIRE(run_shell("xz -c '" + vmlinux + "' > '" + s.path("Image.xz") + "'").exit_code == 0);
    auto expected = run_cli("config --arch arm64 -c '" + plain + "' --format json");
    REQUIRE(expected.exit_code == 0);
    for (const std::string& file : {vmlinux, s.path("Image.xz")}) {
        CAPTURE(file);
        auto run = run_cli("config --arch arm64 -c '" + file + "' --format json", s.err());
        CAPTURE(read_file(s.err()));
        CHECK(run.exit_code == 0);
        CHECK(run.out == expected.out);
    }
}

TEST_CASE("binary junk is one located error, not one per line") {
    Scratch s("junk");
    std::string junk;
    for (int i = 0; i < 20000; ++i)
        junk += static_cast<char>((i * 7919) & 0xff);
    auto file = s.write("junk.config", junk);
    auto run = run_cli("calc --arch arm64 -c '" + file + "'", s.err());
    std::string err = read_file(s.err());
    CAPTURE(err);
    CHECK(run.exit_code == 2);
    CHECK(count(err, ": error: ") == 1);
    CHECK(err.find(file + ":1:1: error: not a text file: a NUL byte at offset 0") !=
          std::string::npos);
    // The same for a boot log, and for a device that never ends.
    auto log_run = run_cli("explain --arch arm64 '" + file + "' '" + board + "'", s.err());
    CHECK(log_run.exit_code == 2);
    CHECK(read_file(s.err()).find("not a text file") != std::string::npos);
    auto random =
        run_shell("timeout 20 " + std::string(CMALIGN_CLI) +
                  " explain --arch arm64 /dev/urandom '" + board + "' 2>'" + s.err() + "'");
    CHECK(random.exit_code == 2); // timeout(1) would say 124
    CHECK(count(read_file(s.err()), ": error: ") == 1);
    CHECK(read_file(s.err()).find("/dev/urandom:") != std::string::npos);
}

TEST_CASE("a FIFO and /dev/kmsg are read to their current end, never waited on") {
    Scratch s("fifo");
    std::string fifo = s.path("console");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    // The read stops at what is in the pipe now, and the answer is the one the same log gives
    // as a file.
    std::string args = " --arch arm64 -c '" + std::string(CMALIGN_SOURCE_DIR) +
                       "/examples/configs/arm64-16k.config'";
    auto from_file = run_cli("explain '" + log + "' '" + board + "'" + args);
    // The shell holds the FIFO open read-write (so opening blocks nobody), the log goes into the
    // pipe, and that writer stays open while cmalign reads.
    auto run = run_shell("exec 3<>'" + fifo + "'; cat '" + log + "' >&3; timeout 20 " +
                         std::string(CMALIGN_CLI) + " explain '" + fifo + "' '" + board + "'" +
                         args + " 2>'" + s.err() + "'");
    CAPTURE(read_file(s.err()));
    CHECK(run.exit_code != 124); // not timed out
    CHECK(run.exit_code == from_file.exit_code);
    CHECK(run.out == from_file.out);
    CHECK(run.out.find("vdec-pool") != std::string::npos); // the log's records were read
    if (!have_material("/dev/kmsg", "the kernel's log device")) return;
    auto kmsg = run_shell("timeout 20 " + std::string(CMALIGN_CLI) +
                          " explain --arch arm64 /dev/kmsg '" + board + "' 2>'" + s.err() + "'");
    CAPTURE(read_file(s.err()));
    CHECK(kmsg.exit_code != 124);
    CHECK(kmsg.exit_code <= 2);
}

TEST_CASE("an anonymous pipe is read to its writer's end, however late the writer writes") {
    Scratch s("pipe");
    // `… | cmalign … /dev/stdin`: the writer's first bytes come a second after cmalign opened
    // the pipe (a read to the pipe's current end would see an empty log and an empty config).
    std::string config = std::string(CMALIGN_SOURCE_DIR) + "/examples/configs/arm64-16k.config";
    auto from_file =
        run_cli("explain '" + log + "' '" + board + "' --arch arm64 -c '" + config + "'");
    auto late_log = run_shell("(sleep 1; cat '" + log + "') | timeout 20 " +
                              std::string(CMALIGN_CLI) + " explain /dev/stdin '" + board +
                              "' --arch arm64 -c '" + config + "' 2>'" + s.err() + "'");
    CAPTURE(read_file(s.err()));
    CHECK(late_log.exit_code == from_file.exit_code);
    CHECK(late_log.out == from_file.out);
    CHECK(late_log.out.find("vdec-pool") != std::string::npos);
    auto late_config = run_shell("(sleep 1; cat '" + config + "') | timeout 20 " +
                                 std::string(CMALIGN_CLI) + " explain '" + log + "' '" + board +
                                 "' --arch arm64 -c /dev/stdin 2>'" + s.err() + "'");
    CAPTURE(read_file(s.err()));
    CHECK(late_config.exit_code == from_file.exit_code);
    CHECK(late_config.out == from_file.out);
}

TEST_CASE("file-bytes and line-bytes bound boot logs too") {
    Scratch s("log-limits");
    std::string big;
    while (big.size() < 100000)
        big += "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd083]\n";
    auto file = s.write("big.dmesg", big);
    auto run = run_cli("explain --arch arm64 --limit file-bytes=64K '" + file + "' '" + board + "'",
                       s.err());
    CHECK(run.exit_code == 2);
    CHECK(read_file(s.err()).find(file + ": error: file is larger than 65536 bytes (--limit "
                                         "file-bytes=N raises it)") != std::string::npos);
    auto wide = s.write("wide.dmesg", std::string(5000, 'x') + "\n");
    auto line_run = run_cli(
        "explain --arch arm64 --limit line-bytes=1000 '" + wide + "' '" + board + "'", s.err());
    CHECK(line_run.exit_code == 2);
    CHECK(read_file(s.err()).find(wide + ":1:1001: error: line 1 is 5000 bytes long") !=
          std::string::npos);
}

TEST_CASE("config lines kconfig ignores are warnings, every one, never an input error") {
    // scripts/kconfig/confdata.c reads "CONFIG_BAD0 = oops" as the symbol "BAD0 " (no such
    // symbol) and ignores it: the run goes on, each line located.
    Scratch s("errors");
    std::string text;
    for (int i = 0; i < 100; ++i)
        text += "CONFIG_BAD" + std::to_string(i) + " = oops\n";
    auto file = s.write("bad.config", text);
    auto run = run_cli("calc --arch arm64 -c '" + file + "'", s.err());
    std::string err = read_file(s.err());
    CHECK(run.exit_code != 2);
    CHECK(count(err, ": error: ") == 0);
    CHECK(count(err, ": warning: kconfig reads the symbol name 'BAD") == 100);
    CHECK(err.find(file + ":100:13: warning: ") != std::string::npos);
}
