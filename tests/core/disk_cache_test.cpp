// The on-disk cache's pieces (core/disk_cache.hpp): file stamps and when a file counts as
// unchanged, entries read back only whole and with their own key, and the stat memo of a pass.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "cmalign/internal/core/disk_cache.hpp"
#include "cmalign/internal/core/text_file.hpp"

namespace fs = std::filesystem;
namespace dc = cmalign::disk_cache;

namespace {

struct Dir {
    fs::path root = fs::temp_directory_path() / ("disk-cache-" + std::to_string(::getpid()));
    Dir() { fs::create_directories(root); }
    ~Dir() { fs::remove_all(root); }
    std::string write(const std::string& name, const std::string& text) {
        auto p = root / name;
        std::ofstream(p, std::ios::trunc) << text;
        return p.string();
    }
};

std::string entry(const std::string& key, const std::vector<dc::Stamp>& stamps) {
    std::string text = "fmt\t1\n" + dc::line({"key", key});
    for (const auto& s : stamps)
        text += dc::stamp_line(s);
    return text + dc::line({"x", "payload"}) + "end\n";
}

} // namespace

TEST_CASE("disk cache: an entry reads back with its key while its files are unchanged") {
    Dir d;
    auto a = d.write("a.dtsi", "one");
    auto stamp = dc::stamp(a);
    REQUIRE(stamp);
    CHECK(stamp->racy); // written just now: compared by content from here on
    auto text = entry("k", {*stamp});
    std::vector<std::string> files;
    std::string payload;
    auto other = [&](const std::vector<std::string>& f) {
        payload = f.size() == 2 ? f[1] : "";
        return f.size() == 2 && f[0] == "x";
    };
    CHECK(dc::read_lines(text, "fmt\t1", "k", files, other));
    CHECK(files == std::vector<std::string>{a});
    CHECK(payload == "payload");
    // Another key, another format, a truncated entry: not read.
    files.clear();
    CHECK_FALSE(dc::read_lines(text, "fmt\t1", "other", files, other));
    CHECK_FALSE(dc::read_lines(text, "fmt\t2", "k", files, other));
    CHECK_FALSE(dc::read_lines(text.substr(0, text.size() - 4), "fmt\t1", "k", files, other));
    // The same size, written within the racy window: the content decides.
    d.write("a.dtsi", "two");
    CHECK_FALSE(dc::unchanged(*stamp));
    CHECK_FALSE(dc::read_lines(text, "fmt\t1", "k", files, other));
    d.write("a.dtsi", "one");
    CHECK(dc::unchanged(*stamp));
    fs::remove(a);
    CHECK_FALSE(dc::unchanged(*stamp));
}

TEST_CASE("disk cache: a stat memo looks each file up once within its pass") {
    Dir d;
    auto a = d.write("a.h", "#define A 1\n");
    auto stamp = dc::stamp(a);
    REQUIRE(stamp);
    stamp->racy = false; // compared by size and time only
    dc::StatMemo memo;
    CHECK(dc::unchanged(*stamp, &memo));
    d.write("a.h", "#define A 22\n");    // another size
    CHECK_FALSE(dc::unchanged(*stamp));  // a fresh lookup sees the change
    CHECK(dc::unchanged(*stamp, &memo)); // the pass keeps what it found first
    dc::StatMemo next_pass;
    CHECK_FALSE(dc::unchanged(*stamp, &next_pass));
}

TEST_CASE("disk cache: only a racy file is hashed; a settled one is judged by size and time") {
    Dir d;
    auto a = d.write("b.dtsi", "one");
    // Settled: its mtime well before the entry.
    fs::last_write_time(a, fs::file_time_type::clock::now() - std::chrono::hours(1));
    auto settled = dc::stamp(a);
    REQUIRE(settled);
    CHECK_FALSE(settled->racy);
    CHECK_FALSE(settled->hash); // no content read
    CHECK(dc::unchanged(*settled));
    // The line keeps "no hash" and reads back the same.
    auto line = dc::stamp_line(*settled);
    CHECK(line.find("\t-\t0\n") != std::string::npos);
    std::vector<std::string> files;
    CHECK(dc::read_lines(entry("k", {*settled}), "fmt\t1", "k", files,
                         [](const auto& f) { return f.size() == 2 && f[0] == "x"; }));
    // Touched with the same bytes: not trusted (recomputed), as make would.
    fs::last_write_time(a, fs::file_time_type::clock::now() - std::chrono::minutes(30));
    CHECK_FALSE(dc::unchanged(*settled));
    // A racy stamp without its hash is not a stamp: the entry is not read.
    auto racy = *settled;
    racy.racy = true;
    files.clear();
    CHECK_FALSE(dc::read_lines(entry("k", {racy}), "fmt\t1", "k", files,
                               [](const auto& f) { return f.size() == 2 && f[0] == "x"; }));
}

TEST_CASE("disk cache: a hit rewrites its racy stamps once they have settled, and only then") {
    Dir d;
    auto a = d.write("c.dtsi", "one");
    auto racy = dc::stamp(a);
    REQUIRE(racy);
    REQUIRE(racy->racy);
    auto file = d.root / "entry-1";
    auto text = entry("k", {*racy});
    std::ofstream(file, std::ios::binary) << text;
    auto other = [](const auto& f) { return f.size() == 2 && f[0] == "x"; };
    std::vector<std::string> files;
    // Still within the racy window: the hit leaves the entry as it is.
    CHECK(dc::read_lines(text, "fmt\t1", "k", files, other, nullptr, &file));
    CHECK(*dc::read_entry(file) == text);
    // Aged past the window (as an hour later), the same bytes: the hit keeps a plain stamp.
    fs::last_write_time(a, fs::file_time_type::clock::now() - std::chrono::hours(1));
    files.clear();
    CHECK(dc::read_lines(text, "fmt\t1", "k", files, other, nullptr, &file));
    auto settled = *dc::read_entry(file);
    CHECK(settled != text);
    CHECK(settled.find("\t-\t0\n") != std::string::npos); // no hash, not racy
    CHECK(settled.find(dc::line({"x", "payload"})) != std::string::npos);
    CHECK(settled.find(dc::line({"key", "k"})) != std::string::npos);
    files.clear();
    CHECK(dc::read_lines(settled, "fmt\t1", "k", files, other));
    CHECK(files == std::vector<std::string>{a});
    // A later write (same size) moves the mtime: the plain stamp sees it.
    d.write("c.dtsi", "two");
    files.clear();
    CHECK_FALSE(dc::read_lines(settled, "fmt\t1", "k", files, other));
    // Content that differs is never settled: the racy entry is simply not a hit.
    fs::last_write_time(a, fs::file_time_type::clock::now() - std::chrono::hours(1));
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    CHECK_FALSE(dc::read_lines(text, "fmt\t1", "k", files, other, nullptr, &file));
    CHECK(*dc::read_entry(file) == text);
}

TEST_CASE("disk cache: within a run each file is stamped once, as a reader saw it") {
    Dir d;
    auto a = d.write("k.Kconfig", "config A\n\tbool\n");
    fs::last_write_time(a, fs::file_time_type::clock::now() - std::chrono::hours(1));
    {
        cmalign::RunScope run;
        auto first = dc::stamp(a);
        REQUIRE(first);
        d.write("k.Kconfig", "config AB\n\tbool\n"); // changed within the run: still the first
        auto again = dc::stamp(a);
        REQUIRE(again);
        CHECK(again->size == first->size);
        CHECK(again->mtime_ns == first->mtime_ns);
        {
            cmalign::RunScope nested; // explain's check inside explain: the same run
            CHECK(dc::stamp(a)->size == first->size);
        }
        // A reader that had the file open gives the stamp of what it read; a racy one is
        // hashed from those bytes, not from the file as it is when the entry is written.
        const std::string read = "config AB\n\tbool\n";
        dc::note_read(a, read.size(), first->mtime_ns + 1, read);
        auto noted = dc::stamp(a);
        REQUIRE(noted);
        CHECK(noted->size == read.size());
        CHECK(noted->mtime_ns == first->mtime_ns + 1);
        CHECK(noted->racy == false);
        const std::int64_t recent = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count();
        dc::note_read(a, 3, recent, "xyz");
        auto racy = dc::stamp(a);
        REQUIRE(racy);
        CHECK(racy->racy);
        CHECK(racy->hash == dc::fnv1a("xyz"));
    }
    // The run is over: the file as it is now.
    auto after = dc::stamp(a);
    REQUIRE(after);
    CHECK(after->size == std::string("config AB\n\tbool\n").size());
    // Without a run nothing is kept.
    dc::note_read(a, 1, 1, "x");
    CHECK(dc::stamp(a)->size == after->size);
}

TEST_CASE("disk cache: only a regular file has a stamp") {
    Dir d;
    CHECK_FALSE(dc::stamp(d.root.string())); // a directory
    CHECK_FALSE(dc::stamp((d.root / "missing").string()));
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    CHECK_FALSE(dc::stamp("/proc/self/fd/" + std::to_string(fds[0]))); // a pipe
    ::close(fds[0]);
    ::close(fds[1]);
}

TEST_CASE("disk cache: fields with backslashes, tabs and line ends read back as written") {
    const std::vector<std::string> written = {
        "plain", "", "a\tb", "line\nnext\r\n", "back\\slash\\", "\\t is not a tab", "\n\t\\\r"};
    std::string text;
    for (const auto& f : written) {
        if (!text.empty()) text += '\t';
        dc::escape_to(text, f);
    }
    CHECK(text.find('\n') == std::string::npos);
    CHECK(dc::fields(text) == written);
    CHECK(dc::escape("a\tb\\") == "a\\tb\\\\");
}

TEST_CASE("disk cache: an entry is read only under its own key, escapes and all") {
    Dir d;
    auto a = d.write("key.dtsi", "k");
    auto s = dc::stamp(a);
    REQUIRE(s);
    const std::string key = "build=1\nin\tCONFIG_A\t\"x\\ty\"\r\nend";
    const std::string text = entry(key, {*s});
    auto other = [](const auto& f) { return f.size() == 2 && f[0] == "x"; };
    std::vector<std::string> files;
    CHECK(dc::read_lines(text, "fmt\t1", key, files, other));
    // Keys that differ in one escaped character, or are a prefix or an extension of it.
    for (const std::string& near : std::vector<std::string>{
             "build=1\nin\tCONFIG_A\t\"x\\ty\"\r\nenD", "build=1\nin\tCONFIG_A \"x\\ty\"\r\nend",
             "build=1\nin\tCONFIG_A\t\"x\\\\ty\"\r\nend", "build=1\nin\tCONFIG_A\t\"x\\ty\"\r\nen",
             key + "\n", key + "\\", ""}) {
        files.clear();
        CHECK_FALSE(dc::read_lines(text, "fmt\t1", near, files, other));
    }
}

TEST_CASE("disk cache: fields_into reuses its strings and gives each line's fields alone") {
    std::vector<std::string> f;
    dc::fields_into("entry\tCONFIG_A\ty\t0\tdefconfig\t12\t1", f);
    CHECK(f == std::vector<std::string>{"entry", "CONFIG_A", "y", "0", "defconfig", "12", "1"});
    dc::fields_into("end", f);
    CHECK(f == std::vector<std::string>{"end"});
    dc::fields_into("a\\tb\tc\\\\", f);
    CHECK(f == std::vector<std::string>{"a\tb", "c\\"});
    dc::fields_into("", f);
    CHECK(f == std::vector<std::string>{""});
}

TEST_CASE("disk cache: read_noted gives the bytes and, within a run, stamps what it read") {
    Dir d;
    auto a = d.write("Kconfig", "config A\n\tbool\n");
    {
        cmalign::RunScope run;
        auto text = dc::read_noted(a);
        REQUIRE(text);
        CHECK(*text == "config A\n\tbool\n");
        d.write("Kconfig", "config LONGER\n\tbool\n"); // after the read: not what the run saw
        auto s = dc::stamp(a);
        REQUIRE(s);
        CHECK(s->size == text->size());
        REQUIRE(s->racy); // just written: judged by the hash of the bytes read
        CHECK(s->hash == dc::fnv1a(*text));
        CHECK_FALSE(dc::unchanged(*s)); // the next run sees the change
    }
    CHECK_FALSE(dc::read_noted((d.root / "missing").string()));
}

// An answer's entry (read_lines without a file list) is checked in place, its stamps on several
// threads once it names hundreds of files; an entry of another shape goes the general way. Both
// must judge alike, and the other lines reach the reader once each, in order (in place: only
// once every stamp held).
TEST_CASE("disk cache: a large answer entry is judged in place as the general reader judges it") {
    Dir d;
    std::vector<dc::Stamp> stamps;
    for (int i = 0; i < 700; ++i) { // about 45 KB of stamp lines: past the threads' threshold
        auto path = d.write("f" + std::to_string(i) + ".dtsi", "content " + std::to_string(i));
        fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(1));
        auto s = dc::stamp(path);
        REQUIRE(s);
        REQUIRE_FALSE(s->racy);
        stamps.push_back(*s);
    }
    auto answer_entry = [&](const std::vector<dc::Stamp>& named, const std::string& tail) {
        std::string text = "fmt\t1\n" + dc::line({"key", "k"});
        for (const auto& s : named)
            text += dc::stamp_line(s);
        return text + tail;
    };
    const std::string big(3 << 20, 'j'); // one output line of megabytes after the stamps
    const std::string tail =
        dc::line({"1", "first\nline"}) + dc::line({"2", big}) + dc::line({"exit", "0"}) + "end\n";
    std::vector<std::vector<std::string>> seen;
    auto other = [&](const std::vector<std::string>& f) {
        seen.push_back(f);
        return f.size() == 2;
    };
    auto read = [&](const std::string& text) {
        seen.clear();
        return dc::read_lines(text, "fmt\t1", "k", other);
    };
    const std::vector<std::vector<std::string>> expected = {
        {"1", "first\nline"}, {"2", big}, {"exit", "0"}};

    const std::string whole = answer_entry(stamps, tail);
    CHECK(read(whole));
    CHECK(seen == expected);
    // Truncated anywhere, under another key: no answer, and the reader saw nothing.
    for (std::size_t cut :
         {std::size_t{30}, whole.size() / 4, whole.size() - big.size() / 2, whole.size() - 4}) {
        CHECK_FALSE(read(whole.substr(0, cut)));
        CHECK(seen.empty());
    }
    seen.clear();
    CHECK_FALSE(dc::read_lines(whole, "fmt\t1", "K", other));
    CHECK(seen.empty());
    // A line the reader refuses: no answer.
    CHECK_FALSE(read(answer_entry(stamps, dc::line({"3"}) + "end\n")));

    // One file changed, first, in the middle or last: no answer, whichever thread stats it.
    for (int changed : {0, 350, 699}) {
        const auto path = stamps[static_cast<std::size_t>(changed)].path;
        d.write(fs::path(path).filename().string(), "changed, longer content");
        CHECK_FALSE(read(whole));
        CHECK(seen.empty());
        d.write(fs::path(path).filename().string(), "content " + std::to_string(changed));
        const auto mtime_ns = stamps[static_cast<std::size_t>(changed)].mtime_ns;
        const timespec times[2] = {{0, UTIME_OMIT},
                                   {static_cast<time_t>(mtime_ns / 1'000'000'000),
                                    static_cast<long>(mtime_ns % 1'000'000'000)}};
        REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
    }
    CHECK(read(whole)); // restored to the same size and time
    CHECK(seen == expected);

    // Another shape, the general way: a racy stamp (judged by content), a path with a tab
    // (escaped), a stamp after the other lines. Each answer once, each line once.
    auto racy_path = d.write("racy.dtsi", "racy");
    auto racy = dc::stamp(racy_path);
    REQUIRE(racy);
    REQUIRE(racy->racy);
    auto tab_path = d.write("a\tb.dtsi", "tab");
    fs::last_write_time(tab_path, fs::file_time_type::clock::now() - std::chrono::hours(1));
    auto tab = dc::stamp(tab_path);
    REQUIRE(tab);
    for (const auto& odd : {*racy, *tab}) {
        auto named = stamps;
        named.insert(named.begin() + 300, odd);
        CHECK(read(answer_entry(named, tail)));
        CHECK(seen == expected);
    }
    CHECK(read(answer_entry(stamps, dc::line({"1", "first\nline"}) + dc::stamp_line(*tab) +
                                        dc::line({"2", big}) + dc::line({"exit", "0"}) + "end\n")));
    CHECK(seen == expected);
    d.write("racy.dtsi", "RACY"); // the same size, other bytes
    auto named = stamps;
    named.push_back(*racy);
    CHECK_FALSE(read(answer_entry(named, tail)));
}
