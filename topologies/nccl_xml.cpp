// NCCL topology XML -> node template. See nccl_xml.hpp for the mapping.
//
// The import walks the tree once (CPUs, switches, GPUs, NICs as found), then adds what needs
// the whole file: the NVLinks (or a preset's NVSwitch plane), the NICs (side-by-side ones
// merged), the GPU model. NCCL's own rules are cited by function (src/graph/topo.cc, xml.cc).
//
// Every step is linear in the file, or bounded before it runs: the CPUs are counted before any
// is visited (they are joined pairwise, as NCCL joins them, so 20,000 of them would be 2e8
// links), the node's devices are counted once the tree is walked and before anything pairs
// them, and NVLink targets are found through an index of the GPUs' bus ids.
#include "topologies/detail/nccl_xml.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/json_reader.hpp"
#include "common/text.hpp"
#include "topologies/hardware.hpp"
#include "topologies/detail/gpu_inference.hpp"
#include "topologies/detail/node_builder.hpp"
#include "topologies/detail/physical_ranges.hpp"
#include "topologies/presets.hpp"

namespace burst::topo {
namespace {

constexpr int kMaxPciDepth = 32;  // real trees are 4-6 deep; deeper means a broken file
constexpr int kMaxCpus = 64;      // NUMA domains of one machine: real ones have 1-8
constexpr unsigned kNvSwitchClass = 0x068000;
// A <gpu>'s sm is its compute capability as one number (80: 8.0); NCCL has known 30 to 120.
constexpr int kMinSm = 10;
constexpr int kMaxSm = 999;

struct PendingNvLink {
  int gpu = 0;         // GPU ordinal
  std::string target;  // busid
  int count = 0;
  unsigned tclass = 0;
  std::size_t line = 0;
};

struct GpuFound {
  int device = 0;  // device index in the builder
  std::string busid;
  unsigned pci_device = 0;  // 0: no 'device' attribute
  int sm = 0;               // 0: no <gpu> element
  hw::GpuClues clues;       // what the file says of it, for when it gives no PCI device id
  std::size_t line = 0;
};

// A NIC as found in the tree. NICs join the node only once all are known, so that NICs side by
// side can become one (Importer::add_nics).
struct NicFound {
  int ordinal = 0;      // among the file's NICs: the device is "nic<ordinal>"
  int parent = 0;       // device it hangs from
  double link_Bps = 0;  // its link to the parent
  int ports = 0;        // its <net> elements
  double port_Bps = 0;  // the slowest <net>'s speed; 0 while unknown
  pugi::xml_node anchor;
};

std::optional<long long> parse_int(std::string_view text, int base) {
  if (base == 16 && (text.substr(0, 2) == "0x" || text.substr(0, 2) == "0X")) text.remove_prefix(2);
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

bool is_pci(const pugi::xml_node& node) { return std::string_view(node.name()) == "pci"; }
bool is_bridge_class(long long cls) { return (cls >> 8) == 0x0604; }

// The identity NCCL reads from a <pci> (ncclTopoGetIntDevice): vendor, device, subsystem
// vendor and subsystem device; a missing or malformed one counts as 0, as NCCL's strtol has it.
struct PciIds {
  long long vendor = 0, device = 0, subsystem_vendor = 0, subsystem_device = 0;
};

PciIds pci_ids(const pugi::xml_node& pci) {
  const auto hex = [&](const char* name) { return parse_int(pci.attribute(name).value(), 16).value_or(0); };
  return {hex("vendor"), hex("device"), hex("subsystem_vendor"), hex("subsystem_device")};
}

// A Broadcom PEX switch presents itself as a two-level hierarchy of bridges although it is one
// non-blocking switch. NCCL merges the sub-switches into the top one
// (ncclTopoFlattenBcmSwitches and getBcmGen in src/graph/topo.cc), recognising them by ids:
//   gen4: vendor:device 0x1000:0xc010, subsystem 0x1000:0xaxxx, at both levels;
//   gen5: vendor:device 0x1000:0xc030, subsystem 0x1000:0x0xxx on top (level 0) and
//         0x1000:0x1xxx for the sub-switches (level 1).
// A direct child of a level-0 switch that is a level-1 switch of the same generation is merged.
// Returns the generation (4 or 5), or 0 when `ids` are not such a switch's at `level`.
int bcm_switch_gen(const PciIds& ids, int level) {
  if (ids.vendor != 0x1000 || ids.subsystem_vendor != 0x1000) return 0;
  const long long series = ids.subsystem_device & 0xf000;
  if (ids.device == 0xc010 && series == 0xa000) return 4;
  if (ids.device == 0xc030 && series == static_cast<long long>(level) * 0x1000) return 5;
  return 0;
}

bool is_bcm_sub_switch(const pugi::xml_node& pci, int gen) {
  const auto cls = parse_int(pci.attribute("class").value(), 16);
  return cls && is_bridge_class(*cls) && bcm_switch_gen(pci_ids(pci), 1) == gen;
}

// "0x20b0 A100-SXM4-40GB", "0x9999, not a known model", "no PCI device id".
std::string gpu_id_label(unsigned pci_device) {
  if (pci_device == 0) return "no PCI device id";
  const hw::GpuModel* m = hw::gpu_by_pci_device(pci_device);
  return m != nullptr ? fmt::format("0x{:04x} {}", pci_device, m->spec.model)
                      : fmt::format("0x{:04x}, not a known model", pci_device);
}

// "a800-4hca (A800-SXM4-80GB), dgx-a100 (A100-SXM4-80GB), ...": the GPU presets, or only those
// whose GPUs share an NVSwitch plane.
std::string presets_with_gpus(bool nvswitch_only) {
  std::vector<std::string> items;
  for (const GpuPreset& p : gpu_presets()) {
    if (p.nvswitch || !nvswitch_only) items.push_back(fmt::format("{} ({})", p.name, p.gpu_model));
  }
  return text::join(items);
}

// "dgx-h100 (H100-SXM5-80GB), h200 (H200-SXM-141GB)": the presets with one of `models`' GPUs (or
// only those on an NVSwitch plane); when none has, every preset, as presets_with_gpus does.
std::string presets_of(const std::vector<const hw::GpuModel*>& models, bool nvswitch_only) {
  std::vector<std::string> items;
  for (const GpuPreset& p : gpu_presets()) {
    const bool ours =
        std::any_of(models.begin(), models.end(), [&](const hw::GpuModel* m) { return m->spec.model == p.gpu_model; });
    if (ours && (p.nvswitch || !nvswitch_only)) items.push_back(fmt::format("{} ({})", p.name, p.gpu_model));
  }
  if (items.empty() && !nvswitch_only) return presets_with_gpus(false);
  return text::join(items);
}

// A preset GPU's link to its NVSwitch plane, or null when its GPUs have none.
const Link* nvswitch_link(const NodeTemplate& node) {
  const int gpu = node.gpu_device(0);
  for (const Link& l : node.links()) {
    if (l.kind != LinkKind::NvLink || (l.a != gpu && l.b != gpu)) continue;
    const int other = l.a == gpu ? l.b : l.a;
    if (node.devices()[static_cast<std::size_t>(other)].kind == DeviceKind::NvSwitch) return &l;
  }
  return nullptr;
}

// NICs on one parent with one port speed and one link are equally close to every GPU, by
// NCCL's path type and bandwidth alike.
bool side_by_side(const NicFound& a, const NicFound& b) {
  return a.parent == b.parent && a.port_Bps == b.port_Bps && a.link_Bps == b.link_Bps;
}

class Importer {
 public:
  Importer(std::string_view text, std::string source, const XmlImportOptions& options)
      : text_(text),
        source_(std::move(source)),
        options_(options),
        figures_(options.nccl_bandwidths ? hw::Figures::Nccl : hw::Figures::Physical) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < text_.size(); ++i) {
      if (text_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  XmlImport run();

 private:
  std::size_t line_of(std::ptrdiff_t offset) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(),
                                     static_cast<std::size_t>(std::max<std::ptrdiff_t>(offset, 0)));
    return static_cast<std::size_t>(it - line_starts_.begin());
  }
  std::string at(const pugi::xml_node& node) const {
    return fmt::format("{}:{}", source_, line_of(node.offset_debug()));
  }
  void problem(const pugi::xml_node& node, std::string what, std::string valid = {}, std::string hint = {}) {
    problems_.add(at(node), std::move(what), std::move(valid), std::move(hint));
  }
  void note(const pugi::xml_node& node, const std::string& what) { result_.notes.push_back(at(node) + ": " + what); }
  bool nccl() const { return figures_ == hw::Figures::Nccl; }

  // An integer attribute; a problem when present but malformed.
  std::optional<long long> attr_int(const pugi::xml_node& node, const char* name, int base, bool required);

  void reject_classless_skeleton(const pugi::xml_node& root) const;
  void reject_oversized(const pugi::xml_node& root, std::size_t count, int most, std::string_view what) const;
  void visit_cpu(const pugi::xml_node& cpu, int ordinal);
  void visit_pci(const pugi::xml_node& pci, int parent, int depth);
  void visit_switch(const pugi::xml_node& pci, int parent, double link_Bps, int depth);
  void visit_switch_children(const pugi::xml_node& pci, int sw, double link_Bps, int bcm_gen, int depth);
  void visit_gpu(const pugi::xml_node& pci, int parent, double link_Bps);
  void found_nic(const pugi::xml_node& nic_element, const pugi::xml_node& anchor, int parent, double link_Bps);
  double pci_link_Bps(const pugi::xml_node& pci);
  void link_cpus();
  void note_flattened_switches();
  void add_nvlinks();
  void complete_nvlinks(std::string_view what);
  double preset_nvlink_Bps(const Topology& preset, const Link& nvlink) const;
  void note_nvlink_generation(const Topology& preset);
  void resolve_nic_speeds();
  void add_nics();
  void add_nic_group(const std::vector<const NicFound*>& group);
  GpuSpec gpu_spec();
  // The model of a GPU without a PCI device id, from what the file says of it (gpu_inference.hpp),
  // said in a note; nullptr, with a problem that names the models that fit, when none is the answer.
  const hw::GpuModel* inferred_model(const GpuFound& g);
  GpuSpec spec_from_preset(const std::string& preset, std::string_view flag);
  const hw::GpuModel* file_gpu_model() const;
  std::string file_gpu_label() const;
  std::string nvlink_from_choice() const;
  void note_contradicted_preset(const GpuFound& g);
  [[nodiscard]] hw::GpuInference infer(const GpuFound& g) const;

  std::string_view text_;
  std::string source_;
  const XmlImportOptions& options_;
  hw::Figures figures_;
  std::vector<std::size_t> line_starts_;
  Problems problems_;
  XmlImport result_;
  NodeBuilder node_;
  std::vector<GpuFound> gpus_;
  std::unordered_map<std::string, std::size_t> gpu_line_by_busid_;  // bus id -> its first GPU's line
  std::vector<PendingNvLink> nvlinks_;
  int nvlink_elements_ = 0;  // every <nvlink>, valid or not
  std::vector<NicFound> nics_;
  double net_Gbps_ = 0;                       // every <net>'s speed added up
  std::vector<std::pair<int, double>> cpus_;  // device, inter-socket bandwidth
  pugi::xml_node first_gpu_pci_;
  pugi::xml_node first_flattened_;  // the first Broadcom switch with merged sub-switches
  int merged_sub_switches_ = 0;
  bool warned_default_pcie_ = false;
  bool noted_inferred_gpu_ = false;
};

std::optional<long long> Importer::attr_int(const pugi::xml_node& node, const char* name, int base, bool required) {
  const pugi::xml_attribute a = node.attribute(name);
  if (!a) {
    if (required) problem(node, fmt::format("<{}> has no '{}' attribute", node.name(), name));
    return std::nullopt;
  }
  const auto v = parse_int(a.value(), base);
  if (!v) {
    problem(node,
            fmt::format("<{}> {}=\"{}\" is not {}", node.name(), name, a.value(),
                        base == 16 ? "a hexadecimal number" : "an integer"),
            base == 16 ? "e.g. 0x030200" : "e.g. 16");
  }
  return v;
}

// AWS and Azure ship NCCL_TOPO_FILE skeletons of bare <pci busid/> elements (AWS's g5.48xlarge
// file): NCCL reads each device's class, and the rest, from sysfs when it loads one
// (ncclTopoGetXmlFromSys in src/graph/xml.cc), so the file alone cannot tell a GPU from a NIC.
void Importer::reject_classless_skeleton(const pugi::xml_node& root) const {
  const pugi::xml_node first = root.find_node(is_pci);
  const auto has_class = [](const pugi::xml_node& n) { return is_pci(n) && !n.attribute("class").empty(); };
  if (!first || root.find_node(has_class)) return;
  throw Error(Problem{at(first),
                      "an NCCL_TOPO_FILE skeleton: no <pci> has a 'class' attribute (NCCL reads the classes from "
                      "sysfs when it loads such a file), so GPUs cannot be told from NICs",
                      "",
                      "dump the real topology on the machine (run NCCL once with NCCL_TOPO_DUMP_FILE=topo.xml) and "
                      "import that, or use a preset (burst topo list)"});
}

// A file with more than `most` of something (`count` of `what`) is refused before the work that
// grows with its square: pairing CPUs, GPUs, NICs, and every path of the node.
void Importer::reject_oversized(const pugi::xml_node& root, std::size_t count, int most, std::string_view what) const {
  if (count <= static_cast<std::size_t>(most)) return;
  throw Error(Problem{at(root), fmt::format("{} {} in one node", count, what), fmt::format("at most {}", most),
                      "is the file generated, or several machines' dumps joined? import one machine's NCCL dump"});
}

double Importer::pci_link_Bps(const pugi::xml_node& pci) {
  const std::string speed_text = pci.attribute("link_speed").value();
  const auto speed = hw::parse_pcie_speed(speed_text);
  double gts = hw::assumed_pcie_gts(figures_);
  if (!speed) {
    if (!warned_default_pcie_) {
      note(pci, nccl() ? "empty PCIe link_speed: PCIe gen3 (8 GT/s) assumed, as NCCL does"
                       : "empty PCIe link_speed: PCIe gen4 (16 GT/s) assumed");
    }
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
  return hw::pcie_Bps(gts, width, figures_);
}

void Importer::found_nic(const pugi::xml_node& nic_element, const pugi::xml_node& anchor, int parent, double link_Bps) {
  NicFound n{result_.nics++, parent, link_Bps, 0, 0, anchor};
  for (const pugi::xml_node& net : nic_element.children("net")) {
    ++n.ports;
    const auto speed = attr_int(net, "speed", 10, true);
    if (!speed) continue;
    if (*speed <= 0) {
      problem(net, fmt::format("<net> speed {} Mb/s is not positive", *speed), "Mb/s, e.g. 200000 for HDR");
      continue;
    }
    const double bw = static_cast<double>(*speed) * 1e6 / 8;
    net_Gbps_ += static_cast<double>(*speed) / 1000;
    n.port_Bps = n.port_Bps == 0 ? bw : std::min(n.port_Bps, bw);
  }
  result_.nets += std::max(n.ports, 1);
  nics_.push_back(n);
}

void Importer::visit_gpu(const pugi::xml_node& pci, int parent, double link_Bps) {
  GpuFound g;
  g.busid = pci.attribute("busid").value();
  g.line = line_of(pci.offset_debug());
  g.device = node_.device(DeviceKind::Gpu, fmt::format("gpu{}", result_.gpus++));
  if (const auto id = attr_int(pci, "device", 16, false)) g.pci_device = static_cast<unsigned>(*id & 0xffff);
  if (!first_gpu_pci_) first_gpu_pci_ = pci;
  node_.link(g.device, parent, LinkKind::Pcie, link_Bps, hw::kPcieLatency);
  int lanes = 0;
  std::set<std::string> peers;  // the GPUs its direct NVLinks reach
  // One bus id is one PCI function: two GPUs on it would make every NVLink to it ambiguous.
  const auto [first, fresh] = gpu_line_by_busid_.try_emplace(g.busid, g.line);
  if (!g.busid.empty() && !fresh) {
    problem(pci, fmt::format("two GPUs with bus id '{}' (the first at line {})", g.busid, first->second),
            "one bus id per GPU", "is the file two dumps joined, or edited by hand?");
  }
  if (const pugi::xml_node gpu = pci.child("gpu")) {
    const auto sm = attr_int(gpu, "sm", 10, false);
    if (sm && (*sm < kMinSm || *sm > kMaxSm)) {
      problem(
          gpu, fmt::format("<gpu> sm=\"{}\" is not a compute capability", *sm),
          fmt::format("{} to {}: major and minor version as one number, e.g. 80 (A100) or 90 (H100)", kMinSm, kMaxSm));
    }
    g.sm = sm && *sm > 0 ? static_cast<int>(*sm) : 80;
    if (sm && *sm > 0) g.clues.sm = static_cast<int>(*sm);
    if (!sm) note(gpu, "<gpu> has no 'sm': NVLink speed of sm 80 (A100) assumed");
    for (const pugi::xml_node& nv : gpu.children("nvlink")) {
      ++nvlink_elements_;
      const auto count = attr_int(nv, "count", 10, true);
      const auto tclass = attr_int(nv, "tclass", 16, true);
      if (!count || !tclass) continue;
      if (*count < 1 || *count > 64) {
        problem(nv, fmt::format("<nvlink> count {} is out of range", *count), "1 to 64");
        continue;
      }
      const std::string target = nv.attribute("target").value();
      if ((*tclass >> 16) == 0x03 && target == g.busid) {
        note(nv, fmt::format("NVLink from GPU {} to itself ignored, as NCCL does", g.busid));
        continue;
      }
      lanes += static_cast<int>(*count);
      if (*tclass == kNvSwitchClass || (*tclass >> 16) == 0x03) g.clues.nvlinks += static_cast<int>(*count);
      g.clues.to_nvswitch |= *tclass == kNvSwitchClass;
      if ((*tclass >> 16) == 0x03) peers.insert(target);
      nvlinks_.push_back({static_cast<int>(gpus_.size()), target, static_cast<int>(*count),
                          static_cast<unsigned>(*tclass), line_of(nv.offset_debug())});
    }
  }
  result_.nvlinks_per_gpu.push_back(lanes);
  g.clues.nvlink_peers = static_cast<int>(peers.size());
  if (const auto gts = hw::parse_pcie_speed(pci.attribute("link_speed").value()); gts && *gts > 0) {
    g.clues.pcie_gts = *gts;
  }
  if (const auto width = parse_int(pci.attribute("link_width").value(), 10); width && *width > 0 && *width <= 32) {
    g.clues.pcie_width = static_cast<int>(*width);
  }
  gpus_.push_back(std::move(g));
}

void Importer::visit_switch(const pugi::xml_node& pci, int parent, double link_Bps, int depth) {
  const int sw = node_.device(DeviceKind::PcieSwitch, fmt::format("pcie-sw{}", result_.pcie_switches++));
  node_.link(sw, parent, LinkKind::Pcie, link_Bps, hw::kPcieLatency);
  visit_switch_children(pci, sw, link_Bps, bcm_switch_gen(pci_ids(pci), 0), depth);
}

// The children of a switch's <pci>, hung from `sw`. With `bcm_gen`, `sw` is the top level of
// a Broadcom switch: its sub-switches of that generation become no vertex of their own, their
// children hang from `sw` with their own links, as in NCCL.
void Importer::visit_switch_children(const pugi::xml_node& pci, int sw, double link_Bps, int bcm_gen, int depth) {
  for (const pugi::xml_node& child : pci.children()) {
    const std::string_view name = child.name();
    if (name == "nic") {
      found_nic(child, child, sw, link_Bps);
    } else if (name == "pci" && bcm_gen > 0 && is_bcm_sub_switch(child, bcm_gen)) {
      if (merged_sub_switches_++ == 0) first_flattened_ = pci;
      visit_switch_children(child, sw, pci_link_Bps(child), 0, depth + 1);
    } else if (name == "pci") {
      visit_pci(child, sw, depth + 1);
    }
  }
}

void Importer::visit_pci(const pugi::xml_node& pci, int parent, int depth) {
  if (depth > kMaxPciDepth) {
    problem(pci, fmt::format("PCI tree deeper than {} levels", kMaxPciDepth), "",
            "is the file truncated or generated?");
    return;
  }
  const auto cls = attr_int(pci, "class", 16, true);
  if (!cls) return;
  const double link_Bps = pci_link_Bps(pci);
  const pugi::xml_node nic = pci.child("nic");
  const long long base = *cls >> 8;
  if (is_bridge_class(*cls)) {
    visit_switch(pci, parent, link_Bps, depth);
  } else if ((*cls >> 16) == 0x03) {
    visit_gpu(pci, parent, link_Bps);
  } else if (base == 0x0200 || base == 0x0207 || nic) {
    found_nic(nic, pci, parent, link_Bps);
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
  cpus_.emplace_back(device,
                     hw::inter_socket_Bps(cpu.attribute("vendor").value(), family ? static_cast<int>(*family) : 0,
                                          model ? static_cast<int>(*model) : 0));
  for (const pugi::xml_node& child : cpu.children()) {
    const std::string_view name = child.name();
    if (name == "pci") {
      visit_pci(child, device, 1);
    } else if (name == "nic") {
      // No <pci> gives this link: NCCL makes it LOC_BW (ncclTopoAddCpu); physically gen4 x16 is a guess.
      note(child, nccl() ? "<nic> directly under <cpu>: attached to the CPU at NCCL's LOC_BW (5000 GB/s)"
                         : "<nic> directly under <cpu>: attached to the CPU by a PCIe gen4 x16 link");
      found_nic(child, child, device,
                nccl() ? hw::kNcclLocalBps : hw::pcie_Bps(hw::kDefaultPcieGts, hw::kDefaultPcieWidth));
    }
  }
}

void Importer::link_cpus() {
  for (std::size_t i = 0; i < cpus_.size(); ++i) {
    for (std::size_t j = i + 1; j < cpus_.size(); ++j) {
      node_.link(cpus_[i].first, cpus_[j].first, LinkKind::InterSocket, std::min(cpus_[i].second, cpus_[j].second),
                 hw::kInterSocketLatency);
    }
  }
}

void Importer::note_flattened_switches() {
  if (merged_sub_switches_ == 0) return;
  note(first_flattened_, fmt::format("Broadcom PEX switches flattened as NCCL does (the first here): {} sub-switches "
                                     "merged into their parent, so they add no PCIe switch to a path",
                                     merged_sub_switches_));
}

const hw::GpuModel* Importer::file_gpu_model() const {
  return gpus_.empty() ? nullptr : hw::gpu_by_pci_device(gpus_.front().pci_device);
}

std::string Importer::file_gpu_label() const {
  return gpus_.empty() ? "no GPU" : gpu_id_label(gpus_.front().pci_device);
}

// What to give --nvlink-from for this file's GPUs: the NVSwitch presets with their model, or,
// when the PCI device id names no model, the choice among every NVSwitch preset. Empty when the
// model is known and no preset has it on an NVSwitch plane (PCIe GPUs).
std::string Importer::nvlink_from_choice() const {
  const hw::GpuModel* model = file_gpu_model();
  if (model == nullptr) return "--nvlink-from <preset>, one of " + presets_with_gpus(true);
  std::vector<std::string> fits;
  for (const GpuPreset& p : gpu_presets()) {
    if (p.nvswitch && p.gpu_model == model->spec.model) fits.push_back(p.name);
  }
  return fits.empty() ? std::string() : "--nvlink-from " + text::join(fits, " or ");
}

void Importer::add_nvlinks() {
  if (gpus_.empty()) return;
  const bool any_gpu_element = std::any_of(gpus_.begin(), gpus_.end(), [](const GpuFound& g) { return g.sm > 0; });
  if (!any_gpu_element) {
    result_.skeleton = true;
    if (!options_.nvlink_from.empty()) {
      complete_nvlinks("skeleton");
      return;
    }
    const std::string choice = nvlink_from_choice();
    problem(first_gpu_pci_,
            "skeleton topology: GPUs appear only as <pci> elements without <gpu>, so there is no NVLink information",
            "",
            choice.empty()
                ? fmt::format("no preset has {} GPUs on an NVSwitch plane: dump the topology on the machine "
                              "with NCCL_TOPO_DUMP_FILE=topo.xml and import that",
                              file_gpu_label())
                : fmt::format("complete it from the NVSwitch preset of its GPUs ({}): {}", file_gpu_label(), choice));
    return;
  }
  if (nvlink_elements_ == 0) {
    if (!options_.nvlink_from.empty()) {
      complete_nvlinks("dump without <nvlink>");
      return;
    }
    const std::string choice = nvlink_from_choice();
    note(first_gpu_pci_,
         "no <nvlink> in this dump: its GPUs are joined by PCIe only, right for PCIe GPUs such as L4 "
         "or L40S" +
             (choice.empty() ? std::string() : "; if they share an NVSwitch plane, complete it: " + choice));
    return;
  }
  if (!options_.nvlink_from.empty()) {
    note(first_gpu_pci_, fmt::format("--nvlink-from {} adds no NVLinks: the file lists its own", options_.nvlink_from));
  }
  std::vector<int> switch_lanes(gpus_.size(), 0);
  std::map<std::pair<int, int>, int> peer_lanes;      // (lower, higher GPU ordinal) -> lanes
  std::unordered_map<std::string, int> gpu_by_busid;  // the first GPU of each bus id
  for (std::size_t g = 0; g < gpus_.size(); ++g) gpu_by_busid.try_emplace(gpus_[g].busid, static_cast<int>(g));
  for (const PendingNvLink& nv : nvlinks_) {
    const std::string where = fmt::format("{}:{}", source_, nv.line);
    if (nv.tclass == kNvSwitchClass) {
      switch_lanes[static_cast<std::size_t>(nv.gpu)] += nv.count;
    } else if ((nv.tclass >> 16) == 0x03) {
      const auto it = gpu_by_busid.find(nv.target);
      if (it == gpu_by_busid.end()) {
        problems_.add(where, fmt::format("NVLink target '{}' is not a GPU of this file", nv.target), "",
                      "check the target busid against the GPUs' <pci busid>");
        continue;
      }
      const int other = it->second;
      auto& lanes = peer_lanes[{std::min(nv.gpu, other), std::max(nv.gpu, other)}];
      lanes = std::max(lanes, nv.count);  // both ends usually list the same bridge
    } else {
      result_.notes.push_back(
          fmt::format("{}: NVLink to a device of class 0x{:06x} (not a GPU or NVSwitch) ignored", where, nv.tclass));
    }
  }
  if (std::any_of(switch_lanes.begin(), switch_lanes.end(), [](int l) { return l > 0; })) {
    result_.nvswitch = true;
    const int sw = node_.device(DeviceKind::NvSwitch, "nvswitch");
    for (std::size_t g = 0; g < gpus_.size(); ++g) {
      if (switch_lanes[g] == 0) continue;
      node_.link(gpus_[g].device, sw, LinkKind::NvLink, switch_lanes[g] * hw::nvlink_link_Bps(gpus_[g].sm, figures_),
                 hw::kNvLinkLatency);
    }
  }
  for (const auto& [pair, lanes] : peer_lanes) {
    const GpuFound& a = gpus_[static_cast<std::size_t>(pair.first)];
    const GpuFound& b = gpus_[static_cast<std::size_t>(pair.second)];
    node_.link(a.device, b.device, LinkKind::NvLink, lanes * hw::nvlink_link_Bps(std::min(a.sm, b.sm), figures_),
               2 * hw::kNvLinkLatency);
  }
}

// A file without NVLink information (`what`: a skeleton, a dump without <nvlink>) gets the
// NVSwitch plane of the `nvlink_from` preset: every GPU the preset's per-GPU NVLink bandwidth.
void Importer::complete_nvlinks(std::string_view what) {
  const Topology preset = make_preset(options_.nvlink_from);
  const Link* nvlink = nvswitch_link(preset.node());
  if (nvlink == nullptr) {
    const std::string choice = nvlink_from_choice();
    problem(first_gpu_pci_,
            fmt::format("preset '{}' has no NVSwitch fabric to complete the {} with", options_.nvlink_from, what),
            presets_with_gpus(true),
            choice.empty() ? "name a preset whose GPUs share an NVSwitch plane"
                           : fmt::format("for this file's GPUs ({}): {}", file_gpu_label(), choice));
    return;
  }
  const double bandwidth = preset_nvlink_Bps(preset, *nvlink);
  result_.nvswitch = true;
  note(first_gpu_pci_, fmt::format("{} completed from preset '{}': NVSwitch plane, {:g} GB/s per GPU", what,
                                   options_.nvlink_from, bandwidth / 1e9));
  note_nvlink_generation(preset);
  const int sw = node_.device(DeviceKind::NvSwitch, "nvswitch");
  for (const GpuFound& g : gpus_) node_.link(g.device, sw, LinkKind::NvLink, bandwidth, nvlink->latency_s);
}

// A preset's bandwidths are physical; NCCL's figure is its NVLink count x NCCL's per-link one.
double Importer::preset_nvlink_Bps(const Topology& preset, const Link& nvlink) const {
  if (!nccl()) return nvlink.bandwidth_Bps;
  const int sm = hw::gpu_by_model(preset.gpu().model)->sm;
  return std::round(nvlink.bandwidth_Bps / hw::nvlink_link_Bps(sm)) * hw::nvlink_link_Bps(sm, figures_);
}

// A preset of another GPU generation brings another NVLink speed: said, not silently taken.
void Importer::note_nvlink_generation(const Topology& preset) {
  const hw::GpuModel* ours = file_gpu_model();
  const hw::GpuModel* theirs = hw::gpu_by_model(preset.gpu().model);
  if (ours == nullptr || ours->sm == theirs->sm) return;
  const std::string choice = nvlink_from_choice();
  note(first_gpu_pci_, fmt::format("preset '{}' has {} GPUs (sm {}), this file {} (sm {}): its NVLink bandwidth may "
                                   "not be these GPUs'{}",
                                   preset.name(), theirs->spec.model, theirs->sm, file_gpu_label(), ours->sm,
                                   choice.empty() ? "" : " (the preset of these GPUs: " + choice + ")"));
}

// NICs without <net> (skeletons list NICs as bare <pci>) take --nic-speed, else the HCA speed
// of the `nvlink_from` preset.
void Importer::resolve_nic_speeds() {
  if (std::none_of(nics_.begin(), nics_.end(), [](const NicFound& n) { return n.ports == 0; })) return;
  double nic_Bps = options_.nic_port_Bps;
  std::string nic_origin = "--nic-speed";
  if (nic_Bps == 0 && !options_.nvlink_from.empty() && is_preset(options_.nvlink_from)) {
    const Topology preset = make_preset(options_.nvlink_from);
    const auto& nics = preset.node().nic_devices();
    if (!nics.empty()) nic_Bps = preset.node().devices()[static_cast<std::size_t>(nics.front())].port_bandwidth_Bps;
    nic_origin = "preset '" + options_.nvlink_from + "'";
  }
  for (NicFound& n : nics_) {
    if (n.ports > 0) continue;
    if (nic_Bps > 0) {
      n.port_Bps = nic_Bps;
      note(n.anchor, fmt::format("NIC without <net>: port speed {:g} Gb/s from {}", nic_Bps * 8 / 1e9, nic_origin));
    } else if (!result_.skeleton || !options_.nvlink_from.empty()) {
      problem(n.anchor, "NIC without <net>: its speed is unknown", "", "give it with --nic-speed, e.g. 100Gbps");
    }
  }
}

// NCCL spreads a GPU's channels over all the NICs closest to it (ncclTopoGetLocalNet: the
// closest by path bandwidth and type, shared evenly by the GPUs closest to them), so NICs side
// by side serve their GPUs together. The node template gives each GPU one NIC, so they become
// one NIC with all their ports; then NIC / GPUs sharing it is what NCCL would give each GPU.
void Importer::add_nics() {
  std::vector<bool> added(nics_.size(), false);
  for (std::size_t i = 0; i < nics_.size(); ++i) {
    if (added[i]) continue;
    std::vector<const NicFound*> group;
    for (std::size_t j = i; j < nics_.size(); ++j) {
      if (added[j] || !side_by_side(nics_[i], nics_[j])) continue;
      group.push_back(&nics_[j]);
      added[j] = true;
    }
    add_nic_group(group);
  }
}

// One NIC device for `group`: all their ports, joined to their parent by their links together.
void Importer::add_nic_group(const std::vector<const NicFound*>& group) {
  const NicFound& first = *group.front();
  int ports = 0;
  double link_Bps = 0;
  std::vector<std::string> ordinals;
  for (const NicFound* n : group) {
    ports += std::max(n->ports, 1);
    link_Bps += n->link_Bps;
    ordinals.push_back(std::to_string(n->ordinal));
  }
  const std::string name = "nic" + text::join(ordinals, "+");
  const int device = node_.nic(name, ports, first.port_Bps);
  node_.link(device, first.parent, LinkKind::Pcie, link_Bps, hw::kPcieLatency);
  if (group.size() < 2) return;
  note(first.anchor, fmt::format("{} NICs side by side on {} taken as one {}-port NIC '{}' of {:g} Gb/s per port: NCCL "
                                 "spreads a GPU's channels over all the NICs closest to it",
                                 group.size(), node_.devices()[static_cast<std::size_t>(first.parent)].name, ports,
                                 name, first.port_Bps * 8 / 1e9));
}

// The GPU spec of a preset, said in a note: it is not what the file's PCI device id says.
GpuSpec Importer::spec_from_preset(const std::string& preset, std::string_view flag) {
  GpuSpec spec = make_preset(preset).gpu();
  if (first_gpu_pci_) {
    note(first_gpu_pci_, fmt::format("GPU model {} from preset '{}' ({}), not from the file's PCI device id ({})",
                                     spec.model, preset, flag, file_gpu_label()));
  }
  return spec;
}

GpuSpec Importer::gpu_spec() {
  if (!options_.gpu_from.empty()) return spec_from_preset(options_.gpu_from, "--gpu-from");
  std::optional<GpuSpec> spec;
  for (const GpuFound& g : gpus_) {
    const hw::GpuModel* m = hw::gpu_by_pci_device(g.pci_device);
    const std::string where = fmt::format("{}:{}", source_, g.line);
    if (m == nullptr && !options_.nvlink_from.empty()) {
      note_contradicted_preset(g);
      return spec_from_preset(options_.nvlink_from, "--nvlink-from");
    }
    // No id at all, and a <gpu> element that says something of it: inferred. An unknown id is a
    // GPU this build does not know, never guessed.
    if (m == nullptr && g.pci_device == 0 && g.sm > 0) {
      m = inferred_model(g);
      if (m == nullptr) return GpuSpec{};
    }
    if (m == nullptr) {
      std::vector<std::string> known;
      for (const auto& k : hw::gpu_models()) known.push_back(fmt::format("0x{:04x} {}", k.pci_device, k.spec.model));
      std::string hint = "name the GPU with --gpu-from <preset>, one of " + presets_with_gpus(false);
      if (nvlink_elements_ == 0) hint += "; or, for NVSwitch GPUs, with --nvlink-from <preset>, which adds its NVLinks";
      problems_.add(where,
                    g.pci_device == 0 ? "the GPU's <pci> has no 'device' attribute, so its model is unknown"
                                      : fmt::format("unknown GPU PCI device id 0x{:04x}", g.pci_device),
                    text::join(known), hint);
      return GpuSpec{};
    }
    if (spec && spec->model != m->spec.model) {
      problems_.add(where, fmt::format("mixed GPU models: {} and {}", spec->model, m->spec.model),
                    "one GPU model per node", "name one with --gpu-from");
      return GpuSpec{};
    }
    spec = m->spec;
  }
  return spec ? *spec : GpuSpec{};
}

// --nvlink-from names the GPU of a file without ids; where the file lists its own NVLinks, its
// clues may rule that GPU out (an H800 preset for a GPU with 18 NVLinks): the name is kept, as
// asked, and a note says what contradicts it, once.
void Importer::note_contradicted_preset(const GpuFound& g) {
  if (nvlink_elements_ == 0 || noted_inferred_gpu_) return;
  noted_inferred_gpu_ = true;
  const hw::GpuInference found = infer(g);
  const std::string model = make_preset(options_.nvlink_from).gpu().model;
  const auto named = [&](const hw::GpuModel* m) { return m->spec.model == model; };
  if (std::any_of(found.best.begin(), found.best.end(), named) ||
      std::any_of(found.fewer.begin(), found.fewer.end(), named)) {
    return;
  }
  result_.notes.push_back(fmt::format(
      "{}:{}: --nvlink-from {} names {}, which what the file says of its GPUs rules out ({}); taken as asked "
      "(--gpu-from names the GPU alone)",
      source_, g.line, options_.nvlink_from, model, hw::clue_list(found)));
}

// The GPU's own clues and the network each GPU of the file gets, held against every model.
hw::GpuInference Importer::infer(const GpuFound& g) const {
  hw::GpuClues clues = g.clues;
  clues.network_Gbps_per_gpu = net_Gbps_ / static_cast<double>(gpus_.size());
  return hw::infer_gpu_model(clues);
}

const hw::GpuModel* Importer::inferred_model(const GpuFound& g) {
  const hw::GpuInference found = infer(g);
  const std::string where = fmt::format("{}:{}", source_, g.line);
  const std::string said = hw::clue_list(found);
  if (found.sureness == hw::Sureness::NoFit) {
    std::vector<std::string> known;
    for (const auto& k : hw::gpu_models()) known.push_back(fmt::format("{} (sm {})", k.spec.model, k.sm));
    problems_.add(where,
                  fmt::format("the GPU's <pci> has no 'device' attribute, and what the file says of it rules out "
                              "every GPU model we know: {}",
                              said),
                  text::join(known), "name the GPU with --gpu-from <preset>, one of " + presets_with_gpus(false));
    return nullptr;
  }
  if (found.sureness == hw::Sureness::Tied) {
    std::string hint =
        found.reason + ": name the GPU with --gpu-from <preset>, one of " + presets_of(found.best, false);
    const std::string nvswitch = presets_of(found.best, true);
    if (nvlink_elements_ == 0 && !nvswitch.empty()) {
      hint +=
          "; or, as the file lists no NVLink, with --nvlink-from <preset>, which adds its NVSwitch plane too, "
          "one of " +
          nvswitch;
    }
    std::vector<std::string> tied;
    for (const hw::GpuModel* m : found.best) tied.push_back(m->spec.model);
    problems_.add(where,
                  fmt::format("the GPU's <pci> has no 'device' attribute, and {} GPU models fit what the file says "
                              "of it equally: {}",
                              found.best.size(), said),
                  text::join(tied), hint);
    return nullptr;
  }
  if (!noted_inferred_gpu_) {
    noted_inferred_gpu_ = true;
    std::string other;
    if (found.sureness != hw::Sureness::Sure) {
      std::vector<const hw::GpuModel*> candidates = found.best;
      candidates.insert(candidates.end(), found.fewer.begin(), found.fewer.end());
      other = " (if yours is another, name it with --gpu-from <preset>, one of " + presets_of(candidates, false) + ")";
    }
    result_.notes.push_back(
        fmt::format("{}: GPU model {} inferred from what the file says, as it gives no PCI "
                    "device id: {}; {}{}",
                    where, found.model->spec.model, said, found.reason, other));
  }
  return found.model;
}

XmlImport Importer::run() {
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed =
      doc.load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!parsed) {
    throw Error(Problem{fmt::format("{}:{}", source_, line_of(parsed.offset)),
                        std::string("invalid XML: ") + parsed.description(), "", ""});
  }
  const pugi::xml_node root = doc.document_element();
  const std::string_view root_name = root.name();
  if (root_name == "graphs" || root_name == "graph") {
    throw Error(
        Problem{at(root), "this is an NCCL graph file (NCCL_GRAPH_FILE: ring and tree channel orders), not a topology",
                "", "dump the topology instead: run once with NCCL_TOPO_DUMP_FILE=topo.xml and import topo.xml"});
  }
  if (root_name != "system") {
    throw Error(
        Problem{root ? at(root) : source_, fmt::format("expected an NCCL topology <system>, found <{}>", root_name),
                "<system version=\"1\"> with <cpu> children", "NCCL writes this format with NCCL_TOPO_DUMP_FILE"});
  }
  reject_classless_skeleton(root);
  const auto cpus = root.children("cpu");
  reject_oversized(root, static_cast<std::size_t>(std::distance(cpus.begin(), cpus.end())), kMaxCpus, "<cpu> elements");
  int ordinal = 0;
  for (const pugi::xml_node& cpu : cpus) visit_cpu(cpu, ordinal++);
  reject_oversized(root, node_.devices().size(), kMaxDevicesPerNode, "devices (CPUs, PCIe switches, GPUs and NICs)");
  if (result_.cpus == 0) problem(root, "no <cpu> element", "", "GPUs and NICs hang below <cpu> elements");
  if (result_.gpus == 0 && result_.cpus > 0) {
    problem(root, "no GPU: no <pci> of class 0x03xxxx", "", "is this the dump of a GPU node?");
  }
  link_cpus();
  note_flattened_switches();
  add_nvlinks();
  resolve_nic_speeds();
  add_nics();
  const GpuSpec spec = gpu_spec();
  // The topology is named after the file: printable text only, as every name (escape.hpp).
  const std::string name = std::filesystem::path(source_).stem().string();
  if (escape::unprintable_at(name)) {
    problems_.add(source_,
                  fmt::format("the topology is named after the file, '{}': {}", escape::terminal(name),
                              escape::describe_unprintable(name)),
                  "printable text: no control characters, line breaks or tabs", "rename the file");
  }
  problems_.throw_if_any();

  result_.topology.emplace(name.empty() ? "nccl-xml" : name, spec, node_.build(source_ + " (imported node)"),
                           options_.nodes, options_.fabric);
  return std::move(result_);
}

}  // namespace

XmlImport import_nccl_xml(std::string_view text, const std::string& source, const XmlImportOptions& options) {
  return Importer(text, source, options).run();
}

XmlImport import_nccl_xml_file(const std::string& path, const XmlImportOptions& options) {
  return import_nccl_xml(read_untrusted_file(path, kNcclXmlFileCap), path, options);
}

}  // namespace burst::topo
