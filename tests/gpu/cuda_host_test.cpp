// The host side of the CUDA backend, which runs on any machine (label unit): the device count
// says why it is 0, CudaAttentionKernels refuses to start without a device and says why, and
// the kernels' host API checks its arguments, naming them, before it touches the GPU, and
// cuBLASLt, which the program does not link, opens on first use with every entry point. The
// owned stream and event handles are move-only, and name the call (and the event's purpose)
// when CUDA refuses one.
#include <catch2/catch.hpp>

#include <string>
#include <type_traits>
#include <utility>

#include "common/error.hpp"
#include "runtime/cuda/detail/cublaslt_gemm.hpp"
#include "runtime/cuda/detail/cublaslt_library.hpp"
#include "runtime/cuda/cuda_attention_kernels.hpp"
#include "runtime/cuda/cuda_step_kernels.hpp"
#include "runtime/cuda/detail/cuda_event.hpp"
#include "runtime/cuda/detail/cuda_stream.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"
#include "runtime/cuda/detail/training_kernels.hpp"

using namespace burst;

TEST_CASE("cuBLASLt opens on first use, every entry point taken") {
  const rt::gpu::CublasLtLibrary& lt = rt::gpu::cublaslt();
  for (const void* entry : {reinterpret_cast<const void*>(lt.create), reinterpret_cast<const void*>(lt.matmul),
                            reinterpret_cast<const void*>(lt.layout_destroy)}) {
    CHECK(entry != nullptr);
  }
  // Calls into the library that need no device.
  CHECK(std::string(lt.status_name(CUBLAS_STATUS_SUCCESS)) == "CUBLAS_STATUS_SUCCESS");
  CHECK(std::string(lt.status_name(CUBLAS_STATUS_INVALID_VALUE)) == "CUBLAS_STATUS_INVALID_VALUE");
  CHECK(&rt::gpu::cublaslt() == &lt);  // opened once
}

TEST_CASE("the device count is a count, or 0 with the reason") {
  const rt::gpu::CudaDeviceCount visible = rt::gpu::cuda_device_count();
  CHECK(visible.count >= 0);
  CHECK((visible.count > 0) == visible.reason.empty());
}

TEST_CASE("without a visible device the CUDA kernels refuse to start, saying why") {
  const rt::gpu::CudaDeviceCount visible = rt::gpu::cuda_device_count();
  if (visible.count > 0) return;  // a GPU machine: nothing to refuse
  CHECK_THROWS_WITH(rt::CudaAttentionKernels{}, Catch::Contains("no CUDA device visible (" + visible.reason + ")"));
  CHECK_THROWS_WITH(rt::CudaStepKernels{}, Catch::Contains("no CUDA device visible (" + visible.reason + ")"));
}

// One owner per handle: a copy would destroy the stream or event twice. Moves never throw, so a
// vector of them (which moves them when it grows) keeps them without copies.
template <typename Handle>
constexpr bool move_only_handle = !std::is_copy_constructible_v<Handle> && !std::is_copy_assignable_v<Handle> &&
                                  std::is_nothrow_move_constructible_v<Handle> &&
                                  std::is_nothrow_move_assignable_v<Handle> && std::is_nothrow_destructible_v<Handle>;
static_assert(move_only_handle<rt::gpu::OwnedStream>);
static_assert(move_only_handle<rt::gpu::OwnedEvent>);
static_assert(!std::is_default_constructible_v<rt::gpu::OwnedEvent>);  // every event says what it is for

TEST_CASE("the owned stream and event handles: one owner, and a refusal names the call") {
  using Catch::Contains;
  if (rt::gpu::cuda_device_count().count == 0) {  // CUDA refuses both: the error says which call, for what
    CHECK_THROWS_WITH(rt::gpu::OwnedEvent("a loopback message"),
                      Contains("cudaEventCreateWithFlags(a loopback message)"));
    CHECK_THROWS_WITH(rt::gpu::OwnedEvent("timing: before the work", rt::gpu::EventTiming::On),
                      Contains("cudaEventCreateWithFlags(timing: before the work)"));
    CHECK_THROWS_WITH(rt::gpu::OwnedStream(), Contains("cudaStreamCreateWithFlags"));
    return;
  }
  rt::gpu::OwnedEvent event("a test event");
  const cudaEvent_t made = event.handle();
  CHECK(made != nullptr);
  rt::gpu::OwnedEvent moved(std::move(event));
  CHECK(moved.handle() == made);
  CHECK(event.handle() == nullptr);  // moved from: its destructor destroys nothing
  rt::gpu::OwnedStream stream;
  const cudaStream_t stream_made = stream.handle();
  CHECK(stream_made != nullptr);  // never the legacy default stream
  rt::gpu::OwnedStream other;
  other = std::move(stream);  // other's own stream is drained and destroyed
  CHECK(other.handle() == stream_made);
  CHECK(stream.handle() == nullptr);
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

TEST_CASE("the training kernels' host API names bad arguments before any launch") {
  using namespace rt::gpu;
  using Catch::Contains;
  Bf16 b;
  float f = 0;
  CHECK_THROWS_WITH(embedding_forward(nullptr, 4, nullptr, 0, 8, &b, nullptr),
                    Contains("embedding_forward: tokens") && Contains("embedding_forward: vocab"));
  CHECK_THROWS_WITH(embedding_backward(DeviceTokenGroups{3, 2, nullptr, nullptr, nullptr}, &b, 10, 8, &f, nullptr),
                    Contains("embedding_backward: groups") && Contains("embedding_backward: groups.rows") &&
                        Contains("embedding_backward: groups.token_index"));
  CHECK_THROWS_WITH(rms_norm_forward(&b, &b, 4, 0, 0.0f, &b, &f, nullptr),
                    Contains("rms_norm_forward: dim") && Contains("rms_norm_forward: eps"));
  CHECK_THROWS_WITH(add_rms_norm_forward(ResidualSum{&b, nullptr, &b}, &b, 4, 8, 1e-5f, &b, &f, nullptr),
                    Contains("add_rms_norm_forward: b"));
  CHECK_THROWS_WITH(rms_norm_backward(&b, &b, &f, &b, nullptr, 4, 8, &b, &f, nullptr, nullptr),
                    Contains("rms_norm_backward: workspace"));
  CHECK_THROWS_WITH(
      rope_forward(RopeArgs{&b, 3, 2, 7, nullptr, 0.5f}, nullptr),
      Contains("rope_forward: head_dim") && Contains("rope_forward: positions") && Contains("rope_forward: base"));
  CHECK_THROWS_WITH(rope_backward(RopeArgs{&b, 3, 0, 8, nullptr, 1e4f}, nullptr), Contains("rope_backward: heads"));
  const std::int64_t position = 0;
  CHECK_THROWS_WITH(rope_forward(RopeArgs{&b, 1, 1, 8, &position, 1e4f, nullptr, 2}, nullptr),
                    Contains("rope_forward: k"));
  CHECK_THROWS_WITH(rope_forward(RopeArgs{&b, 1, 1, 8, &position, 1e4f, &b, -1}, nullptr),
                    Contains("rope_forward: k_heads"));
  CHECK_THROWS_WITH(swiglu_backward(&b, &b, nullptr, &b, &b, 10, nullptr), Contains("swiglu_backward: dm"));
  CHECK_THROWS_WITH(residual_add(&b, &b, &b, -1, nullptr), Contains("residual_add: count"));
  const std::int32_t target = 0;
  double loss = 0;
  CHECK_THROWS_WITH(cross_entropy_loss_rows(&f, 2, 0, &target, &loss, nullptr),
                    Contains("cross_entropy_loss_rows: vocab"));
  CHECK_THROWS_WITH(cross_entropy_loss_rows(&f, 2, 1, &target, nullptr, nullptr),
                    Contains("cross_entropy_loss_rows: row_loss"));
  CHECK_THROWS_WITH(cross_entropy_backward(nullptr, 2, 3, &target, 1.0f, &b, nullptr),
                    Contains("cross_entropy_backward: logits"));
  CHECK_THROWS_WITH(cross_entropy_backward(&f, 1, 3, nullptr, 1.0f, static_cast<Bf16*>(nullptr), nullptr),
                    Contains("cross_entropy_backward: targets") && Contains("cross_entropy_backward: dl"));
  CHECK_THROWS_WITH(squared_norm(&f, 10, nullptr, nullptr, nullptr),
                    Contains("squared_norm: workspace") && Contains("squared_norm: result"));
  const auto scalars = rt::hd::adamw_scalars<float>(1e-3, 0.9, 0.95, 0.0, 0.1, 0);  // eps 0, step 0
  CHECK_THROWS_WITH(adamw_update(AdamWDeviceRange{&f, &f, &f, nullptr, &b, 1}, scalars, 0.0f, nullptr),
                    Contains("adamw_update: range.v") && Contains("adamw_update: scalars.eps") &&
                        Contains("adamw_update: scalars.correction") && Contains("adamw_update: clip_factor"));
  // Nothing to do: no launch, so no device and no pointers needed.
  CHECK_NOTHROW(rms_norm_forward(nullptr, nullptr, 0, 8, 1e-5f, nullptr, nullptr, nullptr));
  CHECK_NOTHROW(swiglu_forward(nullptr, nullptr, nullptr, 0, nullptr));
  CHECK_NOTHROW(rope_forward(RopeArgs{nullptr, 0, 2, 8, nullptr, 1e4f}, nullptr));
}

TEST_CASE("every attention kernel's shared memory fits sm_80") {
  using namespace rt::gpu;
  CHECK(ForwardSmem<ForwardTraits<128>>::bytes <= kMaxSharedBytesSm80);
  CHECK(KvSmem<KvTraits<128>, false>::bytes <= kMaxSharedBytesSm80);
  CHECK(DqSmem<DqTraits<128>>::bytes <= kMaxSharedBytesSm80);
  // cp.async and ldmatrix need 16-byte aligned tiles, in every stage.
  CHECK(ForwardSmem<ForwardTraits<64>>::k % 16 == 0);
  CHECK(ForwardSmem<ForwardTraits<64>>::kTile % 16 == 0);
  CHECK(KvSmem<KvTraits<64>, true>::q % 16 == 0);
  CHECK(KvSmem<KvTraits<64>, true>::k_positions % 16 == 0);
  // The dK, dV pass keeps 8 warps on an SM of sm_80 (164 KiB): two 4-warp blocks at head dim 64,
  // one 8-warp block at 128.
  CHECK(2 * (KvSmem<KvTraits<64>, true>::bytes + 1024) <= 164 * 1024);
  CHECK(KvTraits<128>::kWarps == 8);
  CHECK(KvSmem<KvTraits<128>, false>::bytes + 1024 <= 164 * 1024);
  CHECK(2 * (ForwardSmem<ForwardTraits<64>>::bytes + 1024) <= 164 * 1024);
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
