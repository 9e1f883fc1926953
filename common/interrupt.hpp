// Ctrl-C for long work that can stop early and still be useful (what-if grids, scaling tables,
// benchmarks): while an InterruptScope lives, the first SIGINT only raises a flag that the
// work's loop polls between items; the work stops after the item in hand, and the command
// writes what it has (complete lines, files replaced atomically) and says it was cut short. A
// second Ctrl-C ends the process at once, as usual. Outside a scope SIGINT behaves as always.
#pragma once

namespace burst {

class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

// Whether Ctrl-C was pressed inside the current scope.
[[nodiscard]] bool interrupt_requested();

// The exit code of a command cut short by Ctrl-C (128 + SIGINT, what shells report).
inline constexpr int kInterruptedExitCode = 130;

}  // namespace burst
