#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "common/text.hpp"

using namespace burst;

TEST_CASE("edit distance and did-you-mean") {
  CHECK(text::edit_distance("kitten", "sitting") == 3);
  CHECK(text::edit_distance("", "abc") == 3);
  const std::vector<std::string> presets = {"a800-4hca", "dgx-a100", "dgx-h100", "h200"};
  CHECK(text::did_you_mean("a800-4hc", presets) == "did you mean 'a800-4hca'?");
  CHECK(text::did_you_mean("dgx-h10", presets) == "did you mean 'dgx-h100'?");
  CHECK(text::did_you_mean("completely-different", presets).empty());
}

TEST_CASE("problems format as one line each and are all reported") {
  Problems problems;
  CHECK_NOTHROW(problems.throw_if_any());
  problems.add("f.json:/a", "bad", "x, y", "try x");
  problems.add("f.json:/b", "missing");
  try {
    problems.throw_if_any();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "f.json:/a: bad (valid: x, y; hint: try x)\nf.json:/b: missing");
    CHECK(e.problems().size() == 2);
  }
}
