// A receive nobody sends fails after the timeout with a message naming the rank, the peer,
// the channel, the step and the direction, instead of hanging; the request is cancelled, so
// the communicator stays usable and the program finalizes cleanly.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/comm/mpi_communicator.hpp"
#include "tests/support/error_text.hpp"

using namespace burst::rt;

TEST_CASE("a receive nobody sends times out with the exact error, and the job goes on") {
  auto comm = make_mpi_communicator({0.5});
  const int r = comm->rank(), peer = (r + 1) % comm->size();
  std::vector<float> block(8);
  Request request = comm->irecv(block, peer, Channel::QRing, 3, RingLevel::Intra);
  const auto start = std::chrono::steady_clock::now();
  const std::string text = burst::test::error_text([&] { comm->wait(request); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(text == fmt::format("rank {}: no message from rank {} on the q ring at step 3 within 0.5 s (hint: rank {} "
                            "failed, is stuck, or never sends on this channel, step and ring level (intra); a rank "
                            "that is only slow needs a longer CommOptions::timeout_s)",
                            r, peer, peer));
  CHECK(seconds >= 0.5);
  CHECK(seconds < 5.0);            // about the timeout, with room for 8 ranks sharing 2 cores
  CHECK_FALSE(request.pending());  // cancelled
  comm->barrier();                 // still usable: nothing is left in flight
}
