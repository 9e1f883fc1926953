// The CUDA kernels, through CudaAttentionKernels, against the CPU kernels (CpuAttentionKernels,
// fp32) on the same bf16 inputs, each stored in its backend's memory (host_tensor_kernels.hpp):
// forward O and lse, backward dQ, dK, dV, merge and delta, for every mask kind (full, causal, sliding, document,
// block-sparse), grouped-query ratios 1:1, 4:1 and 8:1, head_dim 64 and 128, blocks whose lengths are not multiples of
// the 64-row tiles, ring-layout position sets (zigzag, striped) and rows with no allowed key.
//
// Tolerance per tensor: max |gpu - cpu| <= k 2^-8 max |cpu| (2^-8: bf16's relative precision;
// the GPU rounds P and dS to bf16 for the tensor cores, the CPU keeps them in fp32), with k
// fixed per tensor below. Rows with lse = -inf must agree exactly (and have O = 0), nothing
// may be NaN or infinite otherwise, and the deterministic backward must repeat bit for bit.
// Every case runs on every kernel path the GPU supports (runtime/cuda/kernel_path.hpp: mma.sync
// everywhere, wgmma on a Hopper GPU too), each asked for by name, forward and backward.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "common/bf16.hpp"
#include "runtime/cuda/cuda_attention_kernels.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/kernel_path.hpp"
#include "runtime/kernels/attention_kernels.hpp"
#include "tests/runtime/naive_attention.hpp"
#include "tests/support/host_tensor_kernels.hpp"

using namespace burst;

namespace {

constexpr double kBf16Eps = 1.0 / 256;
// k of the tolerance, per tensor.
constexpr double kO = 4, kLse = 1, kDv = 4, kDk = 8, kDq = 8, kMerge = 1, kDelta = 1;

rt::Tensor bf16_tensor(rt::Shape shape, std::mt19937& rng) {
  rt::Tensor t(shape);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& x : t.values()) x = round_to_bf16(normal(rng));
  return t;
}

struct Comparison {
  double max_error = 0;
  double max_reference = 0;
  std::size_t non_finite = 0;    // NaN or +-inf in got where want is finite
  std::size_t inf_mismatch = 0;  // want is -inf (an empty row's lse) and got is not, or the reverse
};

Comparison compare(std::span<const float> got, std::span<const float> want) {
  Comparison c;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const bool want_empty = std::isinf(want[i]) && want[i] < 0;
    const bool got_empty = std::isinf(got[i]) && got[i] < 0;
    if (want_empty || got_empty) {
      c.inf_mismatch += want_empty != got_empty ? 1 : 0;
      continue;
    }
    if (!std::isfinite(got[i])) {
      ++c.non_finite;
      continue;
    }
    c.max_error = std::max(c.max_error, std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])));
    c.max_reference = std::max(c.max_reference, std::abs(static_cast<double>(want[i])));
  }
  return c;
}

#define CHECK_WITHIN(got, want, k)                                                                           \
  do {                                                                                                       \
    const Comparison c_ = compare(got, want);                                                                \
    INFO(#got << ": max error " << c_.max_error << ", max |cpu| " << c_.max_reference << ", bound "          \
              << (k)*kBf16Eps * c_.max_reference << ", non-finite " << c_.non_finite << ", -inf mismatches " \
              << c_.inf_mismatch);                                                                           \
    CHECK(c_.non_finite == 0);                                                                               \
    CHECK(c_.inf_mismatch == 0);                                                                             \
    CHECK(c_.max_error <= (k)*kBf16Eps * c_.max_reference);                                                  \
  } while (false)

bool band(std::int64_t qb, std::int64_t kb) { return qb == kb || kb == 0 || (qb - kb) % 3 == 0; }

struct MaskCase {
  const char* name;
  rt::AttentionMask mask;
};

std::vector<MaskCase> mask_cases() {
  return {
      {"full", {Mask{MaskKind::Full}, {}}},
      {"causal", {Mask{MaskKind::Causal}, {}}},
      {"sliding:37", {Mask{MaskKind::SlidingWindow, 37}, {}}},
      {"document:50", {Mask{MaskKind::Document, 0, 50}, {}}},
      {"causal + block-sparse band", {Mask{MaskKind::Causal}, rt::BlockSparse::from(16, 64, band)}},
  };
}

struct PositionCase {
  const char* name;
  std::vector<std::int64_t> q, k;
};

std::vector<std::int64_t> run(std::int64_t first, std::int64_t count) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) p[static_cast<std::size_t>(i)] = first + i;
  return p;
}

std::vector<PositionCase> position_cases() {
  return {
      {"contiguous 150 x 150", run(0, 150), run(0, 150)},
      {"zigzag rank 1 x rank 0 (120 x 120)", test::zigzag_positions(360, 3, 1), test::zigzag_positions(360, 3, 0)},
      {"striped rank 0 x rank 1 (151 x 150)", test::striped_positions(301, 2, 0), test::striped_positions(301, 2, 1)},
      {"keys after the queries (100 x 130)", run(0, 100), run(100, 130)},
  };
}

struct Pair {
  rt::Tensor q, k, v, d_o;
  std::vector<std::int64_t> q_positions, k_positions;
  [[nodiscard]] rt::BlockPair block_pair() const { return {q.view(), k.view(), v.view(), q_positions, k_positions}; }
};

Pair make_block_pair(const PositionCase& pc, std::int64_t heads, std::int64_t kv_heads, std::int64_t d, unsigned seed) {
  std::mt19937 rng(seed);
  const auto nq = static_cast<std::int64_t>(pc.q.size()), nk = static_cast<std::int64_t>(pc.k.size());
  return {bf16_tensor({nq, heads, d}, rng),
          bf16_tensor({nk, kv_heads, d}, rng),
          bf16_tensor({nk, kv_heads, d}, rng),
          bf16_tensor({nq, heads, d}, rng),
          pc.q,
          pc.k};
}

struct Forward {
  rt::Tensor o;
  std::vector<float> lse;
  rt::KernelStats stats;
};

Forward run_forward(test::HostTensorKernels& kernels, const Pair& p, const rt::AttentionMask& mask) {
  const auto rows = static_cast<std::size_t>(p.q.shape().tokens * p.q.shape().heads);
  Forward f{rt::Tensor(p.q.shape()), std::vector<float>(rows), {}};
  f.stats = kernels.forward(p.block_pair(), mask, f.o.view(), f.lse);
  return f;
}

struct Backward {
  rt::Tensor d_q, d_k, d_v;
  rt::KernelStats stats;
};

// Backward from zero gradients, with the CPU's final lse and D (what the executor passes).
Backward run_backward(test::HostTensorKernels& kernels, const Pair& p, const rt::AttentionMask& mask,
                      const Forward& reference) {
  rt::CpuAttentionKernels cpu_backend;
  test::HostTensorKernels cpu(cpu_backend, rt::DType::BF16);
  std::vector<float> delta(reference.lse.size());
  cpu.delta(reference.o.view(), p.d_o.view(), delta);
  Backward b{rt::Tensor(p.q.shape()), rt::Tensor(p.k.shape()), rt::Tensor(p.k.shape()), {}};
  b.stats = kernels.backward(p.block_pair(), mask, p.d_o.view(), delta, reference.lse, b.d_q.view(), b.d_k.view(),
                             b.d_v.view());
  return b;
}

// Every path this GPU runs, each by name.
std::vector<rt::gpu::KernelPathChoice> device_paths() {
  std::vector<rt::gpu::KernelPathChoice> choices;
  for (const rt::gpu::KernelPath path : rt::gpu::supported_paths(rt::gpu::current_device_arch())) {
    choices.push_back(rt::gpu::choice_of(path));
  }
  return choices;
}

rt::CudaKernelOptions on_path(rt::gpu::KernelPathChoice path) {
  rt::CudaKernelOptions options;
  options.path = path;
  return options;
}

}  // namespace

TEST_CASE("the GPU forward and backward match the CPU kernels") {
  const auto masks = mask_cases();
  const auto positions = position_cases();
  const auto mask_index = GENERATE(range(std::size_t{0}, std::size_t{5}));
  const auto pos_index = GENERATE(range(std::size_t{0}, std::size_t{4}));
  const std::int64_t kv_heads = GENERATE(8, 2, 1);  // GQA 1:1, 4:1, 8:1 over 8 query heads
  const std::int64_t d = GENERATE(64, 128);
  const rt::gpu::KernelPathChoice path = GENERATE(from_range(device_paths()));
  const MaskCase& mc = masks[mask_index];
  const PositionCase& pc = positions[pos_index];
  INFO("mask " << mc.name << ", positions " << pc.name << ", 8 heads / " << kv_heads << " kv heads, head_dim " << d
               << ", kernel path " << rt::gpu::kernel_path_choice_name(path));

  const Pair p = make_block_pair(pc, 8, kv_heads, d, static_cast<unsigned>(100 * mask_index + 10 * pos_index + d));
  rt::CpuAttentionKernels cpu_backend;
  test::HostTensorKernels cpu(cpu_backend, rt::DType::BF16);
  rt::CudaAttentionKernels gpu_backend(on_path(path));
  test::HostTensorKernels gpu(gpu_backend, rt::DType::BF16);
  const Forward want = run_forward(cpu, p, mc.mask);
  const Forward got = run_forward(gpu, p, mc.mask);
  CHECK_WITHIN(got.o.values(), want.o.values(), kO);
  CHECK_WITHIN(std::span<const float>(got.lse), std::span<const float>(want.lse), kLse);
  CHECK(got.stats.allowed_pairs == want.stats.allowed_pairs);

  const Backward want_grad = run_backward(cpu, p, mc.mask, want);
  const Backward got_grad = run_backward(gpu, p, mc.mask, want);
  CHECK_WITHIN(got_grad.d_v.values(), want_grad.d_v.values(), kDv);
  CHECK_WITHIN(got_grad.d_k.values(), want_grad.d_k.values(), kDk);
  CHECK_WITHIN(got_grad.d_q.values(), want_grad.d_q.values(), kDq);
  CHECK(got_grad.stats.allowed_pairs == want_grad.stats.allowed_pairs);
}

TEST_CASE("rows with no allowed key get lse = -inf exactly, O = 0 and no gradient") {
  // Sliding window of 8: queries 0..9 see keys 0..9, queries 300.. see nothing of keys 0..99.
  std::vector<std::int64_t> q = run(0, 10), k = run(0, 100);
  const std::vector<std::int64_t> late = run(300, 70);
  q.insert(q.end(), late.begin(), late.end());
  const PositionCase pc{"mixed", q, k};
  const rt::AttentionMask mask{Mask{MaskKind::SlidingWindow, 8}, {}};
  const Pair p = make_block_pair(pc, 4, 2, 64, 7);
  const rt::gpu::KernelPathChoice path = GENERATE(from_range(device_paths()));
  INFO("kernel path " << rt::gpu::kernel_path_choice_name(path));
  rt::CudaAttentionKernels gpu_backend(on_path(path));
  test::HostTensorKernels gpu(gpu_backend, rt::DType::BF16);
  const Forward f = run_forward(gpu, p, mask);
  const std::int64_t heads = 4, d = 64;
  for (std::int64_t t = 0; t < 80; ++t) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const float lse = f.lse[static_cast<std::size_t>(t * heads + h)];
      INFO("token " << t << ", head " << h);
      if (t < 10) {
        CHECK(std::isfinite(lse));
        continue;
      }
      CHECK((std::isinf(lse) && lse < 0));
      const float* row = f.o.view().row(t, h);
      CHECK(std::all_of(row, row + d, [](float x) { return x == 0.0f; }));
    }
  }
  const Backward b = run_backward(gpu, p, mask, f);
  for (std::int64_t t = 10; t < 80; ++t) {
    const float* row = b.d_q.view().row(t, 0);
    CHECK(std::all_of(row, row + heads * d, [](float x) { return x == 0.0f; }));
  }
  for (const float x : b.d_k.values()) CHECK(std::isfinite(x));
  for (const float x : b.d_v.values()) CHECK(std::isfinite(x));
}

TEST_CASE("the backward adds into the gradients it is given") {
  const PositionCase pc{"contiguous 70 x 90", run(20, 70), run(0, 90)};
  const rt::AttentionMask mask{Mask{MaskKind::Causal}, {}};
  const Pair p = make_block_pair(pc, 4, 4, 128, 11);
  const rt::gpu::KernelPathChoice path = GENERATE(from_range(device_paths()));
  INFO("kernel path " << rt::gpu::kernel_path_choice_name(path));
  rt::CpuAttentionKernels cpu_backend;
  test::HostTensorKernels cpu(cpu_backend, rt::DType::BF16);
  rt::CudaAttentionKernels gpu_backend(on_path(path));
  test::HostTensorKernels gpu(gpu_backend, rt::DType::BF16);
  const Forward f = run_forward(cpu, p, mask);
  std::vector<float> delta(f.lse.size());
  cpu.delta(f.o.view(), p.d_o.view(), delta);
  std::mt19937 rng(12);
  const rt::Tensor start_q = bf16_tensor(p.q.shape(), rng), start_kv = bf16_tensor(p.k.shape(), rng);
  Backward twice{start_q, start_kv, start_kv, {}};
  for (int i = 0; i < 2; ++i) {
    gpu.backward(p.block_pair(), mask, p.d_o.view(), delta, f.lse, twice.d_q.view(), twice.d_k.view(),
                 twice.d_v.view());
  }
  const Backward once = run_backward(cpu, p, mask, f);
  std::vector<float> want_q(start_q.values().begin(), start_q.values().end());
  std::vector<float> want_k(start_kv.values().begin(), start_kv.values().end()), want_v = want_k;
  for (std::size_t i = 0; i < want_q.size(); ++i) want_q[i] += 2 * once.d_q.values()[i];
  for (std::size_t i = 0; i < want_k.size(); ++i) want_k[i] += 2 * once.d_k.values()[i];
  for (std::size_t i = 0; i < want_v.size(); ++i) want_v[i] += 2 * once.d_v.values()[i];
  CHECK_WITHIN(twice.d_q.values(), std::span<const float>(want_q), kDq);
  CHECK_WITHIN(twice.d_k.values(), std::span<const float>(want_k), kDk);
  CHECK_WITHIN(twice.d_v.values(), std::span<const float>(want_v), kDv);
}

TEST_CASE("the deterministic backward repeats bit for bit and matches the CPU") {
  const auto positions = position_cases();
  const auto pos_index = GENERATE(range(std::size_t{0}, std::size_t{3}));
  const std::int64_t d = GENERATE(64, 128);
  const rt::gpu::KernelPathChoice path = GENERATE(from_range(device_paths()));
  const PositionCase& pc = positions[pos_index];
  INFO("positions " << pc.name << ", head_dim " << d << ", kernel path " << rt::gpu::kernel_path_choice_name(path));
  const rt::AttentionMask mask{Mask{MaskKind::Causal}, {}};
  const Pair p = make_block_pair(pc, 8, 2, d, static_cast<unsigned>(31 + pos_index));
  rt::CpuAttentionKernels cpu_backend;
  test::HostTensorKernels cpu(cpu_backend, rt::DType::BF16);
  rt::CudaKernelOptions options = on_path(path);
  options.deterministic = true;
  rt::CudaAttentionKernels gpu_backend(options);
  test::HostTensorKernels gpu(gpu_backend, rt::DType::BF16);
  const Forward f = run_forward(cpu, p, mask);
  const Backward first = run_backward(gpu, p, mask, f), second = run_backward(gpu, p, mask, f);
  const auto same_bits = [](std::span<const float> a, std::span<const float> b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
  };
  CHECK(same_bits(first.d_q.values(), second.d_q.values()));
  CHECK(same_bits(first.d_k.values(), second.d_k.values()));
  CHECK(same_bits(first.d_v.values(), second.d_v.values()));
  const Backward want = run_backward(cpu, p, mask, f);
  CHECK_WITHIN(first.d_q.values(), want.d_q.values(), kDq);
  CHECK_WITHIN(first.d_k.values(), want.d_k.values(), kDk);
  CHECK_WITHIN(first.d_v.values(), want.d_v.values(), kDv);
}

TEST_CASE("the GPU merge and delta match the CPU") {
  const rt::Shape shape{77, 4, 128};
  std::mt19937 rng(41);
  const rt::Tensor o_i = bf16_tensor(shape, rng), o_start = bf16_tensor(shape, rng), d_o = bf16_tensor(shape, rng);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> lse(static_cast<std::size_t>(shape.tokens * shape.heads)), lse_i(lse.size());
  for (std::size_t i = 0; i < lse.size(); ++i) {
    lse[i] = i % 7 == 0 ? rt::kNegInf : normal(rng);    // empty accumulators
    lse_i[i] = i % 5 == 0 ? rt::kNegInf : normal(rng);  // empty incoming partials (both: i % 35 == 0)
  }
  rt::CpuAttentionKernels cpu_backend;
  test::HostTensorKernels cpu(cpu_backend, rt::DType::BF16);
  rt::CudaAttentionKernels gpu_backend;
  test::HostTensorKernels gpu(gpu_backend, rt::DType::BF16);
  rt::Tensor o_cpu = o_start, o_gpu = o_start;
  std::vector<float> lse_cpu = lse, lse_gpu = lse;
  cpu.merge(o_cpu.view(), lse_cpu, o_i.view(), lse_i);
  gpu.merge(o_gpu.view(), lse_gpu, o_i.view(), lse_i);
  CHECK_WITHIN(o_gpu.values(), o_cpu.values(), kMerge);
  CHECK_WITHIN(std::span<const float>(lse_gpu), std::span<const float>(lse_cpu), kMerge);

  std::vector<float> delta_cpu(lse.size()), delta_gpu(lse.size());
  cpu.delta(o_cpu.view(), d_o.view(), delta_cpu);
  gpu.delta(o_cpu.view(), d_o.view(), delta_gpu);
  CHECK_WITHIN(std::span<const float>(delta_gpu), std::span<const float>(delta_cpu), kDelta);
}

TEST_CASE("the CUDA kernels refuse what they are not compiled for, by name") {
  const PositionCase pc{"tiny", run(0, 5), run(0, 5)};
  const Pair p = make_block_pair(pc, 2, 1, 32, 3);
  rt::CudaAttentionKernels gpu_backend;
  test::HostTensorKernels gpu(gpu_backend, rt::DType::BF16);
  rt::Tensor o(p.q.shape());
  std::vector<float> lse(10);
  CHECK_THROWS_WITH(gpu.forward(p.block_pair(), {Mask{MaskKind::Causal}, {}}, o.view(), lse),
                    Catch::Contains("CudaAttentionKernels::forward: q") && Catch::Contains("head_dim 32"));
}

TEST_CASE("a kernel path the GPU cannot run is refused with the reason, one it can runs") {
  const PositionCase pc{"tiny", run(0, 70), run(0, 70)};
  const Pair p = make_block_pair(pc, 2, 1, 64, 5);
  rt::CudaAttentionKernels gpu_backend(on_path(rt::gpu::KernelPathChoice::Wgmma));
  test::HostTensorKernels gpu(gpu_backend, rt::DType::BF16);
  const auto paths = device_paths();
  const bool hopper = std::find(paths.begin(), paths.end(), rt::gpu::KernelPathChoice::Wgmma) != paths.end();
  INFO("compute capability " << rt::gpu::current_device_arch().major << "." << rt::gpu::current_device_arch().minor);
  const rt::AttentionMask causal{Mask{MaskKind::Causal}, {}};
  if (hopper) {
    const Forward f = run_forward(gpu, p, causal);
    CHECK(std::all_of(f.lse.begin(), f.lse.end(), [](float x) { return std::isfinite(x); }));
    const Backward b = run_backward(gpu, p, causal, f);
    CHECK(std::all_of(b.d_q.values().begin(), b.d_q.values().end(), [](float x) { return std::isfinite(x); }));
  } else {
    CHECK_THROWS_WITH(run_forward(gpu, p, causal), Catch::Contains("kernel path wgmma cannot run here") &&
                                                       Catch::Contains("compute capability 9.0"));
    rt::CpuAttentionKernels cpu_backend;
    test::HostTensorKernels cpu(cpu_backend, rt::DType::BF16);
    const Forward f = run_forward(cpu, p, causal);
    CHECK_THROWS_WITH(run_backward(gpu, p, causal, f),
                      Catch::Contains("flash_backward: kernel path wgmma cannot run here") &&
                          Catch::Contains("compute capability 9.0"));
  }
}
