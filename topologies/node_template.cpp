// Validation of one node, then the derived tables: the best path for every GPU pair and for
// every GPU its NIC (see path_search.hpp for how a path is chosen and classified).
//
// NIC attachment, deterministic so that plans are reproducible: GPUs are visited in order;
// each takes the NIC with the best path class, ties going to the NIC with the fewest GPUs
// already attached, then to the lowest NIC position. On an A800 node with 4 HCAs, each behind
// a PCIe switch shared with two GPUs, this gives two GPUs per HCA.
#include "topologies/node_template.hpp"

#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "common/error.hpp"
#include "topologies/detail/path_search.hpp"
#include "topologies/detail/physical_ranges.hpp"

namespace burst::topo {
namespace {

void validate(const std::vector<Device>& devices, const std::vector<Link>& links, const std::string& where,
              Problems& problems) {
  if (devices.size() > static_cast<std::size_t>(kMaxDevicesPerNode)) {
    problems.add(where + "/devices", fmt::format("{} devices in one node", devices.size()),
                 fmt::format("at most {}", kMaxDevicesPerNode),
                 "a node is one machine (even an NVL72 rack is 72 GPUs); model more GPUs as more nodes");
    return;  // the pairwise checks and paths below grow with the square of the device count
  }
  if (links.size() > static_cast<std::size_t>(kMaxLinksPerNode)) {
    problems.add(where + "/links", fmt::format("{} links in one node", links.size()),
                 fmt::format("at most {}", kMaxLinksPerNode),
                 "a GPU has at most 18 NVLink ports: join many GPUs through NVSwitch devices, not pair by pair");
    return;  // every GPU's path search walks every link
  }
  std::set<std::string> names;
  int gpus = 0;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const Device& d = devices[i];
    const std::string at = fmt::format("{}/devices/{}", where, i);
    if (d.name.empty()) problems.add(at, "device has no name", "", "name it, e.g. \"gpu0\"");
    if (!names.insert(d.name).second) {
      problems.add(at, fmt::format("duplicate device name '{}'", d.name), "", "device names are unique in a node");
    }
    if (d.kind == DeviceKind::Gpu) ++gpus;
    if (d.kind == DeviceKind::Nic) {
      if (d.ports < 1) problems.add(at, fmt::format("NIC '{}' has {} ports", d.name, d.ports), "1 or more");
      if (!(d.port_bandwidth_Bps > 0) || !std::isfinite(d.port_bandwidth_Bps)) {
        problems.add(at, fmt::format("NIC '{}' has no network bandwidth", d.name), "a positive port bandwidth",
                     "give \"port_bandwidth\", e.g. \"200Gbps\" for HDR InfiniBand");
      } else {
        check_range(problems, at, fmt::format("NIC '{}' port bandwidth (B/s)", d.name), d.port_bandwidth_Bps,
                    Quantity::Bandwidth);
      }
    }
  }
  if (gpus == 0) {
    problems.add(where + "/devices", "the node has no GPU", "at least one device of kind \"gpu\"",
                 "CPU ranks of the local topology are devices of kind \"gpu\" too");
  }
  const auto n = static_cast<int>(devices.size());
  for (std::size_t i = 0; i < links.size(); ++i) {
    const Link& l = links[i];
    const std::string at = fmt::format("{}/links/{}", where, i);
    for (const int end : {l.a, l.b}) {
      if (end < 0 || end >= n) {
        problems.add(at, fmt::format("link end {} is not a device", end), fmt::format("0 to {}", n - 1));
      }
    }
    if (l.a == l.b && l.a >= 0 && l.a < n) problems.add(at, "link joins a device to itself");
    if (!(l.bandwidth_Bps > 0) || !std::isfinite(l.bandwidth_Bps)) {
      problems.add(at, "link bandwidth must be positive", "a positive bandwidth such as \"25GBps\"");
    } else {
      check_range(problems, at, "link bandwidth (B/s)", l.bandwidth_Bps, Quantity::Bandwidth);
    }
    if (!(l.latency_s >= 0) || !std::isfinite(l.latency_s)) {
      problems.add(at, "link latency must be zero or positive", "a duration such as \"0.5us\"");
    } else {
      check_range(problems, at, "link latency (s)", l.latency_s, Quantity::Latency);
    }
    if (l.kind == LinkKind::Network) {
      problems.add(at, "network links are not part of a node", "nvlink, pcie, inter-socket, shm",
                   "give the NIC a \"port_bandwidth\"; the fabric joins the nodes");
    }
  }
}

}  // namespace

NodeTemplate::NodeTemplate(std::vector<Device> devices, std::vector<Link> links, std::string where)
    : devices_(std::move(devices)), links_(std::move(links)) {
  Problems problems;
  validate(devices_, links_, where, problems);
  problems.throw_if_any();

  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].kind == DeviceKind::Gpu) gpu_devices_.push_back(static_cast<int>(i));
    if (devices_[i].kind == DeviceKind::Nic) nic_devices_.push_back(static_cast<int>(i));
  }
  const auto g = static_cast<std::size_t>(gpu_count());
  paths_.resize(g * g);
  routes_.resize(g * g);
  nic_of_.resize(g);
  to_nic_.resize(g);
  from_nic_.resize(g);
  nic_path_.resize(g);

  std::vector<std::vector<FoundPath>> from_gpu(g);
  for (std::size_t i = 0; i < g; ++i) from_gpu[i] = search_paths(devices_, links_, gpu_devices_[i]);

  for (std::size_t i = 0; i < g; ++i) {
    paths_[i * g + i] = PathInfo{PathClass::NVL, std::numeric_limits<double>::infinity(), 0, 0};
    for (std::size_t j = i + 1; j < g; ++j) {
      const FoundPath& p = from_gpu[i][static_cast<std::size_t>(gpu_devices_[j])];
      if (!p.found) {
        problems.add(where,
                     fmt::format("GPUs '{}' and '{}' are not connected",
                                 devices_[static_cast<std::size_t>(gpu_devices_[i])].name,
                                 devices_[static_cast<std::size_t>(gpu_devices_[j])].name),
                     "", "link every GPU to an NVSwitch, a PCIe switch or a CPU");
        continue;
      }
      paths_[i * g + j] = p.info;
      paths_[j * g + i] = p.info;
      routes_[i * g + j] = p.route;
      routes_[j * g + i] = reversed(p.route);
    }
  }

  std::vector<int> attached(devices_.size(), 0);
  for (std::size_t i = 0; i < g && !nic_devices_.empty(); ++i) {
    int best = -1;
    for (const int nic : nic_devices_) {
      const FoundPath& p = from_gpu[i][static_cast<std::size_t>(nic)];
      if (!p.found) continue;
      if (best < 0) {
        best = nic;
        continue;
      }
      const FoundPath& b = from_gpu[i][static_cast<std::size_t>(best)];
      if (p.info.cls < b.info.cls || (p.info.cls == b.info.cls && attached[static_cast<std::size_t>(nic)] <
                                                                      attached[static_cast<std::size_t>(best)])) {
        best = nic;
      }
    }
    if (best < 0) {
      problems.add(
          where, fmt::format("GPU '{}' cannot reach any NIC", devices_[static_cast<std::size_t>(gpu_devices_[i])].name),
          "", "link the NIC to the GPU's PCIe switch or CPU");
      continue;
    }
    const FoundPath& p = from_gpu[i][static_cast<std::size_t>(best)];
    ++attached[static_cast<std::size_t>(best)];
    nic_of_[i] = NicAttachment{best, p.info.cls, nic_bandwidth(best), 0};
    to_nic_[i] = p.route;
    from_nic_[i] = reversed(p.route);
    nic_path_[i] = p.info;
  }
  for (auto& a : nic_of_) {
    if (a.nic >= 0) a.gpus_sharing = attached[static_cast<std::size_t>(a.nic)];
  }
  problems.throw_if_any();
}

int NodeTemplate::nets() const {
  int n = 0;
  for (const int nic : nic_devices_) n += devices_[static_cast<std::size_t>(nic)].ports;
  return n;
}

int NodeTemplate::device_index(std::string_view name) const {
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

double NodeTemplate::nic_bandwidth(int nic_device) const {
  const Device& d = devices_[static_cast<std::size_t>(nic_device)];
  return d.port_bandwidth_Bps * d.ports;
}

const PathInfo& NodeTemplate::path(int local_a, int local_b) const {
  return paths_[static_cast<std::size_t>(local_a * gpu_count() + local_b)];
}

const std::vector<TemplateLinkDir>& NodeTemplate::route(int local_a, int local_b) const {
  return routes_[static_cast<std::size_t>(local_a * gpu_count() + local_b)];
}

const std::vector<TemplateLinkDir>& NodeTemplate::route_to_nic(int local_gpu) const {
  return to_nic_[static_cast<std::size_t>(local_gpu)];
}

const std::vector<TemplateLinkDir>& NodeTemplate::route_from_nic(int local_gpu) const {
  return from_nic_[static_cast<std::size_t>(local_gpu)];
}

}  // namespace burst::topo
