// Golden error messages for the bad inputs in tests/data/topologies/bad/: every problem, each
// with where (file and JSON pointer or XML line), what, what is valid and a hint.

#include <functional>

#include <catch2/catch.hpp>

#include "tests/support/test_data.hpp"
#include "common/json_reader.hpp"

#include "tests/support/error_text.hpp"

#include "common/error.hpp"
#include "topologies/json_format.hpp"
#include "topologies/load.hpp"
#include "topologies/detail/nccl_xml.hpp"

using namespace burst::topo;

namespace {

std::string read(const std::string& name) {
  return burst::read_untrusted_file(burst::test::topology_data(name), burst::topo::kNcclXmlFileCap);
}

// The problems, one per line, of parsing tests/data/topologies/<name> under the source `name`.
std::vector<std::string> problems_of(const std::string& name) {
  const std::string text = read(name);
  try {
    if (name.size() > 4 && name.substr(name.size() - 4) == ".xml") {
      (void)import_nccl_xml(text, name);
    } else {
      (void)parse_topology_text(text, name);
    }
  } catch (const burst::Error& e) {
    std::vector<std::string> lines;
    for (const auto& p : e.problems()) lines.push_back(p.to_string());
    return lines;
  }
  return {"(no error)"};
}

using burst::test::error_text;

const std::string kBandwidthUnits =
    "a number followed by one of TBps, GBps, MBps, KBps, kBps, TB/s, GB/s, MB/s, KB/s, kB/s, TiBps, GiBps, MiBps, "
    "KiBps, TiB/s, GiB/s, MiB/s, KiB/s, Tbps, Gbps, Mbps, Kbps, kbps, Tb/s, Gb/s, Mb/s, Kb/s, kb/s, Bps, B/s, bps, b/s";

}  // namespace

TEST_CASE("a unit error names the field by JSON pointer and lists the valid units") {
  CHECK(problems_of("bad/unit_error.json") ==
        std::vector<std::string>{"bad/unit_error.json:/node/links/3/bandwidth: '200GBs': unknown unit 'GBs' (valid: " +
                                 kBandwidthUnits + "; hint: write it like \"200GBps\")"});
}

TEST_CASE("every problem of a file is reported at once, with did-you-mean hints") {
  const std::string f = "bad/many_problems.json";
  CHECK(
      problems_of(f) ==
      std::vector<std::string>{
          f + ":/fabrik: unknown field 'fabrik' (valid: schema, name, nodes, gpu, node, fabric; hint: did you mean "
              "'fabric'?)",
          f + ":/nodes: 0 is out of range (valid: 1 to 1048576)",
          f + ":/gpu/memory: missing required field 'memory' (valid: a string with a unit)",
          f + ":/gpu/memory_bandwidth: missing required field 'memory_bandwidth' (valid: a string with a unit)",
          f + ":/gpu/model: 'B300' is not a known model, so peak_bf16, memory and memory_bandwidth are required "
              "(valid: A100-SXM4-40GB, A100-SXM4-80GB, A100-PCIE-40GB, A100-PCIE-80GB, A800-SXM4-80GB, "
              "H100-SXM5-80GB, H100-PCIE-80GB, H800-SXM5-80GB, H200-SXM-141GB, L4-PCIE-24GB, L40S-PCIE-48GB)",
          f + ":/node/devices/2/kind: 'nvswich' is not valid (valid: gpu, nvswitch, pcie-switch, cpu, nic; hint: did "
              "you mean 'nvswitch'?)",
          f + ":/node/devices/3/port_bandwidth: missing required field 'port_bandwidth' (valid: a string with a unit)",
          f + ":/node/links/1/b: no device named 'nvswtch' (valid: gpu0, gpu1, nic0, nvswitch; hint: did you mean "
              "'nvswitch'?)",
          f + ":/node/links/1/bandwidth: expected a string with a unit, found 200 (hint: units go inside the string, "
              "e.g. \"200GBps\")",
          f + ":/node/links/1/sharing: 'fat-pipe' is not valid (valid: shared, fatpipe; hint: did you mean 'fatpipe'?)",
          f + ":/fabric/kind: 'rail-optimised' is not valid (valid: rail-optimized, fat-tree; hint: did you mean "
              "'rail-optimized'?)",
          f + ":/fabric/oversubscription: 0.5 is below 1 (valid: 1 (non-blocking) or more; hint: 2 means the spine "
              "carries half of what the NICs can send)"});
}

TEST_CASE("malformed JSON reports line and column") {
  CHECK(problems_of("bad/malformed.json") ==
        std::vector<std::string>{"bad/malformed.json:6:8: invalid JSON: syntax error while parsing object - "
                                 "unexpected string literal; expected '}'"});
}

TEST_CASE("a number beyond double range is an input error, not a crash (found by fuzz_topology_json)") {
  CHECK(problems_of("bad/number_overflow.json") ==
        std::vector<std::string>{
            "bad/number_overflow.json: invalid JSON: number overflow parsing '1e999' (valid: numbers "
            "within double range)"});
}

TEST_CASE("GPUs that cannot reach each other are named") {
  const std::string f = "bad/disconnected.json";
  const std::string hint = " (hint: link every GPU to an NVSwitch, a PCIe switch or a CPU)";
  CHECK(problems_of(f) == std::vector<std::string>{f + ":/node: GPUs 'gpu0' and 'gpu2' are not connected" + hint,
                                                   f + ":/node: GPUs 'gpu1' and 'gpu2' are not connected" + hint});
}

TEST_CASE("a document of another schema stops at the schema") {
  CHECK(problems_of("bad/wrong_schema.json") ==
        std::vector<std::string>{"bad/wrong_schema.json:/schema: 'burst.plan/1' is not a topology schema this version "
                                 "reads (valid: burst.topology/1; hint: is this a topology file?)"});
}

TEST_CASE("XML errors carry line numbers") {
  CHECK(problems_of("bad/malformed.xml") ==
        std::vector<std::string>{"bad/malformed.xml:5: invalid XML: Start-end tags mismatch"});
  CHECK(problems_of("bad/no_gpu.xml") ==
        std::vector<std::string>{
            "bad/no_gpu.xml:1: no GPU: no <pci> of class 0x03xxxx (hint: is this the dump of a GPU node?)"});
  const std::string f = "bad/unknown_gpu_bad_speed.xml";
  CHECK(problems_of(f) ==
        std::vector<std::string>{
            f + ":4: link_speed \"fast\" is not a PCIe transfer rate (valid: 2.5, 5, 8, 16, 32 or 64 GT/s, e.g. "
                "\"16 GT/s\" or \"32.0 GT/s PCIe\")",
            f + ":9: <pci> link_width=\"x16\" is not an integer (valid: e.g. 16)",
            f + ":6: NVLink target '0000:19:00.0' is not a GPU of this file (hint: check the target busid against the "
                "GPUs' <pci busid>)",
            f + ":4: unknown GPU PCI device id 0x9999 (valid: 0x20b0 A100-SXM4-40GB, 0x20b2 A100-SXM4-80GB, 0x20f1 "
                "A100-PCIE-40GB, 0x20b5 A100-PCIE-80GB, 0x20f3 A800-SXM4-80GB, 0x2330 H100-SXM5-80GB, 0x2331 "
                "H100-PCIE-80GB, 0x2324 H800-SXM5-80GB, 0x2335 H200-SXM-141GB, 0x27b8 L4-PCIE-24GB, 0x26b9 "
                "L40S-PCIE-48GB; hint: name the GPU with --gpu-from <preset>, one of a800-4hca (A800-SXM4-80GB), "
                "dgx-a100 (A100-SXM4-80GB), dgx-a100-40g (A100-SXM4-40GB), dgx-h100 (H100-SXM5-80GB), h200 "
                "(H200-SXM-141GB), h800 (H800-SXM5-80GB), pcie-8gpu (A100-PCIE-80GB))"});
}

TEST_CASE("load_topology: missing files, unknown names and misplaced options") {
  const std::string presets = "a800-4hca, dgx-a100, dgx-a100-40g, dgx-h100, h200, h800, pcie-8gpu, local";
  CHECK(error_text([] { (void)load_topology("/no/such/topo.json"); }) ==
        "/no/such/topo.json: no such file (valid: a preset (" + presets +
            "), a .json topology or an NCCL .xml dump; hint: check the path)");
  CHECK(error_text([] { (void)load_topology("dgx-a10"); }) ==
        "dgx-a10: 'dgx-a10' is neither a preset nor a file (valid: a preset (" + presets +
            "), a .json topology or an NCCL .xml dump; hint: did you mean 'dgx-a100'?)");
  LoadOptions o;
  o.nvlink_from = "dgx-a100";
  CHECK(error_text([&] { (void)load_topology("h200", o); }) ==
        "--nvlink-from: applies to NCCL XML files only, not 'h200' (hint: presets and our JSON files are complete "
        "already)");
  o.nvlink_from = "dgx-a10";
  CHECK(error_text([&] {
          (void)load_topology(std::string(BURST_TEST_DATA) + "/topologies/aws-ofi-nccl_p4d-24xl-topo.xml", o);
        }) == "--nvlink-from: unknown preset 'dgx-a10' (valid: " + presets + "; hint: did you mean 'dgx-a100'?)");
  LoadOptions k;
  k.per_node = 4;
  CHECK_THAT(error_text([&] { (void)load_topology("a800-4hca", k); }),
             Catch::Contains("--per-node: applies to the 'local' preset only"));
}

TEST_CASE("names with control characters are refused, naming the field and the byte") {
  burst::Json doc = make_preset("a800-4hca", 1).to_json();
  doc["name"] = "a800\ntouch PWNED";
  doc["node"]["devices"][1]["name"] = "gpu\x1b[31m0";
  const std::string valid =
      " (valid: printable text: no control characters, line breaks or tabs; hint: names and "
      "messages are written into scripts, settings files, reports and terminals)";
  const std::string text = error_text([&] { (void)parse_topology_json(doc, "t.json"); });
  CHECK_THAT(text, Catch::Contains("t.json:/name: 'a800\\ntouch PWNED': byte 5 is a control character (\\n)" + valid));
  CHECK_THAT(text,
             Catch::Contains("t.json:/node/devices/1/name: 'gpu\\x1b[31m0': byte 4 is a control character (\\x1b)"));
  CHECK(text.find('\x1b') == std::string::npos);
}
