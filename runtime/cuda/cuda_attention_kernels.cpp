// CudaAttentionKernels (see cuda_attention_kernels.hpp).
//
// Operands and outputs are already in device memory (the executor keeps them there,
// DeviceKernelMemory); a call uploads only the pair's positions, its block-sparse table and its
// tile list, launches, and synchronises the stream before it returns. The positions and the
// tile list are pageable host memory, for which CUDA only says cudaMemcpyAsync "might be
// synchronous": they stay untouched until that final synchronise.
#include "runtime/cuda/cuda_attention_kernels.hpp"

#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/bf16.hpp"
#include "common/error.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/device_kernel_memory.hpp"
#include "runtime/cuda/flash_attention.hpp"
#include "runtime/cuda/kernel_shapes.hpp"
#include "runtime/cuda/tile_list.hpp"
#include "runtime/kernels/checks.hpp"

namespace burst::rt {
namespace {

using gpu::check_cuda;
using gpu::DeviceBuffer;

// The operands as views for the CPU kernels' shape checks (which read shapes and test data for
// null, never dereference it).
BlockPair shapes_of(const PairOperands& in) {
  const auto view = [](const Operand& x) { return ConstView{reinterpret_cast<const float*>(x.data), x.shape}; };  // NOLINT
  return {view(in.q), view(in.k), view(in.v), in.q_positions, in.k_positions};
}

void check_dtype(Problems& p, std::string_view call, std::string_view name, DType got, DType want) {
  if (got == want) return;
  p.add(fmt::format("{}: {}", call, name), fmt::format("stored as {}", to_string(got)), std::string(to_string(want)),
        want == DType::BF16 ? "the CUDA kernels read bf16 tiles: plan with --dtype bf16" : "");
}

// The CPU kernels' argument checks, with the GPU's tile size, head_dim limits and bf16 inputs.
void check_pair_for_gpu(Problems& p, std::string_view call, const PairOperands& in, const AttentionMask& mask) {
  check_pair(p, call, shapes_of(in), mask, KernelOptions{gpu::kTileRows, gpu::kTileRows, 1});
  if (in.q.shape.head_dim != 64 && in.q.shape.head_dim != 128) {
    p.add(fmt::format("{}: q", call), fmt::format("head_dim {}", in.q.shape.head_dim), "64 or 128",
          "the CUDA kernels are compiled for these two; use the CPU kernels (--device cpu) for others");
  }
  check_dtype(p, call, "q", in.q.dtype, DType::BF16);
  check_dtype(p, call, "k", in.k.dtype, DType::BF16);
  check_dtype(p, call, "v", in.v.dtype, DType::BF16);
}

void check_output(Problems& p, std::string_view call, std::string_view name, const void* data) {
  if (data == nullptr) p.add(fmt::format("{}: {}", call, name), "no data", "a device pointer", "");
}

const Bf16* bf16_of(const Operand& x) { return reinterpret_cast<const Bf16*>(x.data); }  // NOLINT: bf16 storage

KernelStats stats_of(const TileList& list, const Shape& q, double flops_per_score_and_dim) {
  KernelStats s;
  s.tiles_computed = q.heads * list.tiles_computed;
  s.tiles_skipped = q.heads * list.tiles_skipped;
  s.flops = flops_per_score_and_dim * static_cast<double>(q.head_dim) * list.scores * static_cast<double>(q.heads);
  s.allowed_pairs = list.allowed_pairs * static_cast<double>(q.heads);
  return s;
}

}  // namespace

struct CudaAttentionKernels::State {
  Options options;
  cudaStream_t stream = nullptr;
  DeviceBuffer q_positions{"q_positions"}, k_positions{"k_positions"}, sparse{"block-sparse table"};
  DeviceBuffer by_query_offsets{"tile list offsets by query"}, by_query{"tile list by query"};
  DeviceBuffer by_key_offsets{"tile list offsets by key"}, by_key{"tile list by key"};
  cudaEvent_t launched = nullptr, finished = nullptr;  // around a pair's kernels: KernelStats::device_s
  std::unique_ptr<gpu::DeviceKernelMemory> memory;

  void select_device() const {
    check_cuda(cudaSetDevice(options.device), fmt::format("cudaSetDevice({})", options.device));
  }

  // `host` must stay untouched until the stream is synchronised.
  template <typename T>
  T* upload(DeviceBuffer& buffer, std::span<const T> host, std::string_view what) {
    T* device = buffer.reserve_for<T>(host.size());
    if (!host.empty()) {
      check_cuda(cudaMemcpyAsync(device, host.data(), host.size_bytes(), cudaMemcpyHostToDevice, stream),
                 fmt::format("cudaMemcpyAsync({} to the device, {} bytes)", what, host.size_bytes()));
    }
    return device;
  }

  void synchronize(std::string_view after) const {
    check_cuda(cudaStreamSynchronize(stream), fmt::format("cudaStreamSynchronize (after {})", after));
  }

  // Runs `launch` (kernel launches on the stream) between the two events; its device time in
  // seconds is read once the stream has been synchronised (device_seconds).
  template <typename Launch>
  void timed_launch(Launch&& launch) {
    check_cuda(cudaEventRecord(launched, stream), "cudaEventRecord(before the kernels)");
    launch();
    check_cuda(cudaEventRecord(finished, stream), "cudaEventRecord(after the kernels)");
  }
  [[nodiscard]] double device_seconds() const {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, launched, finished), "cudaEventElapsedTime");
    return static_cast<double>(ms) * 1e-3;
  }

  // The pair's operands in place, its positions, mask table and tile list uploaded.
  gpu::PairInputs pair_inputs(const PairOperands& in, const AttentionMask& mask, const TileList& list) {
    gpu::PairInputs p;
    p.shape = {in.q.shape.tokens, in.k.shape.tokens, in.q.shape.heads, in.k.shape.heads, in.q.shape.head_dim};
    p.q = bf16_of(in.q);
    p.k = bf16_of(in.k);
    p.v = bf16_of(in.v);
    p.q_positions = upload<std::int64_t>(q_positions, in.q_positions, "q_positions");
    p.k_positions = upload<std::int64_t>(k_positions, in.k_positions, "k_positions");
    p.mask = view_of(mask);
    if (mask.sparse) p.mask.sparse = upload<std::uint8_t>(sparse, mask.sparse->allowed, "block-sparse table");
    p.tiles.q_tiles = list.q_tiles;
    p.tiles.k_tiles = list.k_tiles;
    p.tiles.by_query_offsets = upload<std::int32_t>(by_query_offsets, list.by_query_offsets, "tile list");
    p.tiles.by_query = upload<hd::TileRef>(by_query, list.by_query, "tile list");
    p.tiles.by_key_offsets = upload<std::int32_t>(by_key_offsets, list.by_key_offsets, "tile list");
    p.tiles.by_key = upload<hd::TileRef>(by_key, list.by_key, "tile list");
    return p;
  }
};

CudaAttentionKernels::CudaAttentionKernels(Options options) : state_(std::make_unique<State>()) {
  state_->options = options;
  const gpu::CudaDeviceCount visible = gpu::cuda_device_count();
  if (visible.count == 0) {
    throw Error(Problem{"cuda", fmt::format("no CUDA device visible ({})", visible.reason), "", ""});
  }
  if (options.device < 0 || options.device >= visible.count) {
    throw Error(Problem{"cuda", fmt::format("device {} asked for, {} visible", options.device, visible.count),
                        fmt::format("0 .. {}", visible.count - 1), "check CUDA_VISIBLE_DEVICES"});
  }
  state_->select_device();
  check_cuda(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check_cuda(cudaEventCreate(&state_->launched), "cudaEventCreate");
  check_cuda(cudaEventCreate(&state_->finished), "cudaEventCreate");
  state_->memory = std::make_unique<gpu::DeviceKernelMemory>(options.device, state_->stream);
}

CudaAttentionKernels::~CudaAttentionKernels() {  // no throwing here
  if (!state_) return;
  for (cudaEvent_t event : {state_->launched, state_->finished}) {
    if (event != nullptr) (void)cudaEventDestroy(event);
  }
  if (state_->stream != nullptr) (void)cudaStreamDestroy(state_->stream);
}

KernelMemory& CudaAttentionKernels::memory() { return *state_->memory; }

KernelStats CudaAttentionKernels::forward(const PairOperands& in, const AttentionMask& mask, float* o, float* lse) {
  constexpr std::string_view kCall = "CudaAttentionKernels::forward";
  Problems problems;
  check_pair_for_gpu(problems, kCall, in, mask);
  check_output(problems, kCall, "o", o);
  check_output(problems, kCall, "lse", lse);
  problems.throw_if_any();

  State& s = *state_;
  s.select_device();
  const TileList list = build_tile_list(in.q_positions, in.k_positions, mask, gpu::kTileRows, gpu::kTileRows);
  const gpu::PairInputs pair = s.pair_inputs(in, mask, list);
  s.timed_launch([&] { gpu::flash_forward(pair, o, lse, s.stream); });
  s.synchronize("flash_forward");
  KernelStats stats = stats_of(list, in.q.shape, 4.0);
  stats.device_s = s.device_seconds();
  return stats;
}

void CudaAttentionKernels::merge(Shape shape, float* o, float* lse, const float* o_i, const float* lse_i) {
  constexpr std::string_view kCall = "CudaAttentionKernels::merge";
  Problems problems;
  for (const auto& [name, p] : {std::pair<const char*, const void*>{"o", o}, {"lse", lse}, {"o_i", o_i}, {"lse_i", lse_i}}) {
    check_output(problems, kCall, name, p);
  }
  problems.throw_if_any();
  State& s = *state_;
  s.select_device();
  gpu::merge_partials(o, lse, o_i, lse_i, shape.tokens * shape.heads, shape.head_dim, s.stream);
  s.synchronize("merge_partials");
}

void CudaAttentionKernels::delta(Operand o, Operand d_o, float* delta) {
  constexpr std::string_view kCall = "CudaAttentionKernels::delta";
  Problems problems;
  check_shape(problems, kCall, "d_o", d_o.shape, o.shape, "o");
  check_dtype(problems, kCall, "o", o.dtype, DType::F32);
  check_dtype(problems, kCall, "d_o", d_o.dtype, DType::F32);
  check_output(problems, kCall, "delta", delta);
  problems.throw_if_any();
  State& s = *state_;
  s.select_device();
  gpu::attention_delta(reinterpret_cast<const float*>(o.data), reinterpret_cast<const float*>(d_o.data), delta,  // NOLINT
                       o.shape.tokens * o.shape.heads, o.shape.head_dim, s.stream);
  s.synchronize("attention_delta");
}

KernelStats CudaAttentionKernels::backward(const PairOperands& in, const AttentionMask& mask, Operand d_o,
                                           const float* delta, const float* lse, float* d_q, float* d_k, float* d_v) {
  constexpr std::string_view kCall = "CudaAttentionKernels::backward";
  Problems problems;
  check_pair_for_gpu(problems, kCall, in, mask);
  check_shape(problems, kCall, "d_o", d_o.shape, in.q.shape, "q");
  check_dtype(problems, kCall, "d_o", d_o.dtype, DType::BF16);
  for (const auto& [name, p] : {std::pair<const char*, const void*>{"delta", delta}, {"lse", lse}, {"d_q", d_q},
                                {"d_k", d_k}, {"d_v", d_v}}) {
    check_output(problems, kCall, name, p);
  }
  problems.throw_if_any();

  State& s = *state_;
  s.select_device();
  const TileList list = build_tile_list(in.q_positions, in.k_positions, mask, gpu::kTileRows, gpu::kTileRows);
  const gpu::PairInputs pair = s.pair_inputs(in, mask, list);
  const gpu::BackwardInputs grad_in{bf16_of(d_o), lse, delta};
  const gpu::Gradients out{d_q, d_k, d_v};
  s.timed_launch([&] { gpu::flash_backward(pair, grad_in, out, s.options.deterministic, s.stream); });
  s.synchronize("flash_backward");
  KernelStats stats = stats_of(list, in.q.shape, 10.0);
  stats.device_s = s.device_seconds();
  return stats;
}

}  // namespace burst::rt
