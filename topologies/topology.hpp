// The cluster as the simulator sees it: one node template (devices joined by links) repeated
// `nodes` times, and a fabric joining the nodes' network ports.
//
// A node holds GPUs, NVSwitch planes, PCIe switches, CPU sockets and NIC ports; links are
// NVLink, PCIe, inter-socket (SMP), shared memory (CPU ranks of the `local` topology) and the
// network port of each NIC. Every link has a bandwidth per direction, a latency and a sharing
// rule (SimGrid's SHARED: concurrent flows split it max-min fairly; FATPIPE: each flow gets
// the full bandwidth, as inside a non-blocking switch).
//
// As NCCL's src/graph does, a GPU pair is classified by its worst hop:
//   NVL (NVLink, direct or through an NVSwitch) < SHM (same host memory) < PIX (one PCIe switch)
//   < PXB (several PCIe switches) < PHB (through a CPU host bridge) < SYS (across sockets)
//   < NET (across nodes).
// Intra-node paths avoid forwarding through other GPUs; NVLink is preferred when it connects
// the pair at all. Every GPU is attached to the nearest NIC (best class, then least loaded),
// and `gpus_sharing` says how many GPUs of the node use it: the per-GPU inter-node bandwidth
// is the NIC's bandwidth divided by that, capped by the path to it and by the fabric.
//
// A Topology is immutable once built: build it from a NodeTemplate (node_builder.hpp helps), a
// preset (presets.hpp) or a parser (json_format.hpp, nccl_xml.hpp); load.hpp picks by name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/json_reader.hpp"

namespace burst::topo {

enum class DeviceKind : std::uint8_t { Gpu, NvSwitch, PcieSwitch, Cpu, Nic };
enum class LinkKind : std::uint8_t { NvLink, Pcie, InterSocket, SharedMemory, Network };
enum class Sharing : std::uint8_t { Shared, FatPipe };
enum class PathClass : std::uint8_t { NVL, SHM, PIX, PXB, PHB, SYS, NET };
enum class FabricKind : std::uint8_t { RailOptimized, FatTree };

inline constexpr int kLinkKindCount = 5;   // LinkKind values
inline constexpr int kPathClassCount = 7;  // PathClass values

[[nodiscard]] const char* to_string(DeviceKind kind);  // "gpu", "nvswitch", "pcie-switch", "cpu", "nic"
[[nodiscard]] const char* to_string(LinkKind kind);    // "nvlink", "pcie", "inter-socket", "shm", "network"
[[nodiscard]] const char* to_string(Sharing sharing);  // "shared", "fatpipe"
[[nodiscard]] const char* to_string(PathClass cls);    // "NVL", "SHM", "PIX", "PXB", "PHB", "SYS", "NET"
[[nodiscard]] const char* to_string(FabricKind kind);  // "rail-optimized", "fat-tree"

struct GpuSpec {
  std::string model;                // "A800-SXM4-80GB", or "cpu-rank" for the local topology
  double peak_bf16_flops = 0;       // dense, FLOP/s
  double memory_bytes = 0;          // HBM capacity
  double memory_bandwidth_Bps = 0;  // HBM bandwidth
  // A CPU rank's own AdamW rate, parameters a second: the local topology's, from its calibration
  // (and kept in its topology document, so a plan's stored cluster prices it alike); 0 for GPUs,
  // whose optimizer step is priced as an HBM pass, or PCIe and the host's CPU-Adam when offloaded.
  double optimizer_params_per_s = 0;
};

struct Device {
  DeviceKind kind;
  std::string name;               // unique within the node: "gpu0", "nvswitch", "pcie-sw1", "cpu0", "nic2"
  int ports = 1;                  // NICs: network ports NCCL would use as separate nets
  double port_bandwidth_Bps = 0;  // NICs: bandwidth of each network port, per direction
};

// An undirected link of the node template; it carries `bandwidth_Bps` in each direction.
struct Link {
  int a = 0, b = 0;  // device indices in the node template
  LinkKind kind = LinkKind::Pcie;
  double bandwidth_Bps = 0;
  double latency_s = 0;
  Sharing sharing = Sharing::Shared;
};

struct Fabric {
  FabricKind kind = FabricKind::RailOptimized;
  double latency_s = 2e-6;        // one traversal, switch hops included
  double oversubscription = 1.0;  // >= 1; spine capacity = node NIC bandwidth / oversubscription
};

// What a transfer between two GPUs meets on its way.
struct PathInfo {
  PathClass cls = PathClass::NVL;
  double bandwidth_Bps = 0;  // bottleneck bandwidth per direction, uncontended
  double latency_s = 0;      // sum of link latencies (plus the fabric's, across nodes)
  int hops = 0;              // links crossed
};

struct NicAttachment {
  int nic = -1;  // device index of the NIC in the node template
  PathClass cls = PathClass::PIX;
  double bandwidth_Bps = 0;  // the NIC's network bandwidth, all ports
  int gpus_sharing = 1;      // GPUs of the node attached to this NIC
};

// A directed resource a transfer crosses: one direction of a template link in one node, or a
// node's spine uplink/downlink (fat-tree and rail-crossing traffic).
struct DirectedLink {
  LinkKind kind;
  double bandwidth_Bps;
  double latency_s;
  Sharing sharing;
};
using LinkId = std::int32_t;

class NodeTemplate;

class Topology {
 public:
  Topology(std::string name, GpuSpec gpu, std::shared_ptr<const NodeTemplate> node, int nodes, Fabric fabric);

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const GpuSpec& gpu() const { return gpu_; }
  [[nodiscard]] const Fabric& fabric() const { return fabric_; }
  [[nodiscard]] const NodeTemplate& node() const { return *node_; }
  [[nodiscard]] int nodes() const { return nodes_; }
  [[nodiscard]] int gpus_per_node() const;
  [[nodiscard]] int gpu_count() const { return nodes_ * gpus_per_node(); }
  [[nodiscard]] int nets_per_node() const;  // network ports (NCCL nets) per node
  [[nodiscard]] int node_of(int gpu) const { return gpu / gpus_per_node(); }
  [[nodiscard]] int local_of(int gpu) const { return gpu % gpus_per_node(); }

  // Any GPU pair, global GPU indices (node * gpus_per_node + local). A GPU to itself is a local
  // copy: class NVL, the GPU's memory bandwidth, no latency, no hops, an empty route.
  [[nodiscard]] PathInfo path(int src_gpu, int dst_gpu) const;
  [[nodiscard]] const NicAttachment& nic_of(int gpu) const;
  // Worst intra-node class and the bottleneck bandwidth of the worst GPU pair in a node (for a
  // one-GPU node, its local copy as in path(g, g)).
  [[nodiscard]] PathInfo intra_node_worst() const;
  // Per GPU, per direction, when all GPUs of a node send across nodes at once.
  [[nodiscard]] double inter_node_bandwidth_per_gpu() const;

  // Routing for the simulator: every directed link a transfer from src to dst crosses.
  [[nodiscard]] int link_count() const;
  [[nodiscard]] DirectedLink link(LinkId id) const;
  [[nodiscard]] std::string link_name(LinkId id) const;  // "n0:gpu3->nvswitch", "n2:spine-up"
  void route(int src_gpu, int dst_gpu, std::vector<LinkId>& out) const;

  // Our JSON format ("schema": "burst.topology/1"); parse(to_json(t)) rebuilds the same topology.
  [[nodiscard]] Json to_json() const;
  // The summary `burst topo show --json` prints.
  [[nodiscard]] Json summary_json() const;
  // Stable fingerprint of the whole description (hex), for plans to refer to.
  [[nodiscard]] std::string hash() const;

  // The same cluster with another node count (what `--nodes N` does to a file or preset).
  [[nodiscard]] Topology with_nodes(int nodes) const;
  // Position of a GPU's NIC among the node's NICs (its rail), or -1 when the node has none.
  [[nodiscard]] int nic_rail(int gpu) const;
  // Bandwidth of one node's spine uplink (sum of its NICs / oversubscription).
  [[nodiscard]] double spine_bandwidth() const { return spine_Bps_; }

 private:
  std::string name_;
  GpuSpec gpu_;
  std::shared_ptr<const NodeTemplate> node_;
  int nodes_;
  Fabric fabric_;
  // Derived once in the constructor; see "Global link ids" in topology.cpp.
  LinkId template_dirs_ = 0;  // directed template links per node (2 x links)
  int nics_per_node_ = 0;
  std::vector<int> rail_of_device_;  // template device index -> NIC position, -1 if not a NIC
  double spine_Bps_ = 0;
};

}  // namespace burst::topo
