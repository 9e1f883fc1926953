// Progress for long work, on stderr (stdout carries data). Work that ends within a second
// prints nothing; longer work redraws one line on a terminal, or prints a line at every 10%
// otherwise, so logs stay short: items done of the total, elapsed time and an estimate of the
// time left from the rate so far ("what-if: 37 of 120 (30.8%), 12.3 s, about 27 s left"); it
// ends with its duration. Silent when disabled.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace burst {

class Progress {
 public:
  Progress(std::string label, std::int64_t total, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(std::int64_t done);
  void finish();

 private:
  std::string label_;
  std::int64_t total_;
  bool enabled_;
  bool tty_;
  std::int64_t done_ = 0;
  int last_decile_ = -1;
  bool finished_ = false;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace burst
