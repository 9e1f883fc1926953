// Argument checks of the CUDA kernels' host API (flash_attention.hpp): every problem collected
// and thrown at once as burst::Error, each naming the call and the argument.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/error.hpp"
#include "runtime/cuda/detail/flash_attention.hpp"

namespace burst::rt::gpu {

// A device pointer that must not be null when it addresses `elements` > 0 elements.
void need(Problems& p, std::string_view call, std::string_view name, const void* pointer, std::int64_t elements);

void check_forward_inputs(const PairInputs& in, const float* o, const float* lse);
void check_backward_inputs(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out);
void check_row_kernel(std::string_view call, std::int64_t rows, std::int64_t head_dim, const void* a, const void* b,
                      const void* c, const void* d);

}  // namespace burst::rt::gpu
