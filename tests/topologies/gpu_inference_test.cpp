// The GPU model of NCCL topology files whose GPUs carry no PCI device id
// (topologies/detail/gpu_inference.hpp): on real files (AWS's p5 file as published; OCI's H100
// dump and aliyun's A100 dump with their GPUs' ids, and more, deleted here in memory, so the line
// numbers stay the originals'), with --gpu-from and --nvlink-from, and clue by clue. Notes and
// errors are checked word for word: they are what a user reads.
#include <algorithm>
#include <regex>
#include <string>

#include <catch2/catch.hpp>

#include "common/untrusted_file.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/test_data.hpp"

#include "topologies/detail/gpu_inference.hpp"
#include "topologies/detail/nccl_xml.hpp"

using namespace burst::topo;

namespace {

using burst::test::error_text;
using burst::test::topology_data;

std::string topology_text(const std::string& path) { return burst::read_untrusted_file(path, kNcclXmlFileCap); }

// `text` without any `attributes` (one exact run of them, leading space included); `expected`
// of them must be there.
std::string without_attributes(std::string text, const std::string& attributes, int expected) {
  int found = 0;
  for (auto at = text.find(attributes); at != std::string::npos; at = text.find(attributes, at)) {
    text.erase(at, attributes.size());
    ++found;
  }
  REQUIRE(found == expected);
  return text;
}

bool any_inferred(const XmlImport& x) {
  for (const std::string& n : x.notes) {
    if (n.find("inferred") != std::string::npos) return true;
  }
  return false;
}

const std::string kOciGpuIds =
    R"( vendor="0x10de" device="0x2330" subsystem_vendor="0x10de" subsystem_device="0x16c1")";

}  // namespace

TEST_CASE(
    "GPU inference, real dump: OCI's H100 node without its GPUs' ids loads as it does with them, said in a note") {
  const std::string oci = topology_data("oci-hpc_BM.GPU.H100.8_H100-topology.xml");
  const XmlImport with_ids = import_nccl_xml_file(oci);
  CHECK_FALSE(any_inferred(with_ids));

  const XmlImport x = import_nccl_xml(without_attributes(topology_text(oci), kOciGpuIds, 8), oci);
  CHECK(x.topology->gpu().model == "H100-SXM5-80GB");
  CHECK(x.topology->hash() == with_ids.topology->hash());
  CHECK(x.notes.size() == with_ids.notes.size() + 1);
  CHECK(x.notes.back() ==
        oci +
            ":6: GPU model H100-SXM5-80GB inferred from what the file says, as it gives no PCI device id: sm 90, 18 "
            "NVLinks to an NVSwitch, PCIe gen5 x16, 360 Gb/s of network a GPU; sure of all but the memory: "
            "H100-SXM5-80GB and H200-SXM-141GB fit alike and differ only in memory, which no topology file states; "
            "the least is taken, so that a plan made for it fits the other too (if yours is another, name it with "
            "--gpu-from <preset>, one of dgx-h100 (H100-SXM5-80GB), h200 (H200-SXM-141GB))");

  // Named, the other twin is taken instead, and said so.
  XmlImportOptions h200;
  h200.gpu_from = "h200";
  const XmlImport named = import_nccl_xml(without_attributes(topology_text(oci), kOciGpuIds, 8), oci, h200);
  CHECK(named.topology->gpu().model == "H200-SXM-141GB");
  CHECK_FALSE(any_inferred(named));
  CHECK(named.notes.back() == oci +
                                  ":6: GPU model H200-SXM-141GB from preset 'h200' (--gpu-from), not from the "
                                  "file's PCI device id (no PCI device id)");
}

TEST_CASE(
    "GPU inference, real file: AWS's p5 file fits three Hopper SXM models alike, refused until a flag names one") {
  // As published: sm 90, gen5 x16 GPUs, 4 EFA of 100 Gb/s a GPU, and neither ids nor NVLinks.
  const std::string p5 = topology_data("aws-ofi-nccl_p5-48xl-topo.xml");
  CHECK(error_text([&] { (void)import_nccl_xml_file(p5); }) ==
        p5 + ":4: the GPU's <pci> has no 'device' attribute, and 3 GPU models fit what the file says of it equally: "
             "sm 90, PCIe gen5 x16, 400 Gb/s of network a GPU (valid: H100-SXM5-80GB, H800-SXM5-80GB, H200-SXM-141GB; "
             "hint: each fits 3 of 3 clues, and they differ in NVLinks and memory, which the file does not say: name "
             "the GPU with --gpu-from <preset>, one of dgx-h100 (H100-SXM5-80GB), h200 (H200-SXM-141GB), h800 "
             "(H800-SXM5-80GB); or, as the file lists no NVLink, with --nvlink-from <preset>, which adds its NVSwitch "
             "plane too, one of dgx-h100 (H100-SXM5-80GB), h200 (H200-SXM-141GB), h800 (H800-SXM5-80GB))");

  XmlImportOptions nvlink;
  nvlink.nvlink_from = "dgx-h100";
  const XmlImport completed = import_nccl_xml_file(p5, nvlink);
  CHECK(completed.topology->gpu().model == "H100-SXM5-80GB");
  CHECK(completed.topology->gpus_per_node() == 8);
  CHECK(completed.topology->intra_node_worst().bandwidth_Bps == 450e9);
  CHECK(completed.topology->inter_node_bandwidth_per_gpu() == 4 * 12.5e9);
  CHECK_FALSE(any_inferred(completed));

  XmlImportOptions gpu;
  gpu.gpu_from = "h800";
  const XmlImport named = import_nccl_xml_file(p5, gpu);
  CHECK(named.topology->gpu().model == "H800-SXM5-80GB");
  CHECK_FALSE(named.nvswitch);  // --gpu-from names the GPU only: the node stays as the file has it
}

TEST_CASE("GPU inference: aliyun's A100 dump without ids, sm and NVLinks says only PCIe gen4, which seven models fit") {
  const std::string aliyun = topology_data("aliyun-SimAI_topo_8A100_4CX6.xml");
  std::string text =
      without_attributes(topology_text(aliyun),
                         R"( vendor="0x10de" device="0x20b2" subsystem_vendor="0x10de" subsystem_device="0x1463")", 8);
  text = without_attributes(text, R"( sm="80")", 8);
  text = std::regex_replace(text, std::regex("<nvlink [^>]*/>"), "");
  CHECK(error_text([&] { (void)import_nccl_xml(text, aliyun); }) ==
        aliyun +
            ":11: the GPU's <pci> has no 'device' attribute, and 7 GPU models fit what the file says of it equally: "
            "PCIe gen4 x16, 125 Gb/s of network a GPU (valid: A100-SXM4-40GB, A100-SXM4-80GB, A100-PCIE-40GB, "
            "A100-PCIE-80GB, A800-SXM4-80GB, L4-PCIE-24GB, L40S-PCIE-48GB; hint: each fits 1 of 2 clues, and they "
            "differ in compute capability, NVLinks, peak compute and memory, which the file does not say: name the "
            "GPU with --gpu-from <preset>, one of a800-4hca (A800-SXM4-80GB), dgx-a100 (A100-SXM4-80GB), "
            "dgx-a100-40g (A100-SXM4-40GB), pcie-8gpu (A100-PCIE-80GB); or, as the file lists no NVLink, with "
            "--nvlink-from <preset>, which adds its NVSwitch plane too, one of a800-4hca (A800-SXM4-80GB), dgx-a100 "
            "(A100-SXM4-80GB), dgx-a100-40g (A100-SXM4-40GB))");
  XmlImportOptions named;
  named.gpu_from = "pcie-8gpu";
  CHECK(import_nccl_xml(text, aliyun, named).topology->gpu().model == "A100-PCIE-80GB");
}

TEST_CASE("GPU inference: --nvlink-from names the GPU of a file that lists its own NVLinks but no ids") {
  const std::string oci = topology_data("oci-hpc_BM.GPU.H100.8_H100-topology.xml");
  XmlImportOptions h800;
  h800.nvlink_from = "h800";
  const XmlImport x = import_nccl_xml(without_attributes(topology_text(oci), kOciGpuIds, 8), oci, h800);
  CHECK(x.topology->gpu().model == "H800-SXM5-80GB");
  CHECK(x.topology->intra_node_worst().bandwidth_Bps == 450e9);  // the file's 18 NVLinks, not the preset's 8
  CHECK_FALSE(any_inferred(x));
  CHECK(std::count(x.notes.begin(), x.notes.end(),
                   oci + ":6: --nvlink-from h800 adds no NVLinks: the file lists its own") == 1);
  // An H800 has 8 NVLinks, not the file's 18: taken as asked, and said.
  const auto contradicted = [](const XmlImport& i) {
    return std::count_if(i.notes.begin(), i.notes.end(), [](const std::string& n) {
      return n.find("which what the file says of its GPUs rules out") != std::string::npos;
    });
  };
  CHECK(contradicted(x) == 1);
  XmlImportOptions h100;
  h100.nvlink_from = "dgx-h100";
  CHECK(contradicted(import_nccl_xml(without_attributes(topology_text(oci), kOciGpuIds, 8), oci, h100)) == 0);
}

TEST_CASE("GPU inference: an id the GPU table does not know is never guessed, whatever else the file says") {
  const std::string oci = topology_data("oci-hpc_BM.GPU.H100.8_H100-topology.xml");
  std::string text = topology_text(oci);
  for (auto at = text.find(R"(device="0x2330")"); at != std::string::npos; at = text.find(R"(device="0x2330")", at)) {
    text.replace(at, 15, R"(device="0x2901")");
  }
  CHECK_THAT(error_text([&] { (void)import_nccl_xml(text, oci); }),
             Catch::Matchers::StartsWith(oci + ":6: unknown GPU PCI device id 0x2901 ("));
}

TEST_CASE("GPU inference: a GPU that every known model contradicts is refused, with the clues that did it") {
  const std::string oci = topology_data("oci-hpc_BM.GPU.H100.8_H100-topology.xml");
  std::string text = without_attributes(topology_text(oci), kOciGpuIds, 8);
  for (auto at = text.find(R"(sm="90")"); at != std::string::npos; at = text.find(R"(sm="90")", at)) {
    text.replace(at, 7, R"(sm="100")");
  }
  CHECK(error_text([&] { (void)import_nccl_xml(text, oci); }) ==
        oci +
            ":6: the GPU's <pci> has no 'device' attribute, and what the file says of it rules out every GPU model we "
            "know: sm 100, 18 NVLinks to an NVSwitch, PCIe gen5 x16, 360 Gb/s of network a GPU (valid: A100-SXM4-40GB "
            "(sm 80), A100-SXM4-80GB (sm 80), A100-PCIE-40GB (sm 80), A100-PCIE-80GB (sm 80), A800-SXM4-80GB (sm 80), "
            "H100-SXM5-80GB (sm 90), H100-PCIE-80GB (sm 90), H800-SXM5-80GB (sm 90), H200-SXM-141GB (sm 90), "
            "L4-PCIE-24GB (sm 89), L40S-PCIE-48GB (sm 89); hint: name the GPU with --gpu-from <preset>, one of "
            "a800-4hca (A800-SXM4-80GB), dgx-a100 (A100-SXM4-80GB), dgx-a100-40g (A100-SXM4-40GB), dgx-h100 "
            "(H100-SXM5-80GB), h200 (H200-SXM-141GB), h800 (H800-SXM5-80GB), pcie-8gpu (A100-PCIE-80GB))");
}

TEST_CASE("GPU inference clue by clue: what fits, what says nothing, what rules a model out") {
  using hw::GpuClues;
  using hw::Sureness;
  const auto infer = [](const GpuClues& c) { return hw::infer_gpu_model(c); };

  SECTION("8 NVLinks to an NVSwitch and sm 90: the H800 alone") {
    const auto r = infer({90, 8, true, 0, 32, 16, 0});
    CHECK(r.sureness == Sureness::Sure);
    CHECK(r.model->spec.model == "H800-SXM5-80GB");
    CHECK(r.reason == "sure: every other GPU model we know is ruled out by them");
    CHECK(hw::clue_list(r) == "sm 90, 8 NVLinks to an NVSwitch, PCIe gen5 x16");
  }
  SECTION("a gen4 link says nothing of a Hopper GPU (a gen4 slot), a gen5 one rules out an Ampere GPU") {
    const auto slow = infer({90, 0, false, 0, 16, 16, 0});
    CHECK(slow.sureness == Sureness::Tied);
    CHECK(slow.best.size() == 4);  // H100 SXM and PCIe, H800, H200: none fits the link, none is ruled out
    CHECK(slow.reason ==
          "each fits 1 of 2 clues, and they differ in NVLinks, peak compute and memory, which the file does not say");
    const auto fast = infer({80, 0, false, 0, 32, 16, 0});
    CHECK(fast.sureness == Sureness::NoFit);
    CHECK(fast.model == nullptr);
    CHECK(fast.reason == "every GPU model we know is ruled out by them");
  }
  SECTION("NVLinks to one other GPU are a bridge (PCIe cards), to three an SXM board without an NVSwitch") {
    const auto bridge = infer({80, 12, false, 1, 16, 16, 0});
    CHECK(bridge.sureness == Sureness::MemoryUnknown);
    CHECK(bridge.model->spec.model == "A100-PCIE-40GB");
    CHECK(hw::clue_list(bridge) == "sm 80, 12 NVLinks to one other GPU (an NVLink bridge), PCIe gen4 x16");
    const auto board = infer({80, 12, false, 3, 16, 16, 0});
    CHECK(board.model->spec.model == "A100-SXM4-40GB");
    CHECK(board.best.size() == 2);
  }
  SECTION("the network, a weak clue, never decides between GPUs of different compute") {
    // 8 NVLinks fit the A800 and the H800 (3x its peak); 200 Gb/s a GPU is the A800's reference node's.
    const auto r = infer({0, 8, true, 0, 0, 0, 200});
    CHECK(r.sureness == Sureness::Tied);
    CHECK(r.model == nullptr);
    REQUIRE(r.best.size() == 2);
    CHECK(r.reason ==
          "A800-SXM4-80GB and H800-SXM5-80GB fit them alike as far as the GPU's own clues go, only the network (a "
          "weak clue) favouring A800-SXM4-80GB, and they differ in compute capability, PCIe generation, peak compute "
          "and memory, which the file does not say");
    CHECK(infer({0, 8, true, 0, 0, 0, 100}).sureness == Sureness::Tied);  // 100 Gb/s is neither's reference
    // With the GPU's own clue that tells them apart, the answer is sure.
    CHECK(infer({90, 8, true, 0, 0, 0, 200}).model->spec.model == "H800-SXM5-80GB");
  }
  SECTION("a file that says nothing fits every model alike") {
    const auto r = infer({});
    CHECK(r.sureness == Sureness::Tied);
    CHECK(r.best.size() == hw::gpu_models().size());
    CHECK(hw::clue_list(r) == "nothing that tells GPU models apart (no sm, NVLink, PCIe link speed or <net>)");
  }
}
