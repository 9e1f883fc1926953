// burst: plan and run long-sequence transformer training across GPU clusters.
// Exit codes: 0 success, 1 internal failure, 2 bad input or usage, 130 cut short by Ctrl-C
// (after writing what was done: cut_short.hpp).
//
// How the process ends: once the command is done and its objects are destroyed (MPI finalised,
// files closed), main flushes stdout and stderr and ends the process without the shared
// libraries' exit handlers. OpenBLAS (Debian's threaded build) starts a worker thread when it
// loads (at a command's first CPU kernel, runtime/kernels/blas.hpp), which burst never uses (every sgemm runs
// single-threaded in the calling thread, runtime/kernels/blas.hpp); under an address-space limit (ulimit -v, a batch
// system's memory cap) that worker cannot allocate its buffer and never becomes idle, and OpenBLAS's exit handler
// joined it for ever: `burst topo show` hung at exit under 1 GB. Under AddressSanitizer the leak check that would run
// at exit runs here first.
//
// How the process keeps its memory: freed blocks stay in the process for the next step instead
// of going back to the kernel (common/host_memory.hpp), set before any command runs.
#include <cstdio>
#include <cstdlib>
#include <exception>

#if defined(__SANITIZE_ADDRESS__)
#define BURST_LEAK_CHECK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BURST_LEAK_CHECK 1
#endif
#endif
#if defined(BURST_LEAK_CHECK)
#include <sanitizer/lsan_interface.h>
#endif

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/error.hpp"
#include "common/interrupt.hpp"
#include "common/host_memory.hpp"
#include "tools/burst/app.hpp"
#include "tools/burst/cut_short.hpp"
#include "tools/burst/failure_message.hpp"

namespace {

int run_command(int argc, char** argv) {
  const auto app = burst::cli::make_app();
  try {
    app->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other usage error is bad input: exit code 2.
    return app->exit(e) == 0 ? 0 : 2;
  } catch (const burst::Error& e) {
    for (const auto& p : e.problems()) fmt::print(stderr, "error: {}\n", p.to_string());
    return 2;
  } catch (const burst::cli::CutShort& e) {
    fmt::print(stderr, "{}\n", e.what());
    return burst::kInterruptedExitCode;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n",
               burst::cli::failure_message(e, burst::cli::workload_of(burst::cli::parsed_command(*app))));
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  (void)burst::keep_freed_host_memory();  // where it cannot, the process maps as before
  const int code = run_command(argc, argv);
  std::fflush(nullptr);
#if defined(BURST_LEAK_CHECK)
  __lsan_do_leak_check();
#endif
  std::_Exit(code);
}
