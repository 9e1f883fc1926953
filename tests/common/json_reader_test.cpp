// JsonReader reports every problem with file and JSON pointer, and keeps going.
#include <catch2/catch.hpp>

#include <string>

#include <fmt/format.h>

#include "common/json_reader.hpp"

using namespace burst;

TEST_CASE("syntax errors give line and column") {
  try {
    (void)parse_json_text("{\n  \"a\": 1,\n  \"b\": ]\n}", "x.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.problems().front().where == "x.json:3:8");
    CHECK(e.problems().front().what.find("invalid JSON") == 0);
  }
  CHECK_THROWS_WITH(read_json_file("/nonexistent/file.json"), Catch::Contains("/nonexistent/file.json: no such file"));
}

TEST_CASE("a document nested deeper than any burst file is refused before parsing, not by a stack overflow") {
  // 200000 levels and a key after them: what crashed every command that reads JSON.
  const std::string deep = "{\"a\": " + std::string(200000, '[') + std::string(200000, ']') + ", \"b\": 1}";
  try {
    (void)parse_json_text(deep, "deep.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.problems().front().where == fmt::format("deep.json:1:{}", 7 + kMaxJsonDepth - 1));
    CHECK(e.problems().front().what == "invalid JSON: arrays and objects nest deeper than 512 levels");
  }
  // Exactly the limit parses; brackets inside strings do not count.
  const std::string at_limit = std::string(kMaxJsonDepth, '[') + "\"[[[{\\\"\"" + std::string(kMaxJsonDepth, ']');
  CHECK(parse_json_text(at_limit, "ok.json").is_array());
}

TEST_CASE("a key given twice in one object is refused with both places, not resolved silently") {
  try {
    (void)parse_json_text("{\n  \"a\": 1,\n  \"b\": {\"a\": 2, \"c\": \"a\"},\n  \"a\": 3\n}", "dup.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.problems().front().where == "dup.json:4:3");
    CHECK(e.problems().front().what == "duplicate key 'a' (first at 2:3)");
  }
  // An escaped spelling is the same key once decoded, as the parser reads it.
  try {
    (void)parse_json_text("{\"nodes\": 4, \"\\u006eodes\": 1024}", "esc.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.problems().front().where == "esc.json:1:14");
    CHECK(e.problems().front().what == "duplicate key '\\u006eodes' (first at 1:2, written 'nodes')");
  }
  // Different keys that only look alike escaped are not duplicates.
  CHECK(parse_json_text("{\"a\\\"b\": 1, \"a\\\\b\": 2, \"a:b\": 3, \"a\": 4}", "ok.json").size() == 4);
  // The same key in different objects, and as a string value, is fine.
  CHECK(parse_json_text("{\"a\": {\"a\": 1}, \"b\": [{\"a\": 1}, {\"a\": \"a\"}]}", "ok.json").size() == 2);
}

TEST_CASE("field accessors collect every problem with its pointer") {
  const Json doc = parse_json_text(
      R"({"name": 3, "bw": "200GBs", "lat": "2us", "count": -1, "kind": "rail", "extra": true})", "t.json");
  Problems problems;
  JsonReader r("t.json", problems);
  CHECK_FALSE(r.string(doc, "", "name"));
  CHECK_FALSE(r.bandwidth(doc, "", "bw"));
  CHECK(r.duration(doc, "", "lat").value() == Approx(2e-6));
  CHECK_FALSE(r.integer(doc, "", "count", true, 1, 10));
  CHECK_FALSE(r.choice(doc, "", "kind", {"rail-optimized", "fat-tree"}));
  CHECK_FALSE(r.number(doc, "", "missing"));
  r.reject_unknown_keys(doc, "", {"name", "bw", "lat", "count", "kind", "extre"});
  REQUIRE(problems.size() == 6);
  const auto& list = problems.list();
  CHECK(list[0].where == "t.json:/name");
  CHECK(list[1].where == "t.json:/bw");
  CHECK(list[1].what == "'200GBs': unknown unit 'GBs'");
  CHECK(list[2].what == "-1 is out of range");
  CHECK(list[3].hint == "did you mean 'rail-optimized'?");
  CHECK(list[4].what == "missing required field 'missing'");
  CHECK(list[5].hint == "did you mean 'extre'?");
}
