// NCCL's bootstrap as far as it runs without a GPU: rank 0's unique id reaches every rank of
// the MPI job byte for byte, each call makes a new id, and the library reports its version.
// (ncclCommInitRank itself needs a device: the gpu-labelled tests cover it.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "runtime/comm/mpi_communicator.hpp"
#include "runtime/comm/nccl_bootstrap.hpp"

using namespace burst::rt;

TEST_CASE("every rank receives rank 0's NCCL unique id, and a second call makes another") {
  auto comm = make_mpi_communicator({20});
  const NcclUniqueIdBytes first = shared_nccl_unique_id(*comm);
  CHECK(std::any_of(first.begin(), first.end(), [](std::byte b) { return b != std::byte{0}; }));
  std::vector<std::byte> all(first.size() * static_cast<std::size_t>(comm->size()));
  comm->allgather(ConstBuffer(first.data(), first.size(), DType::Bytes),
                  MutBuffer(all.data(), all.size(), DType::Bytes));
  for (int r = 0; r < comm->size(); ++r) {
    CHECK(std::equal(first.begin(), first.end(), all.begin() + static_cast<std::ptrdiff_t>(first.size()) * r));
  }
  const NcclUniqueIdBytes second = shared_nccl_unique_id(*comm);
  CHECK(second != first);
}

TEST_CASE("the NCCL version reads as major.minor.patch") {
  const std::string version = nccl_version();
  CHECK(version.rfind("2.", 0) == 0);
  CHECK(std::count(version.begin(), version.end(), '.') == 2);
}
