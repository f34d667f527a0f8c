// Source files, the shared file cache and the output source map of the preprocessor.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include <sys/stat.h>

#include <fmt/format.h>

#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/dt/preprocess.hpp"

namespace cmalign::dt {

Location SourceFile::location(std::size_t offset) const {
    Location where;
    where.file = path;
    if (line_starts.empty()) {
        where.line = 1;
        where.column = static_cast<int>(offset) + 1;
        return where;
    }
    offset = std::min(offset, text.size());
    auto it = std::upper_bound(line_starts.begin(), line_starts.end(), offset);
    const auto line = static_cast<std::size_t>(it - line_starts.begin()); // >= 1
    where.line = static_cast<int>(line);
    where.column = static_cast<int>(offset - line_starts[line - 1]) + 1;
    return where;
}

namespace {

// Is there a backslash-newline (gcc also accepts blanks between them) at `i`? Returns its
// length, 0 if none.
std::size_t splice_at(std::string_view text, std::size_t i) {
    if (text[i] != '\\') return 0;
    std::size_t j = i + 1;
    while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r'))
        ++j;
    if (j < text.size() && text[j] == '\n') return j + 1 - i;
    return 0;
}

} // namespace

std::shared_ptr<const SourceFile> make_source(std::string path, std::string text) {
    auto file = std::make_shared<SourceFile>();
    file->path = std::move(path);
    file->text = std::move(text);
    const std::string_view t = file->text;
    file->line_starts.reserve(t.size() / 32 + 1);
    file->line_starts.push_back(0);
    for (const char* p = t.data();
         (p = static_cast<const char*>(std::memchr(p, '\n', t.data() + t.size() - p)));) {
        ++p;
        file->line_starts.push_back(static_cast<std::size_t>(p - t.data()));
    }
    // Phase 2: remove backslash-newlines. Most files have none, and then `spliced` stays empty.
    std::size_t removed = 0;
    std::size_t copied_to = 0;
    for (const char* p = t.data();
         (p = static_cast<const char*>(std::memchr(p, '\\', t.data() + t.size() - p)));) {
        const auto i = static_cast<std::size_t>(p - t.data());
        const std::size_t len = splice_at(t, i);
        if (len == 0) {
            ++p;
            continue;
        }
        file->spliced.append(t.substr(copied_to, i - copied_to));
        removed += len;
        file->splices.emplace_back(file->spliced.size(), removed);
        copied_to = i + len;
        p = t.data() + copied_to;
    }
    if (!file->splices.empty()) file->spliced.append(t.substr(copied_to));
    return file;
}

std::shared_ptr<const SourceFile> FileCache::load(const std::string& path, std::string* error,
                                                  const InputLimits& limits, Location* at) {
    {
        std::lock_guard lock(mutex_);
        if (auto it = refused_.find(path); it != refused_.end()) {
            if (error) *error = it->second.first;
            if (at) *at = it->second.second;
            return nullptr;
        }
        if (auto it = files_.find(path); it != files_.end()) {
            if (!it->second && error) *error = "No such file or directory";
            return it->second;
        }
    }
    std::shared_ptr<const SourceFile> file;
    std::string message;
    std::optional<Location> refused_at;
    auto too_large = [&] {
        message = fmt::format("file is larger than {} bytes {}", limits.file_bytes,
                              limit_hint("file-bytes"));
        refused_at = Location{path, 0, 0};
    };
    std::optional<std::string> text; // the whole file, within file-bytes
    if (auto piped = anonymous_pipe_bytes(path, limits.file_bytes)) { // cat x.dts | … /dev/stdin
        if (piped->error != 0)
            message = std::strerror(piped->error);
        else if (piped->truncated || piped->bytes.size() > limits.file_bytes)
            too_large();
        else
            text = std::move(piped->bytes);
    } else if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
        std::string read;
        // Sized once: the cache keeps every file for the whole run, and a string grown by
        // appending keeps up to twice its bytes.
        struct stat st {};
        if (::fstat(::fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
            read.reserve(std::min(static_cast<std::size_t>(st.st_size), limits.file_bytes + 1));
        char buffer[65536];
        std::size_t n = 0;
        while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) {
            if (read.size() + n > limits.file_bytes) {
                too_large();
                break;
            }
            read.append(buffer, n);
        }
        const bool failed = std::ferror(f) != 0;
        std::fclose(f);
        if (!refused_at && failed) message = "read error";
        if (!refused_at && !failed) text = std::move(read);
    } else {
        message = std::strerror(errno);
        if (message.empty()) message = "cannot open";
    }
    if (text) {
        if (auto long_line = first_line_over(*text, limits.line_bytes)) {
            message = long_line_message(*long_line, limits);
            refused_at = long_line_location(path, *long_line, limits);
        } else {
            file = make_source(path, std::move(*text));
        }
    }
    std::lock_guard lock(mutex_);
    if (refused_at) {
        refused_.try_emplace(path, message, *refused_at);
        if (error) *error = message;
        if (at) *at = *refused_at;
        return nullptr;
    }
    // Opening a directory succeeds on Linux but reading fails: that is "read error" above.
    auto [it, inserted] = files_.try_emplace(path, file);
    if (!it->second && error) *error = message.empty() ? "No such file or directory" : message;
    (void)inserted;
    return it->second;
}

Location Preprocessed::locate(std::size_t out_offset) const {
    if (segments.empty()) return files.empty() ? Location{} : files.front()->location(0);
    auto it = std::upper_bound(segments.begin(), segments.end(), out_offset,
                               [](std::size_t off, const Segment& s) { return off < s.out_begin; });
    if (it != segments.begin()) --it;
    const Segment& s = *it;
    if (!s.file) return {};
    if (!s.verbatim) return s.file->location(s.src_begin);
    const std::size_t begin = s.out_begin;
    const std::size_t end = segment_end(static_cast<std::size_t>(it - segments.begin()));
    const std::size_t within = std::min(out_offset, end) - std::min(out_offset, begin);
    return s.file->location(s.src_begin + within);
}

std::optional<SourceSpan> Preprocessed::source_span(std::size_t out_begin,
                                                    std::size_t out_end) const {
    if (out_end < out_begin || segments.empty()) return std::nullopt;
    auto it = std::upper_bound(segments.begin(), segments.end(), out_begin,
                               [](std::size_t off, const Segment& s) { return off < s.out_begin; });
    if (it == segments.begin()) return std::nullopt;
    --it;
    const Segment& s = *it;
    if (!s.verbatim || !s.file || out_begin < s.out_begin ||
        out_end > segment_end(static_cast<std::size_t>(it - segments.begin())))
        return std::nullopt;
    SourceSpan span;
    span.file = s.file->path;
    span.begin = s.src_begin + (out_begin - s.out_begin);
    span.end = span.begin + (out_end - out_begin);
    return span;
}

void sort_chunks(std::vector<Preprocessed::Chunk>& chunks) {
    std::stable_sort(chunks.begin(), chunks.end(), [](const auto& a, const auto& b) {
        return a.out_begin != b.out_begin ? a.out_begin < b.out_begin : a.out_end > b.out_end;
    });
}

Preprocessed identity(std::shared_ptr<const SourceFile> file) {
    Preprocessed out;
    if (!file) return out;
    out.text = file->text;
    out.segments.push_back({0, true, file.get(), 0});
    out.files.push_back(std::move(file));
    return out;
}

} // namespace cmalign::dt
