// Fuzzes our topology JSON parser. A burst::Error is a correct answer to bad input; any other
// exception or a crash is a bug. A document that parses must survive the round trip
// parse(to_json(t)) with an identical JSON text, and answer path and route queries.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "topologies/json_format.hpp"
#include "topologies/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const burst::topo::Topology t = burst::topo::parse_topology_text(text, "fuzz.json");
    const burst::Json written = t.to_json();
    const burst::topo::Topology back = burst::topo::parse_topology_json(written, "round-trip");
    if (back.to_json() != written) {
      std::fprintf(stderr, "round trip changed the topology:\n%s\n%s\n", written.dump().c_str(), back.to_json().dump().c_str());
      std::abort();
    }
    std::vector<burst::topo::LinkId> route;
    const int last = t.gpu_count() - 1;
    for (const int b : {0, last}) {
      (void)t.path(0, b);
      t.route(0, b, route);
      for (const auto id : route) (void)t.link_name(id);
    }
    (void)t.summary_json();
  } catch (const burst::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
