// Plan files: reading with the file name in every error, writing atomically
// (common/atomic_file.hpp: a crash never leaves half a plan behind).
#include "common/atomic_file.hpp"
#include "plan/plan.hpp"

namespace burst::plan {

Plan read_plan(const std::string& path) { return plan_from_json(read_json_file(path), path); }

void write_plan(const Plan& plan, const std::string& path) {
  write_file_atomically(path, to_json(plan).dump(2) + "\n", "the plan");
}

}  // namespace burst::plan
