// The block kernels against the independent double reference (naive_attention.hpp): forward O
// and lse, backward dQ, dK, dV, within 1e-4, for every mask (full, causal, sliding, document,
// block-sparse), MHA and GQA, odd sizes that are not multiples of the tile, and the permuted
// position arrays of ring layouts (zigzag, striped, shuffled).
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "runtime/kernels/attention.hpp"
#include "tests/runtime/compare.hpp"
#include "tests/runtime/naive_attention.hpp"

using namespace burst;
using burst::test::Allow;

namespace {

struct MaskCase {
  const char* name;
  rt::AttentionMask mask;
  Allow allow;  // the same mask, written independently
};

// Block-sparse patterns over blocks of 4 tokens (positions stay below 32 * 4 = 128).
constexpr std::int64_t kBlock = 4, kBlocks = 32;
bool strided_band(std::int64_t qb, std::int64_t kb) { return qb == kb || kb == 0 || (qb - kb) % 3 == 0; }
bool checkerboard(std::int64_t qb, std::int64_t kb) { return (qb + kb) % 2 == 0; }

std::vector<MaskCase> mask_cases() {
  return {
      {"full", {Mask{MaskKind::Full}, {}}, [](std::int64_t, std::int64_t) { return true; }},
      {"causal", {Mask{MaskKind::Causal}, {}}, [](std::int64_t q, std::int64_t k) { return k <= q; }},
      {"sliding:5",
       {Mask{MaskKind::SlidingWindow, 5}, {}},
       [](std::int64_t q, std::int64_t k) { return q - 5 < k && k <= q; }},
      {"document:7",
       {Mask{MaskKind::Document, 0, 7}, {}},
       [](std::int64_t q, std::int64_t k) { return k <= q && q / 7 == k / 7; }},
      {"causal + block-sparse band",
       {Mask{MaskKind::Causal}, rt::BlockSparse::from(kBlock, kBlocks, strided_band)},
       [](std::int64_t q, std::int64_t k) { return k <= q && strided_band(q / 4, k / 4); }},
      {"full + block-sparse checkerboard",
       {Mask{MaskKind::Full}, rt::BlockSparse::from(kBlock, kBlocks, checkerboard)},
       [](std::int64_t q, std::int64_t k) { return checkerboard(q / 4, k / 4); }},
  };
}

struct Positions {
  const char* name;
  std::vector<std::int64_t> q, k;
};

std::vector<Positions> position_cases() {
  std::vector<std::int64_t> shuffled(45);
  std::iota(shuffled.begin(), shuffled.end(), 40);
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(7));
  std::vector<std::int64_t> some_keys(shuffled.begin(), shuffled.begin() + 29);
  for (std::int64_t& k : some_keys) k -= 17;
  return {
      {"contiguous 37 x 37", rt::contiguous_positions(37), rt::contiguous_positions(37)},
      {"zigzag rank 1 x rank 0 (42 x 42)", test::zigzag_positions(126, 3, 1), test::zigzag_positions(126, 3, 0)},
      {"zigzag rank 0 x rank 2 (42 x 42)", test::zigzag_positions(126, 3, 0), test::zigzag_positions(126, 3, 2)},
      {"striped rank 1 x rank 2 (34 x 33)", test::striped_positions(101, 3, 1), test::striped_positions(101, 3, 2)},
      {"shuffled 45 x 29", shuffled, some_keys},
  };
}

}  // namespace

TEST_CASE("forward and backward of a block pair match the double reference") {
  const auto masks = mask_cases();
  const auto positions = position_cases();
  const auto mask_index = GENERATE(range(std::size_t{0}, std::size_t{6}));
  const auto pos_index = GENERATE(range(std::size_t{0}, std::size_t{5}));
  const std::int64_t kv_heads = GENERATE(4, 2, 1);
  const auto tiles = GENERATE(std::pair<std::int64_t, std::int64_t>{8, 16}, std::pair<std::int64_t, std::int64_t>{5, 7},
                              std::pair<std::int64_t, std::int64_t>{64, 128});
  const MaskCase& mc = masks[mask_index];
  const Positions& pc = positions[pos_index];
  INFO("mask " << mc.name << ", positions " << pc.name << ", 4 heads / " << kv_heads << " kv heads, tiles "
               << tiles.first << " x " << tiles.second);

  const std::int64_t heads = 4, d = 12;
  const auto nq = static_cast<std::int64_t>(pc.q.size()), nk = static_cast<std::int64_t>(pc.k.size());
  std::mt19937 rng(static_cast<unsigned>(1000 + mask_index * 10 + pos_index));
  const rt::Tensor q = test::random_tensor({nq, heads, d}, rng);
  const rt::Tensor k = test::random_tensor({nk, kv_heads, d}, rng);
  const rt::Tensor v = test::random_tensor({nk, kv_heads, d}, rng);
  const rt::Tensor d_o = test::random_tensor({nq, heads, d}, rng);
  const auto want = test::naive_attention(q, k, v, d_o, pc.q, pc.k, mc.allow);

  const rt::KernelOptions options{tiles.first, tiles.second, 2};
  const rt::BlockPair in{q.view(), k.view(), v.view(), pc.q, pc.k};
  rt::Tensor o(q.shape());
  std::vector<float> lse(static_cast<std::size_t>(nq * heads));
  rt::attention_forward(in, mc.mask, o.view(), lse, options);
  CHECK_CLOSE(o.values(), want.o, 1e-4);
  CHECK_CLOSE(lse, want.lse, 1e-4);

  std::vector<float> delta(lse.size());
  rt::attention_delta(o.view(), d_o.view(), delta);
  rt::Tensor d_q(q.shape()), d_k(k.shape()), d_v(k.shape());
  rt::attention_backward(in, mc.mask, d_o.view(), delta, lse, d_q.view(), d_k.view(), d_v.view(), options);
  CHECK_CLOSE(d_q.values(), want.d_q, 1e-4);
  CHECK_CLOSE(d_k.values(), want.d_k, 1e-4);
  CHECK_CLOSE(d_v.values(), want.d_v, 1e-4);
}

TEST_CASE("full_attention is the one-block forward and backward") {
  const std::int64_t n = 50, heads = 4, kv_heads = 2, d = 16;
  std::mt19937 rng(3);
  const rt::Tensor q = test::random_tensor({n, heads, d}, rng);
  const rt::Tensor k = test::random_tensor({n, kv_heads, d}, rng);
  const rt::Tensor v = test::random_tensor({n, kv_heads, d}, rng);
  const rt::Tensor d_o = test::random_tensor({n, heads, d}, rng);
  const auto positions = rt::contiguous_positions(n);
  const auto want = test::naive_attention(q, k, v, d_o, positions, positions,
                                          [](std::int64_t qp, std::int64_t kp) { return kp <= qp; });
  const auto got = rt::full_attention(q.view(), k.view(), v.view(), d_o.view(), positions,
                                      rt::AttentionMask{Mask{MaskKind::Causal}, {}}, {16, 16, 2});
  CHECK_CLOSE(got.o.values(), want.o, 1e-4);
  CHECK_CLOSE(got.lse, want.lse, 1e-4);
  CHECK_CLOSE(got.d_q.values(), want.d_q, 1e-4);
  CHECK_CLOSE(got.d_k.values(), want.d_k, 1e-4);
  CHECK_CLOSE(got.d_v.values(), want.d_v, 1e-4);
  // 4 x 4 tiles of 16 (the last one of 2 rows), 10 of them on or below the diagonal, per head.
  CHECK(got.forward.tiles_computed == 10 * heads);
  CHECK(got.backward.tiles_computed == 10 * heads);
  CHECK(got.backward.flops == Approx(2.5 * got.forward.flops));
  CHECK(got.forward.allowed_pairs == static_cast<double>(heads * n * (n + 1) / 2));
}
