// Reading and writing "burst.topology/1". See json_format.hpp and docs/topology-format.md.
#include "topologies/json_format.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "topologies/hardware.hpp"
#include "topologies/node_template.hpp"

namespace burst::topo {
namespace {

// ---- writing --------------------------------------------------------------------------------

// The shortest of the readable form and value/unit for every unit that parses back to the
// identical double; the base unit with all digits when none does.
template <class Format, class Parse>
std::string exact(double value, Format format, Parse parse,
                  std::initializer_list<std::pair<const char*, double>> units) {
  std::string best;
  auto consider = [&](std::string text) {
    if (parse(text, "") == value && (best.empty() || text.size() < best.size())) best = std::move(text);
  };
  consider(format(value));
  for (const auto& [suffix, factor] : units) consider(fmt::format("{}{}", value / factor, suffix));
  return best.empty() ? fmt::format("{}{}", value, units.end()[-1].first) : best;
}

std::string bandwidth_text(double v) {
  return exact(v, units::format_bandwidth, units::parse_bandwidth,
               {{"TBps", 1e12}, {"GBps", 1e9}, {"MBps", 1e6}, {"KBps", 1e3}, {"Bps", 1.0}});
}
std::string duration_text(double v) {
  return exact(v, units::format_duration, units::parse_duration,
               {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}});
}
std::string bytes_text(double v) {
  return exact(v, units::format_bytes, units::parse_bytes,
               {{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1.0}});
}
std::string flops_text(double v) {
  return exact(v, units::format_flop_rate, units::parse_flop_rate,
               {{"PFLOPS", 1e15}, {"TFLOPS", 1e12}, {"GFLOPS", 1e9}, {"MFLOPS", 1e6}, {"FLOPS", 1.0}});
}

// ---- reading --------------------------------------------------------------------------------

template <class Enum>
struct Names {
  std::vector<std::string> names;
  std::vector<Enum> values;
};

template <class Enum, std::size_t N>
Names<Enum> names_of(const Enum (&values)[N]) {
  Names<Enum> out;
  for (const Enum v : values) {
    out.names.emplace_back(to_string(v));
    out.values.push_back(v);
  }
  return out;
}

const Names<DeviceKind>& device_kinds() {
  static const DeviceKind all[] = {DeviceKind::Gpu, DeviceKind::NvSwitch, DeviceKind::PcieSwitch, DeviceKind::Cpu,
                                   DeviceKind::Nic};
  static const Names<DeviceKind> n = names_of(all);
  return n;
}
const Names<LinkKind>& link_kinds() {
  // Network links belong to the fabric, not to a node.
  static const LinkKind all[] = {LinkKind::NvLink, LinkKind::Pcie, LinkKind::InterSocket, LinkKind::SharedMemory};
  static const Names<LinkKind> n = names_of(all);
  return n;
}
const Names<Sharing>& sharings() {
  static const Sharing all[] = {Sharing::Shared, Sharing::FatPipe};
  static const Names<Sharing> n = names_of(all);
  return n;
}
const Names<FabricKind>& fabric_kinds() {
  static const FabricKind all[] = {FabricKind::RailOptimized, FabricKind::FatTree};
  static const Names<FabricKind> n = names_of(all);
  return n;
}

template <class Enum>
std::optional<Enum> read_enum(JsonReader& r, const Json& obj, const std::string& at, const char* key,
                              const Names<Enum>& names, bool required) {
  const auto text = r.choice(obj, at, key, names.names, required);
  if (!text) return std::nullopt;
  for (std::size_t i = 0; i < names.names.size(); ++i) {
    if (names.names[i] == *text) return names.values[i];
  }
  return std::nullopt;
}

double default_latency(LinkKind kind) {
  switch (kind) {
    case LinkKind::NvLink: return hw::kNvLinkLatency;
    case LinkKind::Pcie: return hw::kPcieLatency;
    case LinkKind::InterSocket: return hw::kInterSocketLatency;
    case LinkKind::SharedMemory: return 0.5e-6;
    case LinkKind::Network: return hw::kFabricLatency;
  }
  return 0;
}

std::vector<std::string> known_gpu_models() {
  std::vector<std::string> names;
  for (const auto& m : hw::gpu_models()) names.push_back(m.spec.model);
  return names;
}

std::optional<GpuSpec> read_gpu(JsonReader& r, const Json& doc) {
  const Json* gpu = r.object(doc, "", "gpu");
  if (gpu == nullptr) return std::nullopt;
  r.reject_unknown_keys(*gpu, "/gpu", {"model", "peak_bf16", "memory", "memory_bandwidth", "optimizer_params_per_s"});
  const auto model = r.name(*gpu, "/gpu", "model");
  // A known model fills in what the document leaves out.
  const hw::GpuModel* known = model ? hw::gpu_by_model(*model) : nullptr;
  const bool required = known == nullptr;
  const auto peak = r.flop_rate(*gpu, "/gpu", "peak_bf16", required);
  const auto memory = r.bytes(*gpu, "/gpu", "memory", required);
  const auto bandwidth = r.bandwidth(*gpu, "/gpu", "memory_bandwidth", required);
  const auto optimizer = r.number(*gpu, "/gpu", "optimizer_params_per_s", false);
  if (!model) return std::nullopt;
  GpuSpec spec = known ? known->spec : GpuSpec{*model, 0, 0, 0};
  if (peak) spec.peak_bf16_flops = *peak;
  if (memory) spec.memory_bytes = *memory;
  if (bandwidth) spec.memory_bandwidth_Bps = *bandwidth;
  if (optimizer) spec.optimizer_params_per_s = *optimizer;
  const std::pair<const char*, double> positive[] = {{"peak_bf16", spec.peak_bf16_flops},
                                                     {"memory", spec.memory_bytes},
                                                     {"memory_bandwidth", spec.memory_bandwidth_Bps},
                                                     {"optimizer_params_per_s", spec.optimizer_params_per_s}};
  r.require_positive(*gpu, "/gpu", positive);
  if (required && (!peak || !memory || !bandwidth) && model) {
    r.problem("/gpu/model",
              fmt::format("'{}' is not a known model, so peak_bf16, memory and memory_bandwidth are required", *model),
              text::join(known_gpu_models()), text::did_you_mean(*model, known_gpu_models()));
  }
  return spec;
}

std::vector<Device> read_devices(JsonReader& r, const Json& node, std::map<std::string, int>& index) {
  std::vector<Device> devices;
  const Json* list = r.array(node, "/node", "devices");
  if (list == nullptr) return devices;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& d = (*list)[i];
    const std::string at = JsonReader::child("/node/devices", i);
    if (!d.is_object()) {
      r.problem(at, fmt::format("expected an object, found {}", d.type_name()), "",
                "a device looks like {\"name\": \"gpu0\", \"kind\": \"gpu\"}");
      continue;
    }
    r.reject_unknown_keys(d, at, {"name", "kind", "ports", "port_bandwidth"});
    const auto name = r.name(d, at, "name");
    const auto kind = read_enum(r, d, at, "kind", device_kinds(), true);
    if (name && !kind) index.emplace(*name, -1);  // known but broken: links to it say nothing more
    if (!name || !kind) continue;
    Device device{*kind, *name};
    if (*kind == DeviceKind::Nic) {
      if (const auto ports = r.integer(d, at, "ports", false, 1, 64)) device.ports = static_cast<int>(*ports);
      if (const auto bw = r.bandwidth(d, at, "port_bandwidth")) device.port_bandwidth_Bps = *bw;
    } else {
      for (const char* key : {"ports", "port_bandwidth"}) {
        if (d.contains(key)) {
          r.problem(JsonReader::child(at, key), fmt::format("only NICs have '{}'", key), "",
                    fmt::format("this device is a '{}'", to_string(*kind)));
        }
      }
    }
    if (!index.emplace(*name, static_cast<int>(devices.size())).second) {
      r.problem(JsonReader::child(at, "name"), fmt::format("duplicate device name '{}'", *name), "",
                "device names are unique within a node");
      continue;
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

std::vector<Link> read_links(JsonReader& r, const Json& node, const std::map<std::string, int>& index) {
  std::vector<Link> links;
  const Json* list = r.array(node, "/node", "links");
  if (list == nullptr) return links;
  std::vector<std::string> names;
  for (const auto& [name, i] : index) names.push_back(name);  // sorted: std::map
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& l = (*list)[i];
    const std::string at = JsonReader::child("/node/links", i);
    if (!l.is_object()) {
      r.problem(
          at, fmt::format("expected an object, found {}", l.type_name()), "",
          "a link looks like {\"a\": \"gpu0\", \"b\": \"nvswitch\", \"kind\": \"nvlink\", \"bandwidth\": \"200GBps\"}");
      continue;
    }
    r.reject_unknown_keys(l, at, {"a", "b", "kind", "bandwidth", "latency", "sharing"});
    Link link;
    bool ok = true;
    for (const char* end : {"a", "b"}) {
      const auto name = r.string(l, at, end);
      if (!name) {
        ok = false;
        continue;
      }
      const auto it = index.find(*name);
      if (it != index.end() && it->second < 0) {
        ok = false;
        continue;
      }
      if (it == index.end()) {
        r.problem(JsonReader::child(at, end), fmt::format("no device named '{}'", *name), text::join(names),
                  text::did_you_mean(*name, names));
        ok = false;
        continue;
      }
      (end[0] == 'a' ? link.a : link.b) = it->second;
    }
    const auto kind = read_enum(r, l, at, "kind", link_kinds(), true);
    const auto bandwidth = r.bandwidth(l, at, "bandwidth");
    const auto latency = r.duration(l, at, "latency", false);
    const auto sharing = read_enum(r, l, at, "sharing", sharings(), false);
    if (bandwidth && !(*bandwidth > 0)) r.problem(JsonReader::child(at, "bandwidth"), "must be positive");
    if (!ok || !kind || !bandwidth) continue;
    if (ok && link.a == link.b) r.problem(at, "link joins a device to itself");
    link.kind = *kind;
    link.bandwidth_Bps = *bandwidth;
    link.latency_s = latency ? *latency : default_latency(*kind);
    link.sharing = sharing ? *sharing : Sharing::Shared;
    links.push_back(link);
  }
  return links;
}

Fabric read_fabric(JsonReader& r, const Json& doc) {
  Fabric fabric;
  const Json* f = r.object(doc, "", "fabric", false);
  if (f == nullptr) return fabric;
  r.reject_unknown_keys(*f, "/fabric", {"kind", "latency", "oversubscription"});
  if (const auto kind = read_enum(r, *f, "/fabric", "kind", fabric_kinds(), false)) fabric.kind = *kind;
  if (const auto latency = r.duration(*f, "/fabric", "latency", false)) fabric.latency_s = *latency;
  if (const auto over = r.number(*f, "/fabric", "oversubscription", false)) {
    if (*over < 1) {
      r.problem("/fabric/oversubscription", fmt::format("{} is below 1", *over), "1 (non-blocking) or more",
                "2 means the spine carries half of what the NICs can send");
    } else {
      fabric.oversubscription = *over;
    }
  }
  return fabric;
}

}  // namespace

Json Topology::to_json() const {
  Json j;
  j["schema"] = kTopologySchema;
  j["name"] = name_;
  j["nodes"] = nodes_;
  j["gpu"] = {{"model", gpu_.model},
              {"peak_bf16", flops_text(gpu_.peak_bf16_flops)},
              {"memory", bytes_text(gpu_.memory_bytes)},
              {"memory_bandwidth", bandwidth_text(gpu_.memory_bandwidth_Bps)}};
  // Only a calibrated CPU rank has it: every GPU topology's document (and hash) is unchanged.
  if (gpu_.optimizer_params_per_s > 0) j["gpu"]["optimizer_params_per_s"] = gpu_.optimizer_params_per_s;
  Json devices = Json::array();
  for (const Device& d : node_->devices()) {
    Json o = {{"name", d.name}, {"kind", to_string(d.kind)}};
    if (d.kind == DeviceKind::Nic) {
      o["ports"] = d.ports;
      o["port_bandwidth"] = bandwidth_text(d.port_bandwidth_Bps);
    }
    devices.push_back(std::move(o));
  }
  Json links = Json::array();
  for (const Link& l : node_->links()) {
    links.push_back({{"a", node_->devices()[static_cast<std::size_t>(l.a)].name},
                     {"b", node_->devices()[static_cast<std::size_t>(l.b)].name},
                     {"kind", to_string(l.kind)},
                     {"bandwidth", bandwidth_text(l.bandwidth_Bps)},
                     {"latency", duration_text(l.latency_s)},
                     {"sharing", to_string(l.sharing)}});
  }
  j["node"] = {{"devices", std::move(devices)}, {"links", std::move(links)}};
  j["fabric"] = {{"kind", to_string(fabric_.kind)},
                 {"latency", duration_text(fabric_.latency_s)},
                 {"oversubscription", fabric_.oversubscription}};
  return j;
}

Topology parse_topology_json(const Json& doc, const std::string& source) {
  Problems problems;
  JsonReader r(source, problems);
  if (!doc.is_object()) {
    r.problem("", fmt::format("expected a topology object, found {}", doc.type_name()), "",
              "start with {\"schema\": \"burst.topology/1\", ...}");
    problems.throw_if_any();
  }
  if (doc.contains("graphs") || doc.contains("system")) {
    r.problem("", "this looks like NCCL XML converted to JSON", "", "import the .xml file itself");
  }
  // A document of another kind or version: its other fields would only add noise.
  if (const auto schema = r.string(doc, "", "schema"); schema && *schema != kTopologySchema) {
    r.problem("/schema", fmt::format("'{}' is not a topology schema this version reads", *schema), kTopologySchema,
              schema->rfind("burst.topology/", 0) == 0 ? "written by a newer burst? convert it with that version"
                                                       : "is this a topology file?");
    problems.throw_if_any();
  }
  r.reject_unknown_keys(doc, "", {"schema", "name", "nodes", "gpu", "node", "fabric"});
  const auto name = r.name(doc, "", "name");
  const auto nodes = r.integer(doc, "", "nodes", false, 1, 1 << 20);
  const auto gpu = read_gpu(r, doc);
  std::vector<Device> devices;
  std::vector<Link> links;
  if (const Json* node = r.object(doc, "", "node")) {
    r.reject_unknown_keys(*node, "/node", {"devices", "links"});
    std::map<std::string, int> index;
    devices = read_devices(r, *node, index);
    links = read_links(r, *node, index);
  }
  const Fabric fabric = read_fabric(r, doc);
  const bool has_nic =
      std::any_of(devices.begin(), devices.end(), [](const Device& d) { return d.kind == DeviceKind::Nic; });
  if (nodes && *nodes > 1 && !has_nic && !devices.empty()) {
    r.problem("/nodes", fmt::format("{} nodes but the node has no NIC", *nodes), "1 without a NIC",
              "add a device of kind \"nic\" with a \"port_bandwidth\"");
  }
  problems.throw_if_any();

  auto node = std::make_shared<const NodeTemplate>(std::move(devices), std::move(links), r.where("/node"));
  return Topology(*name, *gpu, std::move(node), nodes ? static_cast<int>(*nodes) : 1, fabric);
}

std::string dump_topology_json(const Topology& t) { return dump_readable_json(t.to_json()); }

Topology parse_topology_text(std::string_view text, const std::string& source) {
  return parse_topology_json(parse_json_text(text, source), source);
}

Topology read_topology_json(const std::string& path) {
  return parse_topology_json(read_json_file(path, kTopologyFileCap), path);
}

}  // namespace burst::topo
