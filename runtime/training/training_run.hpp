// `burst run plan.json --steps N`: train the plan's model on real text for N steps, on the ranks
// mpirun started, exactly as the plan says (ring, layout, backward, checkpoint policy, LM-head
// chunks), and report losses, step times and the memory each rank held beside the plan's
// prediction.
//
// Context parallel: every rank holds a replica of the model and its part of the sequence (the
// layout's tokens, with their true positions for RoPE and the mask). Data parallel: the plan's
// dp replicas (the d-th world / dp ranks are replica d, each with rings of its own) train
// different sequences of the step's global batch (plan:/job/batch): replica d takes the d-th
// batch / dp of them, as A micro-batches of m sequences side by side (m = plan:/strategy/micro_batch,
// A = plan::accumulation_steps), its gradients accumulating over the micro-batches before ZeRO
// reduces them over every rank (zero_model.hpp). What a rank keeps of the
// parameters, gradients and AdamW moments, and the collectives around the step, follow the plan's
// ZeRO stage (zero_model.hpp): stage 0 all-reduces the gradients and every rank takes the same
// AdamW step; stages 1-3 shard the optimizer, then the gradients, then the parameters over all
// ranks. Every stage computes the same update, so the replicas never drift. Step i trains sequences
// i B .. i B + B - 1 of training_sequence(corpus, seq, .) (B the batch): the same seed, plan and data give the same
// losses run after run, and a run resumed from a saved state at step k continues the loss curve of the run that saved
// it.
//
// --check: rank 0 keeps the first step's weights, sequence and summed gradients (gathered from
// the shards under ZeRO 2-3) and, once
// every collective is done, runs that step on ONE rank (a copy of the plan with a single
// contiguous block, no checkpointing, unfused LM head) and compares the loss and every weight
// gradient: the relative error of a tensor is max |g - g_ref| / max |g_ref|.
//
// Every rank reads --data and --resume itself; run() first checks (one all-reduce of a CRC)
// that they all read the same bytes. A resumed state must come from a run of the same model,
// sequence length, mask, text and learning rate (TrainingState::meta says which).
//
// --save writes each save as one set: a new generation directory of shards (one per rank under
// ZeRO 1-3, rank 0's whole state at stage 0 and under tensor parallelism, where rank 0 puts the
// parts together), completed by replacing one manifest atomically;
// the previous set stays until the new one is complete, and the newest --keep complete sets are
// kept. --resume reads the manifest, says on stderr which set it took, reassembles it and
// re-shards it for this run's ranks and stage (state_shards.hpp). --save-every N saves to the
// same path after every N steps of the run too, so a run cut short (a full disk, a killed job,
// even in the middle of a save) keeps its progress up to the last complete save.
//
// Memory: each rank's MemoryLedger (memory_ledger.hpp) measures the step's activations, stashes,
// ring buffers and LM-head workspace, and the parameters, gradients and AdamW moments it holds
// under its ZeRO stage. The report's peak is the largest rank's; each item stands beside the
// plan's predicted item of the same name, with the reason wherever they differ (zero_report.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/json_reader.hpp"
#include "plan/plan.hpp"
#include "runtime/comm/communicator.hpp"
#include "runtime/training/adamw.hpp"
#include "runtime/training/lr_schedule.hpp"
#include "runtime/training/corpus.hpp"
#include "runtime/training/memory_ledger.hpp"
#include "runtime/training/model.hpp"
#include "runtime/training/tensor_parallel.hpp"
#include "runtime/training/train_step.hpp"
#include "runtime/training/training_report.hpp"
#include "runtime/training/training_state.hpp"
#include "runtime/training/zero_model.hpp"

namespace burst::rt {

// The corpus every Debian machine has (package base-files).
inline constexpr const char* kDefaultCorpus = "/usr/share/common-licenses";

struct TrainingOptions {
  int steps = 30;
  std::string data = kDefaultCorpus;
  bool check = false;
  double tolerance = 1e-3;  // --check: largest relative error of the loss and of any weight gradient
  // --check when gradient accumulators travel as bf16 (dq_bytes or dkv_bytes 2): the reference
  // step runs the same plan's precision on one rank, where nothing travels and so nothing is
  // rounded on the way; docs/runtime-precision.md has the measured errors.
  double bf16_tolerance = 1e-2;
  // --check of a step whose activations are bf16 (the GPU's) against the CPU fp32 step: every
  // activation and its gradient rounded to bf16; the bf16-storage emulation of that step
  // (tests/train/step_data_flow_test.cpp) shows weight-gradient errors up to about 1e-2.
  double bf16_step_tolerance = 5e-2;
  std::string save;        // write model and optimizer state here after the last step
  int save_every = 0;      // with save: also after every this many steps of the run (0: the last only)
  int keep = 2;            // with save: the complete saves (generations) kept on disk, the newest first
  std::string resume;      // start from this state (its step count continues)
  std::uint64_t seed = 1;  // initial weights
  // AdamW's betas, eps, weight decay and clipping; its lr is each step's lr_at(lr, step).
  AdamWConfig adamw;
  LrSchedule lr;  // warm-up and decay (lr_schedule.hpp); a peak <= 0 is default_peak_lr of the model
  // The kernels the step computes with (not owned); null: the CPU's. A GPU step keeps the
  // parameters, gradients and AdamW state in GPU memory, or on the host where the plan offloads
  // (plan:/strategy/zero/offload; zero_model.hpp), and --check compares it with the CPU fp32
  // step under the bf16 tolerance.
  StepBackend backend;
  // Collectives on device memory over a group of the job's ranks, made once a run for each group
  // a GPU step needs them for: ZeRO's sharding group when the model state is in GPU memory
  // (zero_model.hpp), and the tensor-parallel group when tp > 1 (the sequence-parallel
  // all-gathers and reduce-scatters of bf16 activations, the replicated tensors' gradient sums).
  // `group`: the group's host communicator (the job's, or a SubgroupCommunicator of it), which the
  // result may bootstrap over (NCCL's unique id) and which outlives it; `members`: its world
  // ranks. Every rank asks for its groups in the same order: the sharding group, then the
  // tensor-parallel group. Null (or no function): `group` itself moves device memory (the GPU
  // loopback's job), or nothing needs to.
  using DeviceCollectives =
      std::function<std::unique_ptr<Communicator>(Communicator& group, std::span<const int> members)>;
  DeviceCollectives device_collectives;
  // The host memory of a state the plan offloads beside a GPU step (page-locked; empty: pageable).
  std::function<std::unique_ptr<KernelMemory>()> host_state_memory;
  int ranks_per_device = 1;  // the ranks driving one GPU (a --loopback job: all): they share its memory
  // Called on rank 0 after every step.
  std::function<void(const StepProgress&)> progress;
};

class TrainingRun {
 public:
  // Checks the job, the model, the data and the state to resume from, without sending a
  // message: every rank fails the same way on bad input (burst::Error).
  TrainingRun(const plan::Plan& plan, Communicator& comm, TrainingOptions options);

  // Collective. The report on rank 0 (training_report.hpp), nothing elsewhere.
  [[nodiscard]] std::optional<TrainingReport> run();

 private:
  struct StepRecord;
  [[nodiscard]] TrainingCheck check_against_single_rank(const std::vector<TrainingSequence>& sequences,
                                                        std::span<const float> params, std::span<const float> grads,
                                                        double loss, double grad_norm) const;
  // The global batch of optimizer step `index` (0-based over the whole training): sequences
  // index * batch .. index * batch + batch - 1 of the data (training_sequence).
  [[nodiscard]] std::vector<TrainingSequence> step_sequences(std::int64_t index) const;
  struct MemorySummary {
    std::uint64_t peak = 0;  // the largest rank's peak
    std::vector<std::uint64_t> by_rank;
    MemoryLedger::Breakdown at_peak{}, use_peaks{};
  };
  // Collective: one column of every rank's ledger (memory_ledger.hpp).
  [[nodiscard]] MemorySummary gather_memory(const std::vector<StepRecord>& records, Column column);
  [[nodiscard]] std::optional<DeviceMemoryUse> gather_gpu_memory();
  [[nodiscard]] std::optional<TrainingReport> report(const std::vector<StepRecord>& records, const ZeroModel& model);
  // Collective: writes --save (state_shards.hpp), the state after `step` steps in all.
  void save(ZeroModel& model, std::int64_t step) const;
  // What a resumed run must share with the run that saved: model, sequence, mask, text, lr.
  [[nodiscard]] Json schedule_meta() const;
  // Collective: throws burst::Error on every rank when the ranks read different text or state.
  void require_same_inputs_everywhere();

  // Collective: the whole model's parameters and gradients (--check), or its parameters and
  // AdamW state (--save), on rank 0; empty elsewhere. Under tensor parallelism from each part's
  // whole on its sharding group's root (world ranks 0 .. tp - 1), put together by whole_of_parts.
  [[nodiscard]] std::pair<std::vector<float>, std::vector<float>> whole_on_root(ZeroModel& model);
  [[nodiscard]] TrainingState whole_state_on_root(ZeroModel& model) const;
  // Collective over the first tensor-parallel group (the parts' roots): the whole-model vector
  // on rank 0 from every rank's whole part; empty elsewhere.
  [[nodiscard]] std::vector<float> whole_of_parts(std::span<const float> part) const;
  // The model the step runs and ZeRO holds: the whole, or this rank's tensor-parallel part.
  [[nodiscard]] const ModelLayout& step_model() const { return part_ ? part_->local() : model_; }
  // The ranks ZeRO shards over and reduces gradients across: the world, or under tensor
  // parallelism the ranks holding this rank's part.
  [[nodiscard]] Communicator& zero_comm() const { return sharding_group_ ? *sharding_group_ : comm_; }
  // Collective: options_.device_collectives over the world (`group` null) or a subgroup; null
  // where there is no such function or it made none.
  [[nodiscard]] std::unique_ptr<Communicator> device_collectives(SubgroupCommunicator* group) const;

  plan::Plan plan_;
  Communicator& comm_;
  TrainingOptions options_;
  ModelLayout model_;
  // Tensor parallelism (tp > 1; tensor_parallel.hpp): this rank's tensor-parallel group (the tp
  // consecutive ranks), the ranks of every replica and context-parallel rank holding the same
  // part, and the part.
  std::unique_ptr<SubgroupCommunicator> tensor_group_;
  std::unique_ptr<SubgroupCommunicator> sharding_group_;
  std::optional<TensorParallelShard> part_;
  Corpus corpus_;
  std::uint32_t corpus_crc_;  // corpus_digest(corpus_)
  std::optional<TrainingState> resumed_;
  MemoryLedger ledger_;
  TrainingStep step_;
  HostStepKernels host_state_;  // where the model state lives unless it is on the GPU
  // A GPU step's tensor-parallel collectives on device memory (made by run(); the step keeps a
  // pointer to it, so it lives as long as the run).
  std::unique_ptr<Communicator> tensor_transport_;
  std::int64_t first_step_ = 0;
};

}  // namespace burst::rt
