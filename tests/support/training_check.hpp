// Test helper for MPI training tests: a run of `steps` steps with --check, and on rank 0 the
// check's verdict (loss, every weight gradient and the gradient norm within 1e-3 of one rank on
// the whole global batch), a failure naming the case and its figures.
#pragma once

#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "runtime/training/training_run.hpp"
#include "tests/support/training_options.hpp"

namespace burst::test {

// The report on rank 0, after its check's assertions; nullopt on the other ranks.
inline std::optional<rt::TrainingReport> trained_like_one_rank(const plan::Plan& plan, rt::Communicator& comm,
                                                               int steps, const std::string& what) {
  rt::TrainingRun run(plan, comm, training_options(steps, true));
  std::optional<rt::TrainingReport> report = run.run();
  if (comm.rank() != 0) return std::nullopt;
  REQUIRE(report);
  REQUIRE(report->check);
  const rt::TrainingCheck& c = *report->check;
  INFO(what << ": loss " << c.loss << " vs " << c.reference_loss << ", worst gradient " << c.worst_tensor << " "
            << c.max_rel_err_grad << ", gradient norm " << c.grad_norm << " vs " << c.reference_grad_norm);
  CHECK(c.max_rel_err_grad < 1e-3);
  CHECK(c.loss_rel_err < 1e-3);
  CHECK(c.grad_norm_rel_err < 1e-3);  // the norm clipping used: every part's, replicated tensors once
  return report;
}

}  // namespace burst::test
