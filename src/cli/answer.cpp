// A command's printed answer, kept and replayed through the answer cache (answers.hpp): what the
// command wrote on stdout and stderr is recorded in order, so a replay interleaves the two
// streams as the run did.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <streambuf>
#include <utility>

#include <fmt/format.h>

#include "answers.hpp"
#include "cmalign/internal/core/disk_cache.hpp"
#include "common.hpp"

namespace cmalign::cli {

namespace {

// Everything written to std::cout and std::cerr while it lives, as (stream, bytes) chunks in
// the order written; each write also goes on to the real stream.
class Recorder {
public:
    Recorder() : out_(*this, 1, std::cout.rdbuf()), err_(*this, 2, std::cerr.rdbuf()) {
        std::cout.rdbuf(&out_);
        std::cerr.rdbuf(&err_);
    }
    ~Recorder() {
        std::cout.rdbuf(out_.real);
        std::cerr.rdbuf(err_.real);
    }
    Recorder(const Recorder&) = delete;
    Recorder& operator=(const Recorder&) = delete;

    // The chunks as the answer cache keeps them: "1" or "2", then the bytes. Taken, not copied:
    // a whole tree's JSON is megabytes.
    std::vector<std::pair<int, std::string>> take_chunks() { return std::move(chunks_); }

private:
    struct Tee : std::streambuf {
        Tee(Recorder& recorder, int which, std::streambuf* target)
            : owner(recorder), stream(which), real(target) {}
        int overflow(int c) override {
            if (c == traits_type::eof()) return traits_type::not_eof(c);
            char ch = static_cast<char>(c);
            return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
        }
        std::streamsize xsputn(const char* s, std::streamsize n) override {
            owner.add(stream, std::string_view(s, static_cast<std::size_t>(n)));
            return real->sputn(s, n);
        }
        int sync() override { return real->pubsync(); }
        Recorder& owner;
        int stream;
        std::streambuf* real;
    };
    void add(int stream, std::string_view bytes) {
        // A large write (a whole tree's JSON comes in a few pieces of megabytes) is a chunk of
        // its own, copied once: appended to one string it was copied again at every doubling,
        // each time into fresh pages.
        constexpr std::size_t own_chunk_from = std::size_t{64} << 10;
        if (chunks_.empty() || chunks_.back().first != stream || bytes.size() >= own_chunk_from ||
            chunks_.back().second.size() >= own_chunk_from)
            chunks_.emplace_back(stream, std::string(bytes));
        else
            chunks_.back().second += bytes;
    }
    Tee out_, err_;
    std::vector<std::pair<int, std::string>> chunks_;
};

// What changes the printed answer besides the command line: colour (a terminal, NO_COLOR) and
// the environment the library is given (pass_environment()).
std::string output_context() {
    std::string context = fmt::format("tty={}{} no_color={}", isatty(STDOUT_FILENO),
                                      isatty(STDERR_FILENO), std::getenv("NO_COLOR") != nullptr);
    for (const char* name : {"ARCH", "CROSS_COMPILE", "LLVM"})
        if (const char* value = std::getenv(name)) context += fmt::format(" {}={}", name, value);
    return context;
}

// The typed command line's key (answers::find_alias()): the words as typed, escaped, under the
// same build, working directory and context as an answer's key.
std::string typed_key(const std::vector<std::string>& words) {
    std::string text;
    for (const auto& word : words) {
        if (!text.empty()) text += '\t';
        disk_cache::escape_to(text, word);
    }
    return answers::key("typed", text, output_context());
}

// The cache directory a typed `check` command line names, found without the parser: nullopt for
// --no-cache. A word misread here (a value that looks like --cache-dir) only looks in another
// directory, whose entries were all kept under other typed keys.
std::optional<std::string> typed_cache_dir(const std::vector<std::string>& words) {
    std::optional<std::string> named;
    for (std::size_t i = 1; i < words.size(); ++i) {
        if (words[i] == "--no-cache") return std::nullopt;
        if (words[i] == "--cache-dir" && i + 1 < words.size())
            named = words[i + 1];
        else if (words[i].starts_with("--cache-dir="))
            named = words[i].substr(std::string_view("--cache-dir=").size());
    }
    return named ? named : default_cache_dir();
}

void print_answer(const answers::Answer& answer) {
    for (const auto& [stream, bytes] : answer.chunks)
        (stream == 1 ? std::cout : std::cerr) << bytes;
}

} // namespace

std::optional<int> replay_typed(int argc, char** argv) {
    if (argc < 2 || std::string_view(argv[1]) != "check") return std::nullopt;
    std::optional<answers::Answer> hit;
    try { // any failure here only means the parser's way
        const std::vector<std::string> words(argv + 1, argv + argc);
        const auto dir = typed_cache_dir(words);
        if (!dir || dir->empty()) return std::nullopt;
        const auto key = answers::find_alias(*dir, typed_key(words));
        if (key) hit = answers::find(*dir, *key);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (!hit) return std::nullopt;
    print_answer(*hit);
    return to_int(hit->exit);
}

ExitCode cached_answer(const Invocation& invocation, std::string_view command,
                       const ConfigOptions& config, const std::function<ExitCode()>& run,
                       const std::function<std::optional<std::vector<std::string>>()>& sources) {
    if (!config.cache_dir) return run();
    const auto key = answers::key(command, invocation.text(), output_context());
    // The next run of the same words finds the kept answer before parsing (replay_typed()).
    auto remember_typed = [&] {
        if (!invocation.typed().empty())
            answers::store_alias(*config.cache_dir, typed_key(invocation.typed()), key);
    };
    if (auto hit = answers::find(*config.cache_dir, key)) {
        remember_typed(); // found by the parsed command line only
        print_answer(*hit);
        return hit->exit;
    }
    answers::Answer answer;
    {
        Recorder recorder;
        answer.exit = run();
        std::cout.flush();
        answer.chunks = recorder.take_chunks();
    }
    if (answer.exit != ExitCode::input_error)
        if (auto files = sources())
            if (answers::store(*config.cache_dir, key, *files, answer)) remember_typed();
    return answer.exit;
}

} // namespace cmalign::cli
