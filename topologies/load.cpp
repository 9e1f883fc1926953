#include "topologies/load.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "topologies/json_format.hpp"
#include "topologies/detail/nccl_xml.hpp"
#include "topologies/presets.hpp"

namespace burst::topo {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void check_options(const std::string& what, const LoadOptions& o, bool is_xml, bool is_local) {
  Problems problems;
  if (o.nodes < 0) problems.add("--nodes", fmt::format("{} nodes", o.nodes), "1 or more");
  if (o.per_node < 0) problems.add("--per-node", fmt::format("{} ranks per node", o.per_node), "1 or more");
  if (o.per_node > 0 && !is_local) {
    problems.add("--per-node", fmt::format("applies to the 'local' preset only, not '{}'", what), "",
                 "GPU nodes have a fixed number of GPUs");
  }
  for (const auto& [flag, value] : {std::pair<const char*, const std::string&>{"--nvlink-from", o.nvlink_from},
                                    {"--gpu-from", o.gpu_from},
                                    {"--nic-speed", o.nic_speed}}) {
    if (value.empty()) continue;
    if (!is_xml) {
      problems.add(flag, fmt::format("applies to NCCL XML files only, not '{}'", what), "",
                   "presets and our JSON files are complete already");
    } else if (std::string_view(flag) != "--nic-speed" && !is_preset(value)) {
      problems.add(flag, fmt::format("unknown preset '{}'", value), text::join(preset_names()),
                   text::did_you_mean(value, preset_names()));
    }
  }
  if (o.nccl_bandwidths && !is_xml) {
    problems.add("--nccl-bandwidths", fmt::format("applies to NCCL XML files only, not '{}'", what), "",
                 "presets and our JSON files carry their own bandwidths");
  }
  problems.throw_if_any();
}

}  // namespace

Topology load_topology(const std::string& name, const LoadOptions& options) {
  namespace fs = std::filesystem;
  if (is_preset(name)) {
    check_options(name, options, false, name == "local");
    return make_preset(name, options.nodes > 0 ? options.nodes : 1, options.per_node, options.local_gpus);
  }
  std::error_code ec;
  const bool exists = fs::is_regular_file(name, ec);
  const bool xml = ends_with(name, ".xml");
  if (!exists) {
    const bool looks_like_file = name.find('/') != std::string::npos || ends_with(name, ".json") || xml;
    throw Error(Problem{name,
                        looks_like_file ? "no such file" : fmt::format("'{}' is neither a preset nor a file", name),
                        "a preset (" + text::join(preset_names()) + "), a .json topology or an NCCL .xml dump",
                        looks_like_file ? "check the path" : text::did_you_mean(name, preset_names())});
  }
  check_options(name, options, xml, false);
  if (xml) {
    XmlImportOptions x;
    x.nodes = options.nodes > 0 ? options.nodes : 1;
    x.nvlink_from = options.nvlink_from;
    x.gpu_from = options.gpu_from;
    x.nccl_bandwidths = options.nccl_bandwidths;
    if (!options.nic_speed.empty()) x.nic_port_Bps = units::parse_bandwidth(options.nic_speed, "--nic-speed");
    XmlImport imported = import_nccl_xml_file(name, x);
    if (options.notes != nullptr) {
      options.notes->insert(options.notes->end(), imported.notes.begin(), imported.notes.end());
      if (imported.skeleton) options.notes->push_back(name + ": a skeleton, completed as noted");
    }
    return *imported.topology;
  }
  Topology t = read_topology_json(name);
  return options.nodes > 0 ? t.with_nodes(options.nodes) : t;
}

}  // namespace burst::topo
