// What every topology fuzzer checks once a parser accepted its input: the topology survives
// the round trip parse(to_json(t)) with an identical JSON text, and answers path, route and
// summary queries. A failure aborts, which libFuzzer reports with the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "topologies/json_format.hpp"
#include "topologies/topology.hpp"

namespace burst::fuzz {

inline void check_accepted_topology(const topo::Topology& t) {
  const Json written = t.to_json();
  const Json back = topo::parse_topology_json(written, "round-trip").to_json();
  if (back != written) {
    std::fprintf(stderr, "round trip changed the topology:\n%s\n%s\n", written.dump().c_str(), back.dump().c_str());
    std::abort();
  }
  std::vector<topo::LinkId> route;
  const int last = t.gpu_count() - 1;
  for (const int b : {0, last}) {
    (void)t.path(0, b);
    t.route(0, b, route);
    for (const auto id : route) (void)t.link_name(id);
  }
  (void)t.summary_json();
}

}  // namespace burst::fuzz
