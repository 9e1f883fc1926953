// The cluster section's rows, read defensively from the topology document a plan carries.
//
// A plan stores the whole burst.topology/1 document it was made for (docs/topology-format.md):
// name, nodes, gpu {model, memory, peak_bf16}, node {devices [{kind}]}, fabric {kind}. The
// summary form (`burst topo show --json`: gpus_per_node, gpus, gpu.memory_bytes, ...) is read
// too. Every field is optional here: a missing or mistyped one leaves its row out instead of
// failing the report.
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "common/units.hpp"
#include "planner/detail/report/report_document.hpp"
#include "planner/detail/report/report_text.hpp"

namespace burst::planner::report_doc {
namespace {

const Json* member(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::optional<std::string> text_at(const Json& obj, const char* key) {
  const Json* v = member(obj, key);
  return v && v->is_string() ? std::optional(v->get<std::string>()) : std::nullopt;
}

// A count in 0..2^31-1 (so products of two stay exact), or nothing.
std::optional<std::int64_t> count_at(const Json& obj, const char* key) {
  const Json* v = member(obj, key);
  if (!v || !v->is_number_integer()) return std::nullopt;
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > INT32_MAX) return std::nullopt;
  const auto n = v->get<std::int64_t>();
  return n >= 0 && n <= INT32_MAX ? std::optional(n) : std::nullopt;
}

// Devices of one kind in the node template.
std::optional<std::int64_t> devices_of_kind(const Json& cluster, const char* kind) {
  const Json* node = member(cluster, "node");
  const Json* devices = node ? member(*node, "devices") : nullptr;
  if (!devices || !devices->is_array()) return std::nullopt;
  std::int64_t n = 0;
  for (const auto& d : *devices) n += text_at(d, "kind") == kind ? 1 : 0;
  return n;
}

// "80.0 GiB" from "memory": "80GiB" or "memory_bytes": 85899345920; the text as written when
// it does not parse.
std::optional<std::string> gpu_memory(const Json& gpu) {
  if (const Json* bytes = member(gpu, "memory_bytes"); bytes && bytes->is_number()) {
    return units::human_bytes(bytes->get<double>());
  }
  const std::optional<std::string> written = text_at(gpu, "memory");
  if (!written) return std::nullopt;
  try {
    return units::human_bytes(units::parse_bytes(*written, "/gpu/memory"));
  } catch (const Error&) {
    return written;
  }
}

}  // namespace

std::vector<std::vector<std::string>> cluster_rows(const Json& cluster) {
  std::vector<std::vector<std::string>> rows;
  const auto add = [&rows](const char* field, const std::optional<std::string>& value) {
    if (value) rows.push_back({field, *value});
  };
  const auto number = [](std::optional<std::int64_t> v) {
    return v ? std::optional(fmt::format("{}", *v)) : std::nullopt;
  };
  const std::optional<std::int64_t> nodes = count_at(cluster, "nodes");
  std::optional<std::int64_t> per_node = count_at(cluster, "gpus_per_node");
  if (!per_node) per_node = devices_of_kind(cluster, "gpu");
  std::optional<std::int64_t> gpus = count_at(cluster, "gpus");
  if (!gpus && nodes && per_node) gpus = *nodes * *per_node;

  add("topology", text_at(cluster, "name"));
  add("nodes", number(nodes));
  add("GPUs per node", number(per_node));
  add("GPUs", number(gpus));
  static const Json kNone;
  const Json& gpu = member(cluster, "gpu") ? *member(cluster, "gpu") : kNone;
  add("GPU model", text_at(gpu, "model"));
  add("GPU memory", gpu_memory(gpu));
  add("GPU peak (bf16)", text_at(gpu, "peak_bf16"));
  add("NICs per node", number(devices_of_kind(cluster, "nic")));
  const Json* fabric = member(cluster, "fabric");
  add("fabric", fabric ? text_at(*fabric, "kind") : std::nullopt);
  return rows;
}

}  // namespace burst::planner::report_doc
