#include "tools/burst/every_rank.hpp"

#include "common/error.hpp"

namespace burst::cli {

Json run_on_every_rank(rt::Communicator& comm, const std::function<std::function<Json()>()>& prepare) {
  std::function<Json()> execute;
  try {
    execute = prepare();
  } catch (const Error&) {
    if (comm.rank() == 0) throw;
    return nullptr;
  }
  try {
    return execute();
  } catch (const Error& e) {
    if (comm.size() == 1) throw;
    rt::abort_job(comm, e.what());
  }
}

}  // namespace burst::cli
