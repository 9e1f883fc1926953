// The memory a GPU holds beyond the job's tensors (MemoryBreakdown::reserve), from what drives it:
//
//   context        the CUDA context with lazy module loading (the default on Linux since CUDA
//                  12.2, and PyTorch's): about 400 MB (a PyTorch maintainer's figure for CUDA >=
//                  11.7 with lazy loading, pytorch/pytorch#109888; > 1000 MB loaded eagerly,
//                  #107667). kContextBytes.
//   workspaces     cuBLAS's workspace, one per (handle, stream): 32 MiB on Hopper, 8 MiB + 128 KiB
//                  before (pytorch/pytorch@26a39059 aten/src/ATen/cuda/CublasHandlePool.cpp,
//                  parseChosenWorkspaceSize); two streams, compute and communication, at the
//                  larger size. kWorkspaceBytes.
//   nccl           every NCCL communicator the strategy keeps busy holds, per channel and per peer
//                  it exchanges with, the buffers of NCCL's three protocols: Simple 4 MiB
//                  (NCCL_BUFFSIZE's default, nccl src/init.cc DEFAULT_BUFFSIZE), LL128 4.69 MiB
//                  (120 x 640 x 8 x 8 B) and LL 0.5 MiB (8 x 512 x 8 x 16 B), 9.19 MiB in all
//                  (NVIDIA/nccl@5067397 src/init.cc L810-813, src/include/device.h). At 32
//                  channels and 2 ring peers that is 588 MiB a communicator, as measured on 4
//                  A100 over NVLink: 544 MB for a 2-rank group, 688 MB for larger ones
//                  (NVIDIA/nccl#964); memory grows linearly with channels and communicators (the
//                  maintainers, #986). The communicators, each lazily connected by its first use:
//                    the ring's: one per ring level of more than one rank (a double ring has two
//                    unless one node holds it, or Ulysses fills the node), and one more per level
//                    where the family's travelling gradients have a communicator of their own
//                    (FrameworkMemory::separate_accumulator_communicator: burst's runtime and
//                    LoongTrain; TransformerEngine packs dK,dV with K,V, ring-flash-attention runs
//                    both on one group);
//                    a Ulysses group's all-to-all: U - 1 peers;
//                    a tensor-parallel group and the data-parallel / ZeRO group: 2 ring peers each
//                  (1 where a ring is of two ranks).
//                  NVLink SHARP buffers are left out (NeMo and JAX-Toolbox turn them off to save
//                  memory: NCCL_NVLS_ENABLE=0).
//   fragmentation  the caching allocator's reserved-but-unallocated memory: kFragmentation of what
//                  the job allocates. Published peaks put it anywhere from 1.4% (Megatron-LM, fixed
//                  shapes: 41,291 MB allocated, 41,854 MB reserved, NVIDIA/Megatron-LM#965) to 50%
//                  (FSDP on Llama-2-70B: 42 GB allocated, 63 GB reserved, meta-llama/llama-cookbook
//                  #120); the allocator's documentation names the causes (requests rounded to
//                  512 B and 2 MiB, 1-10 MiB requests carved from 20 MiB segments, sizes that change
//                  between iterations leaving slivers) but no figure. 5% is burst's own choice
//                  inside that range; --memory-margin is how a user asks for more headroom.
// A "GPU" that is a CPU rank (the local topology) holds none of these: its reserve is 0.
#include <algorithm>

#include "simulator/attention/ring.hpp"
#include "simulator/detail/training/iteration_parts.hpp"
#include "topologies/local_calibration.hpp"

namespace burst::sim {
namespace {

constexpr double kMebibyte = 1024.0 * 1024;
constexpr double kContextBytes = 400e6;
constexpr double kWorkspaceBytes = 2 * 32 * kMebibyte;
constexpr double kBufferBytesPerChannelPeer = 4 * kMebibyte + 4915200 + 512 * 1024;  // Simple, LL128, LL
constexpr double kChannels = 32;
constexpr double kFragmentation = 0.05;

}  // namespace

double ReserveParts::total() const { return context + workspaces + nccl + fragmentation; }

ReserveParts estimate_reserve(const TrainingStrategy& strategy, const topo::Topology& topology, double allocated) {
  ReserveParts parts;
  if (topo::is_cpu_rank(topology.gpu())) return parts;
  parts.context = kContextBytes;
  parts.workspaces = kWorkspaceBytes;
  const AttentionStrategy& a = strategy.attention;
  const int tp = std::max(1, strategy.tp), dp = std::max(1, strategy.dp);
  double peers = 0;  // summed over the communicators: channel-peer buffer sets per channel
  // A group of n ranks reaching its peers: a ring's (or a collective's) previous and next, one
  // when they are the same rank; an all-to-all's n - 1.
  const auto group = [&](int n, int communicators, bool all_to_all) {
    if (n <= 1) return;
    parts.communicators += communicators;
    peers += communicators * (all_to_all ? n - 1 : std::min(2, n - 1));
  };
  const World replica = replica_world(topology, tp, dp);
  if (replica.size() > 0) {
    const RingGeometry g = ring_geometry(a, replica);
    const int per_level = strategy.memory.separate_accumulator_communicator ? 2 : 1;
    for (const int n : ring_level_sizes(g)) group(n, per_level, false);
    group(g.ulysses, 1, true);
  }
  group(tp, 1, false);
  group(topology.gpu_count() / tp, 1, false);  // the gradients' reduction (DP, and ZeRO's sharding group)
  parts.nccl = kChannels * peers * kBufferBytesPerChannelPeer;
  parts.fragmentation = kFragmentation * allocated;
  return parts;
}

}  // namespace burst::sim
