// Runs Catch2's session over the command line: the one entry the test mains call (catch_main.cpp,
// runtime_mpi/mpi_catch_main.cpp, gpu/gpu_catch_main.cpp). Catch2 declares its Session only
// beside its implementation, which catch_session.cpp compiles once for every test executable.
#pragma once

namespace burst::test {

// Catch::Session().run(argc, argv): the number of failed assertions, at most 255.
int run_catch_session(int argc, char* argv[]);

}  // namespace burst::test
