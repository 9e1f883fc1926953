// Our topology format, "schema": "burst.topology/1" (documented in docs/topology-format.md):
// one node template (devices and links), the GPU spec, the node count and the fabric, with
// units inside the values ("200GBps", "0.35us", "80GiB", "312TFLOPS").
//
// Parsing checks the whole document and reports every problem at once, each at
// "file:/json/pointer" with what is valid and a hint; unknown keys are errors (with a
// did-you-mean), so a misspelt optional field is never silently ignored. Writing prints each
// quantity in the shortest unit form that parses back to the identical double, so
// parse(to_json(t)) rebuilds t exactly.
#pragma once

#include <string>
#include <string_view>

#include "common/json_reader.hpp"
#include "topologies/topology.hpp"

namespace burst::topo {

inline constexpr const char* kTopologySchema = "burst.topology/1";

// `source` names the document in errors (usually the file path).
[[nodiscard]] Topology parse_topology_json(const Json& doc, const std::string& source);
// The text of t.to_json() as we write files: indented, with each device and link on one line
// so that diffs of topology files stay readable. Ends with a newline.
[[nodiscard]] std::string dump_topology_json(const Topology& t);
// The same layout for any JSON value.
[[nodiscard]] std::string dump_readable_json(const Json& value);
// Parses JSON text; syntax errors report line:column, numbers too large for a double are
// reported too (as burst::Error, like every other problem of the text).
[[nodiscard]] Topology parse_topology_text(std::string_view text, const std::string& source);
// Reads and parses a file, as parse_topology_text.
// A topology file is at most this big (a 1020-GPU NVLink mesh, every pair a link, is 60 MB).
inline constexpr FileCap kTopologyFileCap{"a topology", 256 * kMiB};
[[nodiscard]] Topology read_topology_json(const std::string& path);

}  // namespace burst::topo
