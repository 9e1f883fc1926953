#include "common/progress.hpp"

#include <cstdio>
#include <unistd.h>

#include <fmt/format.h>

namespace burst {

Progress::Progress(std::string label, std::int64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total > 0 ? total : 1),
      enabled_(enabled),
      tty_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::update(std::int64_t done) {
  if (!enabled_ || finished_) return;
  const double fraction = static_cast<double>(done) / static_cast<double>(total_);
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1)) return;
  shown_ = true;
  if (tty_) {
    if (now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    fmt::print(stderr, "\r{}: {:5.1f}%", label_, 100.0 * fraction);
    std::fflush(stderr);
    return;
  }
  const int decile = static_cast<int>(fraction * 10.0);
  if (decile > last_decile_ && decile < 10) {
    last_decile_ = decile;
    fmt::print(stderr, "{}: {}%\n", label_, decile * 10);
  }
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (!shown_) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  fmt::print(stderr, "{}{}: done in {:.2f} s\n", tty_ ? "\r" : "", label_, seconds);
}

}  // namespace burst
