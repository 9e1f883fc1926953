// Progress for long work, on stderr (stdout carries data). Work that ends within a second
// prints nothing; longer work redraws one line on a terminal, or prints a line at every 10%
// otherwise, so logs stay short: items done of the total, the share of the work done, elapsed
// time and an estimate of the time left ("what-if: 37 of 120 (30.8%), 12.3 s, about 27 s left");
// it ends with its duration. Silent when disabled.
//
// The estimate scales the elapsed time by the work left over the work done. Items of equal
// cost count one each; items whose costs differ (a planner candidate that simulates a new
// attention layer of 8192 ranks against one that reuses it) are given each item's estimated
// work, in any unit, so the first cheap items do not promise a short run.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace burst {

class Progress {
 public:
  // `total` items of equal cost.
  Progress(std::string label, std::int64_t total, bool enabled);
  // One item per entry of `item_work`, each costing that much (any unit, >= 0).
  Progress(std::string label, const std::vector<double>& item_work, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(std::int64_t done);
  void finish();
  // The share of the work done after `done` items, in [0, 1].
  [[nodiscard]] double fraction_done(std::int64_t done) const;

 private:
  std::string label_;
  std::int64_t total_;
  std::vector<double> work_done_after_;  // prefix sums of item_work; empty: equal items
  bool enabled_;
  bool tty_;
  std::int64_t done_ = 0;
  int last_decile_ = -1;
  bool finished_ = false;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

// "37 of 120 (30.8%), 12.3 s, about 27 s left": `fraction` is the share of the work done after
// `done` items; the time left is elapsed_s * (1 - fraction) / fraction.
[[nodiscard]] std::string progress_status(std::int64_t done, std::int64_t total, double fraction, double elapsed_s);

}  // namespace burst
