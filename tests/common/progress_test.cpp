// The progress estimate: equal items count one each; weighted items count their work, so a
// cheap first item does not promise a short run.
#include <catch2/catch.hpp>

#include "common/progress.hpp"

using burst::Progress;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("progress: equal items count one each") {
  const Progress p("x", 4, false);
  CHECK_THAT(p.fraction_done(0), WithinAbs(0.0, 1e-12));
  CHECK_THAT(p.fraction_done(1), WithinAbs(0.25, 1e-12));
  CHECK_THAT(p.fraction_done(4), WithinAbs(1.0, 1e-12));
  CHECK_THAT(p.fraction_done(9), WithinAbs(1.0, 1e-12));
}

TEST_CASE("progress: weighted items count their work") {
  const Progress p("x", std::vector<double>{1, 1, 98}, false);
  CHECK_THAT(p.fraction_done(1), WithinAbs(0.01, 1e-12));
  CHECK_THAT(p.fraction_done(2), WithinAbs(0.02, 1e-12));
  CHECK_THAT(p.fraction_done(3), WithinAbs(1.0, 1e-12));
  // 2 of 3 items in 1 s: by items about 0.5 s would be left, by work 49 s.
  CHECK_THAT(burst::progress_status(2, 3, p.fraction_done(2), 1.0), Contains("about 49 s left"));
  CHECK_THAT(burst::progress_status(2, 3, p.fraction_done(2), 1.0), Contains("2 of 3 (2.0%)"));
}

TEST_CASE("progress: weights of zero fall back to counting items") {
  const Progress p("x", std::vector<double>{0, 0}, false);
  CHECK_THAT(p.fraction_done(1), WithinAbs(0.5, 1e-12));
  CHECK(burst::progress_status(3, 3, 1.0, 2.0).find("left") == std::string::npos);
}
