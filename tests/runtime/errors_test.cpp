// Bad arguments to the kernels fail with every problem at once, each naming the call and the
// argument, what is wrong and what is valid.
#include <catch2/catch.hpp>

#include "runtime/kernels/attention.hpp"
#include "tests/support/error_text.hpp"

using namespace burst;

TEST_CASE("kv heads that do not divide the query heads, and other bad shapes, are reported together") {
  rt::Tensor q({10, 4, 8}), k({12, 3, 8}), v({12, 3, 4}), o({10, 4, 8});
  const auto q_pos = rt::contiguous_positions(10), k_pos = rt::contiguous_positions(11);
  std::vector<float> lse(40);
  const rt::BlockPair in{q.view(), k.view(), v.view(), q_pos, k_pos};
  const std::string text = test::error_text([&] {
    rt::attention_forward(in, {Mask{MaskKind::SlidingWindow, 0}, {}}, o.view(), lse, {64, 128, 2});
  });
  CHECK(text.find("attention_forward: v: shape [12, 3, 4] differs from k [12, 3, 8]") != std::string::npos);
  CHECK(text.find("attention_forward: k: 3 kv heads do not divide the 4 query heads (valid: kv heads dividing 4: "
                  "1, 2, 4; hint: grouped-query attention shares each kv head among heads / kv_heads query heads)") !=
        std::string::npos);
  CHECK(text.find("attention_forward: mask: sliding window of 0 tokens (valid: window >= 1)") != std::string::npos);
  CHECK(text.find("attention_forward: k_positions: 11 positions for 12 tokens") != std::string::npos);
}

TEST_CASE("a block-sparse table must cover every position") {
  rt::Tensor q({10, 2, 8}), k({10, 2, 8}), o({10, 2, 8});
  const auto pos = rt::contiguous_positions(10);
  std::vector<float> lse(20);
  const rt::AttentionMask mask{Mask{MaskKind::Causal}, rt::BlockSparse::from(4, 2, [](auto, auto) { return true; })};
  const std::string text = test::error_text([&] {
    rt::attention_forward({q.view(), k.view(), k.view(), pos, pos}, mask, o.view(), lse);
  });
  CHECK(text.find("q_positions: position 9 lies beyond the block-sparse table (2 blocks of 4 tokens) "
                  "(valid: positions < 8; hint: make the table cover the whole sequence)") != std::string::npos);
}

TEST_CASE("backward names each gradient whose shape is wrong") {
  rt::Tensor q({6, 2, 4}), k({6, 1, 4}), d_q({6, 2, 4}), d_k({6, 2, 4});
  const auto pos = rt::contiguous_positions(6);
  std::vector<float> lse(12), delta(11);
  const std::string text = test::error_text([&] {
    rt::attention_backward({q.view(), k.view(), k.view(), pos, pos}, {Mask{MaskKind::Causal}, {}}, q.view(), delta, lse,
                           d_q.view(), d_k.view(), k.view());
  });
  CHECK(text.find("attention_backward: d_k: shape [6, 2, 4] differs from k [6, 1, 4]") != std::string::npos);
  CHECK(text.find("attention_backward: delta: 11 values (valid: tokens * heads = 6 * 2 = 12)") != std::string::npos);
  CHECK(text.find("d_v") == std::string::npos);
}
