// A training run's write probe and its save never follow a symbolic link planted in the save's
// directory (common/fresh_temporary.hpp): links planted under the names older burst used
// ("<save>.probe.<pid>", "<save>.tmp.<pid>", which anyone could predict) and under names of the
// new shape leave their targets untouched, and the state is saved as a regular file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/training/training_run.hpp"
#include "runtime/training/training_state.hpp"
#include "tests/support/ring_plan.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/training_options.hpp"

using namespace burst;
namespace fs = std::filesystem;

namespace {

std::string contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("a run's write probe and save leave the targets of links planted beside the save untouched",
          "[training_state][planted_link]") {
  const test::TempDir dir("planted-link");
  const fs::path state = dir.path / "run.state";
  const std::string pid = std::to_string(::getpid());
  const std::vector<std::string> planted{"run.state.probe." + pid, "run.state.tmp." + pid,
                                         "run.state.tmp." + pid + ".0000000000000000"};
  for (const std::string& name : planted) {
    const fs::path victim = dir.path / ("victim-of-" + name);
    std::ofstream(victim) << "precious";
    fs::create_symlink(victim, dir.path / name);
  }
  const plan::Plan plan =
      test::training_plan(1, 1, Layout::Contiguous, BackwardMode::QRing, CheckpointPolicy::None, 0, 1);
  rt::TrainingOptions options = test::training_options(1, false);
  options.save = state.string();
  const auto comms = rt::make_loopback_communicators(1, rt::CommOptions{30});
  rt::TrainingRun run(plan, *comms[0], options);
  (void)run.run();
  for (const std::string& name : planted) {
    INFO(name);
    CHECK(contents(dir.path / ("victim-of-" + name)) == "precious");
    CHECK(fs::is_symlink(dir.path / name));
  }
  CHECK_FALSE(fs::is_symlink(state));
  CHECK(rt::load_training_state(state.string()).step == 1);
}
