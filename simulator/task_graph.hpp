// A task graph: compute tasks on a GPU's compute stream and transfers between two GPUs, joined
// by dependencies. Lowerings (simulator/attention) build one per strategy; engines
// (simulator/engine) schedule it on a topology.
//
// Tasks are added in a topological order (every dependency already exists), so engines can
// walk the graph front to back. Storage is flat (dependencies in one array, indexed by
// ranges) because a 1024-GPU layer has millions of tasks.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

namespace burst::sim {

using TaskId = std::int32_t;

enum class TaskKind : std::uint8_t { Compute, Transfer };
enum class Phase : std::uint8_t { Forward, Backward };
enum class KernelKind : std::uint8_t { AttentionForward, AttentionBackward, Gemm, Elementwise };
// What a transfer carries: K,V blocks; the query-side pack (Q, dO, D, lse); a dQ accumulator;
// dK,dV accumulators; an all-to-all shard (Ulysses).
enum class Payload : std::uint8_t { KV, QPack, DQ, DKV, AllToAll };

[[nodiscard]] const char* to_string(Phase phase);       // "forward", "backward"
[[nodiscard]] const char* to_string(KernelKind kernel); // "attn_fwd", "attn_bwd", "gemm", "elementwise"
[[nodiscard]] const char* to_string(Payload payload);   // "kv", "q_pack", "dq", "dkv", "all_to_all"

struct Task {
  TaskKind kind = TaskKind::Compute;
  Phase phase = Phase::Forward;
  KernelKind kernel = KernelKind::AttentionForward;  // compute only
  Payload payload = Payload::KV;                     // transfer only
  std::uint8_t stream = 0;  // compute: stream index on the GPU; transfer: channel (ring level)
  std::int32_t gpu = 0;     // compute: the GPU; transfer: the source GPU
  std::int32_t peer = 0;    // transfer: the destination GPU
  std::int32_t step = 0;    // ring step (for traces and checks)
  double amount = 0;        // compute: FLOPs; transfer: bytes
  std::int64_t block_q = 0; // compute: query rows of the block (tokens), for kernel efficiency
  std::int64_t block_k = 0; // compute: key columns of the block (tokens)
  std::int32_t dep_begin = 0, dep_end = 0;
};

class TaskGraph {
 public:
  struct ComputeSpec {
    int gpu = 0;
    int stream = 0;
    Phase phase = Phase::Forward;
    KernelKind kernel = KernelKind::AttentionForward;
    double flops = 0;
    std::int64_t block_q = 0, block_k = 0;
    int step = 0;
  };
  struct TransferSpec {
    int src = 0, dst = 0;
    int channel = 0;
    Phase phase = Phase::Forward;
    Payload payload = Payload::KV;
    double bytes = 0;
    int step = 0;
  };

  explicit TaskGraph(int gpus) : gpus_(gpus) {}

  // Dependencies may contain -1 (no dependency), which is skipped.
  TaskId add_compute(const ComputeSpec& spec, std::span<const TaskId> deps);
  TaskId add_compute(const ComputeSpec& spec, std::initializer_list<TaskId> deps) {
    return add_compute(spec, std::span<const TaskId>(deps.begin(), deps.size()));
  }
  TaskId add_transfer(const TransferSpec& spec, std::span<const TaskId> deps);
  TaskId add_transfer(const TransferSpec& spec, std::initializer_list<TaskId> deps) {
    return add_transfer(spec, std::span<const TaskId>(deps.begin(), deps.size()));
  }

  [[nodiscard]] int gpus() const { return gpus_; }
  [[nodiscard]] std::size_t size() const { return tasks_.size(); }
  [[nodiscard]] const Task& task(TaskId id) const { return tasks_[static_cast<std::size_t>(id)]; }
  [[nodiscard]] const std::vector<Task>& tasks() const { return tasks_; }
  [[nodiscard]] std::span<const TaskId> deps(TaskId id) const;
  void reserve(std::size_t tasks, std::size_t deps);

 private:
  TaskId push(Task task, std::span<const TaskId> deps);

  int gpus_;
  std::vector<Task> tasks_;
  std::vector<TaskId> deps_;
};

}  // namespace burst::sim
