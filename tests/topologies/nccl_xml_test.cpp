// NCCL topology XML import on the real files of tests/data/topologies (see its README.md):
// GPU, NVLink and NIC counts as their sources describe them.
#include <functional>

#include <catch2/catch.hpp>

#include "tests/support/test_data.hpp"
#include "tests/support/error_text.hpp"

#include "common/error.hpp"
#include "topologies/json_format.hpp"
#include "topologies/detail/nccl_xml.hpp"
#include "topologies/node_template.hpp"

using namespace burst::topo;

namespace {

using burst::test::error_text;

}  // namespace

TEST_CASE("aliyun 8x A100: NVSwitch plane of 12 links per GPU, 5 nets, 2 GPUs per RoCE bond") {
  const XmlImport x = import_nccl_xml_file(burst::test::topology_data("aliyun-SimAI_topo_8A100_4CX6.xml"));
  const Topology& t = *x.topology;
  CHECK_FALSE(x.skeleton);
  CHECK(x.gpus == 8);
  CHECK(x.cpus == 2);
  CHECK(x.nvswitch);
  CHECK(x.nvlinks_per_gpu == std::vector<int>(8, 12));
  CHECK(x.nics == 5);
  CHECK(x.nets == 5);
  CHECK(t.nets_per_node() == 5);
  CHECK(t.gpu().model == "A100-SXM4-80GB");
  // 12 NVLinks x 25 GB/s (sm 80).
  CHECK(t.intra_node_worst().cls == PathClass::NVL);
  CHECK(t.intra_node_worst().bandwidth_Bps == 300e9);
  // The bond on the CPU root (nic0) is farther from every GPU than the bond on its switch.
  for (int g = 0; g < 8; ++g) {
    INFO("gpu" << g);
    CHECK(t.nic_of(g).gpus_sharing == 2);
    CHECK(t.nic_of(g).cls == PathClass::PXB);
    CHECK(t.node().devices()[static_cast<std::size_t>(t.nic_of(g).nic)].name == "nic" + std::to_string(1 + g / 2));
  }
  CHECK(t.inter_node_bandwidth_per_gpu() == 25e9 / 2);
}

TEST_CASE("OCI H100: 18 NVLinks per GPU = 450 GB/s, 8 dual-port NICs = 16 nets") {
  const XmlImport x = import_nccl_xml_file(burst::test::topology_data("oci-hpc_BM.GPU.H100.8_H100-topology.xml"));
  const Topology& t = *x.topology;
  CHECK(x.gpus == 8);
  CHECK(x.nvswitch);
  CHECK(x.nvlinks_per_gpu == std::vector<int>(8, 18));
  CHECK(x.nics == 8);
  CHECK(x.nets == 16);
  CHECK(t.nets_per_node() == 16);
  CHECK(t.gpu().model == "H100-SXM5-80GB");
  CHECK(t.intra_node_worst().bandwidth_Bps == 450e9);
  // speed="180000" Mb/s per port, 2 ports per NIC, one NIC per GPU.
  const int nic = t.nic_of(0).nic;
  CHECK(t.node().devices()[static_cast<std::size_t>(nic)].port_bandwidth_Bps == 22.5e9);
  CHECK(t.node().devices()[static_cast<std::size_t>(nic)].ports == 2);
  // Each GPU and its NIC sit under two sub-switches of one Broadcom gen5 switch, which NCCL
  // flattens: PIX, not PXB.
  for (int g = 0; g < 8; ++g) {
    CHECK(t.nic_of(g).gpus_sharing == 1);
    CHECK(t.nic_of(g).cls == PathClass::PIX);
  }
  CHECK(x.pcie_switches == 8);
  CHECK(t.inter_node_bandwidth_per_gpu() == 45e9);
}

TEST_CASE("AWS p4d skeleton: recognised, and completed from a preset on request") {
  const std::string file = burst::test::topology_data("aws-ofi-nccl_p4d-24xl-topo.xml");
  const std::string text = error_text([&] { (void)import_nccl_xml_file(file); });
  CHECK(text == file +
                    ":18: skeleton topology: GPUs appear only as <pci> elements without <gpu>, so there is no "
                    "NVLink information (hint: complete it from the NVSwitch preset of its GPUs (0x20b0 "
                    "A100-SXM4-40GB): --nvlink-from dgx-a100-40g)");

  XmlImportOptions o;
  o.nvlink_from = "dgx-a100";
  o.nic_port_Bps = 100e9 / 8;  // EFA: 100 Gb/s per adapter
  const XmlImport x = import_nccl_xml_file(file, o);
  const Topology& t = *x.topology;
  CHECK(x.skeleton);
  CHECK(x.gpus == 8);
  CHECK(x.nics == 4);
  CHECK(x.nets == 4);
  CHECK(x.nvlinks_per_gpu == std::vector<int>(8, 0));
  // PCI device 0x20b0 names the GPU even though the NVLink fabric comes from the preset.
  CHECK(t.gpu().model == "A100-SXM4-40GB");
  CHECK(t.intra_node_worst().cls == PathClass::NVL);
  CHECK(t.intra_node_worst().bandwidth_Bps == 300e9);
  for (int g = 0; g < 8; ++g) {
    CHECK(t.nic_of(g).cls == PathClass::PIX);
    CHECK(t.nic_of(g).gpus_sharing == 2);
  }
  CHECK(t.inter_node_bandwidth_per_gpu() == 12.5e9 / 2);

  // Without --nic-speed the NICs take the preset's HCA speed (HDR, 25 GB/s).
  o.nic_port_Bps = 0;
  const XmlImport y = import_nccl_xml_file(file, o);
  CHECK(y.topology->nic_of(0).bandwidth_Bps == 25e9);
  CHECK_FALSE(y.notes.empty());
}

TEST_CASE("Azure NC A100 v4: NVLink bridges pair GPUs 0-1 and 2-3 only") {
  const XmlImport x =
      import_nccl_xml_file(burst::test::topology_data("azure-azhpc-images_ncv4-topo_pre-4be0efb_pairs.xml"));
  const Topology& t = *x.topology;
  CHECK(x.gpus == 4);
  CHECK(x.cpus == 4);
  CHECK_FALSE(x.nvswitch);
  CHECK(x.nvlinks_per_gpu == std::vector<int>(4, 12));
  CHECK(x.nets == 1);
  CHECK(t.gpu().model == "A100-PCIE-80GB");
  CHECK(t.path(0, 1).cls == PathClass::NVL);
  CHECK(t.path(0, 1).bandwidth_Bps == 300e9);
  CHECK(t.path(2, 3).cls == PathClass::NVL);
  CHECK(t.path(0, 2).cls != PathClass::NVL);
  CHECK(t.path(0, 2).cls == PathClass::SYS);
  CHECK(t.path(1, 3).cls == PathClass::SYS);
  // One NIC (eth0, 100 Gb/s) on socket 0 for all four GPUs.
  CHECK(t.nic_of(0).gpus_sharing == 4);
  CHECK(t.nic_of(0).cls == PathClass::PHB);
  CHECK(t.nic_of(2).cls == PathClass::SYS);
  // Empty link_speed: gen4 x16 assumed, and said.
  CHECK_FALSE(x.notes.empty());
}

TEST_CASE("an NCCL graph file is not a topology") {
  const std::string file = burst::test::topology_data("azure-azhpc-images_ncv4-graph.xml");
  CHECK(error_text([&] { (void)import_nccl_xml_file(file); }) ==
        file +
            ":1: this is an NCCL graph file (NCCL_GRAPH_FILE: ring and tree channel orders), not a topology "
            "(hint: dump the topology instead: run once with NCCL_TOPO_DUMP_FILE=topo.xml and import topo.xml)");
}

TEST_CASE("an imported node replicates over --nodes and round-trips through our JSON") {
  XmlImportOptions o;
  o.nodes = 4;
  for (const char* f : {"aliyun-SimAI_topo_8A100_4CX6.xml", "oci-hpc_BM.GPU.H100.8_H100-topology.xml",
                        "azure-azhpc-images_ncv4-topo_pre-4be0efb_pairs.xml"}) {
    INFO(f);
    const Topology t = *import_nccl_xml_file(burst::test::topology_data(f), o).topology;
    CHECK(t.nodes() == 4);
    CHECK(t.path(0, t.gpus_per_node()).cls == PathClass::NET);
    const Topology back = parse_topology_json(t.to_json(), "round-trip");
    CHECK(back.to_json() == t.to_json());
    CHECK(back.hash() == t.hash());
  }
}

TEST_CASE("NCCL XML: PCIe speeds in both spellings, empty ones assumed gen4") {
  const char* xml = R"(<system version="1">
  <cpu numaid="0" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:01:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:02:00.0" class="0x030200" device="0x2330" link_speed="8 GT/s" link_width="8">
        <gpu dev="0" sm="90"/>
      </pci>
      <pci busid="0000:03:00.0" class="0x030200" device="0x2330" link_speed="" link_width="0">
        <gpu dev="1" sm="90"/>
      </pci>
    </pci>
  </cpu>
</system>)";
  const XmlImport x = import_nccl_xml(xml, "pcie.xml");
  const Topology& t = *x.topology;
  CHECK(t.path(0, 1).cls == PathClass::PIX);
  // gen3 x8 = 8 x 0.985 GB/s is the bottleneck (the other GPU gets gen4 x16).
  CHECK(t.path(0, 1).bandwidth_Bps == Approx(8 * 0.985e9));
  CHECK(x.notes ==
        std::vector<std::string>{
            "pcie.xml:7: empty PCIe link_speed: PCIe gen4 (16 GT/s) assumed",
            "pcie.xml:4: no <nvlink> in this dump: its GPUs are joined by PCIe only, right for PCIe GPUs such "
            "as L4 or L40S; if they share an NVSwitch plane, complete it: --nvlink-from dgx-h100"});
}
