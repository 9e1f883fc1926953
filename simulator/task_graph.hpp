// A task graph: compute tasks on a GPU's compute stream and transfers between two GPUs, joined
// by dependencies. Lowerings (simulator/attention) build one per strategy; engines
// (simulator/engine) schedule it on a topology.
//
// Tasks are added in a topological order (every dependency already exists), so engines can
// walk the graph front to back. Storage is flat (dependencies in one array, indexed by
// ranges) and in huge pages (huge_page_allocator.hpp) because a 1024-GPU layer has millions
// of tasks.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <functional>
#include <span>
#include <vector>

#include "simulator/huge_page_allocator.hpp"

namespace burst::sim {

using TaskId = std::int32_t;

enum class TaskKind : std::uint8_t { Compute, Transfer };
enum class Phase : std::uint8_t { Forward, Backward };
enum class KernelKind : std::uint8_t { AttentionForward, AttentionBackward, Gemm, Elementwise };
// What a transfer carries: K,V blocks; the query-side pack (Q, dO, D, lse); a dQ accumulator;
// dK,dV accumulators; an all-to-all shard (Ulysses).
enum class Payload : std::uint8_t { KV, QPack, DQ, DKV, AllToAll };

[[nodiscard]] const char* to_string(Phase phase);        // "forward", "backward"
[[nodiscard]] const char* to_string(KernelKind kernel);  // "attn_fwd", "attn_bwd", "gemm", "elementwise"
[[nodiscard]] const char* to_string(Payload payload);    // "kv", "q_pack", "dq", "dkv", "all_to_all"

// 48 bytes: lowerings write millions of these and engines read them several times over, so
// sizes are 32-bit (TaskGraph::add_compute checks block sizes fit) and a task's dependencies
// end where the next task's begin.
struct Task {
  double amount = 0;           // compute: FLOPs; transfer: bytes
  std::int32_t gpu = 0;        // compute: the GPU; transfer: the source GPU
  std::int32_t peer = 0;       // transfer: the destination GPU (compute: the GPU again)
  std::int32_t step = 0;       // ring step (for traces and checks)
  std::int32_t block_q = 0;    // compute: query rows of the block (tokens), for kernel efficiency
  std::int32_t block_k = 0;    // compute: key columns of the block (tokens)
  std::int32_t dep_begin = 0;  // first dependency in the graph's dependency array
  float epilogue_bytes = 0;    // compute: bytes the step's merge or accumulation streams through memory
  TaskKind kind = TaskKind::Compute;
  Phase phase = Phase::Forward;
  KernelKind kernel = KernelKind::AttentionForward;  // compute only
  Payload payload = Payload::KV;                     // transfer only
  std::uint8_t stream = 0;                           // compute: stream index on the GPU; transfer: channel (ring level)
  bool masked = false;      // compute: the block has partly allowed tiles (a causal diagonal, a window edge)
  std::uint16_t lanes = 0;  // compute: independent (sequence, head) problems the kernel runs side by side
};
static_assert(sizeof(Task) == 48);

class TaskGraph {
 public:
  struct ComputeSpec {
    int gpu = 0;
    int stream = 0;
    Phase phase = Phase::Forward;
    KernelKind kernel = KernelKind::AttentionForward;
    double flops = 0;
    std::int64_t block_q = 0, block_k = 0;  // at most 2^31 - 1 each (std::invalid_argument otherwise)
    bool masked = false;
    double epilogue_bytes = 0;
    int lanes = 0;  // batch x local heads, at most 65535 (std::invalid_argument otherwise)
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

  // The task add_compute() adds for `spec` (std::invalid_argument where a size does not fit),
  // for costing a kernel without a graph.
  [[nodiscard]] static Task compute_task(const ComputeSpec& spec);
  // Dependencies may contain -1 (no dependency), which is skipped.
  TaskId add_compute(const ComputeSpec& spec, std::span<const TaskId> deps);
  TaskId add_compute(const ComputeSpec& spec, std::initializer_list<TaskId> deps) {
    return add_compute(spec, std::span<const TaskId>(deps.begin(), deps.size()));
  }
  TaskId add_transfer(const TransferSpec& spec, std::span<const TaskId> deps) {
    return push(Task{.amount = spec.bytes,
                     .gpu = spec.src,
                     .peer = spec.dst,
                     .step = spec.step,
                     .kind = TaskKind::Transfer,
                     .phase = spec.phase,
                     .payload = spec.payload,
                     .stream = static_cast<std::uint8_t>(spec.channel)},
                deps);
  }
  TaskId add_transfer(const TransferSpec& spec, std::initializer_list<TaskId> deps) {
    return add_transfer(spec, std::span<const TaskId>(deps.begin(), deps.size()));
  }

  [[nodiscard]] int gpus() const { return gpus_; }
  [[nodiscard]] std::size_t size() const { return tasks_.size(); }
  [[nodiscard]] const Task& task(TaskId id) const { return tasks_[static_cast<std::size_t>(id)]; }
  [[nodiscard]] std::span<const Task> tasks() const { return tasks_; }
  [[nodiscard]] std::span<const TaskId> deps(TaskId id) const {
    const auto i = static_cast<std::size_t>(id);
    const auto begin = static_cast<std::size_t>(tasks_[i].dep_begin);
    const std::size_t end = i + 1 < tasks_.size() ? static_cast<std::size_t>(tasks_[i + 1].dep_begin) : deps_.size();
    return {deps_.data() + begin, end - begin};
  }
  // Every task's dependencies, task after task.
  [[nodiscard]] std::span<const TaskId> dependencies() const { return deps_; }
  // Compute stream slots per GPU: 1 + the largest compute stream index (at least 1).
  [[nodiscard]] int streams() const { return streams_; }
  // The GPU whose compute a transfer from or to `gpu` slows (its communication kernels hold
  // that GPU's multiprocessors): `gpu` itself, unless set_stand_in() said otherwise. A folded
  // ring (attention/ring_fold.hpp) sends into its window from GPUs outside it that stand for
  // window ranks: their transfers occupy the window rank's kernels.
  [[nodiscard]] int stand_in(int gpu) const {
    return stand_in_.empty() ? gpu : stand_in_[static_cast<std::size_t>(gpu)];
  }
  void set_stand_in(int gpu, int stand_in);
  void reserve(std::size_t tasks, std::size_t deps);
  // `copies` copies of `graph` side by side in one graph of `gpus` GPUs, independent of each
  // other: copy k's task on GPU g runs on gpu_of(g, k) (a tensor-parallel layer's copies).
  [[nodiscard]] static TaskGraph replicated(const TaskGraph& graph, int copies, int gpus,
                                            const std::function<int(int gpu, int copy)>& gpu_of);

 private:
  TaskId push(const Task& task, std::span<const TaskId> deps) {
    const auto id = static_cast<TaskId>(tasks_.size());
    const std::size_t begin = deps_.size();
    for (const TaskId d : deps) {
      if (d < 0) continue;
      if (d >= id) dependency_not_added(begin);
      deps_.push_back(d);
    }
    tasks_.push_back(task);
    tasks_.back().dep_begin = static_cast<std::int32_t>(begin);
    return id;
  }
  // Drops the dependencies pushed since `begin` and throws std::logic_error.
  [[noreturn]] void dependency_not_added(std::size_t begin);

  int gpus_;
  int streams_ = 1;
  std::vector<int> stand_in_;  // per GPU; empty: every GPU itself
  BigVector<Task> tasks_;
  BigVector<TaskId> deps_;
};

}  // namespace burst::sim
