// Fuzzes the command-line parsing of every subcommand, and only the parsing: the app comes from
// burst::cli::make_app(), the one main() runs, and the fuzzer gives the root app a
// parse-complete callback that throws Parsed. CLI11 runs the root's parse-complete callback
// after the whole command line is parsed, checked and converted, and before any subcommand's
// callback, so nothing is planned, run or written. (Clearing the subcommands' callbacks instead
// would free the option structs they own, which the parsed options point into.) The first byte
// picks the subcommand, the rest is its arguments, one per line. A CLI::ParseError (a usage
// error, --help, --version) or a burst::Error is the correct answer to bad arguments; any other
// exception, a crash or a sanitizer report is a bug.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/error.hpp"
#include "tools/burst/app.hpp"

namespace {

constexpr std::array<std::string_view, 20> kSubcommands = {
    "topo list",      "topo show",  "topo validate",   "topo convert",   "simulate",        "plan", "explain",
    "capacity",       "whatif",     "report",          "export",         "launch",          "run",  "calibrate",
    "bench simulate", "bench plan", "bench attention", "bench training", "bench precision", ""};

// Thrown once the command line is parsed, before any command would run.
struct Parsed {};

// The words of `text` split at `separator` (two in a row make an empty word); none for "".
std::vector<std::string> words(std::string_view text, char separator) {
  std::vector<std::string> out;
  for (std::size_t begin = 0; begin < text.size() || (begin == text.size() && !out.empty());) {
    const auto end = std::min(text.find(separator, begin), text.size());
    out.emplace_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::vector<std::string> args = words(kSubcommands[data[0] % kSubcommands.size()], ' ');
  const std::vector<std::string> rest = words({reinterpret_cast<const char*>(data + 1), size - 1}, '\n');
  args.insert(args.end(), rest.begin(), rest.end());
  std::reverse(args.begin(), args.end());  // CLI::App::parse takes the arguments last first
  try {
    const auto app = burst::cli::make_app();
    app->parse_complete_callback([] { throw Parsed{}; });
    app->parse(args);
    std::fprintf(stderr, "parse returned without completing: a command could have run\n");
    std::abort();
  } catch (const Parsed&) {
  } catch (const CLI::ParseError&) {
  } catch (const burst::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
