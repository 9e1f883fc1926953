// Fresh temporaries (common/fresh_temporary.hpp): each a new regular file named
// "<target>.<kind>.<pid>.<16 hex digits>", never the same name twice, and a failure (a missing
// directory) is fd -1 with errno, not a throw or a file elsewhere.
#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>
#include <regex>
#include <set>

#include <unistd.h>

#include "common/fresh_temporary.hpp"
#include "tests/support/temp_dir.hpp"

using namespace burst;
namespace fs = std::filesystem;

TEST_CASE("fresh temporaries are new regular files under unpredictable names beside the target", "[fresh_temporary]") {
  const test::TempDir dir("fresh-temporary");
  const std::string target = (dir.path / "out.json").string();
  const std::regex shape(std::regex_replace(target, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") + R"(\.tmp\.)" +
                         std::to_string(::getpid()) + R"(\.[0-9a-f]{16})");
  std::set<std::string> names;
  for (int i = 0; i < 32; ++i) {
    const FreshTemporary t = create_fresh_temporary(target, "tmp");
    REQUIRE(t.fd >= 0);
    ::close(t.fd);
    CHECK(std::regex_match(t.path, shape));
    CHECK(fs::is_regular_file(fs::symlink_status(t.path)));
    names.insert(t.path);
  }
  CHECK(names.size() == 32);
  CHECK_FALSE(fs::exists(target));

  errno = 0;
  const FreshTemporary missing = create_fresh_temporary((dir.path / "no-such-dir" / "out.json").string(), "probe");
  CHECK(missing.fd == -1);
  CHECK(errno == ENOENT);
  CHECK(missing.path.starts_with((dir.path / "no-such-dir" / "out.json.probe.").string()));
}
