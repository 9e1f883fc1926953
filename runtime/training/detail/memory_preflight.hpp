// Memory checked before it is spent: a training run refuses, before allocating anything large,
// a plan whose smallest possible footprint on this rank exceeds the memory this rank can have,
// naming the items, instead of growing until the kernel kills it (exit 137, no word) or
// std::bad_alloc ends it mid-step.
//
// The footprint is a LOWER BOUND of what the runtime will hold (fp32 tensors, c = this rank's
// tokens): under every checkpoint policy each of the L layers keeps at least its input
// (L c hidden floats), one layer's forward holds at once at least the attention's norm, q, o, k
// and v (c (3 hidden + 2 kv_dim) floats) or the MLP's norm and two hidden activations
// (c (hidden + 2 ffn)), whichever is larger, and the model
// state is at least parameters and their gradients (P floats each, the parameters divided by the
// ranks under ZeRO 3 and the gradients under ZeRO 2 and 3). The real peak is higher (the ledger measures it), so a plan
// refused here can never run, and a plan accepted here can still run out of memory later: that failure still ends with
// a clear out-of-memory message (tools/burst/every_rank.cpp).
//
// The bound is counted without wrapping (common/saturating.hpp): an estimate past 8 EiB (a
// sequence of 2^53 tokens on a rank, say) stops at that ceiling and is always refused, "too
// large to count", where a wrapped conversion once came back as a few bytes and passed.
//
// What this rank can have: the least of the node's MemAvailable (/proc/meminfo) shared by the
// ranks on this node, the cgroup's memory.max shared the same way, and the address-space limit
// (RLIMIT_AS, `ulimit -v`) minus what the process has mapped already.
//
// A GPU run (burst run --device cuda) is two budgets: its activations live on the GPU, in their
// dtype there (bf16: 2 bytes), against the GPU's free memory (cudaMemGetInfo) shared by the ranks
// that drive it; the model state is checked where it lives (zero_model.hpp): on the GPU, at
// least its bf16 parameters, fp32 gradients and the optimizer's fp32 master weights, m and v
// (each sharded as the ZeRO stage says); on the host (the CPU, or a plan that offloads), at least
// the fp32 parameters and gradients.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "runtime/kernels/kernel_memory.hpp"

namespace burst::rt {

struct MemoryNeed {
  std::string item;
  std::uint64_t bytes = 0;
  bool on_device = false;  // the GPU's memory (a GPU run's activations), else the host's
};

// The lower bound above, item by item, for one rank of `ranks` holding `tokens` tokens.
// `device_activation_bytes` > 0: a GPU run whose activations cost that much an element there;
// `state_on_device`: its model state lives in GPU memory too.
[[nodiscard]] std::vector<MemoryNeed> minimum_training_memory(const plan::Plan& plan, std::int64_t tokens, int ranks,
                                                              std::size_t device_activation_bytes = 0,
                                                              bool state_on_device = false);

struct MemoryAvailable {
  std::uint64_t bytes = 0;
  std::string source;  // "MemAvailable 11.2 GiB shared by 4 ranks", "ulimit -v ..."
};

// Per rank; `ranks_on_node` share the node's memory (Communicator::local_size: the ranks of an
// mpirun job on this node, or every rank of an in-process loopback job).
[[nodiscard]] MemoryAvailable memory_available(int ranks_on_node);

// A GPU's share for one of the `ranks_per_device` ranks that drive it: its free memory now
// (total less used, as cudaMemGetInfo saw it).
[[nodiscard]] MemoryAvailable device_memory_available(const DeviceMemoryUse& use, int ranks_per_device);

// Throws burst::Error at plan:/job/seq_len naming the items when the host's items exceed
// `available`, or the device's exceed `device` (a GPU run).
void require_memory(const std::vector<MemoryNeed>& need, const MemoryAvailable& available,
                    const std::optional<MemoryAvailable>& device = std::nullopt);

}  // namespace burst::rt
