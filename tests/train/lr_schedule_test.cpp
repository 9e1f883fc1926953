// The learning-rate schedule (lr_schedule.hpp): warm-up, constant and cosine decay, the default
// peak by model size, and the refusals.
#include <catch2/catch.hpp>

#include <cmath>

#include "runtime/training/lr_schedule.hpp"
#include "tests/support/error_text.hpp"

using namespace burst;
using namespace burst::rt;

TEST_CASE("the learning rate warms up linearly, then stays or follows a cosine to its floor", "[training][lr]") {
  LrSchedule s;
  s.peak = 1e-3f;
  s.warmup_steps = 4;
  CHECK(lr_at(s, 1) == Approx(2.5e-4));
  CHECK(lr_at(s, 4) == Approx(1e-3));
  CHECK(lr_at(s, 5) == Approx(1e-3));
  CHECK(lr_at(s, 1000) == Approx(1e-3));
  s.decay = LrDecay::Cosine;
  s.decay_steps = 14;
  s.floor_ratio = 0.1f;
  CHECK(lr_at(s, 4) == Approx(1e-3));
  CHECK(lr_at(s, 9) == Approx(1e-4 + 0.9e-3 * 0.5));  // half way: the mean of peak and floor
  CHECK(lr_at(s, 14) == Approx(1e-4));
  CHECK(lr_at(s, 100) == Approx(1e-4));  // stays at the floor
  s.warmup_steps = 0;
  CHECK(lr_at(s, 1) < 1e-3f);  // no warm-up: the cosine starts at once
}

TEST_CASE("the default peak is 3e-3 for small models and falls as 1/sqrt(N) above 10M parameters; larger ones warm up",
          "[training][lr]") {
  const LrSchedule small = resolved({}, 1'000'000), large = resolved({}, 430'000'000);
  CHECK(small.warmup_steps == 0);
  CHECK(large.warmup_steps == 20);
  CHECK(large.peak == default_peak_lr(430'000'000));
  LrSchedule given;
  given.peak = 1e-4f;
  given.warmup_steps = 3;
  CHECK(resolved(given, 430'000'000).peak == 1e-4f);
  CHECK(resolved(given, 430'000'000).warmup_steps == 3);
  CHECK(default_peak_lr(1'000'000) == Approx(3e-3));
  CHECK(default_peak_lr(10'000'000) == Approx(3e-3));
  CHECK(default_peak_lr(430'000'000) == Approx(3e-3 * std::sqrt(1e7 / 4.3e8)));
  CHECK(default_peak_lr(430'000'000) < default_peak_lr(125'000'000));
}

TEST_CASE("a schedule that cannot run is refused by flag", "[training][lr]") {
  LrSchedule s;
  s.warmup_steps = 10;
  s.decay = LrDecay::Cosine;
  s.decay_steps = 10;
  CHECK(test::error_text([&] { require_valid(s); }).find("--decay-steps") != std::string::npos);
  CHECK(test::error_text([] { (void)parse_lr_decay("linear", "--decay"); }) ==
        "--decay: unknown decay 'linear' (valid: constant, cosine)");
}
