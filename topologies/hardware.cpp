#include "topologies/hardware.hpp"

#include <charconv>
#include <cmath>

namespace burst::topo::hw {

double assumed_pcie_gts(Figures figures) { return figures == Figures::Nccl ? 8.0 : kDefaultPcieGts; }

std::optional<double> pcie_lane_Bps(double gts, Figures figures) {
  struct Gen {
    double gts, physical_Bps, nccl_Bps;
  };
  static constexpr Gen gens[] = {{2.5, 0.25e9, 0.1875e9}, {5.0, 0.5e9, 0.375e9}, {8.0, 0.985e9, 0.75e9},
                                 {16.0, 1.969e9, 1.5e9},  {32.0, 3.938e9, 3e9},  {64.0, 7.563e9, 6e9}};
  for (const Gen& g : gens) {
    if (std::abs(g.gts - gts) < 0.01) return figures == Figures::Nccl ? g.nccl_Bps : g.physical_Bps;
  }
  return std::nullopt;
}

double pcie_Bps(double gts, int width, Figures figures) {
  const auto lane = pcie_lane_Bps(gts, figures);
  const double lane_Bps = lane ? *lane : *pcie_lane_Bps(assumed_pcie_gts(figures), figures);
  return lane_Bps * (width > 0 ? width : kDefaultPcieWidth);
}

std::optional<double> parse_pcie_speed(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double gts = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), gts);
  if (ec != std::errc{}) return -1.0;
  std::string_view rest(end, static_cast<std::size_t>(text.data() + text.size() - end));
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.substr(0, 4) != "GT/s") return -1.0;
  rest.remove_prefix(4);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (!rest.empty() && rest != "PCIe") return -1.0;
  return gts;
}

double nvlink_link_Bps(int sm, Figures figures) {
  if (figures == Figures::Nccl) {
    if (sm >= 100) return 40.1e9;
    if (sm >= 90) return 20.6e9;
    if (sm == 86) return 12e9;
    if (sm >= 70) return 20e9;
    return sm >= 60 ? 18e9 : 20e9;  // below sm 60 NCCL takes sm 80's figure
  }
  if (sm >= 100) return 50e9;
  if (sm >= 70) return 25e9;
  return 20e9;
}

double inter_socket_Bps(std::string_view vendor, int family, int model) {
  if (vendor == "GenuineIntel") {
    if (family == 6 && model >= 143) return 22e9;  // Sapphire Rapids and later
    if (family == 6 && model >= 85) return 10e9;   // Skylake-SP and later
    return 6e9;
  }
  if (vendor == "AuthenticAMD") return 16e9;
  return 6e9;
}

const std::vector<GpuModel>& gpu_models() {
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  static const std::vector<GpuModel> models = {
      // NVLink links: A100 SXM 12 (NVLink 3), A800 8 (its export-limited 400 GB/s), H100 SXM and
      // H200 18 (NVLink 4), H800 8; over a bridge, A100 and H100 PCIe 12 (600 GB/s between two
      // cards). PCIe: gen4 (16 GT/s) on Ampere and Ada, gen5 (32 GT/s) on Hopper. Network a GPU
      // in the reference node: DGX A100 8 HDR 200 Gb/s ports, DGX H100 and H200 8 NDR 400 Gb/s;
      // A800 and H800 as the A100 and H100 they are cut from. docs/topology-presets.md.
      {0x20b0, {"A100-SXM4-40GB", 312e12, 40 * GiB, 1555e9}, 80, "NVIDIA A100-SXM4-40GB", 12, 16, 0, 200},
      {0x20b2, {"A100-SXM4-80GB", 312e12, 80 * GiB, 2039e9}, 80, "NVIDIA A100-SXM4-80GB", 12, 16, 0, 200},
      {0x20f1, {"A100-PCIE-40GB", 312e12, 40 * GiB, 1555e9}, 80, "NVIDIA A100-PCIE-40GB", 0, 16, 12, 0},
      {0x20b5, {"A100-PCIE-80GB", 312e12, 80 * GiB, 1935e9}, 80, "NVIDIA A100 80GB PCIe", 0, 16, 12, 0},
      {0x20f3, {"A800-SXM4-80GB", 312e12, 80 * GiB, 2039e9}, 80, "NVIDIA A800-SXM4-80GB", 8, 16, 0, 200},
      {0x2330, {"H100-SXM5-80GB", 989e12, 80 * GiB, 3350e9}, 90, "NVIDIA H100 80GB HBM3", 18, 32, 0, 400},
      {0x2331, {"H100-PCIE-80GB", 756e12, 80 * GiB, 2000e9}, 90, "NVIDIA H100 PCIe", 0, 32, 12, 0},
      {0x2324, {"H800-SXM5-80GB", 989e12, 80 * GiB, 3350e9}, 90, "NVIDIA H800", 8, 32, 0, 400},
      {0x2335, {"H200-SXM-141GB", 989e12, 141e9, 4800e9}, 90, "NVIDIA H200", 18, 32, 0, 400},
      {0x27b8, {"L4-PCIE-24GB", 121e12, 24 * GiB, 300e9}, 89, "NVIDIA L4", 0, 16, 0, 0},
      {0x26b9, {"L40S-PCIE-48GB", 362e12, 48 * GiB, 864e9}, 89, "NVIDIA L40S", 0, 16, 0, 0},
  };
  return models;
}

double fp8_over_bf16(std::string_view model) {
  const GpuModel* known = gpu_by_model(model);
  return known != nullptr && known->sm >= 89 ? 2.0 : 0.0;
}

const GpuModel* gpu_by_pci_device(unsigned device) {
  for (const GpuModel& m : gpu_models()) {
    if (m.pci_device == device) return &m;
  }
  return nullptr;
}

const GpuModel* gpu_by_model(std::string_view model) {
  for (const GpuModel& m : gpu_models()) {
    if (m.spec.model == model) return &m;
  }
  return nullptr;
}

const GpuModel* gpu_by_cuda_name(std::string_view name) {
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  for (const GpuModel& m : gpu_models()) {
    if (!name.empty() && name == m.cuda_name) return &m;
  }
  return nullptr;
}

}  // namespace burst::topo::hw
