// The host-side grouping of tokens by id for the GPU embedding backward (token_groups.hpp):
// distinct ids ascending, each group's tokens in ascending order (the CPU's summation order),
// and an id outside the vocabulary named.
#include <catch2/catch.hpp>

#include <vector>

#include "common/error.hpp"
#include "runtime/cuda/detail/token_groups.hpp"

using namespace burst;

TEST_CASE("tokens group by id, ids ascending, tokens ascending within a group", "[token_groups]") {
  const std::vector<std::int32_t> tokens{3, 1, 3, 0, 3, 2, 1};
  const rt::gpu::TokenGroups g = rt::gpu::group_tokens(tokens, 6);
  CHECK(g.rows == std::vector<std::int32_t>{0, 1, 2, 3});
  CHECK(g.offsets == std::vector<std::int32_t>{0, 1, 3, 4, 7});
  CHECK(g.token_index == std::vector<std::int32_t>{3, 1, 6, 5, 0, 2, 4});
  const rt::gpu::TokenGroups empty = rt::gpu::group_tokens({}, 6);
  CHECK(empty.rows.empty());
  CHECK(empty.offsets == std::vector<std::int32_t>{0});
  CHECK(empty.token_index.empty());
}

TEST_CASE("grouping names a token outside the vocabulary", "[token_groups]") {
  const std::vector<std::int32_t> tokens{0, 6, -1};
  CHECK_THROWS_WITH(rt::gpu::group_tokens(tokens, 6), Catch::Contains("group_tokens: token"));
  CHECK_THROWS_WITH(rt::gpu::group_tokens(tokens, 0), Catch::Contains("group_tokens: vocab"));
}
