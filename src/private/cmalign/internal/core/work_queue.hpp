// Work spread over threads, for the commands that read many inputs: for_each_input() runs a loop
// body on several workers; AwaitedTask runs one longer task beside them and keeps the items that
// need its result until it is done; ProgressCounter reports finished items one call at a time.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace cmalign::detail {

// Calls visit(i) for every i in [0, count) on `jobs` threads (0: all cores), each index once; the
// calling thread is one of them. The first exception thrown by a visit stops the other workers
// and is rethrown here.
void for_each_input(std::size_t count, unsigned jobs,
                    const std::function<void(std::size_t)>& visit);

// A task run on a thread of its own while the caller's workers go on with items, some of which
// need what the task computes (a check's configuration, evaluated while its boards are read): an
// item met before the task is done is deferred, and taken back once it is, one after each item
// of a worker's own (take_deferred) and the rest at the end (take_all_deferred).
class AwaitedTask {
public:
    explicit AwaitedTask(std::function<void()> task);
    // Waits for the task; an exception it threw is dropped unless wait() ran.
    ~AwaitedTask() = default;
    AwaitedTask(const AwaitedTask&) = delete;
    AwaitedTask& operator=(const AwaitedTask&) = delete;

    // Whether the task has finished; when true, everything it wrote is visible to the caller.
    bool done() const { return done_.load(std::memory_order_acquire); }
    // Waits for the task and rethrows the exception it threw, if any.
    void wait();

    void defer(std::size_t item);
    // One deferred item, taken: nullopt while the task runs or when none is left.
    std::optional<std::size_t> take_deferred();
    // Every deferred item left, taken, in the order they were deferred.
    std::vector<std::size_t> take_all_deferred();

private:
    std::atomic<bool> done_{false};
    std::exception_ptr failure_;
    std::mutex deferred_mutex_;
    std::vector<std::size_t> deferred_;
    std::jthread thread_; // last: started once the members above exist, joined first
};

// Counts finished items and hands each count with the total to `report` (if set), one call at a
// time whatever thread finished the item.
class ProgressCounter {
public:
    ProgressCounter(std::function<void(std::size_t, std::size_t)> report, std::size_t total)
        : report_(std::move(report)), total_(total) {}
    void step();

private:
    std::function<void(std::size_t, std::size_t)> report_;
    std::size_t total_;
    std::size_t done_ = 0;
    std::mutex mutex_;
};

} // namespace cmalign::detail
