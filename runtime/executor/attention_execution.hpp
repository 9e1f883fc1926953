// How the executor runs a plan's attention, apart from what the plan's rings say: the numeric
// precision (from the plan, precision.hpp), whether transfers overlap compute (the plan's
// strategy.overlap), which kernels compute the block pairs (the device: CPU, or CUDA when
// built with it; attention_kernels.hpp) and where the timeline is recorded (run_trace.hpp).
// One struct so that the Ulysses layer, the ring and the training step pass it on unchanged.
#pragma once

#include "runtime/schedule/precision.hpp"
#include "runtime/executor/run_trace.hpp"
#include "runtime/kernels/attention_kernels.hpp"

namespace burst::rt {

struct AttentionExecution {
  AttentionPrecision precision;
  bool overlap = true;
  AttentionKernels* kernels = nullptr;  // not owned; nullptr: the CPU kernels with default options
  TraceRecorder* recorder = nullptr;    // not owned; nullptr: nothing recorded

  // The kernels to call: `kernels`, or one shared CPU instance (stateless apart from its options).
  [[nodiscard]] AttentionKernels& kernels_to_use() const {
    static CpuAttentionKernels cpu;
    return kernels != nullptr ? *kernels : cpu;
  }
};

// Refuses a plan the kernels cannot compute (bf16-only kernels and an fp32 plan, a head dim they
// have no kernels for), naming the plan field and the device: before anything runs.
void require_kernel_limits(const AttentionKernels& kernels, int head_dim, const AttentionPrecision& precision);

// What one attention pass did: its kernels, its messages, and the memory its ring held.
struct RingAttentionStats {
  KernelStats kernels;
  double compute_s = 0;  // wall time inside the kernels (what the phase would take without communication)
  int blocks_computed = 0;
  int messages_sent = 0;
  int messages_received = 0;
  // Bytes of the pass's in-flight blocks and accumulators at their peak, plus the phase's own
  // workspace (the forward's partial O and lse, the backward's D): the memory the ring costs.
  std::uint64_t ring_buffer_bytes = 0;
};

}  // namespace burst::rt
