// Fuzzes the training-state reader (burst.training_state/2) on the file's bytes in memory. A
// burst::Error is the correct answer to bad input; any other exception, a crash or a sanitizer
// report is a bug. The first byte's low bit asks for the checksum line to be rewritten to the
// right CRC-32 first, so mutated headers and bodies get past the checksum to the checks behind
// it; the rest is the file. An accepted state must have moments empty or as long as params.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "runtime/training/training_state.hpp"
#include "tests/fuzz/state_checksum.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string text = (data[0] & 1) != 0 ? burst::fuzz::with_right_checksum(rest) : std::string(rest);
  try {
    const burst::rt::TrainingState state = burst::rt::parse_training_state(text, "fuzz.state");
    for (const auto* moment : {&state.adam_m, &state.adam_v}) {
      if (!moment->empty() && moment->size() != state.params.size()) {
        std::fprintf(stderr, "accepted a state whose moments are not as long as params\n");
        std::abort();
      }
    }
    if (state.step < 0 || state.adam_step < 0) {
      std::fprintf(stderr, "accepted a negative step\n");
      std::abort();
    }
  } catch (const burst::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
