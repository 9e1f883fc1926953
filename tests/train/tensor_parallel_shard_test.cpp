// One tensor-parallel rank's part of the decoder: its shape, which floats of the whole it holds
// (columns of the column-parallel matrices, rows of the row-parallel ones, every replicated
// tensor), that the parts together hold every float and put back give the whole again, and the
// degrees it refuses.
#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "runtime/training/tensor_parallel.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;
using namespace burst::rt;

namespace {

ModelSpec small_model() {
  ModelSpec m =
      test::training_plan(1, 1, Layout::Contiguous, BackwardMode::KvRing, CheckpointPolicy::None, 0, 1).job.model;
  m.kv_heads = 4;  // 4 heads of 8, hidden 32, ffn 48
  return m;
}

}  // namespace

TEST_CASE("a tensor-parallel part is the decoder with heads, KV heads and ffn divided", "[tensor_parallel]") {
  const ModelLayout whole(small_model());
  const TensorParallelShard part(whole, 2, 1);
  CHECK(part.local().spec().heads == 2);
  CHECK(part.local().spec().kv_heads == 2);
  CHECK(part.local().spec().ffn == 24);
  CHECK(part.local().spec().hidden == 32);
  // Embedding, 2 x (two norms), final norm, LM head.
  CHECK(part.replicated().size() == 1 + 2 * 2 + 2);
  CHECK_THROWS_WITH(TensorParallelShard(whole, 8, 0), Catch::Contains("plan:/strategy/tp"));
  CHECK_THROWS_WITH(TensorParallelShard(whole, 2, 2), Catch::Contains("rank 2 of 2"));
}

TEST_CASE("each part holds its columns of Wq and its rows of Wo", "[tensor_parallel]") {
  const ModelLayout whole(small_model());
  std::vector<float> values(whole.size());
  std::iota(values.begin(), values.end(), 0.0f);  // float i is i: where it came from shows
  const auto q_dim = static_cast<std::size_t>(whole.q_dim());
  const auto hidden = static_cast<std::size_t>(whole.spec().hidden);
  for (const int rank : {0, 1}) {
    const TensorParallelShard part(whole, 2, rank);
    const std::vector<float> mine = part.extract(values);
    const LayerSlices& w = whole.layers[1];
    const LayerSlices& l = part.local().layers[1];
    const std::size_t half = q_dim / 2;
    // Row 3, column 5 of the part's Wq is row 3, column rank * half + 5 of the whole's.
    CHECK(mine[l.wq.offset + 3 * half + 5] == values[w.wq.offset + 3 * q_dim + rank * half + 5]);
    // Row 2 of the part's Wo is row rank * half + 2 of the whole's.
    CHECK(mine[l.wo.offset + 2 * hidden] == values[w.wo.offset + (rank * half + 2) * hidden]);
    CHECK(mine[l.mlp_norm.offset + 7] == values[w.mlp_norm.offset + 7]);
    CHECK(mine[part.local().lm_head.offset] == values[whole.lm_head.offset]);
  }
}

TEST_CASE("the parts hold every float and put together give the whole", "[tensor_parallel]") {
  const ModelLayout whole(small_model());
  std::vector<float> values(whole.size());
  std::iota(values.begin(), values.end(), 1.0f);
  for (const int tp : {1, 2, 4}) {
    std::vector<float> rebuilt(whole.size(), 0.0f);
    std::size_t held = 0, replicated = 0;
    for (int rank = 0; rank < tp; ++rank) {
      const TensorParallelShard part(whole, tp, rank);
      part.insert(part.extract(values), rebuilt);
      held += part.local().size();
      for (const Slice& r : part.replicated()) replicated += r.count;
    }
    INFO("tp " << tp);
    CHECK(rebuilt == values);
    // The split tensors are held once in all, the replicated ones tp times.
    CHECK(held - replicated + replicated / static_cast<std::size_t>(tp) == whole.size());
  }
}
