// Opening a library on first use: a library that is there opens and gives its entry points; one
// that is not, or lacks an entry point, is a burst::Error that names every file tried and the
// loader's reason, never a crash on a null pointer.
#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "common/shared_library.hpp"

namespace {

std::string message_of(const burst::Error& e) { return e.problems().front().to_string(); }

}  // namespace

TEST_CASE("a library that is there opens, and its entry points work") {
  const burst::SharedLibrary libc = burst::open_shared_library("libc", {"libburst-no-such.so.9", "libc.so.6"}, "", "");
  CHECK(libc.file == std::string("libc.so.6"));
  decltype(&std::strlen) length = nullptr;
  burst::take_symbol(libc, "strlen", length);
  REQUIRE(length != nullptr);
  CHECK(length("burst") == 5);
}

TEST_CASE("no file opens: one error naming each file and the loader's reason") {
  try {
    (void)burst::open_shared_library("OpenBLAS", {"libburst-no-such.so.9", "/nowhere/libburst.so"},
                                     "OpenBLAS's libopenblas on the loader's path", "set LD_LIBRARY_PATH");
    FAIL("a missing library opened");
  } catch (const burst::Error& e) {
    const std::string m = message_of(e);
    CHECK_THAT(m, Catch::StartsWith("OpenBLAS: cannot load the library (libburst-no-such.so.9: "));
    CHECK_THAT(m, Catch::Contains("; /nowhere/libburst.so: "));
    CHECK_THAT(m, Catch::Contains("No such file"));
    CHECK_THAT(m, Catch::Contains("set LD_LIBRARY_PATH"));
  }
}

TEST_CASE("a missing entry point is an error naming it and the file") {
  const burst::SharedLibrary libc = burst::open_shared_library("libc", {"libc.so.6"}, "", "");
  void (*missing)() = nullptr;
  try {
    burst::take_symbol(libc, "burst_no_such_function", missing);
    FAIL("a missing entry point was taken");
  } catch (const burst::Error& e) {
    CHECK_THAT(message_of(e), Catch::StartsWith("libc: libc.so.6 has no burst_no_such_function"));
  }
  CHECK(missing == nullptr);
}
