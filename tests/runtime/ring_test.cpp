// Ring properties of the block kernels, skipped work and the FLOP counter.
//
// A ring step sees one key block; after all steps the merged partials must equal attention over
// all keys at once, and the backward accumulated step by step (with the final lse and
// D = rowsum(O * dO)) must equal the one-block backward. Empty tiles cost nothing.
#include <catch2/catch.hpp>

#include <limits>

#include "runtime/kernels/attention.hpp"
#include "tests/runtime/compare.hpp"
#include "tests/runtime/naive_attention.hpp"

using namespace burst;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Rows [first, first + count) of every head of t, as a new tensor.
rt::Tensor rows_of(const rt::Tensor& t, std::int64_t first, std::int64_t count) {
  rt::Tensor out({count, t.shape().heads, t.shape().head_dim});
  const auto stride = static_cast<std::size_t>(t.shape().row_stride());
  std::copy_n(t.values().begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(first) * stride),
              static_cast<std::size_t>(count) * stride, out.values().begin());
  return out;
}

rt::AttentionMask mask_of(const Mask& m) { return {m, {}}; }

}  // namespace

TEST_CASE("forward per key block then merge equals the one-block forward; so does the accumulated backward") {
  const Mask mask = GENERATE(Mask{MaskKind::Full}, Mask{MaskKind::Causal}, Mask{MaskKind::SlidingWindow, 9},
                             Mask{MaskKind::Document, 0, 13});
  const std::int64_t blocks = GENERATE(2, 3, 4);
  INFO("mask " << to_string(mask) << ", " << blocks << " key blocks");
  const std::int64_t n = 91, heads = 4, kv_heads = 2, d = 8;
  const rt::KernelOptions options{8, 16, 2};

  // Queries: rank 0 of a 2-rank striped layout. Keys: the whole sequence, cut into the blocks
  // of a striped layout over `blocks` ranks and concatenated in ring order.
  const auto q_pos = test::striped_positions(n, 2, 0);
  std::vector<std::vector<std::int64_t>> k_pos;
  std::vector<std::int64_t> all_k_pos;
  for (std::int64_t b = 0; b < blocks; ++b) {
    k_pos.push_back(test::striped_positions(n, blocks, b));
    all_k_pos.insert(all_k_pos.end(), k_pos.back().begin(), k_pos.back().end());
  }
  const auto nq = static_cast<std::int64_t>(q_pos.size());
  std::mt19937 rng(11);
  const rt::Tensor q = test::random_tensor({nq, heads, d}, rng);
  const rt::Tensor k = test::random_tensor({n, kv_heads, d}, rng);
  const rt::Tensor v = test::random_tensor({n, kv_heads, d}, rng);
  const rt::Tensor d_o = test::random_tensor({nq, heads, d}, rng);

  const rt::BlockPair whole{q.view(), k.view(), v.view(), q_pos, all_k_pos};
  rt::Tensor o_whole(q.shape());
  std::vector<float> lse_whole(static_cast<std::size_t>(nq * heads));
  rt::attention_forward(whole, mask_of(mask), o_whole.view(), lse_whole, options);

  rt::Tensor o(q.shape()), o_i(q.shape());
  std::vector<float> lse(lse_whole.size(), kNegInf), lse_i(lse_whole.size());
  std::vector<rt::Tensor> k_blocks, v_blocks;
  std::int64_t first = 0;
  for (std::int64_t b = 0; b < blocks; ++b) {
    const auto count = static_cast<std::int64_t>(k_pos[static_cast<std::size_t>(b)].size());
    k_blocks.push_back(rows_of(k, first, count));
    v_blocks.push_back(rows_of(v, first, count));
    first += count;
    const rt::BlockPair step{q.view(), k_blocks.back().view(), v_blocks.back().view(), q_pos,
                             k_pos[static_cast<std::size_t>(b)]};
    rt::attention_forward(step, mask_of(mask), o_i.view(), lse_i, options);
    rt::merge_partial(o.view(), lse, o_i.view(), lse_i);
  }
  CHECK_CLOSE(o.values(), o_whole.values(), 1e-5);
  CHECK_CLOSE(lse, lse_whole, 1e-5);

  std::vector<float> delta(lse.size());
  rt::attention_delta(o_whole.view(), d_o.view(), delta);
  rt::Tensor d_q_whole(q.shape()), d_k_whole(k.shape()), d_v_whole(k.shape());
  rt::attention_backward(whole, mask_of(mask), d_o.view(), delta, lse_whole, d_q_whole.view(), d_k_whole.view(),
                         d_v_whole.view(), options);
  rt::Tensor d_q(q.shape());
  first = 0;
  for (std::int64_t b = 0; b < blocks; ++b) {
    const auto bi = static_cast<std::size_t>(b);
    const rt::BlockPair step{q.view(), k_blocks[bi].view(), v_blocks[bi].view(), q_pos, k_pos[bi]};
    rt::Tensor d_k(k_blocks[bi].shape()), d_v(k_blocks[bi].shape());
    rt::attention_backward(step, mask_of(mask), d_o.view(), delta, lse, d_q.view(), d_k.view(), d_v.view(), options);
    const rt::Tensor want_k = rows_of(d_k_whole, first, k_blocks[bi].shape().tokens);
    const rt::Tensor want_v = rows_of(d_v_whole, first, k_blocks[bi].shape().tokens);
    CHECK_CLOSE(d_k.values(), want_k.values(), 1e-5);
    CHECK_CLOSE(d_v.values(), want_v.values(), 1e-5);
    first += k_blocks[bi].shape().tokens;
  }
  CHECK_CLOSE(d_q.values(), d_q_whole.values(), 1e-5);
}

TEST_CASE("merging an empty partial is safe in either direction") {
  const rt::Shape shape{2, 1, 3};
  rt::Tensor o(shape), part(shape);
  std::vector<float> lse{kNegInf, 0.5f}, lse_part{kNegInf, kNegInf};
  o.values()[3] = 1.0f;
  rt::merge_partial(o.view(), lse, part.view(), lse_part);  // nothing incoming
  CHECK(lse[0] == kNegInf);
  CHECK(lse[1] == 0.5f);
  CHECK(o.values()[0] == 0.0f);
  CHECK(o.values()[3] == 1.0f);

  lse_part = {2.0f, kNegInf};
  part.values()[0] = 4.0f;
  rt::merge_partial(o.view(), lse, part.view(), lse_part);  // empty accumulator takes the partial
  CHECK(lse[0] == 2.0f);
  CHECK(o.values()[0] == 4.0f);

  // Two equal masses: the mean of the outputs, log 2 more mass.
  lse_part = {2.0f, 0.5f};
  part.values()[3] = 3.0f;
  rt::merge_partial(o.view(), lse, part.view(), lse_part);
  CHECK(lse[1] == Approx(0.5 + std::log(2.0)));
  CHECK(o.values()[3] == Approx(2.0));
  CHECK(std::isfinite(o.values()[0]));
}

TEST_CASE("a block pair with no allowed pair is skipped: no FLOPs, lse -inf, gradients untouched") {
  const std::int64_t heads = 2, d = 8;
  std::mt19937 rng(5);
  // Causal: all keys after all queries (ranges alone say Empty). Sliding window of 1 (a query
  // sees only itself) with even query and odd key positions: ranges interleave, so the tile is
  // Partial by range and turns out empty element by element.
  const auto [name, mask, q_pos, k_pos] =
      GENERATE(std::make_tuple("causal, keys after queries", Mask{MaskKind::Causal}, rt::contiguous_positions(20),
                               test::striped_positions(80, 1, 0)),
               std::make_tuple("sliding:1, interleaved", Mask{MaskKind::SlidingWindow, 1},
                               test::striped_positions(40, 2, 0), test::striped_positions(40, 2, 1)));
  INFO(name);
  std::vector<std::int64_t> keys = k_pos;
  if (mask.kind == MaskKind::Causal) {
    for (std::int64_t& p : keys) p += 100;
  }
  const auto nq = static_cast<std::int64_t>(q_pos.size()), nk = static_cast<std::int64_t>(keys.size());
  const rt::Tensor q = test::random_tensor({nq, heads, d}, rng);
  const rt::Tensor k = test::random_tensor({nk, heads, d}, rng);
  const rt::Tensor v = test::random_tensor({nk, heads, d}, rng);
  const rt::Tensor d_o = test::random_tensor({nq, heads, d}, rng);
  const rt::BlockPair in{q.view(), k.view(), v.view(), q_pos, keys};
  const rt::KernelOptions options{8, 16, 2};

  rt::Tensor o = test::random_tensor(q.shape(), rng);
  std::vector<float> lse(static_cast<std::size_t>(nq * heads), 1.0f);
  const rt::KernelStats fwd = rt::attention_forward(in, mask_of(mask), o.view(), lse, options);
  CHECK(fwd.tiles_computed == 0);
  CHECK(fwd.tiles_skipped > 0);
  CHECK(fwd.flops == 0);
  CHECK(std::all_of(lse.begin(), lse.end(), [](float x) { return x == kNegInf; }));
  CHECK(std::all_of(o.values().begin(), o.values().end(), [](float x) { return x == 0.0f; }));

  rt::Tensor d_q(q.shape()), d_k(k.shape()), d_v(k.shape());
  for (rt::Tensor* t : {&d_q, &d_k, &d_v}) std::fill(t->values().begin(), t->values().end(), 7.0f);
  const std::vector<float> delta(lse.size(), 0.25f);
  const rt::KernelStats bwd =
      rt::attention_backward(in, mask_of(mask), d_o.view(), delta, lse, d_q.view(), d_k.view(), d_v.view(), options);
  CHECK(bwd.flops == 0);
  for (const rt::Tensor* t : {&d_q, &d_k, &d_v}) {
    CHECK(std::all_of(t->values().begin(), t->values().end(), [](float x) { return x == 7.0f; }));
  }
}

TEST_CASE("the FLOP counter sees a causal block compute about half the tiles of a full one") {
  // 1024 tokens in tiles of 64: 16 x 16 = 256 tile pairs per head; causal computes the 136 on
  // or below the diagonal (136 / 256 = 0.53), each 4 * 64 * 64 * d FLOPs.
  const std::int64_t n = 1024, heads = 2, d = 16;
  std::mt19937 rng(9);
  const rt::Tensor q = test::random_tensor({n, heads, d}, rng);
  const rt::Tensor k = test::random_tensor({n, heads, d}, rng);
  const rt::Tensor v = test::random_tensor({n, heads, d}, rng);
  const auto positions = rt::contiguous_positions(n);
  const rt::BlockPair in{q.view(), k.view(), v.view(), positions, positions};
  rt::Tensor o(q.shape());
  std::vector<float> lse(static_cast<std::size_t>(n * heads));
  const rt::KernelOptions options{64, 64, 2};
  const auto full = rt::attention_forward(in, mask_of(Mask{MaskKind::Full}), o.view(), lse, options);
  const auto causal = rt::attention_forward(in, mask_of(Mask{MaskKind::Causal}), o.view(), lse, options);
  CHECK(full.tiles_computed == 256 * heads);
  CHECK(full.flops == Approx(4.0 * n * n * d * heads));
  CHECK(causal.tiles_computed == 136 * heads);
  CHECK(causal.tiles_skipped == 120 * heads);
  CHECK(causal.flops / full.flops == Approx(136.0 / 256.0));
  CHECK(causal.allowed_pairs == static_cast<double>(heads * n * (n + 1) / 2));
}
