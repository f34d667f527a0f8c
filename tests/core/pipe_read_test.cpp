// A pipe read once (core/text_file.hpp): every reader of a run gets the same bytes, however late
// the writer writes, and the bytes are let go when the last run that read them ends.
#include <doctest/doctest.h>

#include <unistd.h>

#include <string>
#include <thread>

#include "cmalign/internal/core/text_file.hpp"

namespace {

struct Pipe {
    int fds[2] = {-1, -1};
    Pipe() { REQUIRE(::pipe(fds) == 0); }
    ~Pipe() {
        for (int fd : fds)
            if (fd >= 0) ::close(fd);
    }
    std::string path() const { return "/proc/self/fd/" + std::to_string(fds[0]); }
    void write_and_close(const std::string& bytes) {
        REQUIRE(::write(fds[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
        ::close(fds[1]);
        fds[1] = -1;
    }
};

} // namespace

TEST_CASE("a pipe is read to its writer's end once, and every read of the run gets its bytes") {
    Pipe pipe;
    cmalign::RunScope run;
    // The writer starts after the reader has opened the pipe.
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        pipe.write_and_close("CONFIG_CMA=y\n");
    });
    auto first = cmalign::anonymous_pipe_bytes(pipe.path(), 1 << 20);
    writer.join();
    REQUIRE(first);
    CHECK(first->bytes == "CONFIG_CMA=y\n");
    CHECK(first->error == 0);
    CHECK_FALSE(first->truncated);
    auto again = cmalign::anonymous_pipe_bytes(pipe.path(), 1 << 20);
    REQUIRE(again);
    CHECK(again->bytes == "CONFIG_CMA=y\n");
    // The text reader and the whole-input reader see the same.
    cmalign::TextFile text;
    CHECK_FALSE(cmalign::read_text_file(pipe.path(), {}, {"configuration", true}, text));
    CHECK(text.text == "CONFIG_CMA=y\n");
    CHECK(cmalign::read_whole_input(pipe.path()) == "CONFIG_CMA=y\n");
}

TEST_CASE("a pipe's kept bytes end with the last open run; a file is no pipe") {
    Pipe pipe;
    pipe.write_and_close("abcdef");
    {
        cmalign::RunScope outer;
        {
            cmalign::RunScope inner; // explain runs check and fix inside itself
            CHECK(cmalign::anonymous_pipe_bytes(pipe.path(), 4)->truncated); // over max_bytes
        }
        CHECK(cmalign::anonymous_pipe_bytes(pipe.path(), 4)->bytes == "abcd"); // still kept
    }
    // Let go: the pipe itself is drained now.
    CHECK(cmalign::anonymous_pipe_bytes(pipe.path(), 4)->bytes.empty());
    CHECK_FALSE(cmalign::anonymous_pipe_bytes("/proc/self/exe", 4));
    CHECK_FALSE(cmalign::anonymous_pipe_bytes("/nonexistent/file", 4));
}
