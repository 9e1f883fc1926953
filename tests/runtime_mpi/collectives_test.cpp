// allreduce_sum (the gradient all-reduce) and gather_to_root (checking a distributed result
// against a single-rank reference) over every rank.
#include <catch2/catch.hpp>

#include <vector>

#include <fmt/format.h>

#include "runtime/comm/mpi_communicator.hpp"
#include "tests/support/error_text.hpp"

using namespace burst::rt;

TEST_CASE("allreduce_sum adds every rank's values in place") {
  auto comm = make_mpi_communicator({20});
  const int p = comm->size(), r = comm->rank();
  // Rank r contributes r + i at index i: the sum is p(p-1)/2 + p i (exact in float).
  std::vector<float> data(17);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(r + static_cast<int>(i));
  comm->allreduce_sum(data);
  for (std::size_t i = 0; i < data.size(); ++i) {
    CHECK(data[i] == static_cast<float>(p * (p - 1) / 2 + p * static_cast<int>(i)));
  }
}

TEST_CASE("gather_to_root puts rank r's block at offset r * n on rank 0") {
  auto comm = make_mpi_communicator({20});
  const int p = comm->size(), r = comm->rank();
  constexpr std::size_t n = 5;
  std::vector<float> mine(n);
  for (std::size_t i = 0; i < n; ++i) mine[i] = static_cast<float>(100 * r + static_cast<int>(i));
  std::vector<float> all(r == 0 ? n * static_cast<std::size_t>(p) : 0);
  comm->gather_to_root(mine, all);
  if (r == 0) {
    for (int q = 0; q < p; ++q) {
      for (std::size_t i = 0; i < n; ++i) CHECK(all[static_cast<std::size_t>(q) * n + i] == static_cast<float>(100 * q + static_cast<int>(i)));
    }
  }
  comm->barrier();
}

TEST_CASE("gather_to_root at the root checks the size of its buffer") {
  auto comm = make_mpi_communicator({20});
  if (comm->rank() != 0) return;
  std::vector<float> mine(2), all(3);
  CHECK(burst::test::error_text([&] { comm->gather_to_root(mine, all); }) ==
        fmt::format("rank 0: gather_to_root: all_at_root holds 3 floats (valid: {} floats: {} ranks x 2; hint: "
                    "every rank contributes the same number of floats)",
                    2 * comm->size(), comm->size()));
}
