// How ring payloads cross the wire (runtime/schedule/wire_format.hpp): parts in their own
// dtypes and the byte count the simulator prices; bf16 rounding as bf16 storage keeps it.
#include <catch2/catch.hpp>

#include <vector>

#include "common/bf16.hpp"
#include "runtime/schedule/wire_format.hpp"
#include "tests/support/error_text.hpp"

using namespace burst;
using namespace burst::rt;

TEST_CASE("a Q-ring pack travels Q and dO as bf16 and D, lse as fp32") {
  // 3 elements of Q, 3 of dO, 2 of D, 2 of lse.
  const WireFormat wire({{3, DType::BF16}, {3, DType::BF16}, {2, DType::F32}, {2, DType::F32}});
  CHECK(wire.floats() == 10);
  CHECK(wire.bytes() == 6 * 2 + 4 * 4);
  // The ring's own packs: K then V in the activation dtype; Q, dO, then D and lse in fp32.
  const WireFormat kv = kv_block_wire(Shape{5, 2, 8}, DType::BF16);
  CHECK(kv.floats() == 2 * 80);
  CHECK(kv.bytes() == 2 * 80 * 2);
  const WireFormat pack = query_pack_wire(Shape{5, 4, 8}, DType::BF16);
  CHECK(pack.parts().size() == 4);
  CHECK(pack.bytes() == 2 * 160 * 2 + 2 * 20 * 4);
  CHECK(query_pack_wire(Shape{5, 4, 8}, DType::F32).bytes() == (2 * 160 + 2 * 20) * 4);
}

TEST_CASE("rounding a span to bf16 keeps what bf16 storage keeps") {
  std::vector<float> v{0.1f, -3.14159f, 65504.0f};
  round_to_bf16(v);
  for (const float x : v) CHECK(round_to_bf16(x) == x);
  CHECK(v[0] != 0.1f);
}

TEST_CASE("a wire part other than fp32 or bf16 is refused") {
  CHECK(test::error_text([] {
          (void)WireFormat({{4, DType::I64}});
        }) ==
        "WireFormat: a payload part travels as int64 (valid: fp32, bf16; hint: the ring executor computes in fp32 and "
        "sends fp32 or bf16)");
}
