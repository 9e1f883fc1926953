// Test helpers: the options of a training run over the tests' corpus (tests/data/corpus), for
// `steps` steps, with or without --check, everything else TrainingOptions' defaults; and removing
// what a run saved.
#pragma once

#include <filesystem>
#include <string>

#include "runtime/training/training_run.hpp"

namespace burst::test {

inline rt::TrainingOptions training_options(int steps, bool check) {
  rt::TrainingOptions o;
  o.steps = steps;
  o.check = check;
  o.data = BURST_TEST_DATA "/corpus";
  return o;
}

// A saved state: its manifest and every generation of it (rt::SaveSet).
inline void remove_saved_state(const std::string& path) {
  const std::filesystem::path manifest(path);
  for (const auto& e : std::filesystem::directory_iterator(manifest.parent_path())) {
    if (e.path().filename().string().starts_with(manifest.filename().string() + ".gen"))
      std::filesystem::remove_all(e.path());
  }
  std::filesystem::remove(path);
}

}  // namespace burst::test
