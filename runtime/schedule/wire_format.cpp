// Encoding ring payloads part by part (see wire_format.hpp).
#include "runtime/schedule/wire_format.hpp"

#include <fmt/format.h>

#include "common/bf16.hpp"
#include "common/error.hpp"

namespace burst::rt {

WireFormat::WireFormat(std::vector<WirePart> parts) : parts_(std::move(parts)) {
  for (const WirePart& p : parts_) {
    if (p.dtype != DType::F32 && p.dtype != DType::BF16) {
      throw Error(Problem{"WireFormat", fmt::format("a payload part travels as {}", to_string(p.dtype)), "fp32, bf16",
                          "the ring executor computes in fp32 and sends fp32 or bf16"});
    }
    floats_ += p.count;
    bytes_ += p.count * dtype_size(p.dtype);
  }
}

WireFormat kv_block_wire(Shape kv, DType activations) {
  const auto elements = static_cast<std::size_t>(kv.elements());
  return WireFormat({{elements, activations}, {elements, activations}});
}

WireFormat query_pack_wire(Shape q, DType activations) {
  const auto elements = static_cast<std::size_t>(q.elements());
  const auto rows = static_cast<std::size_t>(q.tokens * q.heads);
  return WireFormat({{elements, activations}, {elements, activations}, {rows, DType::F32}, {rows, DType::F32}});
}

void round_to_bf16(std::span<float> values) {
  for (float& x : values) x = burst::round_to_bf16(x);
}

}  // namespace burst::rt
