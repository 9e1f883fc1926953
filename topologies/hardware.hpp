// Physical numbers shared by the presets and the NCCL XML importer, in one place so that a
// preset and an imported dump of the same machine agree. Sources: docs/topology-presets.md.
//
// PCIe: usable bytes per second per lane and direction after line coding (gen1/2 8b/10b,
// gen3+ 128b/130b): 2.5 GT/s 0.25 GB/s, 5 GT/s 0.5, 8 GT/s 0.985, 16 GT/s 1.969,
// 32 GT/s 3.938, 64 GT/s 7.563 (gen6, FLIT mode). A link is that times its width.
// NVLink: bytes per second per link and direction by GPU architecture (SM version):
// NVLink 2/3/4 (sm 70/80/90) 25 GB/s, NVLink 1 (sm 60) 20 GB/s, NVLink 5 (sm 100) 50 GB/s.
// Inter-socket: NCCL's figures (src/graph/topo.h): Intel Skylake+ 10 GB/s, Sapphire Rapids
// and later 22 GB/s, older Intel 6 GB/s, AMD 16 GB/s, anything else 6 GB/s.
//
// NCCL's own figures (src/graph/topo.h and ncclTopoAddPci in topo.cc), which its topology
// search ranks paths with, are derated: PCIe per lane 2.5 GT/s 0.1875 GB/s, 5 0.375, 8 0.75,
// 16 1.5, 32 3.0, 64 6.0 (gen4 x16 = 24 GB/s), and an unknown speed gets the 8 GT/s figure;
// NVLink per link sm 60 18 GB/s, 70 and 80 20, 86 12, 90 20.6, 100 40.1; a <nic> directly
// under a CPU is joined to it at LOC_BW, 5000 GB/s. Network ports and inter-socket links are
// the same in both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/topology.hpp"

namespace burst::topo::hw {

// Link latencies we use for physical links (a transfer's software overheads belong to the
// communication cost model, not here).
// Written as n x 1e-9 (or 1e-6), the exact doubles "350ns" and "2us" parse to.
inline constexpr double kNvLinkLatency = 350 * 1e-9;       // GPU <-> NVSwitch; GPU-to-GPU is two of them
inline constexpr double kPcieLatency = 250 * 1e-9;         // per PCIe link (switch hop included)
inline constexpr double kInterSocketLatency = 500 * 1e-9;  // UPI / Infinity Fabric between sockets
inline constexpr double kFabricLatency = 2 * 1e-6;         // one InfiniBand traversal, switches included

// Which bandwidths a link gets: the physical ones above (what burst simulates; its comm cost
// model applies measured efficiencies on top) or NCCL's derated ones.
enum class Figures : std::uint8_t { Physical, Nccl };

// PCIe gen4 x16, assumed when a dump leaves the speed or width empty.
inline constexpr double kDefaultPcieGts = 16.0;
inline constexpr int kDefaultPcieWidth = 16;
// NCCL's LOC_BW, the bandwidth it gives a link inside one device (and a CPU's own <nic>).
inline constexpr double kNcclLocalBps = 5000e9;

// The rate taken for an empty link_speed: gen4, or with NCCL's figures its fallback (8 GT/s).
[[nodiscard]] double assumed_pcie_gts(Figures figures);
// Bytes/s per lane for a transfer rate in GT/s, or nullopt when the rate is not a PCIe one.
[[nodiscard]] std::optional<double> pcie_lane_Bps(double gts, Figures figures = Figures::Physical);
// Lane bandwidth x width (an unknown rate counts as assumed_pcie_gts, an unknown width as x16).
[[nodiscard]] double pcie_Bps(double gts, int width, Figures figures = Figures::Physical);
// "16 GT/s", "32.0 GT/s PCIe", "8.0 GT/s" -> GT/s; "" -> nullopt (unknown: assumed_pcie_gts);
// text that is not a speed -> -1.
[[nodiscard]] std::optional<double> parse_pcie_speed(std::string_view text);

[[nodiscard]] double nvlink_link_Bps(int sm, Figures figures = Figures::Physical);
[[nodiscard]] double inter_socket_Bps(std::string_view vendor, int family, int model);

// A GPU model: the spec we simulate with and how to recognise it, in a dump or on a running
// GPU, by its PCI device id (a running GPU's from sysfs: the CUDA runtime reports the PCI
// address, not the id; its pciDeviceID is the device number on the bus), and by the name the
// CUDA runtime reports (cudaDeviceProp::name) where the id is not to be had.
struct GpuModel {
  unsigned pci_device = 0;  // NVIDIA PCI device id, 0 when we do not match it
  GpuSpec spec;
  int sm = 0;                         // compute capability x 10, what NVLink speeds go by
  const char* cuda_name = "";         // cudaDeviceProp::name, e.g. "NVIDIA H100 80GB HBM3"
  int nvlinks = 0;                    // NVLink links of the SXM part (0: a PCIe card)
  double pcie_gts = 0;                // its host link's transfer rate, GT/s per lane (x16 on every model)
  int bridge_nvlinks = 0;             // a PCIe card's NVLink links over a bridge to one other card (0: none)
  double reference_network_Gbps = 0;  // network a GPU in its reference node (DGX); 0: none
};
// What the models are told apart by where a file names no PCI device id: gpu_inference.hpp.
[[nodiscard]] const std::vector<GpuModel>& gpu_models();
[[nodiscard]] const GpuModel* gpu_by_pci_device(unsigned device);
[[nodiscard]] const GpuModel* gpu_by_model(std::string_view model);  // exact model name
// Dense FP8 tensor-core FLOP/s over dense bf16 of the model named `model`: 2 from compute
// capability 8.9 on (Ada, Hopper: the H100 SXM's datasheet gives 1979 against 989 TFLOP/s), 0
// before it (Ampere has no FP8 tensor cores) and for a name not in the table.
[[nodiscard]] double fp8_over_bf16(std::string_view model);
// The model whose cuda_name is `name` (surrounding spaces ignored), or nullptr.
[[nodiscard]] const GpuModel* gpu_by_cuda_name(std::string_view name);

}  // namespace burst::topo::hw
