#include "tools/burst/every_rank.hpp"

#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/fault_point.hpp"
#include "tools/burst/failure_message.hpp"

namespace burst::cli {

bool run_on_every_rank(rt::Communicator& comm, const std::function<std::function<void()>()>& prepare) {
  std::function<void()> execute;
  std::exception_ptr failure;
  std::string message;
  try {
    execute = prepare();
  } catch (const Error& e) {
    failure = std::current_exception();
    message = e.what();
  }
  fault_point("stall-before-ready", comm.rank());
  // One collective so that every rank knows whether every rank is ready: how many failed, and
  // whether rank 0 did (then its message speaks for all; otherwise the failed ranks speak).
  std::vector<std::int64_t> verdict{failure ? 1 : 0, failure && comm.rank() == 0 ? 1 : 0};
  run_guarded(comm, [&] { comm.allreduce(std::span<std::int64_t>(verdict), rt::ReduceOp::Sum); });
  if (verdict[0] > 0) {
    if (comm.rank() == 0 && failure) std::rethrow_exception(failure);
    if (comm.rank() == 0) {
      throw Error(Problem{
          "burst", fmt::format("{} other rank(s) could not prepare the run (their errors are above)", verdict[0]), "",
          "every rank must be able to read the same plan, data and state files"});
    }
    if (failure && verdict[1] == 0) fmt::print(stderr, "rank {}: error: {}\n", comm.rank(), message);
    return false;
  }
  run_guarded(comm, execute);
  return true;
}

void run_guarded(rt::Communicator& comm, const std::function<void()>& work) {
  try {
    work();
  } catch (const Error& e) {  // never leave the others waiting
    if (comm.size() == 1) throw;
    rt::abort_job(comm, e.what());
  } catch (const std::exception& e) {  // std::bad_alloc on one rank, say
    if (comm.size() == 1) throw;
    rt::abort_job(comm, failure_message(e, Workload::PlanOnRanks));  // every caller runs a plan's steps
  }
}

}  // namespace burst::cli
