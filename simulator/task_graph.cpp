#include "simulator/task_graph.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace burst::sim {

const char* to_string(Phase phase) { return phase == Phase::Forward ? "forward" : "backward"; }

const char* to_string(KernelKind kernel) {
  switch (kernel) {
    case KernelKind::AttentionForward: return "attn_fwd";
    case KernelKind::AttentionBackward: return "attn_bwd";
    case KernelKind::Gemm: return "gemm";
    case KernelKind::Elementwise: return "elementwise";
  }
  return "?";
}

const char* to_string(Payload payload) {
  switch (payload) {
    case Payload::KV: return "kv";
    case Payload::QPack: return "q_pack";
    case Payload::DQ: return "dq";
    case Payload::DKV: return "dkv";
    case Payload::AllToAll: return "all_to_all";
  }
  return "?";
}

void TaskGraph::dependency_not_added(std::size_t begin) {
  deps_.resize(begin);
  // Programming error in a lowering, not user input: tasks must come in topological order.
  throw std::logic_error("TaskGraph: dependency on a task not yet added");
}

Task TaskGraph::compute_task(const ComputeSpec& spec) {
  constexpr std::int64_t max_block = std::numeric_limits<std::int32_t>::max();
  if (spec.lanes < 0 || spec.lanes > std::numeric_limits<std::uint16_t>::max()) {
    throw std::invalid_argument(fmt::format("TaskGraph: {} kernel lanes outside 0..65535", spec.lanes));
  }
  if (spec.block_q < 0 || spec.block_q > max_block || spec.block_k < 0 || spec.block_k > max_block) {
    throw std::invalid_argument(
        fmt::format("TaskGraph: compute block {} x {} tokens outside 0..{}", spec.block_q, spec.block_k, max_block));
  }
  return Task{.amount = spec.flops,
              .gpu = spec.gpu,
              .peer = spec.gpu,
              .step = spec.step,
              .block_q = static_cast<std::int32_t>(spec.block_q),
              .block_k = static_cast<std::int32_t>(spec.block_k),
              .epilogue_bytes = static_cast<float>(spec.epilogue_bytes),
              .kind = TaskKind::Compute,
              .phase = spec.phase,
              .kernel = spec.kernel,
              .stream = static_cast<std::uint8_t>(spec.stream),
              .masked = spec.masked,
              .lanes = static_cast<std::uint16_t>(spec.lanes)};
}

TaskId TaskGraph::add_compute(const ComputeSpec& spec, std::span<const TaskId> deps) {
  const Task task = compute_task(spec);
  streams_ = std::max(streams_, task.stream + 1);
  return push(task, deps);
}

TaskGraph TaskGraph::replicated(const TaskGraph& graph, int copies, int gpus,
                                const std::function<int(int gpu, int copy)>& gpu_of) {
  TaskGraph out(gpus);
  out.streams_ = graph.streams_;
  for (std::size_t g = 0; g < graph.stand_in_.size(); ++g) {
    const int in = graph.stand_in_[g];
    if (in == static_cast<int>(g)) continue;
    for (int copy = 0; copy < copies; ++copy) out.set_stand_in(gpu_of(static_cast<int>(g), copy), gpu_of(in, copy));
  }
  const auto n = static_cast<TaskId>(graph.size());
  out.reserve(graph.size() * static_cast<std::size_t>(copies), graph.deps_.size() * static_cast<std::size_t>(copies));
  std::vector<TaskId> deps;
  for (int copy = 0; copy < copies; ++copy) {
    const TaskId offset = n * copy;
    for (TaskId id = 0; id < n; ++id) {
      Task task = graph.task(id);
      task.gpu = gpu_of(task.gpu, copy);
      task.peer = gpu_of(task.peer, copy);
      deps.clear();
      for (const TaskId d : graph.deps(id)) deps.push_back(d + offset);
      (void)out.push(task, deps);
    }
  }
  return out;
}

void TaskGraph::set_stand_in(int gpu, int stand_in) {
  if (stand_in_.empty()) {
    stand_in_.resize(static_cast<std::size_t>(gpus_));
    std::iota(stand_in_.begin(), stand_in_.end(), 0);
  }
  stand_in_.at(static_cast<std::size_t>(gpu)) = stand_in;
}

void TaskGraph::reserve(std::size_t tasks, std::size_t deps) {
  tasks_.reserve(tasks);
  deps_.reserve(deps);
}

}  // namespace burst::sim
