// Catch2's implementation, compiled once for every test executable of a build tree: it is the
// heaviest file of the test suite to compile (catch_session.hpp).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/catch_session.hpp"

namespace burst::test {

int run_catch_session(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }

}  // namespace burst::test
