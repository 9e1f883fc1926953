#include "tests/cli/run_cli.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <sys/wait.h>

namespace burst::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

CliRun run_cli(const std::string& args) {
  char out_path[] = "/tmp/burst-cli-out-XXXXXX";
  char err_path[] = "/tmp/burst-cli-err-XXXXXX";
  const int out_fd = mkstemp(out_path);
  const int err_fd = mkstemp(err_path);
  close(out_fd);
  close(err_fd);
  const std::string command =
      std::string("'") + BURST_CLI + "' " + args + " >" + out_path + " 2>" + err_path + " </dev/null";
  const int status = std::system(command.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = slurp(out_path);
  run.err = slurp(err_path);
  std::remove(out_path);
  std::remove(err_path);
  return run;
}

}  // namespace burst::test
