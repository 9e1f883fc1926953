// How a command that runs on every rank of an mpirun job treats failures. Preparing (reading
// the plan, checking it against the job, reading data) sends no message; then one all-reduce
// tells every rank whether all are ready. Bad input usually fails every rank the same way:
// rank 0 reports it and the others end quietly; a rank that alone cannot read a file reports it
// itself and every rank ends. Once ranks communicate, a failure is one rank's and it ends the
// whole job (rt::abort_job), so no rank is left waiting.
#pragma once

#include <exception>
#include <functional>
#include <string>

#include "common/json_reader.hpp"
#include "runtime/comm/communicator.hpp"

namespace burst::cli {

// `prepare` returns what to execute. Returns the executed result on rank 0, null elsewhere and
// on ranks other than 0 after bad input.
[[nodiscard]] Json run_on_every_rank(rt::Communicator& comm, const std::function<std::function<Json()>()>& prepare);

// What to tell the user of an exception that is not a burst::Error: std::bad_alloc becomes an
// out-of-memory message with what to change; anything else is an internal error.
[[nodiscard]] std::string failure_message(const std::exception& e);

}  // namespace burst::cli
