// burst topo list | show | validate | convert: look at a cluster before simulating on it.
//
//   burst topo list                                  presets, one line each
//   burst topo show <preset|file> [--nodes N] [--per-node K] [--nvlink-from P] [--json]
//   burst topo validate <file>                       "OK" and a summary line, or every problem
//   burst topo convert <file.xml|preset> -o out.json NCCL topology XML (or a preset) -> our JSON
//
// Data goes to stdout (the summary, the JSON, the converted file); what the importer assumed
// goes to stderr, for the person reading it.
#include <fstream>
#include <memory>

#include <map>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/topology_source.hpp"
#include "topologies/json_format.hpp"
#include "topologies/load.hpp"
#include "topologies/node_template.hpp"
#include "topologies/presets.hpp"

namespace burst::cli {
namespace {

struct TopoShowOptions {
  TopologySource source;
  bool json = false;
};

struct TopoConvertOptions {
  TopologySource source;
  std::string output;
};

std::string gpu_line(const topo::GpuSpec& g) {
  return fmt::format("{}, {} bf16, {} memory at {}", g.model, units::format_flop_rate(g.peak_bf16_flops),
                     units::format_bytes(g.memory_bytes), units::format_bandwidth(g.memory_bandwidth_Bps));
}

std::string summary_line(const topo::Topology& t) {
  const topo::PathInfo intra = t.intra_node_worst();
  return fmt::format("{}: {} node(s) x {} GPU(s) = {} GPUs, intra-node {} {}, inter-node {} per GPU, {} nets per node",
                     t.name(), t.nodes(), t.gpus_per_node(), t.gpu_count(), to_string(intra.cls),
                     units::format_bandwidth(intra.bandwidth_Bps),
                     units::format_bandwidth(t.inter_node_bandwidth_per_gpu()), t.nets_per_node());
}

// A matrix wider than this is unreadable in a terminal; bigger nodes get pair counts by class.
constexpr int kMatrixMaxGpus = 64;

void print_pair_classes(const topo::Topology& t) {
  const topo::NodeTemplate& node = t.node();
  const int g = t.gpus_per_node();
  std::map<std::string, std::int64_t> pairs;
  for (int i = 0; i < g; ++i) {
    for (int j = i + 1; j < g; ++j) ++pairs[std::string(to_string(node.path(i, j).cls))];
  }
  fmt::print("\nGPU pairs in a node: {} GPUs, too many to draw (at most {}); pairs by path class:", g, kMatrixMaxGpus);
  for (const auto& [cls, n] : pairs) fmt::print(" {} {}", cls, n);
  fmt::print("\n");
}

// Like `nvidia-smi topo -m`: the class of every GPU pair of one node, and each GPU's NIC.
void print_matrix(const topo::Topology& t) {
  const topo::NodeTemplate& node = t.node();
  const int g = t.gpus_per_node();
  if (g > kMatrixMaxGpus) {
    print_pair_classes(t);
    return;
  }
  auto name = [&](int device) { return node.devices()[static_cast<std::size_t>(device)].name; };
  std::size_t width = 4;
  for (int i = 0; i < g; ++i) width = std::max(width, name(node.gpu_device(i)).size() + 1);
  fmt::print("\nGPU pairs in a node (path class; X = self):\n{:{}}", "", width);
  for (int j = 0; j < g; ++j) fmt::print("{:>{}}", name(node.gpu_device(j)), width);
  fmt::print("  NIC\n");
  for (int i = 0; i < g; ++i) {
    fmt::print("{:{}}", name(node.gpu_device(i)), width);
    for (int j = 0; j < g; ++j) fmt::print("{:>{}}", i == j ? "X" : to_string(node.path(i, j).cls), width);
    const topo::NicAttachment& a = node.nic_of(i);
    if (a.nic >= 0) fmt::print("  {} ({})", name(a.nic), to_string(a.cls));
    fmt::print("\n");
  }
}

void print_nics(const topo::Topology& t) {
  const topo::NodeTemplate& node = t.node();
  if (node.nic_devices().empty()) {
    fmt::print("\nNICs: none (single node only)\n");
    return;
  }
  fmt::print("\nNICs in a node:\n");
  for (const int nic : node.nic_devices()) {
    const topo::Device& d = node.devices()[static_cast<std::size_t>(nic)];
    std::string users;
    for (int i = 0; i < t.gpus_per_node(); ++i) {
      if (node.nic_of(i).nic == nic) users += " " + node.devices()[static_cast<std::size_t>(node.gpu_device(i))].name;
    }
    fmt::print("  {:10} {} port(s) x {} = {}; GPUs:{}\n", d.name, d.ports,
               units::format_bandwidth(d.port_bandwidth_Bps), units::format_bandwidth(node.nic_bandwidth(nic)),
               users.empty() ? " (none)" : users);
  }
}

void show(const TopoShowOptions& o) {
  const topo::Topology t = load_topology_source(o.source);
  if (o.json) {
    fmt::print("{}\n", t.summary_json().dump(2));
    return;
  }
  const topo::PathInfo intra = t.intra_node_worst();
  const topo::Fabric& f = t.fabric();
  fmt::print("{} ({} node(s) x {} GPU(s) = {} GPUs), hash {}\n", t.name(), t.nodes(), t.gpus_per_node(), t.gpu_count(),
             t.hash());
  fmt::print("  GPU         {}\n", gpu_line(t.gpu()));
  fmt::print("  intra-node  worst pair {}: {} per GPU per direction, {} latency\n", to_string(intra.cls),
             units::format_bandwidth(intra.bandwidth_Bps), units::format_duration(intra.latency_s));
  fmt::print("  inter-node  {} per GPU per direction, {} nets per node, {} fabric (oversubscription {:g}, {})\n",
             units::format_bandwidth(t.inter_node_bandwidth_per_gpu()), t.nets_per_node(), to_string(f.kind),
             f.oversubscription, units::format_duration(f.latency_s));
  print_matrix(t);
  print_nics(t);
}

void validate(const TopologySource& source) {
  const topo::Topology t = load_topology_source(source);
  fmt::print("OK {}\n", summary_line(t));
}

void write_output(const std::string& path, const std::string& text) {
  if (path == "-") {
    fmt::print("{}", text);
    return;
  }
  std::ofstream out(path, std::ios::binary);
  if (!out || !(out << text))
    throw Error(Problem{path, "cannot write file", "", "check the directory and permissions"});
}

void convert(const TopoConvertOptions& o) {
  const topo::Topology t = load_topology_source(o.source);
  write_output(o.output, topo::dump_topology_json(t));
  fmt::print(stderr, "{}\n", summary_line(t));
}

}  // namespace

void add_topo_command(CLI::App& app) {
  CLI::App* topo_cmd = app.add_subcommand("topo", "Describe clusters: list presets, show, validate, convert NCCL XML");
  topo_cmd->require_subcommand(1);

  CLI::App* list = topo_cmd->add_subcommand("list", "List the topology presets");
  list->callback([] {
    for (const auto& p : topo::presets()) fmt::print("{:13} {}\n", p.name, p.description);
  });

  auto show_opts = std::make_shared<TopoShowOptions>();
  CLI::App* show_cmd = topo_cmd->add_subcommand("show", "Summarise a preset or a topology file");
  show_cmd->add_option("topology", show_opts->source.topology, "preset name, .json topology or NCCL .xml dump")
      ->required();
  add_topology_source_options(*show_cmd, show_opts->source, true);
  show_cmd->add_flag("--json", show_opts->json, "print the summary as one JSON object");
  show_cmd->callback([show_opts] { show(*show_opts); });

  auto validate_opts = std::make_shared<TopologySource>();
  CLI::App* validate_cmd = topo_cmd->add_subcommand("validate", "Check a topology file, reporting every problem");
  validate_cmd->add_option("file", validate_opts->topology, ".json topology or NCCL .xml dump")->required();
  add_topology_source_options(*validate_cmd, *validate_opts, false);
  validate_cmd->callback([validate_opts] { validate(*validate_opts); });

  auto convert_opts = std::make_shared<TopoConvertOptions>();
  CLI::App* convert_cmd =
      topo_cmd->add_subcommand("convert", "Write a topology (NCCL XML dump, preset or .json) in our JSON format");
  convert_cmd->add_option("topology", convert_opts->source.topology, "NCCL .xml dump, preset name or .json topology")
      ->required();
  convert_cmd->add_option("-o,--output", convert_opts->output, "output .json file ('-' for stdout)")->required();
  add_topology_source_options(*convert_cmd, convert_opts->source, true);
  convert_cmd->callback([convert_opts] { convert(*convert_opts); });
}

}  // namespace burst::cli
