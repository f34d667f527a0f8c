// Work spread over threads (core/work_queue.hpp).
#include "cmalign/internal/core/work_queue.hpp"

#include <algorithm>
#include <utility>

namespace cmalign::detail {

void for_each_input(std::size_t count, unsigned jobs,
                    const std::function<void(std::size_t)>& visit) {
    if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
    jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(1, count)));
    // Each worker takes its own contiguous run of inputs, in order, and then helps the one with
    // the most left, from that run's end. Inputs come sorted by path, so one worker meets a
    // SoC's boards one after another and reuses the preprocessing of its .dtsi (FileCache)
    // instead of two workers preprocessing it at once (one shared counter cost 10% more work).
    std::mutex lock;
    std::vector<std::pair<std::size_t, std::size_t>> runs; // [begin, end) per worker
    for (unsigned t = 0; t < jobs; ++t)
        runs.emplace_back(count * t / jobs, count * (t + 1) / jobs);
    auto take = [&](unsigned t) -> std::optional<std::size_t> {
        std::lock_guard hold(lock);
        if (runs[t].first < runs[t].second) return runs[t].first++;
        auto most = std::max_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
            return a.second - a.first < b.second - b.first;
        });
        if (most->first >= most->second) return std::nullopt;
        return --most->second;
    };
    // An exception on a worker thread would end the process (std::terminate): the first one is
    // kept, the other workers stop taking inputs, and it is rethrown on the caller's thread.
    std::exception_ptr failure;
    auto worker = [&](unsigned t) {
        try {
            while (auto i = take(t))
                visit(*i);
        } catch (...) {
            std::lock_guard hold(lock);
            if (!failure) failure = std::current_exception();
            for (auto& run : runs)
                run.first = run.second;
        }
    };
    std::vector<std::thread> threads;
    for (unsigned t = 1; t < jobs; ++t)
        threads.emplace_back(worker, t);
    worker(0);
    for (auto& t : threads)
        t.join();
    if (failure) std::rethrow_exception(failure);
}

AwaitedTask::AwaitedTask(std::function<void()> task)
    : thread_([this, task = std::move(task)] {
          try {
              task();
          } catch (...) {
              failure_ = std::current_exception();
          }
          done_.store(true, std::memory_order_release);
      }) {}

void AwaitedTask::wait() {
    if (thread_.joinable()) thread_.join();
    if (failure_) std::rethrow_exception(failure_);
}

void AwaitedTask::defer(std::size_t item) {
    std::lock_guard hold(deferred_mutex_);
    deferred_.push_back(item);
}

std::optional<std::size_t> AwaitedTask::take_deferred() {
    if (!done()) return std::nullopt;
    std::lock_guard hold(deferred_mutex_);
    if (deferred_.empty()) return std::nullopt;
    const std::size_t item = deferred_.back();
    deferred_.pop_back();
    return item;
}

std::vector<std::size_t> AwaitedTask::take_all_deferred() {
    std::lock_guard hold(deferred_mutex_);
    return std::exchange(deferred_, {});
}

void ProgressCounter::step() {
    if (!report_) return;
    std::lock_guard hold(mutex_);
    report_(++done_, total_);
}

} // namespace cmalign::detail
