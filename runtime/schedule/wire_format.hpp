// How a ring payload crosses the wire: its parts in order, each in the dtype the plan says.
//
// What travels is what the plan prices. A bf16 plan sends K, V, Q and dO as bf16 (2 bytes an
// element) and the softmax statistics D and lse as fp32; the travelling gradient accumulators go
// as bf16 or fp32 by the plan's dq_bytes / dkv_bytes. The executor assembles a payload in the
// kernels' memory part by part in these dtypes (detail/ring_attention.hpp), so an accumulator
// sent as bf16 is rounded once per hop, which is the error docs/runtime-precision.md measures;
// the NCCL operation lists size their messages by the same formats.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "runtime/comm/dtype.hpp"
#include "runtime/kernels/tensor.hpp"

namespace burst::rt {

struct WirePart {
  std::size_t count = 0;     // fp32 values in memory
  DType dtype = DType::F32;  // F32 or BF16 on the wire
};

class WireFormat {
 public:
  WireFormat() = default;
  // Throws burst::Error for a dtype other than fp32 or bf16.
  explicit WireFormat(std::vector<WirePart> parts);
  [[nodiscard]] static WireFormat uniform(std::size_t count, DType dtype) { return WireFormat({{count, dtype}}); }

  [[nodiscard]] std::size_t floats() const { return floats_; }  // in memory
  [[nodiscard]] std::size_t bytes() const { return bytes_; }    // on the wire
  [[nodiscard]] const std::vector<WirePart>& parts() const { return parts_; }

 private:
  std::vector<WirePart> parts_;
  std::size_t floats_ = 0, bytes_ = 0;
};

// The read ring's payloads (detail/ring_attention.hpp) for the ring's shapes q [c, H, d] and
// k, v [c, Hkv, d]: a K,V block (K, then V, in the activation dtype), and the query pack of the
// query-side backward (Q, dO in the activation dtype, then D and lse in fp32, one per row and head).
// The executor and the NCCL operation list (schedule/nccl_op_list.hpp) both size messages by them.
[[nodiscard]] WireFormat kv_block_wire(Shape kv, DType activations);
[[nodiscard]] WireFormat query_pack_wire(Shape q, DType activations);

// Rounds every value to the nearest bf16 in place (what storing a tensor in bf16 keeps).
void round_to_bf16(std::span<float> values);

}  // namespace burst::rt
