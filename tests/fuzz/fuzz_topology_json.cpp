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
#include "tests/fuzz/check_topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const burst::topo::Topology t = burst::topo::parse_topology_text(text, "fuzz.json");
    burst::fuzz::check_accepted_topology(t);
  } catch (const burst::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
