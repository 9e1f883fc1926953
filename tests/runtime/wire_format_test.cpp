// How ring payloads cross the wire (runtime/executor/wire_format.hpp): parts in their own
// dtypes, bf16 parts rounded to nearest even and widened back exactly, fp32 parts untouched,
// and the byte count the simulator prices.
#include <catch2/catch.hpp>

#include <vector>

#include "common/bf16.hpp"
#include "runtime/executor/wire_format.hpp"
#include "tests/support/error_text.hpp"

using namespace burst;
using namespace burst::rt;

TEST_CASE("a Q-ring pack travels Q and dO as bf16 and D, lse as fp32") {
  // 3 elements of Q, 3 of dO, 2 of D, 2 of lse.
  const WireFormat wire({{3, DType::BF16}, {3, DType::BF16}, {2, DType::F32}, {2, DType::F32}});
  CHECK(wire.floats() == 10);
  CHECK(wire.bytes() == 6 * 2 + 4 * 4);
  const std::vector<float> values{1.0f + 0x1.0p-10f, -2.5f, 3.0f, 0.1f, 0.2f, 0.3f, 1.0f + 0x1.0p-20f, -7.0f, 0.123456789f, 42.0f};
  std::vector<std::byte> bytes(wire.bytes());
  wire.encode(values, bytes);
  std::vector<float> back(wire.floats());
  wire.decode(bytes, back);
  for (std::size_t i = 0; i < 6; ++i) CHECK(back[i] == round_to_bf16(values[i]));
  for (std::size_t i = 6; i < 10; ++i) CHECK(back[i] == values[i]);  // fp32 parts exactly
  // Encoding what was decoded gives the same bytes: an already rounded payload travels losslessly.
  std::vector<std::byte> again(wire.bytes());
  wire.encode(back, again);
  CHECK(again == bytes);
}

TEST_CASE("rounding a span to bf16 keeps what bf16 storage keeps") {
  std::vector<float> v{0.1f, -3.14159f, 65504.0f};
  round_to_bf16(v);
  for (const float x : v) CHECK(round_to_bf16(x) == x);
  CHECK(v[0] != 0.1f);
}

TEST_CASE("a wire part other than fp32 or bf16 is refused") {
  CHECK(test::error_text([] { (void)WireFormat({{4, DType::I64}}); }) ==
        "WireFormat: a payload part travels as int64 (valid: fp32, bf16; hint: the ring executor computes in fp32 and "
        "sends fp32 or bf16)");
}
