#include "common/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <unistd.h>

#include <fmt/format.h>

namespace burst {

std::string progress_status(std::int64_t done, std::int64_t total, double fraction, double elapsed_s) {
  std::string text = fmt::format("{} of {} ({:.1f}%), {:.1f} s", done, total, 100.0 * fraction, elapsed_s);
  if (done > 0 && done < total && fraction > 0) {
    text += fmt::format(", about {:.0f} s left", elapsed_s * (1.0 - fraction) / fraction);
  }
  return text;
}

Progress::Progress(std::string label, std::int64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total > 0 ? total : 1),
      enabled_(enabled),
      tty_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::Progress(std::string label, const std::vector<double>& item_work, bool enabled)
    : Progress(std::move(label), static_cast<std::int64_t>(item_work.size()), enabled) {
  work_done_after_.resize(item_work.size());
  std::transform_inclusive_scan(item_work.begin(), item_work.end(), work_done_after_.begin(), std::plus<>(),
                                [](double w) { return std::max(w, 0.0); });
  if (!work_done_after_.empty() && !(work_done_after_.back() > 0)) work_done_after_.clear();  // no work: count items
}

double Progress::fraction_done(std::int64_t done) const {
  if (done <= 0) return 0;
  if (work_done_after_.empty()) return std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
  const auto index = static_cast<std::size_t>(std::min(done, total_)) - 1;
  return work_done_after_[index] / work_done_after_.back();
}

Progress::~Progress() { finish(); }

void Progress::update(std::int64_t done) {
  if (!enabled_ || finished_) return;
  done_ = done;
  const double fraction = fraction_done(done);
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1)) return;
  shown_ = true;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (tty_) {
    if (now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    fmt::print(stderr, "\r{}: {}\x1b[K", label_,
               progress_status(done, total_, fraction, elapsed));  // erase the longer old line's tail
    std::fflush(stderr);
    return;
  }
  const int decile = static_cast<int>(fraction * 10.0);
  if (decile > last_decile_ && decile < 10) {
    last_decile_ = decile;
    fmt::print(stderr, "{}: {}\n", label_, progress_status(done, total_, fraction, elapsed));
  }
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (!shown_) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const char* line_start = tty_ ? "\r" : "";
  const char* erase_rest = tty_ ? "\x1b[K" : "";  // the redrawn line may have been longer
  if (done_ < total_) {                           // stopped early (Ctrl-C)
    fmt::print(stderr, "{}{}: stopped after {} of {} in {:.2f} s{}\n", line_start, label_, done_, total_, seconds,
               erase_rest);
  } else {
    fmt::print(stderr, "{}{}: done in {:.2f} s{}\n", line_start, label_, seconds, erase_rest);
  }
}

}  // namespace burst
