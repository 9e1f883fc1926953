// Plan files: errors name the file (and line:column for bad JSON); writing is atomic, leaves
// no temporary behind, and names the path when the directory is missing or not writable.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "plan/plan.hpp"
#include "tests/plan/sample_plan.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/temp_dir.hpp"

using namespace burst;
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("write_plan then read_plan gives the plan back, atomically and byte-stable") {
  const test::TempDir dir("plan-test");
  const std::string path = (dir.path / "plan.json").string();
  plan::write_plan(test::sample_plan(), path);
  const std::string first = read_untrusted_file(path, kJsonDocumentCap);
  CHECK(plan::read_plan(path) == test::sample_plan());
  plan::write_plan(test::sample_plan(), path);  // over an existing plan
  CHECK(read_untrusted_file(path, kJsonDocumentCap) == first);
  CHECK(first.back() == '\n');
  CHECK(dir.entries() == std::vector<std::string>{"plan.json"});  // no .tmp left behind
}

TEST_CASE("write_plan names the path when it cannot write") {
  const test::TempDir dir("plan-test");
  const std::string missing = (dir.path / "no-such-dir" / "plan.json").string();
  CHECK(test::error_text([&] { plan::write_plan(test::sample_plan(), missing); }) ==
        missing + ": cannot write the plan: directory '" + (dir.path / "no-such-dir").string() +
            "' does not exist (hint: create it first)");

  // A directory without write permission; root writes anywhere, but not into /proc.
  fs::path locked = dir.path / "locked";
  fs::create_directories(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  if (::access(locked.c_str(), W_OK) == 0) locked = "/proc";
  const std::string path = (locked / "plan.json").string();
  const std::string text = test::error_text([&] { plan::write_plan(test::sample_plan(), path); });
  CHECK(text.rfind(path + ": cannot write the plan: cannot create '" + path + ".tmp.", 0) == 0);
  CHECK_THAT(text, Catch::EndsWith("(hint: check the directory is writable)"));
}

TEST_CASE("read_plan: a missing file and bad JSON name the file") {
  const test::TempDir dir("plan-test");
  const std::string missing = (dir.path / "absent.json").string();
  CHECK(test::error_text([&] { (void)plan::read_plan(missing); }) == missing + ": no such file (hint: check the path)");

  const std::string bad = (dir.path / "bad.json").string();
  write_text(bad, "{\n  \"schema\": \"burst.plan/1\",\n  \"meta\": }\n");
  CHECK_THAT(test::error_text([&] { (void)plan::read_plan(bad); }),
             Catch::StartsWith(bad + ":3:11: invalid JSON: syntax error while parsing value - unexpected '}'"));

  const std::string wrong = (dir.path / "wrong.json").string();
  write_text(wrong, R"({"schema": "burst.plan/0"})");
  CHECK_THAT(test::error_text([&] { (void)plan::read_plan(wrong); }),
             Catch::StartsWith(wrong + ":/schema: 'burst.plan/0' is not a plan schema"));
}
