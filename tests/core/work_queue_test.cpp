// Work spread over threads (core/work_queue.hpp). The bulk runner, detail::for_each_input: every
// input visited once whatever the number of workers, each worker's inputs in runs, and a
// worker's exception brought to the caller. AwaitedTask: items deferred while the task runs are
// given back only once it is done, its results visible, its exception rethrown by wait().
// ProgressCounter: every count reported once, in order.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cmalign/internal/core/work_queue.hpp"

using cmalign::detail::AwaitedTask;
using cmalign::detail::for_each_input;
using cmalign::detail::ProgressCounter;

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

TEST_CASE("AwaitedTask: deferred items come back only once the task is done") {
    std::promise<void> release;
    int result = 0;
    AwaitedTask task([&, gate = release.get_future().share()] {
        gate.wait();
        result = 42;
    });
    CHECK_FALSE(task.done());
    task.defer(1);
    task.defer(2);
    task.defer(3);
    CHECK_FALSE(task.take_deferred()); // the task still runs
    release.set_value();
    while (!task.done())
        std::this_thread::yield();
    CHECK(result == 42); // done() makes what the task wrote visible
    CHECK(task.take_deferred() == std::optional<std::size_t>(3));
    CHECK(task.take_all_deferred() == std::vector<std::size_t>{1, 2});
    CHECK_FALSE(task.take_deferred());
    CHECK(task.take_all_deferred().empty());
    task.wait();
}

TEST_CASE("AwaitedTask: wait() rethrows the task's exception") {
    AwaitedTask task([] { throw std::runtime_error("no model"); });
    CHECK_THROWS_WITH_AS(task.wait(), "no model", std::runtime_error);
    CHECK(task.done());
}

TEST_CASE("AwaitedTask: items deferred by many workers are each taken once") {
    AwaitedTask task([] {});
    std::vector<std::atomic<int>> taken(500);
    for_each_input(taken.size(), 4, [&](std::size_t i) {
        task.defer(i);
        if (auto k = task.take_deferred()) ++taken[*k];
    });
    task.wait();
    for (auto k : task.take_all_deferred())
        ++taken[k];
    CHECK(std::all_of(taken.begin(), taken.end(), [](const auto& n) { return n == 1; }));
}

TEST_CASE("ProgressCounter: each count once, in order, one call at a time") {
    std::vector<std::size_t> counts;
    std::size_t totals_seen = 0;
    ProgressCounter progress(
        [&](std::size_t done, std::size_t total) {
            counts.push_back(done); // unguarded: the counter serialises the calls
            totals_seen += total == 300;
        },
        300);
    for_each_input(300, 4, [&](std::size_t) { progress.step(); });
    std::vector<std::size_t> expected(300);
    for (std::size_t i = 0; i < expected.size(); ++i)
        expected[i] = i + 1;
    CHECK(counts == expected);
    CHECK(totals_seen == 300);
    ProgressCounter silent({}, 3); // no report: nothing to call
    silent.step();
}
