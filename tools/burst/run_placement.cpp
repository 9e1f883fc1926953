// Gathering where each rank runs and checking it against the plan (see run_placement.hpp).
#include "tools/burst/run_placement.hpp"

#include <array>
#include <cstddef>
#include <cstring>
#include <functional>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "plan/plan.hpp"
#include "planner/launch/placement.hpp"
#include "tools/burst/every_rank.hpp"
#include "tools/burst/run_plan_check.hpp"

namespace burst::cli {
namespace {

constexpr std::size_t kHostBytes = 256;  // above HOST_NAME_MAX (64 on Linux)

// Every rank's host name and local rank, on every rank (two allgathers every rank reaches).
std::vector<launch::JobRank> gather_job(rt::Communicator& comm) {
  std::vector<std::byte> mine(kHostBytes);
  std::array<char, kHostBytes> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) std::strcpy(name.data(), "unknown-host");
  std::memcpy(mine.data(), name.data(), name.size());
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<std::byte> hosts(kHostBytes * ranks);
  comm.allgather(mine, hosts);
  const std::vector<std::int64_t> local{comm.local_rank()};
  std::vector<std::int64_t> locals(ranks);
  comm.allgather(local, locals);
  std::vector<launch::JobRank> job(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the gathered bytes are host names
    const char* host = reinterpret_cast<const char*>(hosts.data() + r * kHostBytes);
    job[r].host.assign(host, strnlen(host, kHostBytes));
    job[r].local_rank = static_cast<int>(locals[r]);
  }
  return job;
}

}  // namespace

std::optional<plan::Plan> read_placed_plan(const std::string& plan_path, rt::Communicator& comm) {
  std::vector<launch::JobRank> job;
  run_guarded(comm, [&] { job = gather_job(comm); });  // a rank that never comes ends the job here, at --timeout
  std::optional<plan::Plan> plan;
  const bool ready = run_on_every_rank(comm, [&]() -> std::function<void()> {
    plan = plan::read_plan(plan_path);
    check_plan_cluster(*plan, plan_path);  // its /cluster a topology, the one its hash names
    const std::string note = launch::check_placement(*plan, job, plan_path);
    if (comm.rank() == 0 && !note.empty()) fmt::print(stderr, "note: {}\n", note);
    return [] {};
  });
  if (!ready) return std::nullopt;  // another rank's bad input, which rank 0 reports
  return plan;
}

}  // namespace burst::cli
