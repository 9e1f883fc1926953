// Fuzzes the NCCL topology XML importer. A burst::Error is a correct answer to bad input; any
// other exception or a crash is a bug. The first byte picks the options (skeleton completion,
// node count), the rest is the XML. A file that imports must round-trip through our JSON.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "tests/fuzz/check_topology.hpp"
#include "topologies/detail/nccl_xml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  burst::topo::XmlImportOptions options;
  if ((data[0] & 1) != 0) options.nvlink_from = "dgx-a100";
  if ((data[0] & 2) != 0) options.nic_port_Bps = 12.5e9;
  options.nodes = 1 + ((data[0] >> 2) & 3);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const burst::topo::XmlImport x = burst::topo::import_nccl_xml(text, "fuzz.xml", options);
    burst::fuzz::check_accepted_topology(*x.topology);
  } catch (const burst::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
