// What `burst run --attention-only` (and --dry-run) measured, as a type: the plan it ran, the
// run's dimensions and precision, the bytes and messages per phase and ring level, the phases'
// times beside the plan's prediction, and the check against the single-rank reference.
//
// The runtime fills it (attention_run.cpp) and the CLI prints it field by field; to_json() is
// the `--json` document, whose keys are the contract scripts read (docs/runtime-executor.md):
//   plan        {strategy, ranks, ulysses, ring, layout, backward, mask}
//   run         {dry_run, seq, heads, kv_heads, head_dim, seed, warmups, repeats, overlap,
//                precision, device}
//   comm_bytes  {forward, backward, by_level: {forward, backward}: {flat, intra, inter},
//                ulysses: {forward, backward}, simulated_by_level (where the caller added it)}
//   messages    {forward_sent, forward_received, backward_sent, backward_received,
//                blocks_computed_forward, blocks_computed_backward}
//   measured    {forward_s, backward_s, forward_compute_s, backward_compute_s,
//                forward_overlap, backward_overlap, forward_fastest_s, forward_slowest_s,
//                backward_fastest_s, backward_slowest_s}
//   predicted   {forward_s, backward_s}
//   check       {max_abs_err, max_rel_err, rms_rel_err: {out, dq, dk, dv}, tolerance,
//                tolerance_kind, passed}   (checked runs only)
// Bytes are per rank (the mean over ranks), messages summed over ranks, times the slowest rank's.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "common/json_reader.hpp"
#include "runtime/comm/communicator.hpp"
#include "runtime/schedule/precision.hpp"

namespace burst::rt {

// One figure for each phase of a pass.
struct PhasePair {
  double forward = 0;
  double backward = 0;
};

// Bytes per ring level (RingLevel order: flat, intra, inter), for each phase.
using LevelBytes = std::array<double, kRingLevelCount>;
struct PhaseLevelBytes {
  LevelBytes forward{};
  LevelBytes backward{};
};

// The largest errors of the four outputs against the reference.
struct TensorErrors {
  double out = 0, dq = 0, dk = 0, dv = 0;
};

[[nodiscard]] Json to_json(const TensorErrors& errors);  // {out, dq, dk, dv}

struct AttentionCheck {
  TensorErrors max_abs_err, max_rel_err, rms_rel_err;
  double tolerance = 0;
  bool relative = false;  // judged on max |error| / max |reference| (bf16 involved), else max |error|
  bool passed = false;
  // The errors the tolerance applies to.
  [[nodiscard]] const TensorErrors& judged() const { return relative ? max_rel_err : max_abs_err; }
  [[nodiscard]] const char* tolerance_kind() const {
    return relative ? "max |error| / max |reference|" : "max |error|";
  }
};

struct AttentionReport {
  struct PlanRun {
    std::string strategy;
    int ranks = 0;
    int ulysses = 1;
    int tp = 1, dp = 1;  // tp x dp context-parallel groups, each its own rings
    std::string ring;    // "double 2x4": the kind and its inner x outer
    std::string layout, backward, mask;
  } plan;
  struct Dimensions {
    bool dry_run = false;
    std::int64_t seq = 0;
    int heads = 0, kv_heads = 0, head_dim = 0;
    std::uint64_t seed = 0;
    int warmups = 0, repeats = 1;  // untimed runs, then timed runs (measured: their medians)
    bool overlap = true;
    AttentionPrecision precision;
    std::string device;
  } run;
  struct Bytes {
    PhasePair total;  // the ring's bytes sent per rank
    PhaseLevelBytes by_level;
    PhasePair ulysses;                                  // the head scatter and gather's all-to-alls
    std::optional<PhaseLevelBytes> simulated_by_level;  // the simulator's, where the caller adds them
  } comm_bytes;
  struct Messages {
    PhasePair sent, received, blocks_computed;
  } messages;
  struct Measured {
    PhasePair time_s;     // the slowest rank's phase (each rank's median over the timed runs)
    PhasePair compute_s;  // the busiest rank's kernel time (its median)
    // The slowest rank's fastest and slowest timed run: the spread the median comes from.
    PhasePair fastest_s, slowest_s;
    // Phase time over the busiest rank's kernel time: 1 when communication hid behind compute.
    [[nodiscard]] PhasePair overlap() const;
  } measured;
  PhasePair predicted_s;  // the plan's attention_forward_s, attention_backward_s
  std::optional<AttentionCheck> check;

  [[nodiscard]] Json to_json() const;
};

}  // namespace burst::rt
