// Host API of the CUDA kernels of a training step's small layers (docs/runtime-cuda-training.md):
// the GPU counterparts of runtime/training/detail/layer_ops.hpp and adamw.hpp, with the per-element
// arithmetic of runtime/training/hd/ (the CPU ops run the same headers).
//
// Precision: weights and activations are bf16 in device memory, the math and every sum are
// fp32 (the gradient norm's sums are double), parameter gradients (dgain, dtable) and the
// optimizer's master weights and moments are fp32.
//
//   embedding_forward   out [tokens, dim] = table [vocab, dim] rows
//   embedding_backward  dtable += dout's rows, by token groups (token_groups.hpp): one owner
//                       per vocabulary row, tokens in ascending order, no atomics
//   rms_norm_forward    y [rows, dim] and inv_rms [rows]
//   add_rms_norm_forward  sum = a + b, then rms_norm_forward of sum: one kernel (fused)
//   rms_norm_backward   dx (overwritten, plus an optional skip gradient: fused residual add) and
//                       dgain += (per-chunk partial sums in `workspace`, then a second pass adds
//                       them in chunk order)
//   rope_forward/backward  in place on [tokens, heads, head_dim], int64 global positions; the
//                       queries and keys in one launch, each angle computed once
//   swiglu_forward/backward, residual_add  elementwise
//   squared_norm        sum g^2 into one double (per-block partials, then one block in order)
//   adamw_update        fp32 params, m, v updated, the bf16 working copy written
//   cross_entropy_loss_rows  per-row loss lse - l[target] of fp32 logits (double), one block per
//                       row: the row's max and sum of exp by block reductions in a fixed order
//   cross_entropy_backward   dl = scale (softmax - onehot) per row, bf16 or fp32, in place allowed
//
// Every kernel is deterministic: no float atomics, and each sum's order depends on the sizes
// only, so a call repeats bit for bit. Launches are asynchronous on `stream`; the arguments are
// checked first (training_checks.hpp) and a bad one throws burst::Error naming the call and
// the argument ("rope_forward: head_dim").
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "common/bf16.hpp"
#include "runtime/training/hd/adamw_element.hpp"
#include "runtime/training/hd/cross_entropy_row.hpp"

namespace burst::rt::gpu {

// Every token id must lie in [0, vocab): the ids are the host's (the corpus), checked there
// (group_tokens does it for the backward); the kernel traps on one outside, a fault that the
// next synchronising call reports.
void embedding_forward(const std::int32_t* tokens, std::int64_t count, const Bf16* table, std::int64_t vocab,
                       std::int64_t dim, Bf16* out, cudaStream_t stream);

// TokenGroups (token_groups.hpp) in device memory.
struct DeviceTokenGroups {
  std::int64_t groups = 0;                    // distinct token ids
  std::int64_t tokens = 0;                    // tokens in all
  const std::int32_t* rows = nullptr;         // groups
  const std::int32_t* offsets = nullptr;      // groups + 1
  const std::int32_t* token_index = nullptr;  // tokens
};

// dtable [vocab, dim] += dout [tokens, dim] rows, summed per row in ascending token order
// (the CPU embedding_backward's order).
void embedding_backward(const DeviceTokenGroups& groups, const Bf16* dout, std::int64_t vocab, std::int64_t dim,
                        float* dtable, cudaStream_t stream);

void rms_norm_forward(const Bf16* x, const Bf16* gain, std::int64_t rows, std::int64_t dim, float eps, Bf16* y,
                      float* inv_rms, cudaStream_t stream);

// sum [rows, dim] = a + b (rounded to bf16; sum may be a or b): the residual stream's add.
struct ResidualSum {
  const Bf16* a = nullptr;
  const Bf16* b = nullptr;
  Bf16* sum = nullptr;
};
// rms_norm_forward of a + b, with the sum stored: the same bits as residual_add then
// rms_norm_forward, in one pass over the rows.
void add_rms_norm_forward(const ResidualSum& add, const Bf16* gain, std::int64_t rows, std::int64_t dim, float eps,
                          Bf16* y, float* inv_rms, cudaStream_t stream);

// Floats of rms_norm_backward's workspace: one partial dgain row per chunk of rows.
[[nodiscard]] std::int64_t rms_norm_workspace_floats(std::int64_t rows, std::int64_t dim);

// dx = the norm's backward of dy, plus skip [rows, dim] where not null (the gradient that
// reaches x around the norm through the residual connection), rounded once.
void rms_norm_backward(const Bf16* x, const Bf16* gain, const float* inv_rms, const Bf16* dy, const Bf16* skip,
                       std::int64_t rows, std::int64_t dim, Bf16* dx, float* dgain, float* workspace,
                       cudaStream_t stream);

// x [tokens, heads, head_dim] (head_dim even), positions [tokens]; and, where k_heads > 0,
// k [tokens, k_heads, head_dim] turned by the same angles in the same pass (the keys beside the
// queries).
struct RopeArgs {
  Bf16* x = nullptr;
  std::int64_t tokens = 0;
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  const std::int64_t* positions = nullptr;
  float base = 10000.0f;
  Bf16* k = nullptr;
  std::int64_t k_heads = 0;
};
void rope_forward(const RopeArgs& args, cudaStream_t stream);
void rope_backward(const RopeArgs& args, cudaStream_t stream);

// m = silu(u) w over `count` elements.
void swiglu_forward(const Bf16* u, const Bf16* w, Bf16* m, std::int64_t count, cudaStream_t stream);
void swiglu_backward(const Bf16* u, const Bf16* w, const Bf16* dm, Bf16* du, Bf16* dw, std::int64_t count,
                     cudaStream_t stream);

// out = a + b, added in fp32; out may be a or b (the residual stream updated in place).
void residual_add(const Bf16* a, const Bf16* b, Bf16* out, std::int64_t count, cudaStream_t stream);

// Doubles of squared_norm's workspace: one partial per block of the first pass.
[[nodiscard]] std::int64_t squared_norm_workspace_doubles(std::int64_t count);

// *result = sum of grads[i]^2 (device memory), a range's share of the squared global norm.
void squared_norm(const float* grads, std::int64_t count, double* workspace, double* result, cudaStream_t stream);

// One group's range of the flat parameters (weight decay per group is in the scalars).
struct AdamWDeviceRange {
  float* params = nullptr;       // fp32 master weights
  const float* grads = nullptr;  // read only: clipped in registers, the buffer is not scaled
  float* m = nullptr;
  float* v = nullptr;
  Bf16* working = nullptr;  // the bf16 copy the layers read, rewritten from params
  std::int64_t count = 0;
};

// scalars: hd::adamw_scalars<float>(...); clip_factor: hd::adamw_clip_factor(global norm, clip_norm).
void adamw_update(const AdamWDeviceRange& range, const hd::AdamWScalars<float>& scalars, float clip_factor,
                  cudaStream_t stream);

using hd::kIgnoredTarget;  // a cross-entropy target that is not counted

// logits [rows, vocab] fp32, targets [rows] in [-1, vocab) (device memory, checked on the host
// by the caller: the kernels trap on one outside). row_loss[r] = lse_r - logits[r, targets[r]]
// in double (lse_r = max + log sum exp(l - max), the exp terms in float summed in double), 0
// where targets[r] == -1; the caller sums the rows in its order.
void cross_entropy_loss_rows(const float* logits, std::int64_t rows, std::int64_t vocab, const std::int32_t* targets,
                             double* row_loss, cudaStream_t stream);

// dl [rows, vocab] = scale (softmax(logits row) - onehot(target)), zeros for ignored rows; the
// row's lse recomputed as cross_entropy_loss_rows does; dl is a buffer of its own.
void cross_entropy_backward(const float* logits, std::int64_t rows, std::int64_t vocab, const std::int32_t* targets,
                            float scale, Bf16* dl, cudaStream_t stream);

}  // namespace burst::rt::gpu
