// The bulk runner (detail::for_each_input): every input visited once whatever the number of
// workers, each worker's inputs in runs, and a worker's exception brought to the caller.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cmalign/internal/run_inputs.hpp"

using cmalign::detail::for_each_input;

TEST_CASE("for_each_input: every input once, for any number of workers") {
    for (std::size_t count : {0u, 1u, 2u, 7u, 1000u}) {
        for (unsigned jobs : {0u, 1u, 2u, 3u, 8u}) {
            std::vector<std::atomic<int>> seen(count);
            for_each_input(count, jobs, [&](std::size_t i) { ++seen[i]; });
            CHECK(std::all_of(seen.begin(), seen.end(), [](const auto& n) { return n == 1; }));
        }
    }
}

TEST_CASE("for_each_input: a worker takes neighbouring inputs, in order, before it helps") {
    // Boards come sorted by path; a SoC's boards should meet one worker in a row, so that the
    // preprocessing of their .dtsi is reused rather than done by two workers at once.
    std::mutex lock;
    std::map<std::thread::id, std::vector<std::size_t>> taken;
    for_each_input(400, 2, [&](std::size_t i) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        std::lock_guard hold(lock);
        taken[std::this_thread::get_id()].push_back(i);
    });
    REQUIRE(taken.size() <= 2);
    std::size_t total = 0;
    for (const auto& [worker, inputs] : taken) {
        total += inputs.size();
        // At most two runs per worker: its own, ascending, then the other's tail, descending.
        std::size_t breaks = 0;
        for (std::size_t k = 1; k < inputs.size(); ++k)
            if (inputs[k] != inputs[k - 1] + 1 && inputs[k] + 1 != inputs[k - 1]) ++breaks;
        CHECK(breaks <= 1);
    }
    CHECK(total == 400);
}

TEST_CASE("for_each_input: an exception on a worker reaches the caller and stops the rest") {
    std::atomic<int> visited{0};
    CHECK_THROWS_AS(for_each_input(1000, 2,
                                   [&](std::size_t i) {
                                       ++visited;
                                       if (i == 3) throw std::runtime_error("input 3");
                                       std::this_thread::sleep_for(std::chrono::microseconds(100));
                                   }),
                    std::runtime_error);
    CHECK(visited < 1000);
}
