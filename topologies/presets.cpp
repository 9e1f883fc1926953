// The preset nodes. An HGX-style node is built by one function from a few numbers:
//
//   cpu0 ===== inter-socket ===== cpu1
//    |-- pcie-sw0: gpu0 gpu1 + NICs     |-- pcie-sw2: gpu4 gpu5 + NICs
//    '-- pcie-sw1: gpu2 gpu3 + NICs     '-- pcie-sw3: gpu6 gpu7 + NICs
//   every GPU --NVLink-- nvswitch (one vertex for the whole NVSwitch plane)
//
// With 4 NICs each PCIe switch holds one (shared by its 2 GPUs, as on BurstEngine's A800
// nodes); with 8, two (one per GPU, as on DGX A100/H100, where each GPU and its HCA share a
// switch). The NVSwitch plane is non-blocking, so only the GPU's own NVLink bandwidth limits
// a GPU pair.
#include "topologies/presets.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"
#include "topologies/hardware.hpp"
#include "topologies/local_calibration.hpp"
#include "topologies/detail/node_builder.hpp"
#include "topologies/detail/physical_ranges.hpp"

namespace burst::topo {
namespace {

struct HgxNode {
  const char* gpu_model;
  double nvlink_Bps;  // per GPU, per direction, all its NVLinks together (0: no NVLink)
  int nics;           // 2 (one per socket, on the CPU root), 4 or 8 (on the GPU switches)
  double nic_port_Bps;
  double pcie_gts;
  const char* cpu_vendor;
  int cpu_family, cpu_model;
};

GpuSpec spec_of(const char* model) { return hw::gpu_by_model(model)->spec; }

std::shared_ptr<const NodeTemplate> hgx_node(const HgxNode& n) {
  NodeBuilder b;
  const double pcie = hw::pcie_Bps(n.pcie_gts, 16);
  const double upi = hw::inter_socket_Bps(n.cpu_vendor, n.cpu_family, n.cpu_model);
  b.device(DeviceKind::Cpu, "cpu0");
  b.device(DeviceKind::Cpu, "cpu1");
  b.link("cpu0", "cpu1", LinkKind::InterSocket, upi, hw::kInterSocketLatency);
  for (int s = 0; s < 4; ++s) {
    const std::string sw = fmt::format("pcie-sw{}", s);
    b.device(DeviceKind::PcieSwitch, sw);
    b.link(sw, s < 2 ? "cpu0" : "cpu1", LinkKind::Pcie, pcie, hw::kPcieLatency);
  }
  if (n.nvlink_Bps > 0) b.device(DeviceKind::NvSwitch, "nvswitch");
  for (int g = 0; g < 8; ++g) {
    const std::string gpu = fmt::format("gpu{}", g);
    b.device(DeviceKind::Gpu, gpu);
    b.link(gpu, fmt::format("pcie-sw{}", g / 2), LinkKind::Pcie, pcie, hw::kPcieLatency);
    if (n.nvlink_Bps > 0) b.link(gpu, "nvswitch", LinkKind::NvLink, n.nvlink_Bps, hw::kNvLinkLatency);
  }
  for (int k = 0; k < n.nics; ++k) {
    const std::string nic = fmt::format("nic{}", k);
    b.nic(nic, 1, n.nic_port_Bps);
    const std::string parent = n.nics == 2 ? fmt::format("cpu{}", k) : fmt::format("pcie-sw{}", k * 4 / n.nics);
    b.link(nic, parent, LinkKind::Pcie, pcie, hw::kPcieLatency);
  }
  return b.build("preset node");
}

constexpr double kHdr = 200e9 / 8;  // HDR InfiniBand, 200 Gb/s per port
constexpr double kNdr = 400e9 / 8;  // NDR InfiniBand, 400 Gb/s per port
// A local node is its ranks, the CPU, the loopback NIC and (GPUs on NVLink) an NVSwitch.
constexpr int kMaxRanksPerLocalNode = kMaxDevicesPerNode - 3;

Topology local_preset(int nodes, int per_node) {
  const LocalCalibration c = local_calibration();
  NodeBuilder b;
  b.device(DeviceKind::Cpu, "cpu0");
  for (int r = 0; r < per_node; ++r) {
    const std::string rank = fmt::format("rank{}", r);
    b.device(DeviceKind::Gpu, rank);
    b.link(rank, "cpu0", LinkKind::SharedMemory, c.intra_bandwidth_Bps, c.intra_latency_s / 2);
  }
  b.nic("loopback", 1, c.inter_bandwidth_Bps);
  b.link("loopback", "cpu0", LinkKind::SharedMemory, c.intra_bandwidth_Bps, 0);
  const GpuSpec rank{kLocalGpuModel, c.compute_flops_per_rank, c.memory_per_rank, c.memory_bandwidth_per_rank,
                     c.optimizer_params_per_s_per_rank};
  return Topology("local", rank, b.build("local node"), nodes,
                  Fabric{FabricKind::RailOptimized, c.inter_latency_s, 1.0});
}

Topology local_gpu_preset(int nodes, int per_node, const LocalGpus& gpus) {
  const bool shared = per_node > gpus.count;
  GpuSpec rank = gpus.spec;
  double between = 0;  // rank to rank within a node, per direction
  NodeBuilder b;
  b.device(DeviceKind::Cpu, "cpu0");
  if (shared) {
    const double share = 1.0 / per_node;
    rank.peak_bf16_flops *= share;
    rank.memory_bytes *= share;
    rank.memory_bandwidth_Bps *= share;
    between = gpus.spec.memory_bandwidth_Bps / 2;
    for (int r = 0; r < per_node; ++r) {
      const std::string name = fmt::format("rank{}", r);
      b.device(DeviceKind::Gpu, name);
      b.link(name, "cpu0", LinkKind::SharedMemory, between, hw::kPcieLatency);
    }
  } else {
    between = gpus.nvlink_Bps > 0 && per_node > 1 ? gpus.nvlink_Bps : gpus.pcie_Bps;
    if (gpus.nvlink_Bps > 0 && per_node > 1) b.device(DeviceKind::NvSwitch, "nvswitch");
    for (int g = 0; g < per_node; ++g) {
      const std::string gpu = fmt::format("gpu{}", g);
      b.device(DeviceKind::Gpu, gpu);
      b.link(gpu, "cpu0", LinkKind::Pcie, gpus.pcie_Bps, hw::kPcieLatency);
      if (gpus.nvlink_Bps > 0 && per_node > 1)
        b.link(gpu, "nvswitch", LinkKind::NvLink, gpus.nvlink_Bps, hw::kNvLinkLatency);
    }
  }
  b.nic("loopback", 1, between);
  b.link("loopback", "cpu0", LinkKind::SharedMemory, between, 0);
  return Topology("local", rank, b.build("local GPU node"), nodes,
                  Fabric{FabricKind::RailOptimized, hw::kPcieLatency, 1.0});
}

struct Preset {
  PresetInfo info;
  const char* gpu_model;
  HgxNode node;
};

const std::vector<Preset>& table() {
  static const std::vector<Preset> t = {
      {{"a800-4hca", "8x A800-SXM4-80GB, NVSwitch 200 GB/s, 4x HDR 200 Gb/s HCAs (2 GPUs each): BurstEngine's nodes"},
       "A800-SXM4-80GB",
       {"A800-SXM4-80GB", 200e9, 4, kHdr, 16, "GenuineIntel", 6, 106}},
      {{"dgx-a100", "8x A100-SXM4-80GB, NVSwitch 300 GB/s, 8x HDR 200 Gb/s HCAs (1 per GPU)"},
       "A100-SXM4-80GB",
       {"A100-SXM4-80GB", 300e9, 8, kHdr, 16, "AuthenticAMD", 23, 49}},
      {{"dgx-a100-40g", "8x A100-SXM4-40GB, NVSwitch 300 GB/s, 8x HDR 200 Gb/s HCAs (1 per GPU): DGX A100 40GB"},
       "A100-SXM4-40GB",
       {"A100-SXM4-40GB", 300e9, 8, kHdr, 16, "AuthenticAMD", 23, 49}},
      {{"dgx-h100", "8x H100-SXM5-80GB, NVSwitch 450 GB/s, 8x NDR 400 Gb/s HCAs (1 per GPU)"},
       "H100-SXM5-80GB",
       {"H100-SXM5-80GB", 450e9, 8, kNdr, 32, "GenuineIntel", 6, 143}},
      {{"h200", "8x H200-SXM-141GB, NVSwitch 450 GB/s, 8x NDR 400 Gb/s HCAs (1 per GPU)"},
       "H200-SXM-141GB",
       {"H200-SXM-141GB", 450e9, 8, kNdr, 32, "GenuineIntel", 6, 143}},
      {{"h800", "8x H800-SXM5-80GB, NVSwitch 200 GB/s, 8x NDR 400 Gb/s HCAs (1 per GPU)"},
       "H800-SXM5-80GB",
       {"H800-SXM5-80GB", 200e9, 8, kNdr, 32, "GenuineIntel", 6, 143}},
      {{"pcie-8gpu", "8x A100-PCIE-80GB, no NVLink: 2 sockets x 2 PCIe gen4 switches x 2 GPUs, 1 HDR NIC per socket"},
       "A100-PCIE-80GB",
       {"A100-PCIE-80GB", 0, 2, kHdr, 16, "GenuineIntel", 6, 106}},
      {{"local",
        "this machine: its GPUs (a rank each, or --per-node K ranks sharing the first), or CPU ranks over MPI "
        "(--local-device cpu, or no GPU visible; --per-node K per virtual node, default 2) at the local "
        "calibration's speeds"},
       nullptr,
       {}},
  };
  return t;
}

}  // namespace

const std::vector<PresetInfo>& presets() {
  static const std::vector<PresetInfo> infos = [] {
    std::vector<PresetInfo> v;
    for (const Preset& p : table()) v.push_back(p.info);
    return v;
  }();
  return infos;
}

std::vector<GpuPreset> gpu_presets() {
  std::vector<GpuPreset> v;
  for (const Preset& p : table()) {
    if (p.gpu_model != nullptr) v.push_back({p.info.name, p.gpu_model, p.node.nvlink_Bps > 0, p.node.nvlink_Bps});
  }
  return v;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const PresetInfo& p : presets()) names.push_back(p.name);
  return names;
}

bool is_preset(std::string_view name) {
  for (const PresetInfo& p : presets()) {
    if (p.name == name) return true;
  }
  return false;
}

Topology make_preset(std::string_view name, int nodes, int per_node, const LocalGpus* gpus) {
  Problems problems;
  if (nodes < 1) problems.add("--nodes", fmt::format("{} nodes", nodes), "1 or more");
  if (per_node < 0) problems.add("--per-node", fmt::format("{} ranks per node", per_node), "1 or more");
  if (per_node > kMaxRanksPerLocalNode) {  // before a device is built: the node could not hold them
    problems.add("--per-node", fmt::format("{} ranks per node", per_node),
                 fmt::format("at most {}", kMaxRanksPerLocalNode),
                 fmt::format("a node holds at most {} devices, the CPU and the loopback NIC among them; model more "
                             "ranks as more --nodes",
                             kMaxDevicesPerNode));
  }
  if (per_node > 0 && name != "local") {
    problems.add("--per-node", fmt::format("applies to the 'local' preset only, not '{}'", name), "",
                 "GPU presets have a fixed number of GPUs per node");
  }
  if (!is_preset(name)) {
    problems.add("topology", fmt::format("unknown preset '{}'", name), text::join(preset_names()),
                 text::did_you_mean(name, preset_names()));
  }
  problems.throw_if_any();
  if (name == "local" && gpus != nullptr && gpus->count > 0) {
    return local_gpu_preset(nodes, per_node > 0 ? per_node : gpus->count, *gpus);
  }
  if (name == "local") return local_preset(nodes, per_node > 0 ? per_node : 2);
  for (const Preset& p : table()) {
    if (p.info.name == name) return Topology(p.info.name, spec_of(p.gpu_model), hgx_node(p.node), nodes, Fabric{});
  }
  throw std::logic_error("make_preset: preset table and names disagree");
}

}  // namespace burst::topo
