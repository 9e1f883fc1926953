// The SIGINT flag (see interrupt.hpp). The handler only stores to a lock-free atomic and
// re-arms the default action, both async-signal-safe.
#include "common/interrupt.hpp"

#include <atomic>
#include <csignal>

namespace burst {
namespace {

std::atomic<bool> g_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_interrupt(int) {
  g_requested.store(true);
  std::signal(SIGINT, SIG_DFL);  // the next Ctrl-C ends the process
}

}  // namespace

InterruptScope::InterruptScope() {
  g_requested.store(false);
  std::signal(SIGINT, on_interrupt);
}

InterruptScope::~InterruptScope() { std::signal(SIGINT, SIG_DFL); }

bool interrupt_requested() { return g_requested.load(); }

}  // namespace burst
