// The elementwise and gather/scatter kernels of a training step (training_kernels.hpp): the
// embedding, RoPE, SwiGLU and the residual add. bf16 in device memory, fp32 arithmetic from
// runtime/training/hd/, every element written by exactly one thread.
//
//   embedding_forward_kernel   one block per token, threads striding over the row
//   embedding_backward_kernel  one block per distinct token id (token_groups.hpp); each thread
//                              owns columns of that id's dtable row and adds the tokens'
//                              gradients in ascending token order: the CPU's order, no atomics
//   rope_kernel                one thread per (token, pair i): the angle once, then the turn
//                              applied to pair i of every head of the token, queries and keys
//   swiglu_*_kernel, residual_add_kernel  grid-stride loops over the elements
#include "runtime/cuda/detail/device/launch.cuh"
#include "runtime/cuda/detail/training_checks.hpp"
#include "runtime/cuda/detail/training_kernels.hpp"
#include "runtime/cuda/detail/training_launch.hpp"
#include "runtime/training/hd/rope.hpp"
#include "runtime/training/hd/swiglu.hpp"

namespace burst::rt::gpu {
namespace {

__device__ std::int64_t first_index() { return std::int64_t{blockIdx.x} * kTrainThreads + threadIdx.x; }
__device__ std::int64_t grid_stride() { return std::int64_t{gridDim.x} * kTrainThreads; }

__global__ void __launch_bounds__(kTrainThreads)
    embedding_forward_kernel(const std::int32_t* __restrict__ tokens, const Bf16* __restrict__ table,
                             std::int64_t vocab, std::int64_t dim, Bf16* __restrict__ out) {
  const std::int64_t t = blockIdx.x;
  const std::int32_t id = tokens[t];
  if (id < 0 || id >= vocab) __trap();  // checked on the host; a bad one is a fault, not a wild read
  const Bf16* row = table + std::int64_t{id} * dim;
  Bf16* dst = out + t * dim;
  for (std::int64_t j = threadIdx.x; j < dim; j += kTrainThreads) dst[j] = row[j];
}

__global__ void __launch_bounds__(kTrainThreads)
    embedding_backward_kernel(const std::int32_t* __restrict__ rows, const std::int32_t* __restrict__ offsets,
                              const std::int32_t* __restrict__ token_index, const Bf16* __restrict__ dout,
                              std::int64_t dim, float* __restrict__ dtable) {
  const std::int64_t group = blockIdx.x;
  float* dst = dtable + std::int64_t{rows[group]} * dim;
  const std::int32_t first = offsets[group], last = offsets[group + 1];
  for (std::int64_t j = threadIdx.x; j < dim; j += kTrainThreads) {
    float sum = dst[j];
    for (std::int32_t k = first; k < last; ++k) sum += to_float(dout[std::int64_t{token_index[k]} * dim + j]);
    dst[j] = sum;
  }
}

// One loop over the token's query heads, then its key heads: one copy of the turn's code (two
// would make the double-precision pow an outlined call that spills).
__global__ void __launch_bounds__(kTrainThreads)
    rope_kernel(Bf16* __restrict__ x, std::int64_t heads, Bf16* __restrict__ k, std::int64_t k_heads,
                std::int64_t tokens, std::int64_t head_dim, const std::int64_t* __restrict__ positions, float base,
                bool inverse) {
  const std::int64_t half = head_dim / 2, pairs = tokens * half;
  for (std::int64_t p = first_index(); p < pairs; p += grid_stride()) {
    const std::int64_t t = p / half, i = p % half;
    const hd::RopeTurn turn = hd::rope_turn(positions[t], hd::rope_frequency(i, head_dim, base), inverse);
    for (std::int64_t h = 0; h < heads + k_heads; ++h) {
      Bf16* row = h < heads ? x + (t * heads + h) * head_dim : k + (t * k_heads + h - heads) * head_dim;
      const hd::RopePair turned = hd::rope_rotate({to_float(row[i]), to_float(row[i + half])}, turn);
      row[i] = to_bf16(turned.first);
      row[i + half] = to_bf16(turned.second);
    }
  }
}

__global__ void __launch_bounds__(kTrainThreads)
    swiglu_forward_kernel(const Bf16* __restrict__ u, const Bf16* __restrict__ w, Bf16* __restrict__ m,
                          std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    m[i] = to_bf16(hd::swiglu_value(to_float(u[i]), to_float(w[i])));
  }
}

__global__ void __launch_bounds__(kTrainThreads)
    swiglu_backward_kernel(const Bf16* __restrict__ u, const Bf16* __restrict__ w, const Bf16* __restrict__ dm,
                           Bf16* __restrict__ du, Bf16* __restrict__ dw, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const hd::SwigluGrad g = hd::swiglu_grad(to_float(u[i]), to_float(w[i]), to_float(dm[i]));
    du[i] = to_bf16(g.du);
    dw[i] = to_bf16(g.dw);
  }
}

// No __restrict__: out may be a or b (each element is read, then written, by one thread).
__global__ void __launch_bounds__(kTrainThreads)
    residual_add_kernel(const Bf16* a, const Bf16* b, Bf16* out, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    out[i] = to_bf16(to_float(a[i]) + to_float(b[i]));
  }
}

void rope(std::string_view call, const RopeArgs& a, bool inverse, cudaStream_t stream) {
  check_rope(call, a);
  const std::int64_t pairs = a.tokens * (a.head_dim / 2);
  if (pairs == 0) return;
  launch(rope_kernel, elementwise_blocks(pairs), kTrainThreads, 0, stream, "rope_kernel", a.x, a.heads, a.k, a.k_heads,
         a.tokens, a.head_dim, a.positions, a.base, inverse);
}

}  // namespace

void embedding_forward(const std::int32_t* tokens, std::int64_t count, const Bf16* table, std::int64_t vocab,
                       std::int64_t dim, Bf16* out, cudaStream_t stream) {
  check_embedding_forward(tokens, count, table, vocab, dim, out);
  if (count == 0) return;
  launch(embedding_forward_kernel, static_cast<unsigned>(count), kTrainThreads, 0, stream, "embedding_forward_kernel",
         tokens, table, vocab, dim, out);
}

void embedding_backward(const DeviceTokenGroups& groups, const Bf16* dout, std::int64_t vocab, std::int64_t dim,
                        float* dtable, cudaStream_t stream) {
  check_embedding_backward(groups, dout, vocab, dim, dtable);
  if (groups.groups == 0) return;
  launch(embedding_backward_kernel, static_cast<unsigned>(groups.groups), kTrainThreads, 0, stream,
         "embedding_backward_kernel", groups.rows, groups.offsets, groups.token_index, dout, dim, dtable);
}

void rope_forward(const RopeArgs& args, cudaStream_t stream) { rope("rope_forward", args, false, stream); }

void rope_backward(const RopeArgs& args, cudaStream_t stream) { rope("rope_backward", args, true, stream); }

void swiglu_forward(const Bf16* u, const Bf16* w, Bf16* m, std::int64_t count, cudaStream_t stream) {
  check_elementwise("swiglu_forward", count, {{"u", u}, {"w", w}, {"m", m}});
  if (count == 0) return;
  launch(swiglu_forward_kernel, elementwise_blocks(count), kTrainThreads, 0, stream, "swiglu_forward_kernel", u, w, m,
         count);
}

void swiglu_backward(const Bf16* u, const Bf16* w, const Bf16* dm, Bf16* du, Bf16* dw, std::int64_t count,
                     cudaStream_t stream) {
  check_elementwise("swiglu_backward", count, {{"u", u}, {"w", w}, {"dm", dm}, {"du", du}, {"dw", dw}});
  if (count == 0) return;
  launch(swiglu_backward_kernel, elementwise_blocks(count), kTrainThreads, 0, stream, "swiglu_backward_kernel", u, w,
         dm, du, dw, count);
}

void residual_add(const Bf16* a, const Bf16* b, Bf16* out, std::int64_t count, cudaStream_t stream) {
  check_elementwise("residual_add", count, {{"a", a}, {"b", b}, {"out", out}});
  if (count == 0) return;
  launch(residual_add_kernel, elementwise_blocks(count), kTrainThreads, 0, stream, "residual_add_kernel", a, b, out,
         count);
}

}  // namespace burst::rt::gpu
