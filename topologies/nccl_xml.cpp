// NCCL topology XML -> node template. See nccl_xml.hpp for the mapping.
#include "topologies/nccl_xml.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "common/error.hpp"
#include "common/json_reader.hpp"
#include "common/text.hpp"
#include "topologies/hardware.hpp"
#include "topologies/node_builder.hpp"
#include "topologies/presets.hpp"

namespace burst::topo {
namespace {

constexpr int kMaxPciDepth = 32;  // real trees are 4-6 deep; deeper means a broken file

struct PendingNvLink {
  int gpu = 0;             // GPU ordinal
  std::string target;      // busid
  int count = 0;
  unsigned tclass = 0;
  std::size_t line = 0;
};

struct GpuFound {
  int device = 0;       // device index in the builder
  std::string busid;
  unsigned pci_device = 0;
  int sm = 0;           // 0: no <gpu> element
  std::size_t line = 0;
};

std::optional<long long> parse_int(std::string_view text, int base) {
  if (base == 16 && (text.substr(0, 2) == "0x" || text.substr(0, 2) == "0X")) text.remove_prefix(2);
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

class Importer {
 public:
  Importer(std::string_view text, std::string source, const XmlImportOptions& options)
      : text_(text), source_(std::move(source)), options_(options) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < text_.size(); ++i) {
      if (text_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  XmlImport run();

 private:
  std::size_t line_of(std::ptrdiff_t offset) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), static_cast<std::size_t>(std::max<std::ptrdiff_t>(offset, 0)));
    return static_cast<std::size_t>(it - line_starts_.begin());
  }
  std::string at(const pugi::xml_node& node) const { return fmt::format("{}:{}", source_, line_of(node.offset_debug())); }
  void problem(const pugi::xml_node& node, std::string what, std::string valid = {}, std::string hint = {}) {
    problems_.add(at(node), std::move(what), std::move(valid), std::move(hint));
  }
  void note(const pugi::xml_node& node, const std::string& what) { result_.notes.push_back(at(node) + ": " + what); }

  // An integer attribute; a problem when present but malformed.
  std::optional<long long> attr_int(const pugi::xml_node& node, const char* name, int base, bool required);

  void visit_cpu(const pugi::xml_node& cpu, int ordinal);
  void visit_pci(const pugi::xml_node& pci, int parent, int depth);
  int add_nic(const pugi::xml_node& nic_element, const pugi::xml_node& anchor, int parent, double link_Bps);
  double pci_link_Bps(const pugi::xml_node& pci);
  void add_nvlinks();
  void complete_skeleton();
  GpuSpec gpu_spec();

  std::string_view text_;
  std::string source_;
  const XmlImportOptions& options_;
  std::vector<std::size_t> line_starts_;
  Problems problems_;
  XmlImport result_;
  NodeBuilder node_;
  std::vector<GpuFound> gpus_;
  std::vector<PendingNvLink> nvlinks_;
  std::vector<std::pair<int, double>> cpus_;  // device, inter-socket bandwidth
  std::vector<std::pair<int, pugi::xml_node>> nics_without_speed_;
  pugi::xml_node first_gpu_pci_;
  bool warned_default_pcie_ = false;
};

std::optional<long long> Importer::attr_int(const pugi::xml_node& node, const char* name, int base, bool required) {
  const pugi::xml_attribute a = node.attribute(name);
  if (!a) {
    if (required) problem(node, fmt::format("<{}> has no '{}' attribute", node.name(), name));
    return std::nullopt;
  }
  const auto v = parse_int(a.value(), base);
  if (!v) {
    problem(node, fmt::format("<{}> {}=\"{}\" is not {}", node.name(), name, a.value(),
                              base == 16 ? "a hexadecimal number" : "an integer"),
            base == 16 ? "e.g. 0x030200" : "e.g. 16");
  }
  return v;
}

double Importer::pci_link_Bps(const pugi::xml_node& pci) {
  const std::string speed_text = pci.attribute("link_speed").value();
  const auto speed = hw::parse_pcie_speed(speed_text);
  double gts = hw::kDefaultPcieGts;
  if (!speed) {
    if (!warned_default_pcie_) note(pci, "empty PCIe link_speed: PCIe gen4 (16 GT/s) assumed");
    warned_default_pcie_ = true;
  } else if (*speed < 0 || !hw::pcie_lane_Bps(*speed)) {
    problem(pci, fmt::format("link_speed \"{}\" is not a PCIe transfer rate", speed_text),
            "2.5, 5, 8, 16, 32 or 64 GT/s, e.g. \"16 GT/s\" or \"32.0 GT/s PCIe\"");
  } else {
    gts = *speed;
  }
  int width = hw::kDefaultPcieWidth;
  if (const auto w = attr_int(pci, "link_width", 10, false)) {
    if (*w < 0 || *w > 32) {
      problem(pci, fmt::format("link_width {} is not a PCIe width", *w), "1, 2, 4, 8, 16 or 32");
    } else if (*w > 0) {
      width = static_cast<int>(*w);
    }
  }
  return hw::pcie_Bps(gts, width);
}

int Importer::add_nic(const pugi::xml_node& nic_element, const pugi::xml_node& anchor, int parent, double link_Bps) {
  const int ordinal = result_.nics++;
  int ports = 0;
  double port_Bps = 0;
  for (const pugi::xml_node& net : nic_element.children("net")) {
    ++ports;
    const auto speed = attr_int(net, "speed", 10, true);
    if (!speed) continue;
    if (*speed <= 0) {
      problem(net, fmt::format("<net> speed {} Mb/s is not positive", *speed), "Mb/s, e.g. 200000 for HDR");
      continue;
    }
    const double bw = static_cast<double>(*speed) * 1e6 / 8;
    port_Bps = port_Bps == 0 ? bw : std::min(port_Bps, bw);
  }
  result_.nets += ports;
  const int device = node_.nic(fmt::format("nic{}", ordinal), std::max(ports, 1), port_Bps);
  if (ports == 0) {
    ++result_.nets;
    nics_without_speed_.emplace_back(device, anchor);
  }
  node_.link(device, parent, LinkKind::Pcie, link_Bps, hw::kPcieLatency);
  return device;
}

void Importer::visit_pci(const pugi::xml_node& pci, int parent, int depth) {
  if (depth > kMaxPciDepth) {
    problem(pci, fmt::format("PCI tree deeper than {} levels", kMaxPciDepth), "", "is the file truncated or generated?");
    return;
  }
  const auto cls = attr_int(pci, "class", 16, true);
  if (!cls) return;
  const double link_Bps = pci_link_Bps(pci);
  const pugi::xml_node nic = pci.child("nic");
  const long long base = *cls >> 8;
  if (base == 0x0604) {
    const int sw = node_.device(DeviceKind::PcieSwitch, fmt::format("pcie-sw{}", result_.pcie_switches++));
    node_.link(sw, parent, LinkKind::Pcie, link_Bps, hw::kPcieLatency);
    for (const pugi::xml_node& child : pci.children()) {
      if (std::string_view(child.name()) == "pci") visit_pci(child, sw, depth + 1);
      else if (std::string_view(child.name()) == "nic") add_nic(child, child, sw, link_Bps);
    }
  } else if ((*cls >> 16) == 0x03) {
    GpuFound g;
    g.busid = pci.attribute("busid").value();
    g.line = line_of(pci.offset_debug());
    g.device = node_.device(DeviceKind::Gpu, fmt::format("gpu{}", result_.gpus++));
    if (const auto id = attr_int(pci, "device", 16, false)) g.pci_device = static_cast<unsigned>(*id & 0xffff);
    if (!first_gpu_pci_) first_gpu_pci_ = pci;
    node_.link(g.device, parent, LinkKind::Pcie, link_Bps, hw::kPcieLatency);
    int lanes = 0;
    if (const pugi::xml_node gpu = pci.child("gpu")) {
      const auto sm = attr_int(gpu, "sm", 10, false);
      g.sm = sm && *sm > 0 ? static_cast<int>(*sm) : 80;
      if (!sm) note(gpu, "<gpu> has no 'sm': NVLink speed of sm 80 (A100) assumed");
      for (const pugi::xml_node& nv : gpu.children("nvlink")) {
        const auto count = attr_int(nv, "count", 10, true);
        const auto tclass = attr_int(nv, "tclass", 16, true);
        if (!count || !tclass) continue;
        if (*count < 1 || *count > 64) {
          problem(nv, fmt::format("<nvlink> count {} is out of range", *count), "1 to 64");
          continue;
        }
        lanes += static_cast<int>(*count);
        nvlinks_.push_back({static_cast<int>(gpus_.size()), nv.attribute("target").value(), static_cast<int>(*count),
                            static_cast<unsigned>(*tclass), line_of(nv.offset_debug())});
      }
    }
    result_.nvlinks_per_gpu.push_back(lanes);
    gpus_.push_back(std::move(g));
  } else if (base == 0x0200 || base == 0x0207 || nic) {
    add_nic(nic, pci, parent, link_Bps);
  }
  // Other PCI functions (NVMe, NVSwitch management, ...) carry no GPU traffic.
}

void Importer::visit_cpu(const pugi::xml_node& cpu, int ordinal) {
  const auto numa = attr_int(cpu, "numaid", 10, false);
  const int id = numa && *numa >= 0 && *numa < 1024 ? static_cast<int>(*numa) : ordinal;
  const int device = node_.device(DeviceKind::Cpu, fmt::format("cpu{}", id));
  if (node_.index(fmt::format("cpu{}", id)) != device) problem(cpu, fmt::format("duplicate numaid {}", id));
  ++result_.cpus;
  const auto family = attr_int(cpu, "familyid", 10, false);
  const auto model = attr_int(cpu, "modelid", 10, false);
  cpus_.emplace_back(device, hw::inter_socket_Bps(cpu.attribute("vendor").value(), family ? static_cast<int>(*family) : 0,
                                                  model ? static_cast<int>(*model) : 0));
  for (const pugi::xml_node& child : cpu.children()) {
    const std::string_view name = child.name();
    if (name == "pci") {
      visit_pci(child, device, 1);
    } else if (name == "nic") {
      note(child, "<nic> directly under <cpu>: attached to the CPU by a PCIe gen4 x16 link");
      add_nic(child, child, device, hw::pcie_Bps(hw::kDefaultPcieGts, hw::kDefaultPcieWidth));
    }
  }
}

void Importer::add_nvlinks() {
  const bool any_gpu_element = std::any_of(gpus_.begin(), gpus_.end(), [](const GpuFound& g) { return g.sm > 0; });
  if (!gpus_.empty() && !any_gpu_element) {
    result_.skeleton = true;
    complete_skeleton();
    return;
  }
  std::vector<int> switch_lanes(gpus_.size(), 0);
  std::map<std::pair<int, int>, int> peer_lanes;  // (lower, higher GPU ordinal) -> lanes
  for (const PendingNvLink& nv : nvlinks_) {
    const std::string where = fmt::format("{}:{}", source_, nv.line);
    if (nv.tclass == 0x068000) {
      switch_lanes[static_cast<std::size_t>(nv.gpu)] += nv.count;
    } else if ((nv.tclass >> 16) == 0x03) {
      const auto it = std::find_if(gpus_.begin(), gpus_.end(), [&](const GpuFound& g) { return g.busid == nv.target; });
      if (it == gpus_.end()) {
        problems_.add(where, fmt::format("NVLink target '{}' is not a GPU of this file", nv.target), "",
                      "check the target busid against the GPUs' <pci busid>");
        continue;
      }
      const int other = static_cast<int>(it - gpus_.begin());
      if (other == nv.gpu) {
        problems_.add(where, "NVLink from a GPU to itself");
        continue;
      }
      auto& lanes = peer_lanes[{std::min(nv.gpu, other), std::max(nv.gpu, other)}];
      lanes = std::max(lanes, nv.count);  // both ends usually list the same bridge
    } else {
      result_.notes.push_back(fmt::format("{}: NVLink to a device of class 0x{:06x} (not a GPU or NVSwitch) ignored",
                                          where, nv.tclass));
    }
  }
  if (std::any_of(switch_lanes.begin(), switch_lanes.end(), [](int l) { return l > 0; })) {
    result_.nvswitch = true;
    const int sw = node_.device(DeviceKind::NvSwitch, "nvswitch");
    for (std::size_t g = 0; g < gpus_.size(); ++g) {
      if (switch_lanes[g] == 0) continue;
      node_.link(gpus_[g].device, sw, LinkKind::NvLink, switch_lanes[g] * hw::nvlink_link_Bps(gpus_[g].sm),
                 hw::kNvLinkLatency);
    }
  }
  for (const auto& [pair, lanes] : peer_lanes) {
    const GpuFound& a = gpus_[static_cast<std::size_t>(pair.first)];
    const GpuFound& b = gpus_[static_cast<std::size_t>(pair.second)];
    node_.link(a.device, b.device, LinkKind::NvLink, lanes * hw::nvlink_link_Bps(std::min(a.sm, b.sm)),
               2 * hw::kNvLinkLatency);
  }
}

void Importer::complete_skeleton() {
  if (options_.nvlink_from.empty()) {
    problem(first_gpu_pci_,
            "skeleton topology: GPUs appear only as <pci> elements without <gpu>, so there is no NVLink information",
            "", "complete it from a node preset that has the same NVLink fabric, e.g. --nvlink-from dgx-a100");
    return;
  }
  const Topology preset = make_preset(options_.nvlink_from);
  const NodeTemplate& pn = preset.node();
  const int pgpu = pn.gpu_device(0);
  const Link* nvlink = nullptr;
  for (const Link& l : pn.links()) {
    if (l.kind == LinkKind::NvLink && (l.a == pgpu || l.b == pgpu)) nvlink = &l;
  }
  const int other = nvlink == nullptr ? -1 : (nvlink->a == pgpu ? nvlink->b : nvlink->a);
  if (nvlink == nullptr || pn.devices()[static_cast<std::size_t>(other)].kind != DeviceKind::NvSwitch) {
    problem(first_gpu_pci_, fmt::format("preset '{}' has no NVSwitch fabric to complete the skeleton with", options_.nvlink_from),
            "dgx-a100, dgx-h100, h200, h800, a800-4hca", "name a preset whose GPUs share an NVSwitch plane");
    return;
  }
  result_.nvswitch = true;
  note(first_gpu_pci_, fmt::format("skeleton completed from preset '{}': NVSwitch plane, {} per GPU", options_.nvlink_from,
                                   fmt::format("{:g} GB/s", nvlink->bandwidth_Bps / 1e9)));
  const int sw = node_.device(DeviceKind::NvSwitch, "nvswitch");
  for (const GpuFound& g : gpus_) node_.link(g.device, sw, LinkKind::NvLink, nvlink->bandwidth_Bps, nvlink->latency_s);
}

GpuSpec Importer::gpu_spec() {
  if (!options_.gpu_from.empty()) return make_preset(options_.gpu_from).gpu();
  std::optional<GpuSpec> spec;
  for (const GpuFound& g : gpus_) {
    const hw::GpuModel* m = hw::gpu_by_pci_device(g.pci_device);
    const std::string where = fmt::format("{}:{}", source_, g.line);
    if (m == nullptr) {
      if (result_.skeleton && !options_.nvlink_from.empty()) return make_preset(options_.nvlink_from).gpu();
      std::vector<std::string> known;
      for (const auto& k : hw::gpu_models()) known.push_back(fmt::format("0x{:04x} {}", k.pci_device, k.spec.model));
      problems_.add(where, fmt::format("unknown GPU PCI device id 0x{:04x}", g.pci_device), text::join(known),
                    "name the GPU with a preset: --gpu-from dgx-h100 (or any preset with that GPU)");
      return GpuSpec{};
    }
    if (spec && spec->model != m->spec.model) {
      problems_.add(where, fmt::format("mixed GPU models: {} and {}", spec->model, m->spec.model), "one GPU model per node",
                    "name one with --gpu-from");
      return GpuSpec{};
    }
    spec = m->spec;
  }
  return spec ? *spec : GpuSpec{};
}

XmlImport Importer::run() {
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed =
      doc.load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!parsed) {
    throw Error(Problem{fmt::format("{}:{}", source_, line_of(parsed.offset)), std::string("invalid XML: ") + parsed.description(),
                        "", ""});
  }
  const pugi::xml_node root = doc.document_element();
  const std::string_view root_name = root.name();
  if (root_name == "graphs" || root_name == "graph") {
    throw Error(Problem{at(root),
                        "this is an NCCL graph file (NCCL_GRAPH_FILE: ring and tree channel orders), not a topology", "",
                        "dump the topology instead: run once with NCCL_TOPO_DUMP_FILE=topo.xml and import topo.xml"});
  }
  if (root_name != "system") {
    throw Error(Problem{root ? at(root) : source_, fmt::format("expected an NCCL topology <system>, found <{}>", root_name),
                        "<system version=\"1\"> with <cpu> children",
                        "NCCL writes this format with NCCL_TOPO_DUMP_FILE"});
  }
  int ordinal = 0;
  for (const pugi::xml_node& cpu : root.children("cpu")) visit_cpu(cpu, ordinal++);
  if (result_.cpus == 0) problem(root, "no <cpu> element", "", "GPUs and NICs hang below <cpu> elements");
  if (result_.gpus == 0 && result_.cpus > 0) {
    problem(root, "no GPU: no <pci> of class 0x03xxxx", "", "is this the dump of a GPU node?");
  }
  for (std::size_t i = 0; i < cpus_.size(); ++i) {
    for (std::size_t j = i + 1; j < cpus_.size(); ++j) {
      node_.link(cpus_[i].first, cpus_[j].first, LinkKind::InterSocket, std::min(cpus_[i].second, cpus_[j].second),
                 hw::kInterSocketLatency);
    }
  }
  add_nvlinks();

  double nic_Bps = options_.nic_port_Bps;
  std::string nic_origin = "--nic-speed";
  if (nic_Bps == 0 && !nics_without_speed_.empty() && !options_.nvlink_from.empty() && is_preset(options_.nvlink_from)) {
    const Topology preset = make_preset(options_.nvlink_from);
    const auto& nics = preset.node().nic_devices();
    if (!nics.empty()) nic_Bps = preset.node().devices()[static_cast<std::size_t>(nics.front())].port_bandwidth_Bps;
    nic_origin = "preset '" + options_.nvlink_from + "'";
  }
  for (const auto& [device, anchor] : nics_without_speed_) {
    if (nic_Bps > 0) {
      node_.set_port_bandwidth(device, nic_Bps);
      note(anchor, fmt::format("NIC without <net>: port speed {:g} Gb/s from {}", nic_Bps * 8 / 1e9, nic_origin));
    } else if (!result_.skeleton || !options_.nvlink_from.empty()) {
      problem(anchor, "NIC without <net>: its speed is unknown", "", "give it with --nic-speed, e.g. 100Gbps");
    }
  }
  const GpuSpec spec = gpu_spec();
  problems_.throw_if_any();

  const std::string name = std::filesystem::path(source_).stem().string();
  result_.topology.emplace(name.empty() ? "nccl-xml" : name, spec, node_.build(source_ + " (imported node)"),
                           options_.nodes, options_.fabric);
  return std::move(result_);
}

}  // namespace

XmlImport import_nccl_xml(std::string_view text, const std::string& source, const XmlImportOptions& options) {
  return Importer(text, source, options).run();
}

XmlImport import_nccl_xml_file(const std::string& path, const XmlImportOptions& options) {
  return import_nccl_xml(read_text_file(path), path, options);
}

}  // namespace burst::topo
