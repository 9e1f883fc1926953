// Test helper: the options of a training run over the tests' corpus (tests/data/corpus), for
// `steps` steps, with or without --check; everything else TrainingOptions' defaults.
#pragma once

#include "runtime/training/training_run.hpp"

namespace burst::test {

inline rt::TrainingOptions training_options(int steps, bool check) {
  rt::TrainingOptions o;
  o.steps = steps;
  o.check = check;
  o.data = BURST_TEST_DATA "/corpus";
  return o;
}

}  // namespace burst::test
