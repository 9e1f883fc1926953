// NCCL topology XML import on small hand-written files shaped like real machines (each file's
// head comment says which; tests/data/topologies/README.md lists them): NICs side by side, dumps
// without NVLink, NVLink to the GPU itself, where the GPU model comes from, class-less
// NCCL_TOPO_FILE skeletons, the 40 GB A100, Broadcom switch flattening and NCCL's own link
// bandwidths. Notes and errors are checked word for word: they are what a user reads.
#include <algorithm>

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "tests/support/error_text.hpp"
#include "tests/support/test_data.hpp"

#include "topologies/json_format.hpp"
#include "topologies/detail/nccl_xml.hpp"
#include "topologies/node_template.hpp"

using namespace burst::topo;

namespace {

using burst::test::error_text;
using burst::test::topology_data;

const Device& nic_device(const Topology& t, int gpu) {
  return t.node().devices()[static_cast<std::size_t>(t.nic_of(gpu).nic)];
}

XmlImportOptions nvlink_from(const char* preset) {
  XmlImportOptions o;
  o.nvlink_from = preset;
  return o;
}

const std::string kNvSwitchPresets =
    "a800-4hca (A800-SXM4-80GB), dgx-a100 (A100-SXM4-80GB), dgx-a100-40g (A100-SXM4-40GB), dgx-h100 "
    "(H100-SXM5-80GB), h200 (H200-SXM-141GB), h800 (H800-SXM5-80GB)";

}  // namespace

TEST_CASE("AWS p5: a GPU's 4 EFA adapters on its switch serve it together, 4x the port bandwidth") {
  const std::string file = topology_data("aws-p5-48xl_2-of-8-gpus.xml");
  const XmlImport x = import_nccl_xml_file(file, nvlink_from("dgx-h100"));
  const Topology& t = *x.topology;
  CHECK(x.nics == 8);
  CHECK(x.nets == 8);
  CHECK(t.nets_per_node() == 8);
  REQUIRE(t.node().nic_devices().size() == 2);
  CHECK(nic_device(t, 0).name == "nic0+1+2+3");
  CHECK(nic_device(t, 1).name == "nic4+5+6+7");
  for (int g = 0; g < 2; ++g) {
    INFO("gpu" << g);
    CHECK(nic_device(t, g).ports == 4);
    CHECK(nic_device(t, g).port_bandwidth_Bps == 12.5e9);  // speed="100000" Mb/s
    CHECK(t.nic_of(g).gpus_sharing == 1);
    CHECK(t.nic_of(g).cls == PathClass::PIX);
  }
  // Four gen4 x8 links (4 x 15.75 GB/s) to the switch carry the 4 x 12.5 GB/s.
  CHECK(t.inter_node_bandwidth_per_gpu() == 4 * 12.5e9);
  CHECK(x.notes == std::vector<std::string>{
                       file + ":11: dump without <nvlink> completed from preset 'dgx-h100': NVSwitch plane, 450 GB/s "
                              "per GPU",
                       file + ":14: 4 NICs side by side on pcie-sw0 taken as one 4-port NIC 'nic0+1+2+3' of 100 Gb/s "
                              "per port: NCCL spreads a GPU's channels over all the NICs closest to it",
                       file + ":39: 4 NICs side by side on pcie-sw1 taken as one 4-port NIC 'nic4+5+6+7' of 100 Gb/s "
                              "per port: NCCL spreads a GPU's channels over all the NICs closest to it",
                       file + ":11: GPU model H100-SXM5-80GB from preset 'dgx-h100' (--nvlink-from), not from the "
                              "file's PCI device id (no PCI device id)"});
  const Topology back = parse_topology_json(t.to_json(), "round-trip");
  CHECK(back.hash() == t.hash());
}

TEST_CASE("NICs side by side shared by two GPUs: each GPU gets half of them, as NCCL's ceil(nets / GPUs)") {
  const char* xml = R"(<system version="1">
  <cpu numaid="0" vendor="AuthenticAMD" familyid="25" modelid="17">
    <pci busid="0000:10:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:11:00.0" class="0x030200" device="0x2331" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="90"/></pci>
      <pci busid="0000:12:00.0" class="0x030200" device="0x2331" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="1" sm="90"/></pci>
      <pci busid="0000:13:00.0" class="0x020000" link_speed="16.0 GT/s PCIe" link_width="8"><nic><net dev="0" speed="100000"/></nic></pci>
      <pci busid="0000:14:00.0" class="0x020000" link_speed="16.0 GT/s PCIe" link_width="8"><nic><net dev="1" speed="100000"/></nic></pci>
      <pci busid="0000:15:00.0" class="0x020000" link_speed="16.0 GT/s PCIe" link_width="8"><nic><net dev="2" speed="100000"/></nic></pci>
      <pci busid="0000:16:00.0" class="0x020000" link_speed="16.0 GT/s PCIe" link_width="8"><nic><net dev="3" speed="100000"/></nic></pci>
    </pci>
  </cpu>
</system>)";
  const Topology t = *import_nccl_xml(xml, "shared.xml").topology;
  CHECK(t.nets_per_node() == 4);
  REQUIRE(t.node().nic_devices().size() == 1);
  CHECK(t.nic_of(0).gpus_sharing == 2);
  CHECK(t.inter_node_bandwidth_per_gpu() == 2 * 12.5e9);
}

TEST_CASE("dgx-a100-40g: the preset of AWS p4d's GPUs (0x20b0) completes its skeleton") {
  const std::string file = topology_data("aws-ofi-nccl_p4d-24xl-topo.xml");
  const XmlImport x = import_nccl_xml_file(file, nvlink_from("dgx-a100-40g"));
  const Topology& t = *x.topology;
  CHECK(t.gpu().model == "A100-SXM4-40GB");
  CHECK(t.gpu().memory_bytes == 40.0 * 1024 * 1024 * 1024);
  CHECK(t.intra_node_worst().bandwidth_Bps == 300e9);
  CHECK(t.nic_of(0).bandwidth_Bps == 25e9);  // the preset's HDR HCAs
  // The completion and the 4 NICs' speed; no word on the GPU model, which the file gives.
  CHECK(x.notes.size() == 5);
  CHECK(x.notes[0] == file + ":18: skeleton completed from preset 'dgx-a100-40g': NVSwitch plane, 300 GB/s per GPU");
}

TEST_CASE("a dump without <nvlink> is a PCIe node, said in a note; --nvlink-from completes it") {
  const std::string l40s = topology_data("l40s-2gpu_no-nvlink.xml");
  const XmlImport x = import_nccl_xml_file(l40s);
  const Topology& t = *x.topology;
  CHECK_FALSE(x.skeleton);
  CHECK_FALSE(x.nvswitch);
  CHECK(t.gpu().model == "L40S-PCIE-48GB");
  CHECK(t.path(0, 1).cls == PathClass::PIX);
  CHECK(x.notes == std::vector<std::string>{l40s + ":11: no <nvlink> in this dump: its GPUs are joined by PCIe only, "
                                                   "right for PCIe GPUs such as L4 or L40S"});

  // AWS's p5 file names no GPU model and lists no NVLink (which Hopper SXM GPU it holds, the
  // file does not say: gpu_inference_test.cpp): --gpu-from names it, and the node stays PCIe-only.
  const std::string p5 = topology_data("aws-p5-48xl_2-of-8-gpus.xml");
  XmlImportOptions h100;
  h100.gpu_from = "dgx-h100";
  const XmlImport pcie_only = import_nccl_xml_file(p5, h100);
  CHECK(pcie_only.notes.front() ==
        p5 +
            ":11: no <nvlink> in this dump: its GPUs are joined by PCIe only, right for PCIe GPUs such as L4 or L40S; "
            "if they share an NVSwitch plane, complete it: --nvlink-from <preset>, one of " +
            kNvSwitchPresets);
  CHECK(pcie_only.topology->intra_node_worst().cls == PathClass::PHB);

  const XmlImport completed = import_nccl_xml_file(p5, nvlink_from("dgx-h100"));
  CHECK_FALSE(completed.skeleton);
  CHECK(completed.nvswitch);
  CHECK(completed.topology->intra_node_worst().cls == PathClass::NVL);
  CHECK(completed.topology->intra_node_worst().bandwidth_Bps == 450e9);
  CHECK(completed.topology->gpu().model == "H100-SXM5-80GB");
}

TEST_CASE("an NVLink from a GPU to itself is ignored with a note, as NCCL ignores it") {
  const std::string file = topology_data("nvlink-to-self_2gpu.xml");
  const XmlImport x = import_nccl_xml_file(file);
  CHECK(x.nvlinks_per_gpu == std::vector<int>{12, 12});
  CHECK(x.topology->intra_node_worst().cls == PathClass::NVL);
  CHECK(x.topology->intra_node_worst().bandwidth_Bps == 300e9);
  CHECK(x.notes ==
        std::vector<std::string>{file + ":16: NVLink from GPU 0000:13:00.0 to itself ignored, as NCCL does"});
}

TEST_CASE("two GPUs on one bus id, and an sm that is no compute capability, are refused") {
  const auto two_gpus = [](const char* second_busid, const char* sm) {
    return fmt::format(R"(<system version="1">
  <cpu numaid="0" vendor="AuthenticAMD" familyid="25" modelid="17">
    <pci busid="0000:10:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:11:00.0" class="0x030200" device="0x2331" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="90"/></pci>
      <pci busid="{}" class="0x030200" device="0x2331" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="1" sm="{}"/></pci>
    </pci>
  </cpu>
</system>)",
                       second_busid, sm);
  };
  CHECK(import_nccl_xml(two_gpus("0000:12:00.0", "90"), "ok.xml").topology->gpus_per_node() == 2);
  CHECK(error_text([&] { (void)import_nccl_xml(two_gpus("0000:11:00.0", "90"), "dup.xml"); }) ==
        "dup.xml:5: two GPUs with bus id '0000:11:00.0' (the first at line 4) (valid: one bus id per GPU; hint: is the "
        "file two dumps joined, or edited by hand?)");
  for (const char* sm : {"0", "-80", "1000"}) {
    INFO("sm=" << sm);
    CHECK(error_text([&] { (void)import_nccl_xml(two_gpus("0000:12:00.0", sm), "sm.xml"); }) ==
          fmt::format("sm.xml:5: <gpu> sm=\"{}\" is not a compute capability (valid: 10 to 999: major and minor "
                      "version as one number, e.g. 80 (A100) or 90 (H100))",
                      sm));
  }
}

TEST_CASE("the GPU model: hints name the preset of the file's PCI device id, presets in its place are said") {
  const std::string p4de = topology_data("aws-p4de-24xl_1-switch.xml");
  // 0x20b2 is the 80 GB A100 (AWS's p4d file, 0x20b0, gets dgx-a100-40g: see nccl_xml_test.cpp).
  CHECK(error_text([&] { (void)import_nccl_xml_file(p4de); }) ==
        p4de +
            ":10: skeleton topology: GPUs appear only as <pci> elements without <gpu>, so there is no NVLink "
            "information (hint: complete it from the NVSwitch preset of its GPUs (0x20b2 A100-SXM4-80GB): "
            "--nvlink-from dgx-a100)");
  CHECK(error_text([&] { (void)import_nccl_xml_file(p4de, nvlink_from("pcie-8gpu")); }) ==
        p4de + ":10: preset 'pcie-8gpu' has no NVSwitch fabric to complete the skeleton with (valid: " +
            kNvSwitchPresets + "; hint: for this file's GPUs (0x20b2 A100-SXM4-80GB): --nvlink-from dgx-a100)");

  XmlImportOptions o = nvlink_from("dgx-a100");
  o.gpu_from = "dgx-h100";
  const XmlImport x = import_nccl_xml_file(p4de, o);
  CHECK(x.topology->gpu().model == "H100-SXM5-80GB");
  CHECK(x.notes == std::vector<std::string>{
                       p4de + ":10: skeleton completed from preset 'dgx-a100': NVSwitch plane, 300 GB/s per GPU",
                       p4de + ":12: NIC without <net>: port speed 200 Gb/s from preset 'dgx-a100'",
                       p4de + ":10: GPU model H100-SXM5-80GB from preset 'dgx-h100' (--gpu-from), not from the file's "
                              "PCI device id (0x20b2 A100-SXM4-80GB)"});

  // Another generation's NVSwitch plane is taken, and said; the GPU model stays the file's.
  const XmlImport y = import_nccl_xml_file(p4de, nvlink_from("dgx-h100"));
  CHECK(y.topology->gpu().model == "A100-SXM4-80GB");
  CHECK(y.notes[1] == p4de +
                          ":10: preset 'dgx-h100' has H100-SXM5-80GB GPUs (sm 90), this file 0x20b2 A100-SXM4-80GB "
                          "(sm 80): its NVLink bandwidth may not be these GPUs' (the preset of these GPUs: "
                          "--nvlink-from dgx-a100)");
}

TEST_CASE("an NCCL_TOPO_FILE skeleton without PCI classes is refused with what to do") {
  const std::string file = topology_data("aws-g5-48xl_classless.xml");
  const std::string expected =
      file +
      ":9: an NCCL_TOPO_FILE skeleton: no <pci> has a 'class' attribute (NCCL reads the classes from sysfs "
      "when it loads such a file), so GPUs cannot be told from NICs (hint: dump the real topology on the "
      "machine (run NCCL once with NCCL_TOPO_DUMP_FILE=topo.xml) and import that, or use a preset (burst topo "
      "list))";
  CHECK(error_text([&] { (void)import_nccl_xml_file(file); }) == expected);
  CHECK(error_text([&] { (void)import_nccl_xml_file(file, nvlink_from("dgx-a100")); }) == expected);
}

TEST_CASE("Broadcom PEX switches are flattened as NCCL does: GPUs under two sub-switches are PIX") {
  const std::string file = topology_data("broadcom-switches_flattened.xml");
  const XmlImport x = import_nccl_xml_file(file);
  const Topology& t = *x.topology;
  CHECK(x.pcie_switches == 5);                // the three top switches and the two PLX sub-switches
  CHECK(t.path(0, 1).cls == PathClass::PIX);  // gen5, as on OCI's H100 nodes
  CHECK(t.path(0, 1).bandwidth_Bps == Approx(16 * 3.938e9));
  CHECK(t.path(2, 3).cls == PathClass::PIX);  // gen4, as on aliyun's A100 nodes
  CHECK(t.path(4, 5).cls == PathClass::PXB);  // PLX: two levels stay two levels
  CHECK(t.path(0, 2).cls == PathClass::PHB);
  CHECK(t.nic_of(0).cls == PathClass::PIX);
  CHECK(t.nic_of(1).cls == PathClass::PIX);
  CHECK(x.notes == std::vector<std::string>{
                       file + ":14: Broadcom PEX switches flattened as NCCL does (the first here): 5 sub-switches "
                              "merged into their parent, so they add no PCIe switch to a path",
                       file + ":16: no <nvlink> in this dump: its GPUs are joined by PCIe only, right for PCIe GPUs "
                              "such as L4 or L40S"});
}

TEST_CASE("nccl_bandwidths: NCCL's derated NVLink and PCIe figures instead of the physical ones") {
  const std::string file = topology_data("nccl-figures_a100-2gpu.xml");
  XmlImportOptions nccl;
  nccl.nccl_bandwidths = true;
  const Topology physical = *import_nccl_xml_file(file).topology;
  const Topology derated = *import_nccl_xml_file(file, nccl).topology;
  // 12 NVLinks x 25 GB/s, or x SM80_NVLINK_BW 20 GB/s.
  CHECK(physical.intra_node_worst().bandwidth_Bps == 300e9);
  CHECK(derated.intra_node_worst().bandwidth_Bps == 240e9);
  // A GPU's PCIe gen4 x16 link: 31.5 GB/s, or 16 lanes x 12 Gb/s = 24 GB/s, below its share of
  // the two HDR NICs (25 GB/s).
  CHECK(physical.node().nic_path(0).bandwidth_Bps == Approx(16 * 1.969e9));
  CHECK(derated.node().nic_path(0).bandwidth_Bps == Approx(24e9));
  CHECK(physical.inter_node_bandwidth_per_gpu() == 25e9);
  CHECK(derated.inter_node_bandwidth_per_gpu() == Approx(24e9));

  // A preset's NVSwitch plane is converted too: 12 links x 20 GB/s for the A100.
  XmlImportOptions p4d = nvlink_from("dgx-a100-40g");
  p4d.nccl_bandwidths = true;
  const Topology skeleton = *import_nccl_xml_file(topology_data("aws-ofi-nccl_p4d-24xl-topo.xml"), p4d).topology;
  CHECK(skeleton.intra_node_worst().bandwidth_Bps == Approx(240e9));

  // Empty link_speed: NCCL's fallback, its 8 GT/s figure; a <nic> under <cpu>: LOC_BW.
  const std::string azure = topology_data("azure-azhpc-images_ncv4-topo_pre-4be0efb_pairs.xml");
  const XmlImport a = import_nccl_xml_file(azure, nccl);
  CHECK(a.notes[0] == azure + ":3: empty PCIe link_speed: PCIe gen3 (8 GT/s) assumed, as NCCL does");
  CHECK(a.notes[1] == azure + ":8: <nic> directly under <cpu>: attached to the CPU at NCCL's LOC_BW (5000 GB/s)");
  CHECK(a.topology->path(0, 1).bandwidth_Bps == Approx(240e9));
  CHECK(a.topology->nic_of(0).bandwidth_Bps == 12.5e9);                 // network ports are the same in both
  CHECK(a.topology->node().nic_path(0).bandwidth_Bps == Approx(12e9));  // gen3 figure x16
}

TEST_CASE("a dump without PCI device ids: the GPU inferred from what it says, with how sure") {
  // sm 80, 12 NVLinks to an NVSwitch, gen4 x16 and HDR a GPU: an A100 SXM, 40 or 80 GB.
  const std::string a100 = topology_data("a100-2gpu_no-device-id.xml");
  const XmlImport x = import_nccl_xml_file(a100);
  CHECK(x.topology->gpu().model == "A100-SXM4-40GB");
  CHECK(std::count(x.notes.begin(), x.notes.end(),
                   a100 + ":9: GPU model A100-SXM4-40GB inferred from what the file says, as it gives no PCI device "
                          "id: sm 80, 12 NVLinks to an NVSwitch, PCIe gen4 x16, 200 Gb/s of network a GPU; sure of all "
                          "but the memory: A100-SXM4-40GB and A100-SXM4-80GB fit alike and differ only in memory, "
                          "which no topology file states; the least is taken, so that a plan made for it fits the "
                          "other too (if yours is another, name it with --gpu-from <preset>, one of dgx-a100 "
                          "(A100-SXM4-80GB), dgx-a100-40g (A100-SXM4-40GB))") == 1);
  XmlImportOptions named;
  named.gpu_from = "dgx-a100";
  CHECK(import_nccl_xml_file(a100, named).topology->gpu().model == "A100-SXM4-80GB");

  // 8 NVLinks fit the A800 and the H800; only the network, a weak clue, favours one: refused.
  const std::string two = topology_data("two-generations_8-nvlinks.xml");
  CHECK_THROWS_WITH(import_nccl_xml_file(two),
                    Catch::Contains(two + ":8: the GPU's <pci> has no 'device' attribute, and 2 GPU models fit") &&
                        Catch::Contains("only the network (a weak clue) favouring A800-SXM4-80GB") &&
                        Catch::Contains("--gpu-from <preset>, one of a800-4hca (A800-SXM4-80GB), h800"));
  XmlImportOptions h800;
  h800.gpu_from = "h800";
  CHECK(import_nccl_xml_file(two, h800).topology->gpu().model == "H800-SXM5-80GB");
}
