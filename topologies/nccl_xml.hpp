// Import of NCCL topology XML, the format NCCL writes with NCCL_TOPO_DUMP_FILE and reads with
// NCCL_TOPO_FILE:
//   <system version="1">
//     <cpu numaid vendor familyid modelid>              a socket
//       <pci busid class link_speed link_width>          nested: class 0x0604xx is a PCIe switch
//         <pci class="0x030200" device="0x20b2">         a GPU (class 0x03xxxx), device = model
//           <gpu dev sm rank><nvlink target count tclass/></gpu>
//         <pci class="0x020000"><nic><net speed port/></nic></pci>   a NIC, one <net> per port
//       <nic><net .../></nic>                            a NIC without a PCI element
// What becomes of it (one node; more nodes replicate it):
//   - each <cpu> a CPU, joined pairwise by inter-socket links (bandwidth by CPU, see hardware.hpp);
//   - each PCIe bridge a PCIe switch; each <pci> a PCIe link to its parent with the bandwidth
//     of its link_speed x link_width (empty: gen4 x16 assumed, and said in `notes`);
//   - <nvlink tclass="0x068000"> (an NVSwitch) targets all collapse into one "nvswitch" vertex,
//     the GPU's link to it carrying count x per-link bandwidth (by `sm`); tclass 0x030200 is a
//     direct NVLink to the GPU with that busid;
//   - a NIC's port bandwidth is its <net> speed (Mb/s); its ports are its <net> elements.
// Two kinds of file are recognised and reported rather than misread: a SKELETON (GPUs only as
// <pci class="0x030200"/>, no <gpu> element, hence no NVLink information, e.g. AWS's p4d file)
// needs completing from a preset (`nvlink_from`); an NCCL GRAPH file (<graphs>, NCCL_GRAPH_FILE)
// holds channel orders, not a topology. Every problem names the file and the XML line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/topology.hpp"

namespace burst::topo {

struct XmlImportOptions {
  int nodes = 1;
  Fabric fabric;
  std::string nvlink_from;  // preset whose NVLink fabric (and NIC speed, GPU spec) completes a skeleton
  std::string gpu_from;     // preset whose GPU spec replaces the one found from PCI device ids
  double nic_port_Bps = 0;  // port bandwidth for NICs without <net> (0: from nvlink_from)
};

// What the file held, for tests and for `burst topo convert` to report.
struct XmlImport {
  bool skeleton = false;
  int cpus = 0;
  int pcie_switches = 0;
  int gpus = 0;
  int nics = 0;
  int nets = 0;                      // <net> ports, what NCCL counts as nets
  std::vector<int> nvlinks_per_gpu;  // NVLink lanes of each GPU (sum of <nvlink count>)
  bool nvswitch = false;
  std::vector<std::string> notes;    // assumptions made, one line each ("file.xml:12: ...")
  std::optional<Topology> topology;
};

// `source` names the text in errors; the topology is named after it (file name, no extension).
[[nodiscard]] XmlImport import_nccl_xml(std::string_view text, const std::string& source,
                                        const XmlImportOptions& options = {});
[[nodiscard]] XmlImport import_nccl_xml_file(const std::string& path, const XmlImportOptions& options = {});

}  // namespace burst::topo
