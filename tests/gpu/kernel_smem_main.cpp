// Prints the dynamic shared memory each CUDA kernel's launcher requests (kernel_shapes.hpp),
// one "kernel<TAB>bytes" line per kernel, named as c++filt names the kernel symbols, for
// kernel_resources.sh to add to the static shared memory ptxas reports.
#include <cstdio>

#include "runtime/cuda/kernel_shapes.hpp"

using namespace burst::rt::gpu;

namespace {

void print(const char* kernel, std::size_t bytes) { std::printf("%s\t%zu\n", kernel, bytes); }

}  // namespace

int main() {
  print("flash_forward_kernel<64>", ForwardSmem<64>::bytes);
  print("flash_forward_kernel<128>", ForwardSmem<128>::bytes);
  print("flash_backward_kv_kernel<64, true>", BackwardKvSmem<64, true>::bytes);
  print("flash_backward_kv_kernel<64, false>", BackwardKvSmem<64, false>::bytes);
  print("flash_backward_kv_kernel<128, true>", BackwardKvSmem<128, true>::bytes);
  print("flash_backward_kv_kernel<128, false>", BackwardKvSmem<128, false>::bytes);
  print("flash_backward_dq_kernel<64>", BackwardDqSmem<64>::bytes);
  print("flash_backward_dq_kernel<128>", BackwardDqSmem<128>::bytes);
  print("merge_partials_kernel", 0);
  print("attention_delta_kernel", 0);
  return 0;
}
