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
//     of its link_speed x link_width (empty: gen4 x16 assumed, and said in `notes`). A Broadcom
//     PEX switch shows up as two levels of bridges; as NCCL does, its sub-switches are merged
//     into it and add no switch to a path (two GPUs below it are PIX; rule at bcm_switch_gen);
//   - <nvlink tclass="0x068000"> (an NVSwitch) targets all collapse into one "nvswitch" vertex,
//     the GPU's link to it carrying count x per-link bandwidth (by `sm`); tclass 0x030200 is a
//     direct NVLink to the GPU with that busid (one to the GPU itself is ignored, as by NCCL);
//   - a NIC's port bandwidth is its <net> speed (Mb/s); its ports are its <net> elements. NICs
//     side by side (one parent, one port speed) become one NIC with all their ports: NCCL
//     spreads a GPU's channels over all the NICs closest to it, so their bandwidths add up
//     (AWS p5: 4 EFA adapters per GPU).
// Link bandwidths are the physical ones unless `nccl_bandwidths` asks for NCCL's derated
// figures (hardware.hpp lists both).
// Files that would be misread are recognised and reported:
//   - a SKELETON (GPUs only as <pci class="0x030200"/>, no <gpu> element, hence no NVLink
//     information, e.g. AWS's p4d file) needs completing from a preset (`nvlink_from`);
//   - a dump with <gpu> elements but no <nvlink> loads as a PCIe-only node, with a note
//     (right for L4 or L40S nodes); `nvlink_from` completes it as it does a skeleton;
//   - an NCCL_TOPO_FILE skeleton whose <pci> have no class (AWS's g5 file: NCCL reads the
//     classes from sysfs) cannot tell GPUs from NICs: an error that says to dump the topology;
//   - an NCCL GRAPH file (<graphs>, NCCL_GRAPH_FILE) holds channel orders, not a topology.
// The GPU model is the one its PCI device id names. A GPU whose <pci> has no device id at all
// gets the model the rest of the file points to: its sm, NVLinks, PCIe link and network held
// against every known model (gpu_inference.hpp). A note says which model, from which clues and
// how sure (sure; likely; or sure of all but the memory, which no topology file states, the
// least taken). When models of different parts fit alike (AWS's p5 file: H100, H800 and H200
// SXM, as it lists no NVLink) the file is refused, naming them and the flags that settle it. An
// unknown id is never guessed. `gpu_from` takes precedence over the id and the inference,
// `nvlink_from` over the inference; a note says when the model comes from a preset, and hints
// name the presets of the file's GPUs. Every problem and note names the file and the XML line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/untrusted_file.hpp"
#include "topologies/topology.hpp"

namespace burst::topo {

struct XmlImportOptions {
  int nodes = 1;
  Fabric fabric;
  std::string nvlink_from;  // preset whose NVSwitch plane (and NIC speed, GPU spec) completes a
                            // skeleton or a dump without <nvlink>
  std::string gpu_from;     // preset whose GPU spec replaces the one found from PCI device ids
                            // (or inferred where the file gives none)
  double nic_port_Bps = 0;  // port bandwidth for NICs without <net> (0: from nvlink_from)
  // NCCL's derated link figures (PCIe gen4 x16 24 GB/s, NVLink sm 80 20 GB/s per link) instead
  // of the physical ones, to see a node as NCCL's topology search does. Off by default: the
  // simulator's comm model applies measured efficiencies to physical bandwidths.
  bool nccl_bandwidths = false;
};

// What the file held, for tests and for `burst topo convert` to report.
struct XmlImport {
  bool skeleton = false;
  int cpus = 0;
  int pcie_switches = 0;  // switch vertices, after flattening Broadcom sub-switches
  int gpus = 0;
  int nics = 0;                      // NICs in the file (side-by-side ones may share a device)
  int nets = 0;                      // <net> ports, what NCCL counts as nets
  std::vector<int> nvlinks_per_gpu;  // NVLink lanes of each GPU (sum of <nvlink count>)
  bool nvswitch = false;
  std::vector<std::string> notes;  // assumptions made, one line each ("file.xml:12: ...")
  std::optional<Topology> topology;
};

// `source` names the text in errors; the topology is named after it (file name, no extension).
[[nodiscard]] XmlImport import_nccl_xml(std::string_view text, const std::string& source,
                                        const XmlImportOptions& options = {});
// An NCCL topology dump is at most this big (a real node's is a few KB).
inline constexpr FileCap kNcclXmlFileCap{"an NCCL topology XML", 16 * kMiB};
[[nodiscard]] XmlImport import_nccl_xml_file(const std::string& path, const XmlImportOptions& options = {});

}  // namespace burst::topo
