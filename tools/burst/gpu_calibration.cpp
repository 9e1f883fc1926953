#include "tools/burst/gpu_calibration.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"
#include "runtime/calibration/curve_points.hpp"
#include "simulator/costs/measured_links.hpp"
#include "topologies/load.hpp"
#include "topologies/local_calibration.hpp"
#include "topologies/presets.hpp"

namespace burst::cli {

std::optional<unsigned> pci_device_of(const std::string& bus_id, const std::string& devices_dir) {
  std::ifstream in(std::filesystem::path(devices_dir) / bus_id / "device");
  std::string text;
  if (!(in >> text) || text.size() < 3 || text.compare(0, 2, "0x") != 0) return std::nullopt;
  unsigned id = 0;
  const auto [end, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), id, 16);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return id;
}

const topo::hw::GpuModel& gpu_model_of(std::string_view cuda_name, std::optional<unsigned> pci_device) {
  if (pci_device) {
    if (const topo::hw::GpuModel* m = topo::hw::gpu_by_pci_device(*pci_device)) return *m;
  }
  if (const topo::hw::GpuModel* m = topo::hw::gpu_by_cuda_name(cuda_name)) return *m;
  std::vector<std::string> known;
  for (const topo::hw::GpuModel& m : topo::hw::gpu_models()) {
    known.push_back(fmt::format("{} (0x{:04x})", m.cuda_name, m.pci_device));
  }
  const std::string id = pci_device ? fmt::format(", PCI device 0x{:04x}", *pci_device) : "";
  throw Error(Problem{"--device cuda", fmt::format("GPU '{}'{} is not in burst's GPU table", cuda_name, id),
                      text::join(known),
                      "add its model (PCI device id, peak bf16 FLOP/s, memory, bandwidth, the name CUDA reports) to "
                      "topologies/hardware.cpp"});
}

std::optional<topo::Topology> link_topology(const std::string& requested, const topo::hw::GpuModel& model) {
  std::string name = requested;
  if (name.empty()) {
    for (const topo::GpuPreset& p : topo::gpu_presets()) {
      if (p.gpu_model == model.spec.model) {
        name = p.name;
        break;
      }
    }
    if (name.empty()) return std::nullopt;
  }
  topo::LoadOptions two_nodes;
  two_nodes.nodes = 2;
  topo::Topology t = topo::load_topology(name, two_nodes);
  if (t.gpu().model != model.spec.model) {
    throw Error(Problem{"--topology",
                        fmt::format("'{}' has {} GPUs, this node {}", name, t.gpu().model, model.spec.model),
                        "a topology of this node's GPUs", "the links are measured against the topology the plans use"});
  }
  return t;
}

Json gpu_calibration_document(const GpuMeasurements& m, const topo::Topology* links) {
  const topo::hw::GpuModel& model = gpu_model_of(m.cuda_name, m.pci_device);
  Json entry = rt::compute_entry(model.spec.model, m.kernels,
                                 {model.spec.peak_bf16_flops, model.spec.memory_bandwidth_Bps}, m.attention_path);
  entry["multiprocessors"] = m.multiprocessors;
  Json doc = {{"schema", "burst.calibration/1"}, {"compute", Json::array({entry})}};
  if ((m.intra || m.inter) && links == nullptr) {
    throw Error(Problem{"calibrate", "link measurements need the topology they are relative to", "", ""});
  }
  if (links != nullptr) {
    const auto level = [](const std::optional<rt::LinkSpeed>& s) -> std::optional<sim::MeasuredLink> {
      if (!s) return std::nullopt;
      return sim::MeasuredLink{s->bandwidth_Bps, s->latency_s};
    };
    doc.update(sim::measured_link_fields(*links, level(m.intra), level(m.inter)));
  }
  return doc;
}

std::string gpu_calibration_path(const std::string& local_path, const topo::hw::GpuModel& model) {
  return topo::gpu_calibration_beside(local_path, model.spec.model);
}

}  // namespace burst::cli
