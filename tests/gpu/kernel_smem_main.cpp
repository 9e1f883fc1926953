// Prints the dynamic shared memory each CUDA kernel's launcher requests (kernel_traits.hpp), its
// threads per block and the fewest blocks that must fit one multiprocessor, on sm_90 and on
// sm_80: one "kernel<TAB>bytes<TAB>threads<TAB>floor<TAB>floor on sm_80<TAB>launch registers"
// line per kernel, named
// as c++filt names the kernel symbols (less the burst::rt::gpu namespaces), for
// kernel_resources.sh to add to the static shared memory ptxas reports and to turn registers and
// shared memory into resident blocks (theoretical occupancy).
//
// The floor of an attention kernel is its traits' kMinBlocks, the blocks its __launch_bounds__
// asks for: at least two resident 4-warp blocks per SM or one 8-warp block, so one block's loads
// and softmax overlap another's matrix products. On sm_80 (164 KiB of shared memory a SM against
// sm_90's 228) it is capped by the blocks that memory holds (no attention kernel is capped now:
// the head-dim-128 dK, dV pass runs one 8-warp block of 128 keys, 139 KiB).
// The Hopper forward (sm_90a only) runs one 12-warp block per SM: a producer warpgroup and two
// consumer warpgroups, which is the occupancy FlashAttention-3's forward runs at too.
// Launch registers: the Hopper kernels rebalance registers with setmaxnreg, whose increase waits
// until the block's pool has them; the pool is the registers a thread has at launch times the
// threads, so ptxas must give each thread exactly its traits' kLaunchRegisters (fewer: the
// consumers' setmaxnreg would wait for ever). 0: not checked.
// Kernels whose block size their launcher chooses from the shape (the training and element
// kernels) print 0 threads and are not gated.
#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <string>

#include "runtime/cuda/detail/hopper_traits.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"

using namespace burst::rt::gpu;

namespace {

// sm_80's shared memory per SM (164 KiB) and what the runtime reserves per block (1 KiB).
constexpr std::size_t kSm80SharedBytes = 164 * 1024;
constexpr std::size_t kReservedPerBlock = 1024;

// The floor on sm_80: the same, capped by the blocks sm_80's shared memory holds.
int sm80_floor(std::size_t bytes, int floor) {
  return std::min(floor, static_cast<int>(kSm80SharedBytes / (bytes + kReservedPerBlock)));
}

void print(const std::string& kernel, std::size_t bytes, int threads = 0, int floor = 0, int launch_registers = 0) {
  std::printf("%s\t%zu\t%d\t%d\t%d\t%d\n", kernel.c_str(), bytes, threads, floor, sm80_floor(bytes, floor),
              launch_registers);
}

template <class T, class Smem>
void print_hopper(const std::string& kernel) {
  print(kernel, Smem::bytes, T::kThreads, T::kMinBlocks, T::kLaunchRegisters);
}

// "KernelTraits<128, 128, 64, 2, 1>", as c++filt writes the template argument.
template <class T>
std::string traits() {
  return "KernelTraits<" + std::to_string(T::kHeadDim) + ", " + std::to_string(T::kRows) + ", " +
         std::to_string(T::kTileRows) + ", " + std::to_string(T::kStages) + ", " + std::to_string(T::kMinBlocks) +
         ", " + std::to_string(T::kWarpBlocks) + ">";
}

template <int D>
void print_attention() {
  using F = ForwardTraits<D>;
  using Q = DqTraits<D>;
  using K = KvTraits<D>;
  print("flash_forward_kernel<" + traits<F>() + " >", ForwardSmem<F>::bytes, F::kThreads, F::kMinBlocks);
  print("flash_backward_dq_kernel<" + traits<Q>() + " >", DqSmem<Q>::bytes, Q::kThreads, Q::kMinBlocks);
  if constexpr (kAtomicDqPays<D>) {
    print("flash_backward_kv_kernel<" + traits<K>() + ", true>", KvSmem<K, true>::bytes, K::kThreads, K::kMinBlocks);
  }
  print("flash_backward_kv_kernel<" + traits<K>() + ", false>", KvSmem<K, false>::bytes, K::kThreads, K::kMinBlocks);
  const std::string d = std::to_string(D);
  using H = HopperForwardTraits<D>;
  print_hopper<H, HopperForwardSmem<H>>("flash_forward_sm90_kernel<HopperForwardTraits<" + d + "> >");
  using HK = HopperKvTraits<D>;
  print_hopper<HK, HopperKvSmem<HK>>("flash_backward_kv_sm90_kernel<HopperKvTraits<" + d + "> >");
  using HQ = HopperDqTraits<D>;
  print_hopper<HQ, HopperDqSmem<HQ>>("flash_backward_dq_sm90_kernel<HopperDqTraits<" + d + "> >");
}

}  // namespace

int main() {
  print_attention<64>();
  print_attention<128>();
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
