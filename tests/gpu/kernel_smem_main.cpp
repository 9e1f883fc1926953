// Prints the dynamic shared memory each CUDA kernel's launcher requests (kernel_shapes.hpp), its
// threads per block and the fewest blocks that must fit one multiprocessor, one
// "kernel<TAB>bytes<TAB>threads<TAB>floor" line per kernel, named as c++filt names the kernel
// symbols, for kernel_resources.sh to add to the static shared memory ptxas reports and to turn
// registers and shared memory into resident blocks (theoretical occupancy).
//
// The floor: every attention kernel keeps at least 2 resident 4-warp blocks per SM, so one
// block's loads and softmax overlap another's matrix products. The one exception, stated here so
// it cannot grow: the head-dim-128 dK,dV backward keeps its fp32 dK accumulator in shared memory
// (116 KB with the atomic dQ path's dS tile), so only one block fits (sm_80's 164 KB or sm_90's
// 228 KB per SM); its floor is 1 until the backward is rebalanced with dK and dV in registers.
// Kernels whose block size their launcher chooses from the shape (the training and element
// kernels) print 0 threads and are not gated.
#include <cstdio>
#include <initializer_list>

#include "runtime/cuda/detail/kernel_shapes.hpp"

using namespace burst::rt::gpu;

namespace {

void print(const char* kernel, std::size_t bytes, int threads = 0, int floor = 0) {
  std::printf("%s\t%zu\t%d\t%d\n", kernel, bytes, threads, floor);
}

}  // namespace

int main() {
  print("flash_forward_kernel<64>", ForwardSmem<64>::bytes, kThreads, 2);
  print("flash_forward_kernel<128>", ForwardSmem<128>::bytes, kThreads, 2);
  print("flash_backward_kv_kernel<64, true>", BackwardKvSmem<64, true>::bytes, kThreads, 2);
  print("flash_backward_kv_kernel<64, false>", BackwardKvSmem<64, false>::bytes, kThreads, 2);
  print("flash_backward_kv_kernel<128, true>", BackwardKvSmem<128, true>::bytes, kThreads, 1);
  print("flash_backward_kv_kernel<128, false>", BackwardKvSmem<128, false>::bytes, kThreads, 1);
  print("flash_backward_dq_kernel<64>", BackwardDqSmem<64>::bytes, kThreads, 2);
  print("flash_backward_dq_kernel<128>", BackwardDqSmem<128>::bytes, kThreads, 2);
  print("merge_partials_kernel", 0);
  print("attention_delta_kernel", 0);
  // The training kernels (training_kernels.hpp) use static shared memory only (block_sum's scratch).
  for (const char* kernel :
       {"embedding_forward_kernel", "embedding_backward_kernel", "rope_kernel", "swiglu_forward_kernel",
        "swiglu_backward_kernel", "residual_add_kernel", "rms_norm_forward_kernel<false>",
        "rms_norm_forward_kernel<true>", "rms_norm_backward_kernel", "rms_norm_dgain_partial_kernel",
        "rms_norm_dgain_sum_kernel", "squared_norm_partial_kernel", "squared_norm_sum_kernel", "adamw_kernel",
        "cross_entropy_loss_kernel", "cross_entropy_backward_bf16_kernel",
        // The ring executor's element kernels (element_kernels.hpp): no shared memory.
        "accumulate_f32_kernel", "accumulate_bf16_kernel", "to_bf16_kernel", "fill_kernel"}) {
    print(kernel, 0);
  }
  return 0;
}
