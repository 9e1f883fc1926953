// The main of the unit tests: Catch2's session over the command line.
#include "tests/catch_session.hpp"

int main(int argc, char* argv[]) { return burst::test::run_catch_session(argc, argv); }
