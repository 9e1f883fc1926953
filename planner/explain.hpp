// `burst explain`: why a plan won, what binds it, and what the runner-up would need to win,
// read from the plan alone (no re-simulation: a plan explains itself, wherever it came from).
//
// Why it won: the chosen family against every other family's best, by predicted tokens/s per
// GPU. The binding constraint: memory when a faster candidate was refused for memory or the plan
// uses nearly all of the budget; otherwise the largest share of the step (compute bound,
// communication bound, optimizer or recompute bound). The runner-up: the fastest other
// family; if it fits, the step time it must shed and whether its exposed communication alone
// would be enough; if it does not fit, the memory it would need. Text for a terminal: the
// plan's names and reasons appear as escape::terminal shows them.
#pragma once

#include <string>

#include "plan/plan.hpp"

namespace burst::planner {

[[nodiscard]] std::string explain_plan(const plan::Plan& plan);

}  // namespace burst::planner
