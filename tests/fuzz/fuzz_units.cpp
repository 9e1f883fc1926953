// Fuzzes every units parser with the same text. A burst::Error is a correct answer to bad text;
// any other exception or a crash is a bug. A value that parses must format and parse again.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "common/error.hpp"
#include "common/units.hpp"

namespace {

template <class Parse, class Format>
void check(std::string_view text, Parse parse, Format format) {
  double value = 0;
  try {
    value = parse(text, "fuzz");
  } catch (const burst::Error&) {
    return;
  }
  // Whatever was accepted must survive a print and a re-read without another kind of failure.
  try {
    (void)parse(format(value), "fuzz-again");
  } catch (const burst::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check(text, burst::units::parse_bandwidth, burst::units::format_bandwidth);
    check(text, burst::units::parse_duration, burst::units::format_duration);
    check(text, burst::units::parse_bytes, burst::units::format_bytes);
    check(text, burst::units::parse_flop_rate, burst::units::format_flop_rate);
    try {
      const std::int64_t tokens = burst::units::parse_tokens(text, "fuzz");
      (void)burst::units::parse_tokens(burst::units::format_tokens(tokens), "fuzz-again");
    } catch (const burst::Error&) {
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
