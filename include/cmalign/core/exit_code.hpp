// The exit status of every command, and of every library outcome that a command turns into one.
#pragma once

namespace cmalign {

// 0: nothing the kernel rejects; 1: findings (an error-level finding, a warning under --werror,
// a fix that is needed but not applied); 2: usage error, unreadable or unparsable input,
// contradictory configuration, a write that failed. Never a signal.
enum class ExitCode : int { clean = 0, findings = 1, input_error = 2 };

constexpr int to_int(ExitCode code) {
    return static_cast<int>(code);
}

// The worse of two outcomes (input errors over findings over clean).
constexpr ExitCode worst(ExitCode a, ExitCode b) {
    return to_int(a) > to_int(b) ? a : b;
}

} // namespace cmalign
