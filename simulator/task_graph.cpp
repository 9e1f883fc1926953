#include "simulator/task_graph.hpp"

#include <stdexcept>

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

TaskId TaskGraph::push(Task task, std::span<const TaskId> deps) {
  const auto id = static_cast<TaskId>(tasks_.size());
  task.dep_begin = static_cast<std::int32_t>(deps_.size());
  for (const TaskId d : deps) {
    if (d < 0) continue;
    // Programming error in a lowering, not user input: tasks must come in topological order.
    if (d >= id) throw std::logic_error("TaskGraph: dependency on a task not yet added");
    deps_.push_back(d);
  }
  task.dep_end = static_cast<std::int32_t>(deps_.size());
  tasks_.push_back(task);
  return id;
}

TaskId TaskGraph::add_compute(const ComputeSpec& spec, std::span<const TaskId> deps) {
  Task t;
  t.kind = TaskKind::Compute;
  t.phase = spec.phase;
  t.kernel = spec.kernel;
  t.stream = static_cast<std::uint8_t>(spec.stream);
  t.gpu = spec.gpu;
  t.peer = spec.gpu;
  t.step = spec.step;
  t.amount = spec.flops;
  t.block_q = spec.block_q;
  t.block_k = spec.block_k;
  return push(t, deps);
}

TaskId TaskGraph::add_transfer(const TransferSpec& spec, std::span<const TaskId> deps) {
  Task t;
  t.kind = TaskKind::Transfer;
  t.phase = spec.phase;
  t.payload = spec.payload;
  t.stream = static_cast<std::uint8_t>(spec.channel);
  t.gpu = spec.src;
  t.peer = spec.dst;
  t.step = spec.step;
  t.amount = spec.bytes;
  return push(t, deps);
}

std::span<const TaskId> TaskGraph::deps(TaskId id) const {
  const Task& t = task(id);
  return {deps_.data() + t.dep_begin, static_cast<std::size_t>(t.dep_end - t.dep_begin)};
}

void TaskGraph::reserve(std::size_t tasks, std::size_t deps) {
  tasks_.reserve(tasks);
  deps_.reserve(deps);
}

}  // namespace burst::sim
