// Index arithmetic of hd/index_math.hpp: tile counts, the kv head of a query head under GQA,
// and row indices of per-row scalars.
#include <catch2/catch.hpp>

#include "runtime/kernels/hd/index_math.hpp"

using namespace burst::rt::hd;

TEST_CASE("tile counts round up") {
  CHECK(tile_count(0, 64) == 0);
  CHECK(tile_count(1, 64) == 1);
  CHECK(tile_count(64, 64) == 1);
  CHECK(tile_count(65, 64) == 2);
  CHECK(tile_count(1000, 64) == 16);
  static_assert(ceil_div(129, 64) == 3);
}

TEST_CASE("query heads share kv heads in consecutive groups") {
  for (const std::int64_t kv_heads : {1, 2, 4, 8}) {
    const std::int64_t heads = 8;
    for (std::int64_t h = 0; h < heads; ++h) CHECK(kv_head_of(h, heads, kv_heads) == h * kv_heads / heads);
  }
  CHECK(kv_head_of(7, 32, 4) == 0);
  CHECK(kv_head_of(8, 32, 4) == 1);
  CHECK(kv_head_of(31, 32, 4) == 3);
}

TEST_CASE("row indices of per-row scalars are token * heads + head") {
  CHECK(row_index(0, 4, 3) == 3);
  CHECK(row_index(5, 4, 3) == 23);
}
