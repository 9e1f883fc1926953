// A run of a plan on one rank, as `burst run` asks for it: the request (what to run, on which
// device, over which transport) turned into the kernels, memories and transports the run needs,
// prepared, then executed. The CLI reads the plan once, hands it here and prints the report;
// every decision between the two is the session's:
//
//   device      training computes on the CPU unless cuda is asked for; attention runs on a
//               visible GPU by default (choose_device); a --loopback job's ranks share GPU 0
//   precision   --dtype replaces the plan's /job/dtype (fp32 also makes the travelling
//               accumulators fp32); rank 0 says what changed, so a run never differs silently
//   transport   the ring's blocks travel over the job's communicator (host memory), over NCCL
//               (GPU memory across processes: the default there), or are copied GPU to GPU by a
//               loopback job's threads; a combination that cannot carry the run is refused
//   kernels     the device's attention kernels; a GPU training step's own kernels, its attention
//               kernels sharing its stream and pool, ZeRO's state on the GPU (NCCL collectives
//               across processes) or offloaded to page-locked host memory as the plan says
//
// Two phases, so that bad input fails every rank the same way before any message is sent:
// the constructor prepares (reads data, checks the plan against the job, makes kernels) and
// sends nothing; run() communicates and returns the report (rank 0; nothing elsewhere): an
// attention run's (attention_report.hpp) or a training run's (training_report.hpp), typed, for
// the CLI to print and to write as JSON.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "common/kernel_paths.hpp"
#include "plan/plan.hpp"
#include "runtime/comm/communicator.hpp"
#include "runtime/device/device.hpp"
#include "runtime/executor/attention_run.hpp"
#include "runtime/executor/run_trace.hpp"
#include "runtime/training/training_run.hpp"

namespace burst::rt {

enum class RunKind {
  Training,   // train the plan's model on real text
  Attention,  // the plan's distributed attention on random inputs, forward and backward
  DryRun,     // the plan's exact schedule with tiny tensors, checked
};

struct RunRequest {
  RunKind kind = RunKind::Training;
  std::string device;     // "cuda", "cpu", or empty: the kind's default
  std::string transport;  // "nccl", "host", or empty: nccl for cuda across processes
  std::string dtype;      // replaces the plan's /job/dtype when set: "bf16" or "fp32"
  bool loopback = false;  // every rank a thread of one process (LoopbackCommunicator)
  bool deterministic = false;
  std::string kernel_path{
      kernel_paths::kAuto};  // the CUDA kernels' implementation instead of the plan's /job/kernel_path
  bool check = false;        // compare with a single-rank reference
  bool trace = false;        // attention runs: record every rank's timeline
  int repeat = 3;            // attention runs: timed runs after one warm-up (a dry run: one run, no warm-up)
  std::uint64_t seed = 1;
  TrainingOptions training;  // training runs (its check, seed and backend are the session's)
};

// What a run returns on rank 0: the report of its kind (an attention run's for Attention and DryRun).
using RunReport = std::variant<AttentionReport, TrainingReport>;

// The device a run of `request` computes on, from this process's GPUs (a loopback job's
// launcher asks before any rank exists, to copy GPU memory between its threads).
[[nodiscard]] Device requested_device(const RunRequest& request);

class Session {
 public:
  // Prepares the run of `plan` (as read from its file) on this rank of `comm`; sends no message.
  Session(plan::Plan plan, Communicator& comm, RunRequest request);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Executes; the report on rank 0, nothing elsewhere.
  [[nodiscard]] std::optional<RunReport> run();

  // An attention run as prepared (the plan as it runs, its dimensions); null for training.
  [[nodiscard]] const PreparedRun* attention() const { return prepared_.get(); }
  // The timeline recorded by run() where the request asked for it.
  [[nodiscard]] const RunTrace& trace() const { return trace_; }

 private:
  void prepare_attention(Device device);
  void prepare_training(Device device);

  plan::Plan plan_;
  Communicator& comm_;
  RunRequest request_;
  // Declared before what uses them: destroyed after it.
  std::unique_ptr<StepKernels> step_kernels_;
  std::unique_ptr<AttentionKernels> attention_kernels_;
  std::unique_ptr<Communicator> nccl_;  // an attention run's ring transport over NCCL
  bool over_nccl_ = false;
  AttentionRunOptions attention_options_;
  std::unique_ptr<PreparedRun> prepared_;
  std::unique_ptr<TrainingRun> training_;
  RunTrace trace_;
};

}  // namespace burst::rt
