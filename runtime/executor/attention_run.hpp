// `burst run --attention-only`: a plan's distributed attention run for real on random inputs,
// checked against a single-rank reference, measured, and set beside the plan's prediction.
//
// Inputs: Q, K, V and dO drawn from a seed per (tensor, global position, head, dim), so every
// rank makes exactly its own rows, in its layout's order, and rank 0 can make the whole
// sequence for the reference. The plan's precision holds (precision.hpp): a bf16 plan's inputs
// are bf16-rounded, and so are the reference's. Each phase runs between barriers and its time is the slowest
// rank's. --check gathers O, dQ, dK, dV to rank 0, puts every row back at its position (the
// layout's inverse permutation) and compares with full_attention over the whole sequence.
//
// A dry run executes the exact schedule of any plan (ring, layout, mask, backward mode, on as
// many ranks as the plan has) with tiny tensors: 2 tokens per layout chunk, the plan's ratio of
// query to KV heads over one KV head, head dim 8, and a window or document length scaled with
// the sequence. It always checks, and counts messages: every send must meet its receive.
//
// Tracing: with a RunTrace to fill, every rank records its ring loops (run_trace.hpp) from an
// origin taken right after the barrier that starts the forward phase, and rank 0 receives
// every rank's events; write_run_trace turns them into a Chrome trace.
#pragma once

#include <cstdint>
#include <optional>

#include "common/json_reader.hpp"
#include "plan/plan.hpp"
#include "runtime/comm/communicator.hpp"
#include "runtime/schedule/precision.hpp"
#include "runtime/kernels/attention_kernels.hpp"
#include "runtime/executor/attention_report.hpp"
#include "runtime/executor/run_trace.hpp"
#include "runtime/schedule/ring_schedule.hpp"

namespace burst::rt {

struct AttentionRunOptions {
  std::uint64_t seed = 1;
  bool check = false;
  bool dry_run = false;
  double tolerance = 1e-4;  // fp32 plans: max abs error allowed by the check
  // plans with bf16 tensors or bf16 travelling accumulators: max error over max |reference|
  // per tensor (the reference runs in fp32 on the same bf16-rounded inputs; what remains is the
  // rounding of the outputs and of the travelling accumulators, docs/runtime-precision.md)
  double bf16_tolerance = 2e-2;
  // The kernels every rank computes with (not owned); nullptr: the CPU kernels. Kernels that
  // only compute in bf16 (the CUDA ones) need a bf16 plan: prepare_attention_run refuses fp32.
  AttentionKernels* kernels = nullptr;
  // Untimed runs of both phases first (the first touch of every buffer, the kernels' and the
  // transport's first calls), then timed runs: each rank's figures are its median over them.
  int warmups = 0;
  int repeats = 1;
};

// Runs on every rank of `comm` (its size must be the plan's rank count: burst::Error otherwise).
// Returns the report on rank 0 (attention_report.hpp), nothing elsewhere.
// `trace`: every rank passes one or every rank passes none (gathering it is collective); rank 0's
// is filled with every rank's timeline.
// The plan as it will run (a dry run's tiny dimensions and scaled mask), its schedule checked
// statically. No communication: every rank of a job fails here the same way on bad input
// (another rank count, a length the layout cannot split, a plan the runtime cannot run).
struct PreparedRun {
  plan::Plan plan;
  std::int64_t seq = 0;
  int heads = 0, kv_heads = 0, head_dim = 0;
  RingSchedule schedule;
  AttentionPrecision precision;
};
// Throws burst::Error when a job of `job_ranks` ranks cannot run the plan: another rank count
// (saying how to start it).
void require_runnable_job(const plan::Plan& plan, int job_ranks);

// The run of world rank `rank`: its data-parallel replica's schedule (every replica runs the
// same layer on the same inputs at once; the check compares each with the reference).
[[nodiscard]] PreparedRun prepare_attention_run(const plan::Plan& plan, int job_ranks,
                                                const AttentionRunOptions& options, int rank = 0);

// The prepared plan with the run's head counts and head dim in its model (a dry run's tiny
// ones), as whatever sizes the run's messages from a plan needs it (the NCCL op lists).
[[nodiscard]] plan::Plan plan_as_run(const PreparedRun& prepared);

[[nodiscard]] std::optional<AttentionReport> run_attention(const plan::Plan& plan, Communicator& comm,
                                                           const AttentionRunOptions& options,
                                                           RunTrace* trace = nullptr);
// The same for a run prepared already (prepare_attention_run with the same options).
[[nodiscard]] std::optional<AttentionReport> run_attention(const PreparedRun& prepared, Communicator& comm,
                                                           const AttentionRunOptions& options,
                                                           RunTrace* trace = nullptr);

}  // namespace burst::rt
