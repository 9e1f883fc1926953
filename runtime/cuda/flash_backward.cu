// The flash-attention backward of one block pair on tensor cores (flash_attention.hpp).
//
// Given the final lse and D = rowsum(O * dO) of every query row, a pair adds
//   P = exp(S - lse)   dV += P^T dO   dP = dO V^T   dS = P (dP - D)
//   dQ += scale dS K   dK += scale dS^T Q
// (attention.hpp), recomputing S from Q and K. P is 0 where lse = -inf (a row with no allowed
// key anywhere) and where the mask says no (hd::probability_from_lse of a -inf score).
//
// Main kernel, flash_backward_kv_kernel: one block per (key tile, kv head), so it owns its 64
// rows of dK and dV outright and accumulates them in fp32 for the whole call: dV in registers,
// dK in shared memory (each thread adds to its own cells, so no barrier guards them; dK and dV
// both in registers would need more than 255 at D = 128 and spill). Warp w owns key rows
// 16w .. 16w + 15 and computes the transposed products, whose fragments are already what the
// next mma needs:
//   S^T = K Q^T, dP^T = V dO^T         (warp_scores: its 16 keys x the tile's 64 queries)
//   dV += P^T dO, dK += dS^T Q          (warp_accumulate: P^T, dS^T as bf16 A fragments)
// It walks every query head of its kv head's group (grouped-query attention: dK, dV are never
// expanded per query head) and, per head, the query tiles of its key tile from the tile list.
// dQ rows are shared by every key tile, so they cannot be owned here:
//   default        dS^T goes to shared memory, each warp takes 16 query rows of dQ = dS K
//                  (warp_accumulate_tn) and adds them with fp32 atomicAdd
//   deterministic  no atomics: flash_backward_dq_kernel, one block per (query tile, query head),
//                  recomputes S, P, dP, dS over its query tile's key tiles and owns its dQ rows
//                  (the order of every sum is fixed, so runs are bitwise repeatable).
// Padding: query rows past the block get lse = -inf (P = 0) and an empty key interval; key rows
// past it have position -1 (masked whenever the key tile is short); neither is ever written.
#include <string>

#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/detail/device/warp_tiles.cuh"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/cuda/detail/flash_checks.hpp"
#include "runtime/cuda/detail/fragment_layout.hpp"
#include "runtime/cuda/detail/kernel_shapes.hpp"
#include "runtime/kernels/hd/index_math.hpp"
#include "runtime/kernels/hd/online_softmax.hpp"

namespace burst::rt::gpu {
namespace {

using device::FastExp;
using device::RowTile;

// 8-column blocks of dK and of dQ a warp computes per pass (fewer live registers than all of D).
constexpr int kBlocksPerPass = 4;

template <int kBlocks>
__device__ inline void zero_blocks(float (&acc)[kBlocks][4]) {
#pragma unroll
  for (int j = 0; j < kBlocks; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[j][i] = 0.0f;
  }
}

template <int D, bool kAtomicDq>
__global__ void __launch_bounds__(kThreads, 1)
    flash_backward_kv_kernel(const PairInputs in, const BackwardInputs grad_in, const Gradients out) {
  using Smem = BackwardKvSmem<D, kAtomicDq>;
  extern __shared__ __align__(16) unsigned char smem[];
  auto* k_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::k);
  auto* v_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::v);
  auto* q_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::q);
  auto* do_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::d_o);
  auto* ds_t_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::d_s);  // dS^T [key][query]
  auto* d_k_rows = reinterpret_cast<float*>(smem + Smem::d_k);           // [key][D + 8], fp32
  auto* k_positions = reinterpret_cast<std::int64_t*>(smem + Smem::k_positions);
  auto* q_positions = reinterpret_cast<std::int64_t*>(smem + Smem::q_positions);
  auto* key_lo = reinterpret_cast<std::int64_t*>(smem + Smem::key_lo);
  auto* key_hi = reinterpret_cast<std::int64_t*>(smem + Smem::key_hi);
  auto* row_lse = reinterpret_cast<float*>(smem + Smem::lse);
  auto* row_delta = reinterpret_cast<float*>(smem + Smem::delta);

  const PairShape& shape = in.shape;
  const std::int64_t k_tile_index = blockIdx.x;
  const std::int64_t kv_head = blockIdx.y;
  const std::int64_t k0 = k_tile_index * kTileRows;
  const int first = in.tiles.by_key_offsets[k_tile_index];
  const int last = in.tiles.by_key_offsets[k_tile_index + 1];
  if (first == last) return;  // no query attends these keys: nothing to add

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  const std::int64_t group = shape.heads / shape.kv_heads;
  const bool keys_short = k0 + kTileRows > shape.k_tokens;
  const FastExp exp;

  device::load_tile_async<D>(k_tile, in.k, k0, shape.k_tokens, shape.kv_heads, kv_head);
  device::load_tile_async<D>(v_tile, in.v, k0, shape.k_tokens, shape.kv_heads, kv_head);
  device::copy_async_commit();
  if (threadIdx.x < kTileRows) {
    const std::int64_t token = k0 + threadIdx.x;
    k_positions[threadIdx.x] = token < shape.k_tokens ? in.k_positions[token] : -1;
  }

  // This lane's cells of dK: its row pair r of the warp's keys, columns 8 block + c_col, + 1.
  auto d_k_cell = [&](int r, int block) {
    return reinterpret_cast<float2*>(d_k_rows + (warp * 16 + layout::c_row(lane, r)) * (D + 8) + 8 * block +
                                     layout::c_col(lane, 2 * r));
  };
#pragma unroll
  for (int r = 0; r < 2; ++r) {
#pragma unroll
    for (int j = 0; j < D / 8; ++j) *d_k_cell(r, j) = make_float2(0.0f, 0.0f);
  }
  float d_v[D / 8][4];
  zero_blocks<D / 8>(d_v);

  for (std::int64_t head = kv_head * group; head < (kv_head + 1) * group; ++head) {
    for (int e = first; e < last; ++e) {
      const hd::TileRef ref = in.tiles.by_key[e];
      const std::int64_t q0 = std::int64_t{ref.tile} * kTileRows;
      device::load_tile_async<D>(q_tile, in.q, q0, shape.q_tokens, shape.heads, head);
      device::load_tile_async<D>(do_tile, grad_in.d_o, q0, shape.q_tokens, shape.heads, head);
      device::copy_async_commit();
      if (threadIdx.x < kTileRows) {
        const std::int64_t token = q0 + threadIdx.x;
        const bool valid = token < shape.q_tokens;
        const std::int64_t position = valid ? in.q_positions[token] : 0;
        const hd::KeyInterval keys = valid ? hd::allowed_keys(in.mask, position) : hd::KeyInterval{};
        q_positions[threadIdx.x] = position;
        key_lo[threadIdx.x] = keys.lo;
        key_hi[threadIdx.x] = keys.hi;
        row_lse[threadIdx.x] = valid ? grad_in.lse[token * shape.heads + head] : hd::kNegInf;
        row_delta[threadIdx.x] = valid ? grad_in.delta[token * shape.heads + head] : 0.0f;
      }
      device::copy_async_wait<0>();
      __syncthreads();

      // P^T: the warp's 16 keys (rows g, g + 8) x the tile's 64 queries.
      RowTile s;
      device::warp_scores<D>(s, k_tile, q_tile, warp, lane);
      const bool masked = ref.kind != hd::TileKind::Full || keys_short;
#pragma unroll
      for (int j = 0; j < kTileRows / 8; ++j) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int query = 8 * j + layout::c_col(lane, i);
          float score = s[j][i] * scale;
          if (masked) {
            const std::int64_t key = k_positions[warp * 16 + layout::c_row(lane, layout::c_pair(i))];
            const bool allowed =
                key_lo[query] <= key && key <= key_hi[query] && hd::sparse_allows(in.mask, q_positions[query], key);
            if (!allowed) score = hd::kNegInf;
          }
          s[j][i] = hd::probability_from_lse(score, row_lse[query], exp);
        }
      }
      // P^T stays only as bf16 (what the mma reads anyway): dK, dV and P^T in fp32 together
      // would not fit the 255 registers at D = 128 without spilling.
      device::PackedRowTile p;
      device::pack_fragments(p, s);
      device::warp_accumulate<D>(d_v, p, do_tile, lane);
      // dS^T = P^T (dP^T - D), dP^T = V dO^T.
      RowTile ds;
      device::warp_scores<D>(ds, v_tile, do_tile, warp, lane);
#pragma unroll
      for (int j = 0; j < kTileRows / 8; ++j) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          ds[j][i] = device::packed_element(p, j, i) * (ds[j][i] - row_delta[8 * j + layout::c_col(lane, i)]);
        }
      }
      device::PackedRowTile ds_a;
      device::pack_fragments(ds_a, ds);
#pragma unroll 1
      for (int first_block = 0; first_block < D / 8; first_block += kBlocksPerPass) {
        float part[kBlocksPerPass][4];
        zero_blocks(part);
        device::warp_accumulate_columns<D, kBlocksPerPass>(part, ds_a, q_tile, first_block, lane);
#pragma unroll
        for (int r = 0; r < 2; ++r) {
#pragma unroll
          for (int j = 0; j < kBlocksPerPass; ++j) {
            float2* cell = d_k_cell(r, first_block + j);
            *cell = make_float2(cell->x + part[j][2 * r], cell->y + part[j][2 * r + 1]);
          }
        }
      }

      if constexpr (kAtomicDq) {
#pragma unroll
        for (int j = 0; j < kTileRows / 8; ++j) {
#pragma unroll
          for (int r = 0; r < 2; ++r) {  // elements 2 r, 2 r + 1: one packed register
            *reinterpret_cast<std::uint32_t*>(ds_t_tile + (warp * 16 + layout::c_row(lane, r)) * (kTileRows + kRowPad) +
                                              8 * j + layout::c_col(lane, 2 * r)) =
                ds_a[j / 2][layout::a_register_of(j % 2, 2 * r).index];
          }
        }
        __syncthreads();  // dS^T complete
                          // dQ rows 16 warp .. of this query tile = dS K, kBlocksPerPass x 8 columns at a time.
#pragma unroll 1
        for (int first_block = 0; first_block < D / 8; first_block += kBlocksPerPass) {
          float d_q[kBlocksPerPass][4];
          zero_blocks(d_q);
          device::warp_accumulate_tn<D, kBlocksPerPass>(d_q, ds_t_tile, k_tile, first_block, warp, lane);
#pragma unroll
          for (int r = 0; r < 2; ++r) {
            const std::int64_t token = q0 + warp * 16 + layout::c_row(lane, r);
            if (token >= shape.q_tokens) continue;
            float* row = out.d_q + (token * shape.heads + head) * D + 8 * first_block + layout::c_col(lane, 2 * r);
#pragma unroll
            for (int j = 0; j < kBlocksPerPass; ++j) {
              atomicAdd(row + 8 * j, scale * d_q[j][2 * r]);
              atomicAdd(row + 8 * j + 1, scale * d_q[j][2 * r + 1]);
            }
          }
        }
      }
      __syncthreads();  // every warp is done with this query tile's shared memory
    }
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const std::int64_t token = k0 + warp * 16 + layout::c_row(lane, r);
    if (token >= shape.k_tokens) continue;
    const std::int64_t row = (token * shape.kv_heads + kv_head) * D + layout::c_col(lane, 2 * r);
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      auto* dk = reinterpret_cast<float2*>(out.d_k + row + 8 * j);
      auto* dv = reinterpret_cast<float2*>(out.d_v + row + 8 * j);
      const float2 k_old = *dk, v_old = *dv, k_sum = *d_k_cell(r, j);
      *dk = make_float2(k_old.x + scale * k_sum.x, k_old.y + scale * k_sum.y);
      *dv = make_float2(v_old.x + d_v[j][2 * r], v_old.y + d_v[j][2 * r + 1]);
    }
  }
}

// Deterministic dQ: one block per (query tile, query head) owns its dQ rows.
template <int D>
__global__ void __launch_bounds__(kThreads, 1)
    flash_backward_dq_kernel(const PairInputs in, const BackwardInputs grad_in, const Gradients out) {
  using Smem = BackwardDqSmem<D>;
  extern __shared__ __align__(16) unsigned char smem[];
  auto* q_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::q);
  auto* do_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::d_o);
  auto* k_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::k);
  auto* v_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::v);
  auto* k_positions = reinterpret_cast<std::int64_t*>(smem + Smem::k_positions);

  const PairShape& shape = in.shape;
  const std::int64_t q_tile_index = blockIdx.x;
  const std::int64_t head = blockIdx.y;
  const std::int64_t kv_head = hd::kv_head_of(head, shape.heads, shape.kv_heads);
  const std::int64_t q0 = q_tile_index * kTileRows;
  const int first = in.tiles.by_query_offsets[q_tile_index];
  const int last = in.tiles.by_query_offsets[q_tile_index + 1];
  if (first == last) return;

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  const FastExp exp;

  std::int64_t row_position[2];
  hd::KeyInterval row_keys[2];
  float row_lse[2], row_delta[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const std::int64_t token = q0 + warp * 16 + layout::c_row(lane, r);
    const bool valid = token < shape.q_tokens;
    row_position[r] = valid ? in.q_positions[token] : 0;
    row_keys[r] = valid ? hd::allowed_keys(in.mask, row_position[r]) : hd::KeyInterval{};
    row_lse[r] = valid ? grad_in.lse[token * shape.heads + head] : hd::kNegInf;
    row_delta[r] = valid ? grad_in.delta[token * shape.heads + head] : 0.0f;
  }

  device::load_tile_async<D>(q_tile, in.q, q0, shape.q_tokens, shape.heads, head);
  device::load_tile_async<D>(do_tile, grad_in.d_o, q0, shape.q_tokens, shape.heads, head);
  float d_q[D / 8][4];
  zero_blocks<D / 8>(d_q);

  for (int e = first; e < last; ++e) {
    const hd::TileRef ref = in.tiles.by_query[e];
    const std::int64_t k0 = std::int64_t{ref.tile} * kTileRows;
    device::load_tile_async<D>(k_tile, in.k, k0, shape.k_tokens, shape.kv_heads, kv_head);
    device::load_tile_async<D>(v_tile, in.v, k0, shape.k_tokens, shape.kv_heads, kv_head);
    device::copy_async_commit();
    if (threadIdx.x < kTileRows) {
      const std::int64_t token = k0 + threadIdx.x;
      k_positions[threadIdx.x] = token < shape.k_tokens ? in.k_positions[token] : -1;
    }
    device::copy_async_wait<0>();
    __syncthreads();

    RowTile p;
    device::warp_scores<D>(p, q_tile, k_tile, warp, lane);
    const bool masked = ref.kind != hd::TileKind::Full || k0 + kTileRows > shape.k_tokens;
#pragma unroll
    for (int j = 0; j < kTileRows / 8; ++j) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = layout::c_pair(i);
        float score = p[j][i] * scale;
        if (masked) {
          const std::int64_t key = k_positions[8 * j + layout::c_col(lane, i)];
          if (!(row_keys[r].contains(key) && hd::sparse_allows(in.mask, row_position[r], key))) score = hd::kNegInf;
        }
        p[j][i] = hd::probability_from_lse(score, row_lse[r], exp);
      }
    }
    RowTile ds;
    device::warp_scores<D>(ds, do_tile, v_tile, warp, lane);  // dP = dO V^T
#pragma unroll
    for (int j = 0; j < kTileRows / 8; ++j) {
#pragma unroll
      for (int i = 0; i < 4; ++i) ds[j][i] = p[j][i] * (ds[j][i] - row_delta[layout::c_pair(i)]);
    }
    device::PackedRowTile ds_a;
    device::pack_fragments(ds_a, ds);
    device::warp_accumulate<D>(d_q, ds_a, k_tile, lane);
    __syncthreads();  // every warp is done with K and V
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const std::int64_t token = q0 + warp * 16 + layout::c_row(lane, r);
    if (token >= shape.q_tokens) continue;
    float* row = out.d_q + (token * shape.heads + head) * D + layout::c_col(lane, 2 * r);
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      auto* dq = reinterpret_cast<float2*>(row + 8 * j);
      const float2 old = *dq;
      *dq = make_float2(old.x + scale * d_q[j][2 * r], old.y + scale * d_q[j][2 * r + 1]);
    }
  }
}

template <typename Kernel>
void allow_shared_memory(Kernel kernel, std::size_t bytes, const char* name) {
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
             std::string("cudaFuncSetAttribute(") + name + ", MaxDynamicSharedMemorySize)");
}

template <int D, bool kAtomicDq>
void launch_kv(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out, cudaStream_t stream) {
  constexpr std::size_t kBytes = BackwardKvSmem<D, kAtomicDq>::bytes;
  allow_shared_memory(flash_backward_kv_kernel<D, kAtomicDq>, kBytes, "flash_backward_kv_kernel");
  const dim3 grid(static_cast<unsigned>(in.tiles.k_tiles), static_cast<unsigned>(in.shape.kv_heads));
  flash_backward_kv_kernel<D, kAtomicDq><<<grid, kThreads, kBytes, stream>>>(in, grad_in, out);
  check_launch("flash_backward_kv_kernel");
}

template <int D>
void launch_dq(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out, cudaStream_t stream) {
  constexpr std::size_t kBytes = BackwardDqSmem<D>::bytes;
  allow_shared_memory(flash_backward_dq_kernel<D>, kBytes, "flash_backward_dq_kernel");
  const dim3 grid(static_cast<unsigned>(in.tiles.q_tiles), static_cast<unsigned>(in.shape.heads));
  flash_backward_dq_kernel<D><<<grid, kThreads, kBytes, stream>>>(in, grad_in, out);
  check_launch("flash_backward_dq_kernel");
}

template <int D>
void launch_backward(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out, bool deterministic,
                     cudaStream_t stream) {
  if (deterministic) {
    launch_kv<D, false>(in, grad_in, out, stream);
    launch_dq<D>(in, grad_in, out, stream);
  } else {
    launch_kv<D, true>(in, grad_in, out, stream);
  }
}

}  // namespace

void flash_backward(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out, bool deterministic,
                    cudaStream_t stream) {
  check_backward_inputs(in, grad_in, out);
  if (in.shape.q_tokens == 0 || in.shape.k_tokens == 0) return;
  if (in.shape.head_dim == 64) {
    launch_backward<64>(in, grad_in, out, deterministic, stream);
  } else {
    launch_backward<128>(in, grad_in, out, deterministic, stream);
  }
}

}  // namespace burst::rt::gpu
