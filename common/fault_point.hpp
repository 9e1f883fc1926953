// Test-only fault injection: the CLI tests make one rank of a real mpirun job stall or die at a
// chosen moment, so that what the other ranks do then (end the job with burst's message, leave
// the previous checkpoint resumable) is reproduced exactly, not by a race with `kill`.
//
//   BURST_TEST_FAULT=<point>:<rank>[:<seconds>]
//
// When rank <rank> reaches fault_point(<point>, <rank>), a point named stall-... sleeps
// <seconds> (default 3600: until the job is ended) and then goes on; a point named die-... kills
// the process with SIGKILL, as the kernel's OOM killer or a lost node would. Unset, or naming
// another point or rank, fault_point does nothing (one getenv). The points:
//   stall-before-ready  burst run: after preparing, before the readiness all-reduce (every_rank.cpp)
//   die-after-shard     burst run --save: after this rank wrote its shard of a save, before the
//                       set is complete (training_run.cpp)
#pragma once

#include <string_view>

namespace burst {

void fault_point(std::string_view point, int rank);

}  // namespace burst
