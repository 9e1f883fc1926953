// The host side of the CUDA backend, which runs on any machine (label unit): the device count
// says why it is 0, CudaAttentionKernels refuses to start without a device and says why, and
// the kernels' host API checks its arguments, naming them, before it touches the GPU.
#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "runtime/cuda/cublaslt_gemm.hpp"
#include "runtime/cuda/cuda_attention_kernels.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/flash_attention.hpp"
#include "runtime/cuda/kernel_shapes.hpp"

using namespace burst;

TEST_CASE("the device count is a count, or 0 with the reason") {
  const rt::gpu::CudaDeviceCount visible = rt::gpu::cuda_device_count();
  CHECK(visible.count >= 0);
  CHECK((visible.count > 0) == visible.reason.empty());
}

TEST_CASE("without a visible device the CUDA kernels refuse to start, saying why") {
  const rt::gpu::CudaDeviceCount visible = rt::gpu::cuda_device_count();
  if (visible.count > 0) return;  // a GPU machine: nothing to refuse
  CHECK_THROWS_WITH(rt::CudaAttentionKernels{}, Catch::Contains("no CUDA device visible (" + visible.reason + ")"));
}

TEST_CASE("the kernels' host API names bad arguments before any launch") {
  rt::gpu::PairInputs in;
  in.shape = {100, 100, 4, 3, 96};
  in.mask.base = rt::hd::BaseMask::Document;
  float dummy = 0;
  const auto message = [&] {
    try {
      rt::gpu::flash_forward(in, &dummy, &dummy, nullptr);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  }();
  CHECK_THAT(message, Catch::Contains("flash_forward: head_dim") && Catch::Contains("flash_forward: heads") &&
                          Catch::Contains("flash_forward: mask") && Catch::Contains("flash_forward: tiles") &&
                          Catch::Contains("flash_forward: q") && Catch::Contains("flash_forward: k_positions"));
  CHECK_THROWS_WITH(rt::gpu::merge_partials(nullptr, nullptr, nullptr, nullptr, 10, 64, nullptr),
                    Catch::Contains("merge_partials: pointers"));
  CHECK_THROWS_WITH(rt::gpu::attention_delta(nullptr, nullptr, nullptr, -1, 64, nullptr),
                    Catch::Contains("attention_delta: shape"));
  rt::gpu::BackwardInputs grad_in;
  rt::gpu::Gradients out;
  in.shape = {0, 10, 4, 2, 64};
  CHECK_THROWS_WITH(rt::gpu::flash_backward(in, grad_in, out, false, nullptr),
                    Catch::Contains("flash_backward: d_k") && Catch::Contains("flash_backward: tiles"));
}

TEST_CASE("every attention kernel's shared memory fits sm_80") {
  using namespace rt::gpu;
  CHECK(ForwardSmem<128>::bytes <= kMaxSharedBytesSm80);
  CHECK(BackwardKvSmem<128, true>::bytes <= kMaxSharedBytesSm80);
  CHECK(BackwardKvSmem<128, false>::bytes <= kMaxSharedBytesSm80);
  CHECK(BackwardDqSmem<128>::bytes <= kMaxSharedBytesSm80);
  CHECK(ForwardSmem<64>::k % 16 == 0);  // cp.async and ldmatrix need 16-byte aligned tiles
  CHECK(BackwardKvSmem<64, true>::k_positions % 16 == 0);
}

TEST_CASE("cuBLASLt products: the recommended workspace, pointer alignment and argument checks") {
  CHECK(rt::gpu::recommended_gemm_workspace(8) == 4u << 20);
  CHECK(rt::gpu::recommended_gemm_workspace(9) == 32u << 20);
  CHECK(rt::gpu::recommended_gemm_workspace(10) == 32u << 20);

  alignas(256) static std::uint16_t buffer[512];
  CHECK(rt::gpu::pointer_alignment(buffer) == 256);
  CHECK(rt::gpu::pointer_alignment(buffer + 1) == 2);
  CHECK(rt::gpu::pointer_alignment(buffer + 4) == 8);
  CHECK(rt::gpu::pointer_alignment(buffer + 64) == 128);
  CHECK(rt::gpu::pointer_alignment(nullptr) == 256);

  const rt::GemmShape g = rt::linear_forward_gemm(4, 8, 16);
  using rt::gpu::GemmOutput;
  CHECK_NOTHROW(rt::gpu::check_gemm_arguments(g, buffer, buffer + 64, buffer + 128, GemmOutput::F32, "run"));
  CHECK_THROWS_WITH(rt::gpu::check_gemm_arguments(g, nullptr, buffer, buffer, GemmOutput::F32, "run"),
                    Catch::Contains("run: a") && Catch::Contains("null device pointer"));
  CHECK_THROWS_WITH(rt::gpu::check_gemm_arguments(g, buffer, buffer, buffer + 1, GemmOutput::F32, "run"),
                    Catch::Contains("run: c") && Catch::Contains("not 4-byte aligned"));
  CHECK_NOTHROW(rt::gpu::check_gemm_arguments(g, buffer, buffer, buffer + 1, GemmOutput::BF16, "run"));
  // An empty product reads and writes nothing, so it needs no pointers.
  CHECK_NOTHROW(rt::gpu::check_gemm_arguments(rt::linear_forward_gemm(0, 8, 16), nullptr, nullptr, nullptr,
                                              GemmOutput::F32, "run"));
  rt::GemmShape bad = g;
  bad.ldc = 3;
  CHECK_THROWS_WITH(rt::gpu::check_gemm_arguments(bad, buffer, buffer, buffer, GemmOutput::F32, "run"),
                    Catch::Contains("run: ldc"));
}
