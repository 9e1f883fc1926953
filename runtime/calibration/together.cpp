#include "runtime/calibration/together.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "common/median.hpp"

namespace burst::rt {

double time_together(Communicator& comm, const std::function<void()>& run) {
  comm.barrier();
  const auto t0 = std::chrono::steady_clock::now();
  run();
  comm.barrier();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<double> median_of_slowest(Communicator& comm, std::span<const double> mine, std::size_t per_round) {
  const std::span<const double> sent = mine;
  std::vector<double> all(comm.rank() == 0 ? sent.size() * static_cast<std::size_t>(comm.size()) : 0);
  comm.gather_to_root(sent, std::span<double>(all));
  if (comm.rank() != 0) return {};
  std::vector<std::vector<double>> rounds(per_round);
  for (std::size_t at = 0; at < sent.size(); ++at) {
    double slowest = 0;
    for (std::size_t r = 0; r < static_cast<std::size_t>(comm.size()); ++r) {
      slowest = std::max(slowest, all[r * sent.size() + at]);
    }
    rounds[at % per_round].push_back(slowest);
  }
  std::vector<double> out;
  out.reserve(per_round);
  for (std::vector<double>& measured : rounds) out.push_back(median(std::move(measured)));
  return out;
}

}  // namespace burst::rt
