// The attention-run options of the runtime's MPI tests: check against the single-rank reference.
#pragma once

#include "runtime/executor/attention_run.hpp"

namespace burst::test {

inline rt::AttentionRunOptions checking() {
  rt::AttentionRunOptions o;
  o.check = true;
  return o;
}

}  // namespace burst::test
