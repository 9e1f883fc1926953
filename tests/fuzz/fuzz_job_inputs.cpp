// Fuzzes the job-side parsers: the attention mask ("sliding:4K"), a Hugging Face config.json
// and a cost-model calibration file ("burst.calibration/1"). The first byte picks the parser,
// the rest is its input. A burst::Error is a correct answer to bad input; any other
// exception or a crash is a bug. Accepted inputs must give sane values.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/json_reader.hpp"
#include "simulator/attention/attention.hpp"
#include "simulator/costs/calibration.hpp"
#include "simulator/models/model.hpp"

namespace {

void fail(const char* what) {
  std::fprintf(stderr, "accepted input gave %s\n", what);
  std::abort();
}

void fuzz_mask(std::string_view text) {
  const burst::Mask m = burst::parse_mask(text, "mask");
  if (m.kind == burst::sim::MaskKind::SlidingWindow && m.window < 1) fail("a window below 1");
  if (m.kind == burst::sim::MaskKind::Document && m.doc_len < 1) fail("a document below 1 token");
  if (burst::parse_mask(burst::to_string(m), "again").kind != m.kind) fail("a mask that does not round-trip");
}

void fuzz_hf_config(std::string_view text) {
  const burst::sim::ModelSpec m =
      burst::sim::model_from_hf_config(burst::parse_json_text(text, "config.json"), "config.json");
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.kv_heads < 1 || m.head_dim < 1 || m.vocab < 1) {
    fail("a non-positive dimension");
  }
  if (m.heads % m.kv_heads != 0) fail("KV heads that do not divide the heads");
}

void fuzz_calibration(std::string_view text) {
  const auto c = burst::sim::apply_calibration(burst::sim::default_calibration(),
                                               burst::parse_json_text(text, "calibration.json"), "calibration.json");
  (void)burst::sim::calibration_to_json(c);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 3) {
      case 0: fuzz_mask(text); break;
      case 1: fuzz_hf_config(text); break;
      default: fuzz_calibration(text); break;
    }
  } catch (const burst::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
