// The on-disk cache's files (core/disk_cache.hpp).
#include "cmalign/internal/core/disk_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "cmalign/internal/core/integer.hpp"
#include "cmalign/internal/core/text_file.hpp"

namespace cmalign::disk_cache {

namespace {

namespace fs = std::filesystem;

constexpr std::int64_t racy_window_ns = 2'000'000'000;

std::int64_t mtime_ns_of(const struct stat& st) {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

bool stat_of(const char* path, std::uint64_t& size, std::int64_t& mtime_ns) {
    struct stat st {};
    if (::stat(path, &st) != 0) return false;
    size = static_cast<std::uint64_t>(st.st_size);
    mtime_ns = mtime_ns_of(st);
    return true;
}

bool stat_of(const std::string& path, std::uint64_t& size, std::int64_t& mtime_ns) {
    return stat_of(path.c_str(), size, mtime_ns);
}

// A path viewed in an entry's text, terminated on the caller's stack (no allocation).
bool stat_of(std::string_view path, std::uint64_t& size, std::int64_t& mtime_ns) {
    char buffer[512];
    if (path.size() >= sizeof buffer) return stat_of(std::string(path), size, mtime_ns);
    std::memcpy(buffer, path.data(), path.size());
    buffer[path.size()] = '\0';
    return stat_of(static_cast<const char*>(buffer), size, mtime_ns);
}

// A stamp as read from an entry: its path viewed in the entry's text (or in a decoded copy).
struct StampView {
    std::string_view path;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::optional<std::uint64_t> hash;
    bool racy = false;
};

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t seed) {
    std::uint64_t h = seed;
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

namespace {

std::optional<Stamp> stamp_now(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    Stamp s;
    s.path = path;
    s.size = static_cast<std::uint64_t>(st.st_size);
    s.mtime_ns = mtime_ns_of(st);
    s.racy = s.mtime_ns >= now_ns() - racy_window_ns;
    if (!s.racy) return s;
    auto content = read_whole_input(path);
    if (!content) return std::nullopt;
    s.hash = fnv1a(*content);
    return s;
}

// The stamps taken in the open run (RunScope::current()).
std::mutex run_stamps_mutex;
std::uint64_t run_stamps_run = 0;
std::unordered_map<std::string, std::optional<Stamp>> run_stamps_kept;

// The stamps of `run`, those of an earlier run dropped; run_stamps_mutex held.
std::unordered_map<std::string, std::optional<Stamp>>& run_stamps(std::uint64_t run) {
    if (run_stamps_run != run) {
        run_stamps_kept.clear();
        run_stamps_run = run;
    }
    return run_stamps_kept;
}

} // namespace

void note_read(const std::string& path, std::uint64_t size, std::int64_t mtime_ns,
               std::string_view content) {
    const auto run = RunScope::current();
    if (run == 0) return;
    Stamp s{path, size, mtime_ns, {}, mtime_ns >= now_ns() - racy_window_ns};
    if (s.racy) s.hash = fnv1a(content);
    std::lock_guard lock(run_stamps_mutex);
    run_stamps(run).insert_or_assign(path, std::move(s));
}

namespace {

// The whole file at `path` and its fstat taken before reading, read straight into a string sized
// by that fstat: a staging buffer and a regrowing string are as many fresh pages again (a warm
// run reads an entry of about 100 KB, a Kconfig evaluation 1,600 files).
// `regular_only`: anything but a regular file is not read (and a FIFO's open does not wait for
// a writer).
std::optional<std::string> read_with_stat(const char* path, struct stat& st,
                                          bool regular_only = false) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC | (regular_only ? O_NONBLOCK : 0));
    if (fd < 0) return std::nullopt;
    struct Close {
        int fd;
        ~Close() { ::close(fd); }
    } close_fd{fd};
    if (::fstat(fd, &st) != 0 || (regular_only && !S_ISREG(st.st_mode))) return std::nullopt;
    // + 1: the read that returns 0 needs room; not a regular file: no size to go by.
    std::string text(S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size) + 1 : 4096, '\0');
    std::size_t have = 0;
    for (;;) {
        if (have == text.size()) text.resize(text.size() * 2); // grew since the fstat
        const ssize_t n = ::read(fd, text.data() + have, text.size() - have);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            return std::nullopt;
        }
        have += static_cast<std::size_t>(n);
    }
    text.resize(have);
    return text;
}

} // namespace

std::optional<std::string> read_noted(const std::string& path, bool regular_only) {
    struct stat st {};
    auto text = read_with_stat(path.c_str(), st, regular_only);
    // The fstat before the read: a write during it moves the mtime past the one noted.
    if (text && S_ISREG(st.st_mode))
        note_read(path, static_cast<std::uint64_t>(st.st_size), mtime_ns_of(st), *text);
    return text;
}

std::optional<Stamp> stamp(const std::string& path) {
    const auto run = RunScope::current();
    if (run == 0) return stamp_now(path);
    {
        std::lock_guard lock(run_stamps_mutex);
        auto& kept = run_stamps(run);
        if (auto it = kept.find(path); it != kept.end()) return it->second;
    }
    auto s = stamp_now(path);
    std::lock_guard lock(run_stamps_mutex);
    run_stamps(run).emplace(path, s);
    return s;
}

bool StatMemo::stat_of(const std::string& path, std::uint64_t& size, std::int64_t& mtime_ns) {
    {
        std::lock_guard lock(mutex_);
        if (auto it = seen_.find(path); it != seen_.end()) {
            size = it->second.size;
            mtime_ns = it->second.mtime_ns;
            return it->second.found;
        }
    }
    Seen now;
    now.found = disk_cache::stat_of(path, now.size, now.mtime_ns);
    std::lock_guard lock(mutex_);
    seen_.emplace(path, now);
    size = now.size;
    mtime_ns = now.mtime_ns;
    return now.found;
}

namespace {

bool unchanged_view(const StampView& s, StatMemo* memo) {
    std::uint64_t size = 0;
    std::int64_t mtime = 0;
    bool found =
        memo ? memo->stat_of(std::string(s.path), size, mtime) : stat_of(s.path, size, mtime);
    if (!found || size != s.size) return false;
    if (mtime == s.mtime_ns && !s.racy) return true;
    if (!s.hash) return false; // touched: recomputed, even when the bytes are the same
    auto content = read_whole_input(std::string(s.path));
    return content && fnv1a(*content) == *s.hash;
}

} // namespace

bool unchanged(const Stamp& s, StatMemo* memo) {
    return unchanged_view({s.path, s.size, s.mtime_ns, s.hash, s.racy}, memo);
}

namespace {

// Stamps are checked on several threads once there are hundreds: each names a file in a
// directory of its own, and the path lookups (a few µs each on a virtual machine) are most of a
// cached run. Helper threads start on `work` (which takes batches from a shared cursor) while
// the caller's thread does `own` and then `work` too; returns once all are done. One thread
// more than the cores (at most four): the first thread a process starts often waits on its
// creator's core until the scheduler moves it, and a fixed half each then finished no sooner
// than one thread did (the sdm845 answer, 1,642 files, median of 300 alternating runs on two
// cores: two threads 6.7 ms, three 6.0 ms, four 6.0 ms).
void with_helpers(bool worth_threads, const std::function<void()>& work,
                  const std::function<void()>& own = {}) {
    std::vector<std::thread> helpers;
    const unsigned cores = worth_threads ? std::thread::hardware_concurrency() : 1;
    if (cores >= 2)
        for (unsigned i = 0; i < std::min(cores, 3u); ++i)
            helpers.emplace_back(work);
    if (own) own();
    work();
    for (auto& helper : helpers)
        helper.join();
}

// Whether every stamp still holds, on several threads (with_helpers()).
bool all_unchanged(const std::vector<StampView>& stamps, StatMemo* memo) {
    constexpr std::size_t shared_from = 512;
    constexpr std::size_t batch = 32;
    std::atomic<std::size_t> next{0};
    std::atomic<bool> ok{true};
    auto work = [&] {
        while (ok.load(std::memory_order_relaxed)) {
            const std::size_t from = next.fetch_add(batch, std::memory_order_relaxed);
            if (from >= stamps.size()) return;
            for (std::size_t i = from, to = std::min(from + batch, stamps.size()); i < to; ++i)
                if (!unchanged_view(stamps[i], memo)) {
                    ok = false;
                    return;
                }
        }
    };
    with_helpers(stamps.size() >= shared_from, work);
    return ok;
}

} // namespace

std::string escape(std::string_view text) {
    std::string out;
    escape_to(out, text);
    return out;
}

namespace {

// The letter after the backslash that stands for `c` in an entry, or 0 when `c` stands as it is.
// (A table: find_first_of() calls memchr() on the set once per character.)
constexpr auto escape_letters = [] {
    std::array<char, 256> t{};
    t['\\'] = '\\';
    t['\t'] = 't';
    t['\n'] = 'n';
    t['\r'] = 'r';
    return t;
}();

char escape_letter(char c) {
    return escape_letters[static_cast<unsigned char>(c)];
}

} // namespace

void escape_to(std::string& out, std::string_view text) {
    // The runs between special characters are appended whole: most fields (symbol names,
    // values, paths) are one run, and a key that holds a whole configuration is many long ones.
    auto special = [](char c) { return escape_letter(c) != 0; };
    auto from = text.begin();
    for (auto at = std::find_if(from, text.end(), special); at != text.end();
         at = std::find_if(from, text.end(), special)) {
        out.append(from, at);
        out += '\\';
        out += escape_letter(*at);
        from = at + 1;
    }
    out.append(from, text.end());
}

std::string line(std::initializer_list<std::string_view> fields) {
    std::string out;
    bool first = true;
    for (auto f : fields) {
        if (!first) out += '\t';
        first = false;
        escape_to(out, f);
    }
    out += '\n';
    return out;
}

std::vector<std::string> fields(std::string_view line) {
    std::vector<std::string> out;
    fields_into(line, out);
    return out;
}

void fields_into(std::string_view line, std::vector<std::string>& out) {
    // The strings already in `out` are reused: a Kconfig entry has ten thousand lines of seven
    // fields, and building them anew was most of reading one back.
    std::size_t n = 0;
    auto next = [&]() -> std::string& {
        if (n == out.size()) out.emplace_back();
        auto& field = out[n++];
        field.clear();
        return field;
    };
    if (line.find('\\') == std::string_view::npos) { // nothing escaped: cut at the tabs
        for (std::size_t from = 0;;) {
            auto tab = line.find('\t', from);
            next().assign(line.substr(from, tab == std::string_view::npos ? tab : tab - from));
            if (tab == std::string_view::npos) break;
            from = tab + 1;
        }
    } else {
        std::string* field = &next();
        for (std::size_t i = 0; i < line.size(); ++i) {
            char c = line[i];
            if (c == '\t') {
                field = &next();
            } else if (c == '\\' && i + 1 < line.size()) {
                char e = line[++i];
                *field += e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e;
            } else {
                *field += c;
            }
        }
    }
    out.resize(n);
}

std::string stamp_line(const Stamp& s) {
    // The hash as its signed bit pattern ("-" when not taken).
    return fmt::format("file\t{}\t{}\t{}\t{}\t{}\n", escape(s.path), s.size, s.mtime_ns,
                       s.hash ? std::to_string(static_cast<long long>(*s.hash)) : "-",
                       s.racy ? 1 : 0);
}

std::optional<Stamp> parse_stamp(const std::vector<std::string>& f) {
    if (f.size() != 6 || f[0] != "file" || (f[5] != "0" && f[5] != "1")) return std::nullopt;
    auto size = parse_integer(f[2], IntegerSyntax::decimal);
    auto mtime = parse_integer(f[3], IntegerSyntax::decimal);
    Stamp s{f[1], static_cast<std::uint64_t>(size.value_or(0)), mtime.value_or(0), {}, f[5] == "1"};
    if (!size || *size < 0 || !mtime) return std::nullopt;
    if (f[4] != "-") {
        auto hash = parse_integer(f[4], IntegerSyntax::decimal);
        if (!hash) return std::nullopt;
        s.hash = static_cast<std::uint64_t>(*hash);
    }
    if (s.racy && !s.hash) return std::nullopt; // a racy file is judged by its content
    return s;
}

namespace {

// A "file" line without escapes, read in place: a Kconfig entry has one per Kconfig file (1,600
// in arm64's tree), and splitting each into strings was most of a warm run's own work. Any
// line this does not take whole goes the general way (fields(), parse_stamp()).
std::optional<StampView> parse_plain_stamp(std::string_view line) {
    if (line.find('\\') != std::string_view::npos) return std::nullopt;
    std::string_view f[6];
    for (int i = 0; i < 6; ++i) {
        auto tab = line.find('\t');
        if ((tab == std::string_view::npos) != (i == 5)) return std::nullopt;
        f[i] = line.substr(0, tab);
        line.remove_prefix(tab == std::string_view::npos ? line.size() : tab + 1);
    }
    if (f[0] != "file" || (f[5] != "0" && f[5] != "1")) return std::nullopt;
    auto number = [](std::string_view t, auto& value) {
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
        return !t.empty() && ec == std::errc() && end == t.data() + t.size();
    };
    StampView st{f[1], 0, 0, {}, f[5] == "1"};
    std::int64_t size = 0, hash = 0;
    if (!number(f[2], size) || size < 0 || !number(f[3], st.mtime_ns)) return std::nullopt;
    st.size = static_cast<std::uint64_t>(size);
    if (f[4] != "-") {
        if (!number(f[4], hash)) return std::nullopt;
        st.hash = static_cast<std::uint64_t>(hash);
    }
    if (st.racy && !st.hash) return std::nullopt;
    return st;
}

} // namespace

namespace {

// An entry whose racy stamps have settled: each racy file whose content still matched and whose
// mtime is now older than the racy window gets its plain stamp (size, mtime), so the next run
// compares a stat instead of reading and hashing the file again (git refreshes its index so).
// A write after now moves the mtime past the one kept, so the plain stamp cannot miss it.
void settle(std::string_view whole, const std::vector<std::pair<std::size_t, std::size_t>>& spans,
            const std::vector<StampView>& stamps, const fs::path& entry) {
    std::string out;
    std::size_t copied = 0;
    const auto settled_before = now_ns() - racy_window_ns;
    for (std::size_t i = 0; i < stamps.size(); ++i) {
        const StampView& s = stamps[i];
        if (!s.racy) continue;
        Stamp plain{std::string(s.path), 0, 0, {}, false};
        if (!stat_of(s.path, plain.size, plain.mtime_ns) || plain.mtime_ns >= settled_before)
            continue;
        out.append(whole.substr(copied, spans[i].first - copied));
        out += stamp_line(plain);
        copied = spans[i].first + spans[i].second;
    }
    if (copied == 0) return;
    out.append(whole.substr(copied));
    write_entry(entry, out);
}

} // namespace

namespace {

// Whether `text` starts with escape_to(raw); if so, that much of it is consumed.
bool consume_escaped(std::string_view& text, std::string_view raw) {
    std::size_t at = 0;
    for (char c : raw) {
        if (const char escaped = escape_letter(c)) {
            if (at + 1 >= text.size() || text[at] != '\\' || text[at + 1] != escaped) return false;
            at += 2;
        } else {
            if (at >= text.size() || text[at] != c) return false;
            ++at;
        }
    }
    text.remove_prefix(at);
    return true;
}

} // namespace

namespace {

// Whether `text` starts with the format line and the key line; if so, they are consumed. The key
// line is compared as written, escape by escape, without writing it out again (a Kconfig key
// holds the whole configuration: half a megabyte).
bool consume_head(std::string_view& text, std::string_view format, const std::string& key) {
    if (!text.starts_with(format) || text.substr(format.size()).substr(0, 1) != "\n") return false;
    text.remove_prefix(format.size() + 1);
    if (!text.starts_with("key\t")) return false;
    text.remove_prefix(4);
    if (!consume_escaped(text, key) || !text.starts_with('\n')) return false;
    text.remove_prefix(1);
    return true;
}

bool read_stamped_lines(std::string_view text, std::string_view format, const std::string& key,
                        std::vector<std::string>* files,
                        const std::function<bool(const std::vector<std::string>&)>& other,
                        StatMemo* memo, const fs::path* settle_entry) {
    const std::string_view whole = text;
    std::vector<std::pair<std::size_t, std::size_t>> spans; // each stamp's line in `whole`
    auto offset = [&] { return static_cast<std::size_t>(text.data() - whole.data()); };
    if (!consume_head(text, format, key)) return false;
    // Sized at once for the lines left (a stamp line is longer than 48 bytes): fresh pages cost
    // a few µs each on a virtual machine, and a regrowing vector takes two or three times as many.
    std::vector<StampView> stamps;
    stamps.reserve(text.size() / 48 + 1);
    spans.reserve(stamps.capacity());
    std::deque<std::string> decoded; // the paths of stamp lines with escapes
    std::vector<std::string> f;      // the fields of each other line, in the same strings
    while (!text.empty()) {
        auto nl = text.find('\n');
        if (nl == std::string_view::npos) return false; // truncated
        if (text.starts_with("file\t")) {
            if (auto st = parse_plain_stamp(text.substr(0, nl))) {
                stamps.push_back(*st);
                spans.emplace_back(offset(), nl + 1);
                text.remove_prefix(nl + 1);
                continue;
            }
        }
        fields_into(text.substr(0, nl), f);
        const auto span = std::make_pair(offset(), nl + 1);
        text.remove_prefix(nl + 1);
        if (f.size() == 1 && f[0] == "end") {
            if (!all_unchanged(stamps, memo)) return false;
            if (settle_entry && std::any_of(stamps.begin(), stamps.end(),
                                            [](const StampView& s) { return s.racy; }))
                settle(whole, spans, stamps, *settle_entry);
            if (files)
                for (const auto& s : stamps)
                    files->emplace_back(s.path);
            return true;
        } else if (f[0] == "file") {
            auto s = parse_stamp(f);
            if (!s) return false;
            decoded.push_back(std::move(s->path));
            stamps.push_back({decoded.back(), s->size, s->mtime_ns, s->hash, s->racy});
            spans.push_back(span);
        } else if (!other(f)) {
            return false;
        }
    }
    return false;
}

} // namespace

bool read_lines(std::string_view text, std::string_view format, const std::string& key,
                std::vector<std::string>& files,
                const std::function<bool(const std::vector<std::string>&)>& other, StatMemo* memo,
                const fs::path* settle_entry) {
    return read_stamped_lines(text, format, key, &files, other, memo, settle_entry);
}

namespace {

// The common entry, checked in place: after the key, a run of plain stamp lines (no escapes, not
// racy), then the other lines and "end". Threads take the stamp lines in slices of the text and
// stat them straight from it while this thread walks the lines in order for the rest: no stamp
// is copied out, and the stats start before the last line is read. Building a list of 1,600
// stamps first (about 130 KB of fresh pages, a few µs each on a virtual machine) took a warm
// run's single-threaded 0.4 ms. Undecided (nullopt) when the entry is not of this
// shape; `other` is only called once every stamp held.
std::optional<bool>
check_plain_stamps(std::string_view body,
                   const std::function<bool(const std::vector<std::string>&)>& other) {
    constexpr std::size_t slice = 4096;           // about 60 stamp lines
    constexpr std::size_t shared_from = 512 * 64; // about 500 stamps: threads pay off
    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> stamps_end{body.size()}; // no slice from here on holds a stamp
    std::atomic<bool> changed{false}, irregular{false};
    auto lower_stamps_end = [&](std::size_t at) {
        std::size_t end = stamps_end.load(std::memory_order_relaxed);
        while (at < end && !stamps_end.compare_exchange_weak(end, at)) {
        }
    };
    auto work = [&] {
        while (!changed.load(std::memory_order_relaxed) &&
               !irregular.load(std::memory_order_relaxed)) {
            const std::size_t from = next.fetch_add(slice, std::memory_order_relaxed);
            if (from >= stamps_end.load(std::memory_order_relaxed)) return;
            const std::size_t to = std::min(from + slice, body.size());
            // The lines that start in [from, to); the search for the first stays in the slice
            // (the output after the stamps can be one line of megabytes).
            std::size_t at = from;
            if (from != 0) {
                const auto nl = body.substr(from - 1, to - from + 1).find('\n');
                if (nl == std::string_view::npos) continue;
                at = from + nl;
            }
            while (at < to) {
                if (!body.substr(at).starts_with("file\t")) {
                    lower_stamps_end(at);
                    return;
                }
                const std::size_t nl = body.find('\n', at);
                if (nl == std::string_view::npos) return; // truncated: the walk says so
                const std::string_view line = body.substr(at, nl - at);
                const auto stamp = parse_plain_stamp(line);
                if (!stamp || stamp->racy) {
                    irregular = true;
                    return;
                }
                if (!unchanged_view(*stamp, nullptr)) {
                    changed = true;
                    return;
                }
                at = nl + 1;
            }
        }
    };
    // The walk: where the stamps end, the other lines, "end".
    std::vector<std::string_view> others;
    bool past_stamps = false, ended = false;
    auto walk = [&] {
        for (std::string_view rest = body; !rest.empty();) {
            const std::size_t nl = rest.find('\n');
            if (nl == std::string_view::npos) break; // truncated
            const std::string_view line = rest.substr(0, nl);
            rest.remove_prefix(nl + 1);
            if (line.starts_with("file\t")) {
                if (past_stamps) irregular = true; // a stamp after other lines: the general way
                continue;
            }
            if (!past_stamps) lower_stamps_end(static_cast<std::size_t>(line.data() - body.data()));
            past_stamps = true;
            if (line == "end") {
                ended = true;
                break;
            }
            others.push_back(line);
        }
    };
    with_helpers(body.size() >= shared_from, work, walk);
    if (irregular) return std::nullopt;
    if (!ended || changed) return false;
    std::vector<std::string> f;
    for (const auto line : others) {
        fields_into(line, f);
        if (!other(f)) return false;
    }
    return true;
}

} // namespace

bool read_lines(std::string_view text, std::string_view format, const std::string& key,
                const std::function<bool(const std::vector<std::string>&)>& other,
                const fs::path* settle_entry) {
    std::string_view body = text;
    if (!consume_head(body, format, key)) return false;
    if (const auto decided = check_plain_stamps(body, other)) return *decided;
    return read_stamped_lines(text, format, key, nullptr, other, nullptr, settle_entry);
}

fs::path entry_path(const std::string& dir, std::string_view kind, std::string_view key) {
    return fs::path(dir) / fmt::format("{}-{:016x}", kind, fnv1a(key));
}

std::optional<std::string> read_entry(const fs::path& file) {
    struct stat st {};
    auto text = read_with_stat(file.c_str(), st);
    if (!text || !S_ISREG(st.st_mode)) return std::nullopt; // entries are files we wrote
    return text;
}

bool write_entry(const fs::path& file, const std::string& content) {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec) return false;
    // Unique per process and call: concurrent writers never share a temporary file.
    static std::atomic<unsigned> counter{0};
    auto temp = file;
    temp += fmt::format(".tmp.{}.{}", ::getpid(), counter++);
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        out.flush();
        if (!out) {
            fs::remove(temp, ec);
            return false;
        }
    }
    fs::rename(temp, file, ec);
    if (ec) {
        fs::remove(temp, ec);
        return false;
    }
    return true;
}

void prune(const std::string& dir, std::string_view kind, std::size_t keep) {
    std::error_code ec;
    std::vector<std::pair<fs::file_time_type, fs::path>> entries;
    std::string prefix = std::string(kind) + "-";
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        auto name = e.path().filename().string();
        if (!name.starts_with(prefix) || name.find(".tmp.") != std::string::npos) continue;
        entries.emplace_back(e.last_write_time(ec), e.path());
    }
    if (entries.size() <= keep) return;
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = keep; i < entries.size(); ++i)
        fs::remove(entries[i].second, ec);
}

} // namespace cmalign::disk_cache
