// The host's reduction of a collective's contributions, shared by every backend that reduces on
// the CPU (the loopback's meeting points, a subgroup's reduce-scatter phase).
//
// Rank order, always: out = x_0 op x_1 op ... op x_{n-1}, left to right, so every rank that
// computes a result gets the same bits, and so does every backend that reduces here.
//
// bf16 is summed (or maxed) in fp32 and rounded to bf16 once, at the end (round to nearest even,
// common/bf16.hpp): the tensor-parallel reduce-scatter of a GPU step's bf16 partial sums loses one
// rounding, not one per member. The loopback's GPU copy sums bf16 on the device the same way (an
// fp32 scratch that each input is widened into, then one rounding), so host and device agree bit
// for bit. NCCL rounds after each of its ring's steps instead; the tensor-parallel degrees (2-8)
// keep that within the bf16 tolerance every GPU check allows.
#pragma once

#include <cstddef>
#include <span>

#include "runtime/comm/communicator.hpp"

namespace burst::rt::detail {

// out[i] = op over blocks b (in order) of blocks[b][i], for i < count; every block holds `count`
// elements of `dtype`. fp32, fp64, bf16, int32, int64 and uint64; Bytes is refused before any
// collective is posted (Communicator::check_collective), so it never reaches here. `out` may be
// one of the blocks. An empty `blocks` leaves `out` untouched.
void reduce_in_order(DType dtype, ReduceOp op, std::span<const std::byte* const> blocks, std::size_t count,
                     std::byte* out);

}  // namespace burst::rt::detail
