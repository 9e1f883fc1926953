#include "common/progress.hpp"

#include <cstdio>
#include <unistd.h>

#include <fmt/format.h>

namespace burst {
namespace {

// "37 of 120 (30.8%), 12.3 s, about 27 s left": the rate so far predicts the rest.
std::string status(std::int64_t done, std::int64_t total, double elapsed_s) {
  const double fraction = static_cast<double>(done) / static_cast<double>(total);
  std::string text = fmt::format("{} of {} ({:.1f}%), {:.1f} s", done, total, 100.0 * fraction, elapsed_s);
  if (done > 0 && done < total) text += fmt::format(", about {:.0f} s left", elapsed_s * (1.0 - fraction) / fraction);
  return text;
}

}  // namespace

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
  done_ = done;
  const double fraction = static_cast<double>(done) / static_cast<double>(total_);
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1)) return;
  shown_ = true;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (tty_) {
    if (now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    fmt::print(stderr, "\r{}: {}\x1b[K", label_, status(done, total_, elapsed));  // erase the longer old line's tail
    std::fflush(stderr);
    return;
  }
  const int decile = static_cast<int>(fraction * 10.0);
  if (decile > last_decile_ && decile < 10) {
    last_decile_ = decile;
    fmt::print(stderr, "{}: {}\n", label_, status(done, total_, elapsed));
  }
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (!shown_) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const char* line_start = tty_ ? "\r" : "";
  const char* erase_rest = tty_ ? "\x1b[K" : "";  // the redrawn line may have been longer
  if (done_ < total_) {  // stopped early (Ctrl-C)
    fmt::print(stderr, "{}{}: stopped after {} of {} in {:.2f} s{}\n", line_start, label_, done_, total_, seconds, erase_rest);
  } else {
    fmt::print(stderr, "{}{}: done in {:.2f} s{}\n", line_start, label_, seconds, erase_rest);
  }
}

}  // namespace burst
