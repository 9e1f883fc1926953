// Test helpers for loopback jobs: every rank a thread of the test, each driving its own
// communicator of one make_loopback_communicators job.
//
// Catch's assertions are not thread-safe (ThreadSanitizer shows their races), so code on a rank
// thread checks with rank_expect, which throws what failed, and the test's thread checks each
// rank's error text after joining.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/comm/loopback_communicator.hpp"

namespace burst::test {

inline void rank_expect(bool holds, const std::string& what) {
  if (!holds) throw std::runtime_error("expected " + what);
}

// Runs body(comm) for every rank of a `ranks`-rank loopback job, one thread each; the error
// text of each rank that threw ("" where none did).
inline std::vector<std::string> on_every_rank(int ranks, const std::function<void(rt::Communicator&)>& body,
                                              double timeout_s = 10) {
  auto comms = rt::make_loopback_communicators(ranks, rt::CommOptions{timeout_s});
  std::vector<std::string> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(*comms[static_cast<std::size_t>(r)]);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace burst::test
