// bench_flash (see flash_bench.hpp).
#include "runtime/cuda/flash_bench.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/bf16.hpp"
#include "common/error.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/detail/cuda_stream.hpp"
#include "runtime/cuda/detail/device_buffer.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/detail/event_timer.hpp"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"
#include "runtime/cuda/detail/tile_list.hpp"
#include "runtime/kernels/attention.hpp"

namespace burst::rt::gpu {
namespace {

// A device array holding `host`, in `buffer` (owned by the caller, freed with it). Waits for
// the copy: `host` is often a temporary, and a pageable source may be read until the stream
// is synchronized (CUDA only says such a cudaMemcpyAsync "might be synchronous").
template <typename T>
T* to_device(DeviceBuffer& buffer, const std::vector<T>& host, cudaStream_t stream) {
  T* device = buffer.reserve_for<T>(host.size());
  check_cuda(cudaMemcpyAsync(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync (bench inputs)");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (bench inputs)");
  return device;
}

std::vector<Bf16> random_bf16(std::int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Bf16> out(static_cast<std::size_t>(n));
  for (Bf16& x : out) x = to_bf16(u(rng));
  return out;
}

std::vector<float> to_host(const float* device, std::int64_t n, cudaStream_t stream) {
  std::vector<float> host(static_cast<std::size_t>(n));
  check_cuda(cudaMemcpyAsync(host.data(), device, host.size() * sizeof(float), cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync (bench outputs)");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (bench outputs)");
  return host;
}

// Largest |a - b|; equal infinities (lse = -inf of an empty row) differ by 0, a NaN (on either
// side) by +inf.
double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    const double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
  }
  return worst;
}

}  // namespace

FlashBenchResult bench_flash(const FlashBenchCase& c) {
  const CudaDeviceCount visible = cuda_device_count();
  if (visible.count == 0)
    throw Error(Problem{"--device cuda", fmt::format("no GPU visible ({})", visible.reason), "", ""});
  check_cuda(cudaSetDevice(c.device), fmt::format("cudaSetDevice({})", c.device));
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, c.device), "cudaGetDeviceProperties");
  const OwnedStream owned;  // destroyed however the bench ends
  const cudaStream_t stream = owned.handle();

  const std::int64_t n = c.tokens;
  const std::vector<std::int64_t> positions = contiguous_positions(n);
  const KernelTileLists lists = build_kernel_tile_lists(positions, positions, c.mask);
  std::mt19937 rng(3);
  DeviceBuffer q{"q"}, k{"k"}, v{"v"}, d_o{"d_o"}, pos{"positions"}, sparse{"block-sparse table"};
  DeviceBuffer by_query_offsets{"tiles"}, by_query{"tiles"}, by_key_offsets{"tiles"}, by_key{"tiles"},
      by_wide_key_offsets{"tiles"}, by_wide_key{"tiles"};
  DeviceBuffer o{"o"}, o_fp32_do{"d_o fp32"}, lse{"lse"}, delta{"delta"}, d_q{"d_q"}, d_k{"d_k"}, d_v{"d_v"};
  const std::int64_t q_elements = n * c.heads * c.head_dim, kv_elements = n * c.kv_heads * c.head_dim;

  PairInputs in;
  in.shape = {n, n, c.heads, c.kv_heads, c.head_dim};
  in.q = to_device(q, random_bf16(q_elements, rng), stream);
  in.k = to_device(k, random_bf16(kv_elements, rng), stream);
  in.v = to_device(v, random_bf16(kv_elements, rng), stream);
  in.q_positions = in.k_positions = to_device(pos, positions, stream);
  in.mask = view_of(c.mask);
  if (c.mask.sparse) in.mask.sparse = to_device(sparse, c.mask.sparse->allowed, stream);
  in.tiles = {{lists.by_query.q_tiles, to_device(by_query_offsets, lists.by_query.by_query_offsets, stream),
               to_device(by_query, lists.by_query.by_query, stream)},
              {lists.by_key.k_tiles, to_device(by_key_offsets, lists.by_key.by_key_offsets, stream),
               to_device(by_key, lists.by_key.by_key, stream)},
              {lists.by_wide_key.k_tiles, to_device(by_wide_key_offsets, lists.by_wide_key.by_key_offsets, stream),
               to_device(by_wide_key, lists.by_wide_key.by_key, stream)}};
  const Bf16* d_o_bf16 = to_device(d_o, random_bf16(q_elements, rng), stream);
  // D = rowsum(O * dO) reads dO in fp32, as the executor holds it.
  std::vector<float> d_o_host(static_cast<std::size_t>(q_elements));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& x : d_o_host) x = round_to_bf16(u(rng));
  const float* d_o_fp32 = to_device(o_fp32_do, d_o_host, stream);
  float* o_out = o.reserve_for<float>(static_cast<std::size_t>(q_elements));
  float* lse_out = lse.reserve_for<float>(static_cast<std::size_t>(n * c.heads));
  float* delta_out = delta.reserve_for<float>(static_cast<std::size_t>(n * c.heads));
  const Gradients grads{d_q.reserve_for<float>(static_cast<std::size_t>(q_elements)),
                        d_k.reserve_for<float>(static_cast<std::size_t>(kv_elements)),
                        d_v.reserve_for<float>(static_cast<std::size_t>(kv_elements))};

  FlashBenchResult r;
  r.device_name = prop.name;
  r.forward_path = flash_forward(in, o_out, lse_out, stream, c.path);
  r.forward_s = best_event_time(c.repeat, stream, [&] { flash_forward(in, o_out, lse_out, stream, c.path); });
  if (r.forward_path != KernelPath::MmaSync) {
    // Each compared run writes into outputs set to NaN first (bytes 0xFF): a row either run
    // leaves unwritten shows as an infinite difference, not as the other run's values.
    const auto poison = [&] {
      check_cuda(cudaMemsetAsync(o_out, 0xFF, static_cast<std::size_t>(q_elements) * sizeof(float), stream),
                 "cudaMemsetAsync (bench o)");
      check_cuda(cudaMemsetAsync(lse_out, 0xFF, static_cast<std::size_t>(n * c.heads) * sizeof(float), stream),
                 "cudaMemsetAsync (bench lse)");
    };
    poison();
    (void)flash_forward(in, o_out, lse_out, stream, c.path);
    const std::vector<float> o_path = to_host(o_out, q_elements, stream),
                             lse_path = to_host(lse_out, n * c.heads, stream);
    poison();
    (void)flash_forward(in, o_out, lse_out, stream, KernelPathChoice::MmaSync);
    r.o_max_diff = max_abs_diff(o_path, to_host(o_out, q_elements, stream));
    r.lse_max_diff = max_abs_diff(lse_path, to_host(lse_out, n * c.heads, stream));
    (void)flash_forward(in, o_out, lse_out, stream, c.path);  // the backward reads this path's lse
  }
  const BackwardInputs grad_in{d_o_bf16, lse_out, delta_out};
  attention_delta(o_out, d_o_fp32, delta_out, n * c.heads, c.head_dim, stream);
  r.backward_path = flash_backward(in, grad_in, grads, c.deterministic, stream, c.path);
  if (r.backward_path != KernelPath::MmaSync) {
    // The backward adds into its gradients: each compared run starts from zeros, so a row one
    // run leaves unwritten shows as the other's value.
    const auto run = [&](KernelPathChoice path) {
      for (float* g : {grads.d_q, grads.d_k, grads.d_v}) {
        const std::int64_t elements = g == grads.d_q ? q_elements : kv_elements;
        check_cuda(cudaMemsetAsync(g, 0, static_cast<std::size_t>(elements) * sizeof(float), stream),
                   "cudaMemsetAsync (bench gradients)");
      }
      (void)flash_backward(in, grad_in, grads, c.deterministic, stream, path);
      return std::array<std::vector<float>, 3>{to_host(grads.d_q, q_elements, stream),
                                               to_host(grads.d_k, kv_elements, stream),
                                               to_host(grads.d_v, kv_elements, stream)};
    };
    const auto path = run(c.path), reference = run(KernelPathChoice::MmaSync);
    r.d_q_max_diff = max_abs_diff(path[0], reference[0]);
    r.d_k_max_diff = max_abs_diff(path[1], reference[1]);
    r.d_v_max_diff = max_abs_diff(path[2], reference[2]);
  }
  r.backward_s = best_event_time(c.repeat, stream, [&] {
    attention_delta(o_out, d_o_fp32, delta_out, n * c.heads, c.head_dim, stream);
    (void)flash_backward(in, grad_in, grads, c.deterministic, stream, c.path);
  });
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (bench)");
  const auto heads = static_cast<double>(c.heads);
  r.forward_flops = 4.0 * c.head_dim * lists.by_query.scores * heads;
  r.backward_flops = 10.0 * c.head_dim * lists.by_key.scores * heads;
  r.forward_pair_flops = 4.0 * c.head_dim * lists.by_query.allowed_pairs * heads;
  r.backward_pair_flops = 10.0 * c.head_dim * lists.by_key.allowed_pairs * heads;
  r.tiles_computed = lists.by_key.tiles_computed;
  r.tiles_skipped = lists.by_key.tiles_skipped;
  return r;
}

}  // namespace burst::rt::gpu
