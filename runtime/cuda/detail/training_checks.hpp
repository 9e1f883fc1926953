// Argument checks of the training kernels' host API (training_kernels.hpp), run before any
// launch: every problem of a call collected and thrown at once as burst::Error, each naming
// the call and the argument ("rms_norm_backward: workspace"). They read sizes and pointers
// only, never device memory, so they run (and are tested) on machines without a GPU.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "runtime/cuda/detail/training_kernels.hpp"

namespace burst::rt::gpu {

void check_embedding_forward(const std::int32_t* tokens, std::int64_t count, const Bf16* table, std::int64_t vocab,
                             std::int64_t dim, const Bf16* out);
void check_embedding_backward(const DeviceTokenGroups& groups, const Bf16* dout, std::int64_t vocab, std::int64_t dim,
                              const float* dtable);
void check_rms_norm_forward(const Bf16* x, const Bf16* gain, std::int64_t rows, std::int64_t dim, float eps,
                            const Bf16* y, const float* inv_rms);
void check_add_rms_norm_forward(const ResidualSum& add, const Bf16* gain, std::int64_t rows, std::int64_t dim,
                                float eps, const Bf16* y, const float* inv_rms);
void check_rms_norm_backward(const Bf16* x, const Bf16* gain, const float* inv_rms, const Bf16* dy, std::int64_t rows,
                             std::int64_t dim, const Bf16* dx, const float* dgain, const float* workspace);
void check_rope(std::string_view call, const RopeArgs& args);

// An elementwise call over `count` elements of the named arrays (all count long).
struct NamedArray {
  std::string_view name;
  const void* pointer = nullptr;
};
void check_elementwise(std::string_view call, std::int64_t count, std::initializer_list<NamedArray> arrays);

// The cross-entropy kernels: `out` is row_loss (rows values) or dl (rows * vocab).
void check_cross_entropy(std::string_view call, const float* logits, std::int64_t rows, std::int64_t vocab,
                         const std::int32_t* targets, NamedArray out, std::int64_t out_elements);

void check_squared_norm(const float* grads, std::int64_t count, const double* workspace, const double* result);
void check_adamw(const AdamWDeviceRange& range, const hd::AdamWScalars<float>& scalars, float clip_factor);

}  // namespace burst::rt::gpu
