// CublasLtGemm against the CPU gemm (OpenBLAS, fp32) on the same bf16-rounded inputs: the
// linear layer's three products (forward, input gradient with and without accumulation, weight
// gradient) at sizes that are not multiples of any tile, with fp32 and bf16 outputs, and an
// operand offset by one element (2-byte alignment) so the heuristic's alignment hint is used.
//
// The bound, derived. bf16 x bf16 products are exact in fp32, so with fp32 output the only
// difference is the order of the fp32 sums (and the beta C term's one addition): two orders of
// summing K + 1 terms differ by at most e = 2 K 2^-24 (sum_l |a_il b_lj| + |c0|) to first order
// (each ordering's error is within (K + 1) u times the sum of magnitudes, u = 2^-24; the test
// uses 2 K 2^-23, twice that). With bf16 output the GPU's fp32 value is rounded to bf16
// (cuBLASLt is held to split-K reductions in fp32, cublaslt_gemm.hpp), but cuBLASLt documents
// neither its epilogue's rounding nor whether beta C joins before or after the product is
// rounded to the output type, and on an H200 it was seen to round the product first: 1.05x and
// 1.2x past a bound of one rounding of the result, where C cancelled much of A B. So the bound
// allows two roundings to nearest, each within 2^-8 of its value (half an ulp of an 8-bit
// significand): the product's, |ab| <= |cpu - c0| + e, and the sum's, |x| <= |cpu| + 2^-8 |ab| + e.
// So |gpu - cpu| <= e + 2^-8 (|cpu - c0| + e) + 2^-8 (|cpu| + 2^-8 (|cpu - c0| + e) + e).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "common/bf16.hpp"
#include "runtime/cuda/detail/cublaslt_gemm.hpp"
#include "runtime/cuda/detail/cuda_stream.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/kernels/blas.hpp"

using namespace burst;
using rt::gpu::check_cuda;

namespace {

std::vector<float> bf16_values(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = round_to_bf16(normal(rng));
  return v;
}

std::vector<std::uint16_t> to_bits(const std::vector<float>& v) {
  std::vector<std::uint16_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = to_bf16(v[i]).bits;
  return out;
}

template <typename T>
T* upload(const std::vector<T>& host, std::size_t offset = 0) {
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, (host.size() + offset) * sizeof(T)), "cudaMalloc");
  T* at = static_cast<T*>(p) + offset;
  check_cuda(cudaMemcpy(at, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return at;
}

// Runs `g` on the GPU (output type `out`) and on the CPU, and compares.
void compare(const rt::GemmShape& g, rt::gpu::GemmOutput out, std::size_t a_offset, std::mt19937& rng) {
  const auto a = bf16_values(static_cast<std::size_t>(g.a_rows() * g.lda), rng);
  const auto b = bf16_values(static_cast<std::size_t>(g.b_rows() * g.ldb), rng);
  const auto c0 = bf16_values(static_cast<std::size_t>(g.m * g.ldc), rng);
  std::vector<float> expected = c0;
  rt::gemm(g, a.data(), b.data(), expected.data());
  // sum_l |a_il b_lj| per element: the scale of the summation-order error.
  rt::GemmShape abs_g = g;
  abs_g.beta = 0;
  std::vector<float> abs_a(a.size()), abs_b(b.size()), scale(c0.size());
  for (std::size_t i = 0; i < a.size(); ++i) abs_a[i] = std::fabs(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) abs_b[i] = std::fabs(b[i]);
  rt::gemm(abs_g, abs_a.data(), abs_b.data(), scale.data());

  const auto a_bits = to_bits(a), b_bits = to_bits(b);
  std::uint16_t* da = upload(a_bits, a_offset);
  std::uint16_t* db = upload(b_bits);
  void* dc = out == rt::gpu::GemmOutput::F32 ? static_cast<void*>(upload(c0)) : static_cast<void*>(upload(to_bits(c0)));
  // The uploads' cudaMemcpy may return before its DMA lands, and the products run on a
  // non-blocking stream, which does not wait for the default stream: the device finishes them first.
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize(after the uploads)");
  const rt::gpu::OwnedStream owned;
  const cudaStream_t stream = owned.handle();
  int device = 0, major = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
  {
    rt::gpu::CublasLtGemm gemm(stream, rt::gpu::recommended_gemm_workspace(major));
    gemm.run(g, da, db, dc, out);
    if (g.beta == 0) gemm.run(g, da, db, dc, out);  // again through the cached plan: the same C
  }
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<float> got(c0.size());
  if (out == rt::gpu::GemmOutput::F32) {
    check_cuda(cudaMemcpy(got.data(), dc, got.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  } else {
    std::vector<std::uint16_t> bits(c0.size());
    check_cuda(cudaMemcpy(bits.data(), dc, bits.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (std::size_t i = 0; i < bits.size(); ++i) got[i] = to_float(Bf16{bits[i]});
  }
  const double order = 2.0 * static_cast<double>(g.k) * std::ldexp(1.0, -23);
  const double rounding = out == rt::gpu::GemmOutput::F32 ? 0.0 : 1.0 / 256;
  for (std::int64_t i = 0; i < g.m; ++i) {
    for (std::int64_t j = 0; j < g.n; ++j) {
      const auto at = static_cast<std::size_t>(i * g.ldc + j);
      const double summation = order * (scale[at] + std::fabs(c0[at]));
      const double product = rounding * (std::fabs(static_cast<double>(expected[at]) - c0[at]) + summation);
      const double bound = summation + product + rounding * (std::fabs(expected[at]) + product + summation) + 1e-30;
      INFO("C(" << i << ", " << j << ") m=" << g.m << " n=" << g.n << " k=" << g.k);
      REQUIRE(std::fabs(got[at] - expected[at]) <= bound);
    }
  }
  for (void* p : {static_cast<void*>(da - a_offset), static_cast<void*>(db), dc}) check_cuda(cudaFree(p), "cudaFree");
}

}  // namespace

TEST_CASE("cuBLASLt runs the linear layer's products as the CPU gemm does") {
  std::mt19937 rng(3);
  const std::int64_t rows = 133, in = 72, out = 200;
  for (const auto type : {rt::gpu::GemmOutput::F32, rt::gpu::GemmOutput::BF16}) {
    compare(rt::linear_forward_gemm(rows, in, out), type, 0, rng);
    compare(rt::linear_input_grad_gemm(rows, in, out, false), type, 0, rng);
    compare(rt::linear_input_grad_gemm(rows, in, out, true), type, 0, rng);
    compare(rt::linear_weight_grad_gemm(rows, in, out), type, 0, rng);
  }
  // A 2-byte aligned operand (odd element offset) with an odd leading dimension.
  compare(rt::linear_forward_gemm(31, 17, 9), rt::gpu::GemmOutput::F32, 1, rng);
}
