// The learning rate of each optimizer step: a linear warm-up to the peak, then constant or a
// cosine decay to a floor, and a default peak that shrinks with the model.
//
// Why warm up: at step 1 AdamW's second moment v is one gradient's square, so its first updates
// are about lr in size whatever the gradient's scale; with every parameter moving lr at once a
// model of a few hundred million parameters overshoots (a 430M Llama-style model at a flat 3e-3
// went 10.38, 9.79, 9.11, 13.16 in its first four steps). Ramping lr linearly from peak / W to the
// peak over the first W steps lets v settle first, as GPT-3, Llama and most recipes do.
//
// A model of up to 10M parameters (burst's small test models) trains smoothly at its flat peak
// from step 1 and shows its loss falling within a few steps, so its default warm-up is 0; above
// 10M the default is 20 steps.
//
// Why a smaller peak for a larger model: the stable peak falls roughly as the inverse square root
// of the parameter count at fixed width ratios (GPT-3's table: 6e-4 at 125M, 3e-4 at 350M,
// 2e-4 at 1.3B). default_peak_lr uses 3e-3 up to 10M parameters (burst's small test models, which
// learn visibly within 30 steps at it) and 3e-3 * sqrt(1e7 / N) above: 4.6e-4 at 430M, 9.5e-5 at 10B.
//
// Steps count from 1 across resumes (a resumed run continues its schedule where it stopped).
#pragma once

#include <cstdint>
#include <string>

namespace burst::rt {

enum class LrDecay { Constant, Cosine };

struct LrSchedule {
  float peak = 0;                  // <= 0: default_peak_lr of the model
  std::int64_t warmup_steps = -1;  // < 0: default_warmup_steps of the model
  LrDecay decay = LrDecay::Constant;
  std::int64_t decay_steps = 0;  // cosine: the step at which lr reaches the floor (then stays); > warmup_steps
  float floor_ratio = 0.1f;      // cosine: the floor as a fraction of the peak
};

[[nodiscard]] float default_peak_lr(std::uint64_t parameters);
[[nodiscard]] std::int64_t default_warmup_steps(std::uint64_t parameters);

// `s` with its defaults resolved for a model of `parameters`, checked (require_valid).
[[nodiscard]] LrSchedule resolved(LrSchedule s, std::uint64_t parameters);

// The learning rate of step `step` (1, 2, ...) with the schedule's peak (resolved: > 0).
[[nodiscard]] float lr_at(const LrSchedule& schedule, std::int64_t step);

// "constant", "cosine"; parse throws burst::Error naming `where` and the valid spellings.
[[nodiscard]] const char* to_string(LrDecay decay);
[[nodiscard]] LrDecay parse_lr_decay(const std::string& text, const std::string& where);

// Throws burst::Error naming each bad field of a resolved schedule (cosine without decay_steps
// past the warm-up, a floor outside [0, 1]).
void require_valid(const LrSchedule& schedule);

}  // namespace burst::rt
