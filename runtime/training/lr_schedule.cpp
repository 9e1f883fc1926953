// Warm-up and decay of the learning rate (see lr_schedule.hpp).
#include "runtime/training/lr_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::rt {

namespace {
constexpr double kSmall = 1e7;  // parameters: up to here a model takes the flat 3e-3 from step 1
}  // namespace

float default_peak_lr(std::uint64_t parameters) {
  constexpr double kPeak = 3e-3;
  const double n = static_cast<double>(std::max<std::uint64_t>(parameters, 1));
  return static_cast<float>(n <= kSmall ? kPeak : kPeak * std::sqrt(kSmall / n));
}

std::int64_t default_warmup_steps(std::uint64_t parameters) {
  return static_cast<double>(parameters) <= kSmall ? 0 : 20;
}

LrSchedule resolved(LrSchedule s, std::uint64_t parameters) {
  if (s.peak <= 0) s.peak = default_peak_lr(parameters);
  if (s.warmup_steps < 0) s.warmup_steps = default_warmup_steps(parameters);
  require_valid(s);
  return s;
}

float lr_at(const LrSchedule& s, std::int64_t step) {
  const double peak = s.peak;
  if (s.warmup_steps > 0 && step <= s.warmup_steps) {
    return static_cast<float>(peak * static_cast<double>(step) / static_cast<double>(s.warmup_steps));
  }
  if (s.decay == LrDecay::Constant) return s.peak;
  const double span = static_cast<double>(s.decay_steps - s.warmup_steps);
  const double done = std::clamp(static_cast<double>(step - s.warmup_steps) / span, 0.0, 1.0);
  const double floor = peak * s.floor_ratio;
  return static_cast<float>(floor + (peak - floor) * 0.5 * (1.0 + std::cos(std::numbers::pi * done)));
}

const char* to_string(LrDecay decay) { return decay == LrDecay::Cosine ? "cosine" : "constant"; }

LrDecay parse_lr_decay(const std::string& text, const std::string& where) {
  if (text == "constant") return LrDecay::Constant;
  if (text == "cosine") return LrDecay::Cosine;
  throw Error(Problem{where, fmt::format("unknown decay '{}'", text), "constant, cosine", ""});
}

void require_valid(const LrSchedule& s) {
  Problems p;
  if (s.decay == LrDecay::Cosine && s.decay_steps <= s.warmup_steps) {
    p.add("--decay-steps", fmt::format("{} with a warm-up of {}", s.decay_steps, s.warmup_steps),
          "more steps than the warm-up (the step at which the cosine reaches its floor)");
  }
  if (!(s.floor_ratio >= 0.0f && s.floor_ratio <= 1.0f))
    p.add("--lr-floor", fmt::format("{}", s.floor_ratio), "0 to 1");
  p.throw_if_any();
}

}  // namespace burst::rt
