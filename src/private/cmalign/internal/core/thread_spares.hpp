// Arrays handed from one user to the next on the same thread (ThreadSpares). Private.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace cmalign {

// Arrays passed from one table to the next on the same thread, their memory kept: a bulk run
// builds a macro table for every board and for every include it records, and on a virtual
// machine a fresh page costs a few µs to fault and clear (a tenth of a whole tree's time).
template <class T> class ThreadSpares {
public:
    // Empty, with room for `at_least` where a kept array has it (the smallest such).
    static std::vector<T> take(std::size_t at_least) {
        auto& list = kept();
        auto best = list.end();
        for (auto it = list.begin(); it != list.end(); ++it)
            if (it->capacity() >= at_least &&
                (best == list.end() || it->capacity() < best->capacity()))
                best = it;
        std::vector<T> v;
        if (best != list.end()) {
            v = std::move(*best);
            list.erase(best);
            v.clear();
        }
        return v;
    }
    static void give(std::vector<T>&& v) {
        if (v.capacity() == 0) return;
        auto& list = kept();
        list.push_back(std::move(v));
        if (list.size() > 4) // the smallest goes
            list.erase(std::min_element(list.begin(), list.end(), [](const auto& a, const auto& b) {
                return a.capacity() < b.capacity();
            }));
    }

private:
    static std::vector<std::vector<T>>& kept() {
        thread_local std::vector<std::vector<T>> list;
        return list;
    }
};

} // namespace cmalign
