// burst::median (common/median.hpp): the middle of an odd count, the mean of the middle two of
// an even one, whatever the order; nothing gives 0.
#include <catch2/catch.hpp>

#include "common/median.hpp"

TEST_CASE("median of measured times") {
  CHECK(burst::median({}) == 0);
  CHECK(burst::median({3.0}) == 3.0);
  CHECK(burst::median({5.0, 1.0, 4.0}) == 4.0);
  CHECK(burst::median({9.0, 1.0, 3.0, 2.0}) == 2.5);
  CHECK(burst::median({1.0, 1.0, 100.0}) == 1.0);  // one disturbed run does not move it
}
