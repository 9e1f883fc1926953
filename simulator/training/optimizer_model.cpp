// The optimizer step (mixed-precision AdamW) at the end of an iteration: a pass over memory.
//
// Adam does a handful of FLOPs per parameter, so its time is bytes moved, not FLOPs. Each GPU
// updates its shard of s = N / P parameters (N on every GPU at ZeRO stage 0):
//   on the GPU   read and write the fp32 master, m and v (12 bytes) plus the bf16 parameter and
//                gradient (4 bytes): 2 x 16 x s bytes through HBM at memory_bandwidth_Bps;
//   offloaded    (ZeRO-Offload) the shard's bf16 gradients go down to the host and its bf16
//                parameters come back over the GPU's PCIe link (the topology's, at the comm
//                model's efficiency; 25 GB/s when the topology has none), and the host's
//                CPU-Adam updates it at kCpuAdamParamsPerSecondPerNode, shared by the node's
//                GPUs. The three run one after the other (conservative: DeepSpeed overlaps the
//                gradient copies with the backward).
//   a CPU rank   (the local topology) the rank itself updates its shard, wherever ZeRO puts the
//                state, at the AdamW rate its calibration measured (GpuSpec::optimizer_params_per_s:
//                the training step's squared_norm and adamw_update, `burst calibrate`); nothing
//                crosses a PCIe link.
// kCpuAdamParamsPerSecondPerNode: ZeRO-Offload (Ren et al., USENIX ATC 2021) reports its
// CPU-Adam 5-7x faster than PyTorch's CPU Adam, updating 10B parameters in about 2.6 s on a
// two-socket Xeon host (our reading of its Table 3): about 4e9 parameters per second per node.
#include <algorithm>

#include "simulator/detail/training/iteration_parts.hpp"
#include "topologies/node_template.hpp"

namespace burst::sim {
namespace {

constexpr double kAdamHbmBytesPerParam = 2 * 16;  // read + write of 16 bytes of state
constexpr double kCpuAdamParamsPerSecondPerNode = 4e9;
constexpr double kFallbackPcieBps = 25e9;

double shard_params(const TrainingJob& job, const ZeroConfig& zero, const topo::Topology& topology) {
  const double n = job.model.total_params();
  return zero.stage >= 1 ? n / std::max(1, topology.gpu_count()) : n;
}

// The usable bandwidth of GPU 0's own PCIe link (all GPUs of a template node are alike).
double pcie_bandwidth(const topo::Topology& topology, const CommModel& comm) {
  const topo::NodeTemplate& node = topology.node();
  if (node.gpu_count() < 1) return kFallbackPcieBps;
  const int gpu = node.gpu_device(0);
  for (const topo::Link& link : node.links()) {
    if (link.kind != topo::LinkKind::Pcie || (link.a != gpu && link.b != gpu)) continue;
    return comm.capacity(topo::DirectedLink{link.kind, link.bandwidth_Bps, link.latency_s, link.sharing});
  }
  return kFallbackPcieBps;
}

}  // namespace

double offload_bytes(const TrainingJob& job, const ZeroConfig& zero, const topo::Topology& topology) {
  return zero.offload ? 2.0 * job.dtype_bytes * shard_params(job, zero, topology) : 0;
}

double optimizer_seconds(const TrainingJob& job, const ZeroConfig& zero, const topo::Topology& topology,
                         const CommModel& comm) {
  const double shard = shard_params(job, zero, topology);
  if (const double rank_rate = topology.gpu().optimizer_params_per_s; rank_rate > 0) return shard / rank_rate;
  if (!zero.offload) return kAdamHbmBytesPerParam * shard / topology.gpu().memory_bandwidth_Bps;
  const double cpu_rate = kCpuAdamParamsPerSecondPerNode / std::max(1, topology.gpus_per_node());
  return offload_bytes(job, zero, topology) / pcie_bandwidth(topology, comm) + shard / cpu_rate;
}

}  // namespace burst::sim
