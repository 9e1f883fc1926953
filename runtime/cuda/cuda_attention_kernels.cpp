// CudaAttentionKernels (see cuda_attention_kernels.hpp).
//
// Host buffers handed to cudaMemcpyAsync are ordinary (pageable) memory, for which CUDA only
// says the call "might be synchronous" with respect to the host (CUDA Runtime API, "API
// synchronization behavior"): a source is safe to change or free only after the stream has been
// synchronized. So every host array a call uploads stays untouched until the call's final
// cudaStreamSynchronize: each bf16 tensor has its own conversion buffer, the tile list lives
// until the call returns, and downloads are read only after a synchronize.
#include "runtime/cuda/cuda_attention_kernels.hpp"

#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/bf16.hpp"
#include "common/error.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/flash_attention.hpp"
#include "runtime/cuda/kernel_shapes.hpp"
#include "runtime/cuda/tile_list.hpp"
#include "runtime/kernels/checks.hpp"

namespace burst::rt {
namespace {

using gpu::check_cuda;
using gpu::DeviceBuffer;

// The CPU kernels' argument checks, with the GPU's tile size and head_dim limits.
void check_pair_for_gpu(Problems& p, std::string_view call, const BlockPair& in, const AttentionMask& mask) {
  check_pair(p, call, in, mask, KernelOptions{gpu::kTileRows, gpu::kTileRows, 1});
  if (in.q.shape.head_dim != 64 && in.q.shape.head_dim != 128) {
    p.add(fmt::format("{}: q", call), fmt::format("head_dim {}", in.q.shape.head_dim), "64 or 128",
          "the CUDA kernels are compiled for these two; use the CPU kernels (--device cpu) for others");
  }
}

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
  DeviceBuffer q{"q"}, k{"k"}, v{"v"}, d_o{"d_o"};
  DeviceBuffer q_positions{"q_positions"}, k_positions{"k_positions"}, sparse{"block-sparse table"};
  DeviceBuffer by_query_offsets{"tile list offsets by query"}, by_query{"tile list by query"};
  DeviceBuffer by_key_offsets{"tile list offsets by key"}, by_key{"tile list by key"};
  DeviceBuffer o{"o"}, lse{"lse"}, o_i{"o_i"}, lse_i{"lse_i"}, delta{"delta"};
  DeviceBuffer d_q{"d_q"}, d_k{"d_k"}, d_v{"d_v"};
  // The bf16 copies of Q, K, V, dO (one each: see the head comment) and downloaded gradients.
  std::vector<Bf16> q_bf16, k_bf16, v_bf16, d_o_bf16;
  std::vector<float> fp32_staging;
  cudaEvent_t launched = nullptr, finished = nullptr;  // around a pair's kernels: KernelStats::device_s

  void select_device() const {
    check_cuda(cudaSetDevice(options.device), fmt::format("cudaSetDevice({})", options.device));
  }

  template <typename T>
  T* upload(DeviceBuffer& buffer, std::span<const T> host, std::string_view what) {
    T* device = buffer.reserve_for<T>(host.size());
    if (!host.empty()) {
      check_cuda(cudaMemcpyAsync(device, host.data(), host.size_bytes(), cudaMemcpyHostToDevice, stream),
                 fmt::format("cudaMemcpyAsync({} to the device, {} bytes)", what, host.size_bytes()));
    }
    return device;
  }

  // `staging` must not be touched again before the stream is synchronized.
  const Bf16* upload_bf16(DeviceBuffer& buffer, std::vector<Bf16>& staging, ConstView view, std::string_view what) {
    const auto n = static_cast<std::size_t>(view.shape.elements());
    staging.resize(n);
    for (std::size_t i = 0; i < n; ++i) staging[i] = to_bf16(view.data[i]);
    return upload<Bf16>(buffer, staging, what);
  }

  float* upload_fp32(DeviceBuffer& buffer, std::span<const float> host, std::string_view what) {
    return upload<float>(buffer, host, what);
  }

  void download(std::span<float> host, const float* device, std::string_view what) const {
    if (host.empty()) return;
    check_cuda(cudaMemcpyAsync(host.data(), device, host.size_bytes(), cudaMemcpyDeviceToHost, stream),
               fmt::format("cudaMemcpyAsync({} to the host, {} bytes)", what, host.size_bytes()));
  }

  // Adds a device fp32 array into a host view.
  void download_and_add(View host, const float* device, std::string_view what) {
    fp32_staging.resize(static_cast<std::size_t>(host.shape.elements()));
    download(fp32_staging, device, what);
    synchronize(what);
    for (std::size_t i = 0; i < fp32_staging.size(); ++i) host.data[i] += fp32_staging[i];
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

  float* zeroed(DeviceBuffer& buffer, const Shape& shape, std::string_view what) {
    const auto bytes = static_cast<std::size_t>(shape.elements()) * sizeof(float);
    float* device = buffer.reserve_for<float>(static_cast<std::size_t>(shape.elements()));
    if (bytes > 0) check_cuda(cudaMemsetAsync(device, 0, bytes, stream), fmt::format("cudaMemsetAsync({})", what));
    return device;
  }

  // Q, K, V, positions, mask table and tile list of a pair on the device.
  gpu::PairInputs upload_pair(const BlockPair& in, const AttentionMask& mask, const TileList& list) {
    gpu::PairInputs p;
    p.shape = {in.q.shape.tokens, in.k.shape.tokens, in.q.shape.heads, in.k.shape.heads, in.q.shape.head_dim};
    p.q = upload_bf16(q, q_bf16, in.q, "q");
    p.k = upload_bf16(k, k_bf16, in.k, "k");
    p.v = upload_bf16(v, v_bf16, in.v, "v");
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
}

CudaAttentionKernels::~CudaAttentionKernels() {  // no throwing here
  if (!state_) return;
  for (cudaEvent_t event : {state_->launched, state_->finished}) {
    if (event != nullptr) (void)cudaEventDestroy(event);
  }
  if (state_->stream != nullptr) (void)cudaStreamDestroy(state_->stream);
}

KernelStats CudaAttentionKernels::forward(const BlockPair& in, const AttentionMask& mask, View o,
                                          std::span<float> lse) {
  constexpr std::string_view kCall = "CudaAttentionKernels::forward";
  Problems problems;
  check_pair_for_gpu(problems, kCall, in, mask);
  check_forward_outputs(problems, kCall, in, o.shape, lse.size());
  problems.throw_if_any();

  State& s = *state_;
  s.select_device();
  const TileList list = build_tile_list(in.q_positions, in.k_positions, mask, gpu::kTileRows, gpu::kTileRows);
  const gpu::PairInputs pair = s.upload_pair(in, mask, list);
  float* o_device = s.o.reserve_for<float>(static_cast<std::size_t>(o.shape.elements()));
  float* lse_device = s.lse.reserve_for<float>(lse.size());
  s.timed_launch([&] { gpu::flash_forward(pair, o_device, lse_device, s.stream); });
  s.download(std::span<float>(o.data, static_cast<std::size_t>(o.shape.elements())), o_device, "o");
  s.download(lse, lse_device, "lse");
  s.synchronize("flash_forward");
  KernelStats stats = stats_of(list, in.q.shape, 4.0);
  stats.device_s = s.device_seconds();
  return stats;
}

void CudaAttentionKernels::merge(View o, std::span<float> lse, ConstView o_i, std::span<const float> lse_i) {
  constexpr std::string_view kCall = "CudaAttentionKernels::merge";
  Problems problems;
  check_shape(problems, kCall, "o_i", o_i.shape, o.shape, "o");
  check_row_scalars(problems, kCall, "lse", lse.size(), o.shape);
  check_row_scalars(problems, kCall, "lse_i", lse_i.size(), o.shape);
  problems.throw_if_any();

  State& s = *state_;
  s.select_device();
  const auto elements = static_cast<std::size_t>(o.shape.elements());
  const std::span<float> o_values(o.data, elements);
  float* o_device = s.upload_fp32(s.o, o_values, "o");
  float* lse_device = s.upload_fp32(s.lse, lse, "lse");
  const float* o_i_device = s.upload_fp32(s.o_i, std::span<const float>(o_i.data, elements), "o_i");
  const float* lse_i_device = s.upload_fp32(s.lse_i, lse_i, "lse_i");
  gpu::merge_partials(o_device, lse_device, o_i_device, lse_i_device, o.shape.tokens * o.shape.heads,
                      o.shape.head_dim, s.stream);
  s.download(o_values, o_device, "o");
  s.download(lse, lse_device, "lse");
  s.synchronize("merge_partials");
}

void CudaAttentionKernels::delta(ConstView o, ConstView d_o, std::span<float> delta) {
  constexpr std::string_view kCall = "CudaAttentionKernels::delta";
  Problems problems;
  check_shape(problems, kCall, "d_o", d_o.shape, o.shape, "o");
  check_row_scalars(problems, kCall, "delta", delta.size(), o.shape);
  problems.throw_if_any();

  State& s = *state_;
  s.select_device();
  const auto elements = static_cast<std::size_t>(o.shape.elements());
  const float* o_device = s.upload_fp32(s.o, std::span<const float>(o.data, elements), "o");
  const float* d_o_device = s.upload_fp32(s.o_i, std::span<const float>(d_o.data, elements), "d_o");
  float* delta_device = s.delta.reserve_for<float>(delta.size());
  gpu::attention_delta(o_device, d_o_device, delta_device, o.shape.tokens * o.shape.heads, o.shape.head_dim,
                       s.stream);
  s.download(delta, delta_device, "delta");
  s.synchronize("attention_delta");
}

KernelStats CudaAttentionKernels::backward(const BlockPair& in, const AttentionMask& mask, ConstView d_o,
                                           std::span<const float> delta, std::span<const float> lse, View d_q,
                                           View d_k, View d_v) {
  constexpr std::string_view kCall = "CudaAttentionKernels::backward";
  Problems problems;
  check_pair_for_gpu(problems, kCall, in, mask);
  check_backward_arguments(problems, kCall, in, d_o.shape, delta.size(), lse.size(), d_q.shape, d_k.shape, d_v.shape);
  problems.throw_if_any();

  State& s = *state_;
  s.select_device();
  const TileList list = build_tile_list(in.q_positions, in.k_positions, mask, gpu::kTileRows, gpu::kTileRows);
  const gpu::PairInputs pair = s.upload_pair(in, mask, list);
  const gpu::BackwardInputs grad_in{s.upload_bf16(s.d_o, s.d_o_bf16, d_o, "d_o"), s.upload_fp32(s.lse, lse, "lse"),
                                    s.upload_fp32(s.delta, delta, "delta")};
  const gpu::Gradients out{s.zeroed(s.d_q, d_q.shape, "d_q"), s.zeroed(s.d_k, d_k.shape, "d_k"),
                           s.zeroed(s.d_v, d_v.shape, "d_v")};
  s.timed_launch([&] { gpu::flash_backward(pair, grad_in, out, s.options.deterministic, s.stream); });
  s.download_and_add(d_q, out.d_q, "d_q");  // synchronises
  s.download_and_add(d_k, out.d_k, "d_k");
  s.download_and_add(d_v, out.d_v, "d_v");
  KernelStats stats = stats_of(list, in.q.shape, 10.0);
  stats.device_s = s.device_seconds();
  return stats;
}

}  // namespace burst::rt
