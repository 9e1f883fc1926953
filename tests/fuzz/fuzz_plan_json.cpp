// Fuzzes the plan reader (burst.plan/2 and /1). A burst::Error is the correct answer to bad input;
// any other exception, a crash or a sanitizer report is a bug. A document that is accepted
// must survive the round trip: plan_from_json(to_json(p)) == p, and writing it again gives
// the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "common/error.hpp"
#include "plan/plan.hpp"

namespace {

[[noreturn]] void bug(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const burst::plan::Plan plan = burst::plan::plan_from_json(burst::parse_json_text(text, "fuzz.json"), "fuzz.json");
    const burst::Json dumped = burst::plan::to_json(plan);
    const burst::plan::Plan again = burst::plan::plan_from_json(dumped, "round-trip.json");
    if (!(again == plan)) bug("round trip changed the plan");
    if (burst::plan::to_json(again).dump() != dumped.dump()) bug("round trip changed the JSON text");
  } catch (const burst::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
