// The cluster composed from one node template: nothing is precomputed per global GPU pair, so
// a 128-node topology builds as fast as one node and routes without allocating.
//
// Global link ids (`LinkId`), for N nodes, T directed template links per node (2 per link)
// and K NICs per node:
//   [0, N*T)                   node n, template direction d: n*T + d
//   [N*T, N*T + 2NK)           node n, NIC k: up (NIC -> fabric) then down (fabric -> NIC)
//   [N*T + 2NK, N*T + 2NK+2N)  node n: spine-up then spine-down
// A NIC link carries the NIC's bandwidth (all ports) and half the fabric latency, so a
// NIC-to-NIC crossing costs one fabric latency. The spine links stand for the node's share of
// the fabric above its leaf switches: capacity = sum of its NICs / oversubscription, no extra
// latency (the fabric latency already counts the switch hops). A fat-tree sends all
// inter-node traffic through them; a rail-optimised fabric only traffic between different
// rails (NIC positions), since same-rail NICs share a leaf switch.
#include "topologies/topology.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "topologies/detail/physical_ranges.hpp"
#include "topologies/node_template.hpp"

namespace burst::topo {

const char* to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Gpu: return "gpu";
    case DeviceKind::NvSwitch: return "nvswitch";
    case DeviceKind::PcieSwitch: return "pcie-switch";
    case DeviceKind::Cpu: return "cpu";
    case DeviceKind::Nic: return "nic";
  }
  return "?";
}

const char* to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::NvLink: return "nvlink";
    case LinkKind::Pcie: return "pcie";
    case LinkKind::InterSocket: return "inter-socket";
    case LinkKind::SharedMemory: return "shm";
    case LinkKind::Network: return "network";
  }
  return "?";
}

const char* to_string(Sharing sharing) {
  switch (sharing) {
    case Sharing::Shared: return "shared";
    case Sharing::FatPipe: return "fatpipe";
  }
  return "?";
}

const char* to_string(PathClass cls) {
  switch (cls) {
    case PathClass::NVL: return "NVL";
    case PathClass::SHM: return "SHM";
    case PathClass::PIX: return "PIX";
    case PathClass::PXB: return "PXB";
    case PathClass::PHB: return "PHB";
    case PathClass::SYS: return "SYS";
    case PathClass::NET: return "NET";
  }
  return "?";
}

const char* to_string(FabricKind kind) {
  switch (kind) {
    case FabricKind::RailOptimized: return "rail-optimized";
    case FabricKind::FatTree: return "fat-tree";
  }
  return "?";
}

namespace {

bool positive(double v) { return v > 0 && std::isfinite(v); }

void validate(const std::string& name, const GpuSpec& gpu, const NodeTemplate* node, int nodes, const Fabric& fabric) {
  Problems problems;
  const std::string where = fmt::format("topology '{}'", name);
  if (node == nullptr) problems.add(where, "has no node template");
  if (nodes < 1) problems.add(where, fmt::format("{} nodes", nodes), "1 or more");
  if (!positive(gpu.peak_bf16_flops)) problems.add(where + " gpu", "peak bf16 FLOP/s must be positive");
  if (!positive(gpu.memory_bytes)) problems.add(where + " gpu", "memory must be positive");
  if (!positive(gpu.memory_bandwidth_Bps)) problems.add(where + " gpu", "memory bandwidth must be positive");
  check_range(problems, where + " gpu", "peak bf16 FLOP/s", gpu.peak_bf16_flops, Quantity::FlopRate);
  check_range(problems, where + " gpu", "memory (bytes)", gpu.memory_bytes, Quantity::Memory);
  check_range(problems, where + " gpu", "memory bandwidth (B/s)", gpu.memory_bandwidth_Bps, Quantity::Bandwidth);
  if (!(fabric.oversubscription >= 1) || !std::isfinite(fabric.oversubscription)) {
    problems.add(where + " fabric", fmt::format("oversubscription {} is below 1", fabric.oversubscription),
                 "1 (non-blocking) or more", "2 means the spine carries half of what the NICs can send");
  } else {
    check_range(problems, where + " fabric", "oversubscription", fabric.oversubscription, Quantity::Oversubscription);
  }
  if (!(fabric.latency_s >= 0) || !std::isfinite(fabric.latency_s)) {
    problems.add(where + " fabric", "latency must be zero or positive");
  } else {
    check_range(problems, where + " fabric", "latency (s)", fabric.latency_s, Quantity::Latency);
  }
  if (node != nullptr && nodes > 0) {
    // GPU indices and LinkIds are 32-bit: keep the whole cluster addressable.
    const auto per_node = static_cast<std::int64_t>(2 * node->links().size() + 2 * node->nic_devices().size() + 2);
    if (per_node * nodes > INT32_MAX || static_cast<std::int64_t>(node->gpu_count()) * nodes > INT32_MAX) {
      problems.add(where,
                   fmt::format("{} nodes of {} GPUs and {} links is too large to address", nodes, node->gpu_count(),
                               node->links().size()),
                   "fewer than 2^31 GPUs and directed links in total");
    }
  }
  if (node != nullptr && nodes > 1 && node->nic_devices().empty()) {
    problems.add(where, fmt::format("{} nodes but the node has no NIC", nodes), "",
                 "add a NIC device with a port bandwidth, or use one node");
  }
  problems.throw_if_any();
}

}  // namespace

Topology::Topology(std::string name, GpuSpec gpu, std::shared_ptr<const NodeTemplate> node, int nodes, Fabric fabric)
    : name_(std::move(name)), gpu_(std::move(gpu)), node_(std::move(node)), nodes_(nodes), fabric_(fabric) {
  validate(name_, gpu_, node_.get(), nodes_, fabric_);
  template_dirs_ = static_cast<LinkId>(node_->links().size() * 2);
  nics_per_node_ = static_cast<int>(node_->nic_devices().size());
  rail_of_device_.assign(node_->devices().size(), -1);
  double nic_total = 0;
  for (int k = 0; k < nics_per_node_; ++k) {
    const int device = node_->nic_devices()[static_cast<std::size_t>(k)];
    rail_of_device_[static_cast<std::size_t>(device)] = k;
    nic_total += node_->nic_bandwidth(device);
  }
  spine_Bps_ = nic_total / fabric_.oversubscription;
}

int Topology::gpus_per_node() const { return node_->gpu_count(); }
int Topology::nets_per_node() const { return node_->nets(); }

const NicAttachment& Topology::nic_of(int gpu) const { return node_->nic_of(local_of(gpu)); }

int Topology::nic_rail(int gpu) const {
  const int nic = nic_of(gpu).nic;
  return nic < 0 ? -1 : rail_of_device_[static_cast<std::size_t>(nic)];
}

Topology Topology::with_nodes(int nodes) const { return Topology(name_, gpu_, node_, nodes, fabric_); }

PathInfo Topology::path(int src_gpu, int dst_gpu) const {
  const int na = node_of(src_gpu), nb = node_of(dst_gpu);
  const int la = local_of(src_gpu), lb = local_of(dst_gpu);
  if (na == nb) {
    if (la == lb) return PathInfo{PathClass::NVL, gpu_.memory_bandwidth_Bps, 0, 0};
    return node_->path(la, lb);
  }
  const PathInfo& up = node_->nic_path(la);
  const PathInfo& down = node_->nic_path(lb);
  const bool spine = fabric_.kind == FabricKind::FatTree || nic_rail(src_gpu) != nic_rail(dst_gpu);
  double bw =
      std::min({up.bandwidth_Bps, nic_of(src_gpu).bandwidth_Bps, nic_of(dst_gpu).bandwidth_Bps, down.bandwidth_Bps});
  if (spine) bw = std::min(bw, spine_Bps_);
  return PathInfo{PathClass::NET, bw, up.latency_s + fabric_.latency_s + down.latency_s,
                  up.hops + down.hops + (spine ? 4 : 2)};
}

PathInfo Topology::intra_node_worst() const {
  const int g = gpus_per_node();
  if (g == 1) return PathInfo{PathClass::NVL, gpu_.memory_bandwidth_Bps, 0, 0};
  PathInfo worst{PathClass::NVL, std::numeric_limits<double>::infinity(), 0, 0};
  for (int a = 0; a < g; ++a) {
    for (int b = 0; b < g; ++b) {
      if (a == b) continue;
      const PathInfo& p = node_->path(a, b);
      worst.cls = std::max(worst.cls, p.cls);
      worst.bandwidth_Bps = std::min(worst.bandwidth_Bps, p.bandwidth_Bps);
      worst.latency_s = std::max(worst.latency_s, p.latency_s);
      worst.hops = std::max(worst.hops, p.hops);
    }
  }
  return worst;
}

double Topology::inter_node_bandwidth_per_gpu() const {
  if (nics_per_node_ == 0) return 0;
  const int g = gpus_per_node();
  double best = std::numeric_limits<double>::infinity();
  for (int l = 0; l < g; ++l) {
    const NicAttachment& a = node_->nic_of(l);
    double bw = std::min(a.bandwidth_Bps / a.gpus_sharing, node_->nic_path(l).bandwidth_Bps);
    if (fabric_.kind == FabricKind::FatTree) bw = std::min(bw, spine_Bps_ / g);
    best = std::min(best, bw);
  }
  return best;
}

int Topology::link_count() const { return nodes_ * (template_dirs_ + 2 * nics_per_node_ + 2); }

DirectedLink Topology::link(LinkId id) const {
  const LinkId template_end = nodes_ * template_dirs_;
  const LinkId nic_end = template_end + 2 * nodes_ * nics_per_node_;
  if (id < template_end) {
    const Link& l = node_->links()[static_cast<std::size_t>((id % template_dirs_) / 2)];
    return DirectedLink{l.kind, l.bandwidth_Bps, l.latency_s, l.sharing};
  }
  if (id < nic_end) {
    const int k = ((id - template_end) / 2) % nics_per_node_;
    const double bw = node_->nic_bandwidth(node_->nic_devices()[static_cast<std::size_t>(k)]);
    return DirectedLink{LinkKind::Network, bw, fabric_.latency_s / 2, Sharing::Shared};
  }
  return DirectedLink{LinkKind::Network, spine_Bps_, 0, Sharing::Shared};
}

std::string Topology::link_name(LinkId id) const {
  const LinkId template_end = nodes_ * template_dirs_;
  const LinkId nic_end = template_end + 2 * nodes_ * nics_per_node_;
  if (id < 0 || id >= link_count()) return fmt::format("link{}?", id);
  if (id < template_end) {
    const int n = id / template_dirs_;
    const int d = id % template_dirs_;
    const Link& l = node_->links()[static_cast<std::size_t>(d / 2)];
    const int from = d % 2 == 0 ? l.a : l.b;
    const int to = d % 2 == 0 ? l.b : l.a;
    return fmt::format("n{}:{}->{}", n, node_->devices()[static_cast<std::size_t>(from)].name,
                       node_->devices()[static_cast<std::size_t>(to)].name);
  }
  if (id < nic_end) {
    const int slot = (id - template_end) / 2;
    const int n = slot / nics_per_node_;
    const int k = slot % nics_per_node_;
    const int device = node_->nic_devices()[static_cast<std::size_t>(k)];
    return fmt::format("n{}:{}-{}", n, node_->devices()[static_cast<std::size_t>(device)].name,
                       (id - template_end) % 2 == 0 ? "up" : "down");
  }
  const int n = (id - nic_end) / 2;
  return fmt::format("n{}:spine-{}", n, (id - nic_end) % 2 == 0 ? "up" : "down");
}

void Topology::route(int src_gpu, int dst_gpu, std::vector<LinkId>& out) const {
  out.clear();
  const int na = node_of(src_gpu), nb = node_of(dst_gpu);
  const int la = local_of(src_gpu), lb = local_of(dst_gpu);
  if (na == nb) {
    const LinkId base = na * template_dirs_;
    for (const TemplateLinkDir d : node_->route(la, lb)) out.push_back(base + d);
    return;
  }
  const LinkId nic_base = nodes_ * template_dirs_;
  const LinkId spine_base = nic_base + 2 * nodes_ * nics_per_node_;
  const int rail_a = nic_rail(src_gpu), rail_b = nic_rail(dst_gpu);
  for (const TemplateLinkDir d : node_->route_to_nic(la)) out.push_back(na * template_dirs_ + d);
  out.push_back(nic_base + 2 * (na * nics_per_node_ + rail_a));
  if (fabric_.kind == FabricKind::FatTree || rail_a != rail_b) {
    out.push_back(spine_base + 2 * na);
    out.push_back(spine_base + 2 * nb + 1);
  }
  out.push_back(nic_base + 2 * (nb * nics_per_node_ + rail_b) + 1);
  for (const TemplateLinkDir d : node_->route_from_nic(lb)) out.push_back(nb * template_dirs_ + d);
}

std::string Topology::hash() const {
  // FNV-1a, 64 bits, over our canonical JSON text.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char c : to_json().dump()) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

Json Topology::summary_json() const {
  const PathInfo intra = intra_node_worst();
  int sharing = 0;
  for (int l = 0; l < gpus_per_node(); ++l) sharing = std::max(sharing, node_->nic_of(l).gpus_sharing);
  Json j;
  j["name"] = name_;
  j["hash"] = hash();
  j["nodes"] = nodes_;
  j["gpus_per_node"] = gpus_per_node();
  j["gpus"] = gpu_count();
  j["gpu"] = {{"model", gpu_.model},
              {"peak_bf16_flops", gpu_.peak_bf16_flops},
              {"memory_bytes", gpu_.memory_bytes},
              {"memory_bandwidth_Bps", gpu_.memory_bandwidth_Bps}};
  j["nics_per_node"] = nics_per_node_;
  j["nets_per_node"] = nets_per_node();
  j["intra_node"] = {
      {"class", to_string(intra.cls)}, {"bandwidth_Bps", intra.bandwidth_Bps}, {"latency_s", intra.latency_s}};
  j["inter_node"] = {{"bandwidth_Bps_per_gpu", inter_node_bandwidth_per_gpu()},
                     {"nic_sharing", sharing},
                     {"fabric", to_string(fabric_.kind)},
                     {"oversubscription", fabric_.oversubscription},
                     {"latency_s", fabric_.latency_s}};
  return j;
}

}  // namespace burst::topo
