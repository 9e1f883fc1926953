// Names and paths in what `burst export` and `burst launch` write. A model name, a topology
// name and a plan file's path that try to be a line of shell, a YAML key or a TOML table stay
// inside their comment, value or quoted word: each file is read back by the program it is for
// (bash sourcing or running it, Python's yaml, tomllib) and must mean exactly what the same
// file of a plan with plain names means. The plan reader refuses such names; a plan built in
// code still carries them to the writers, and a path is any bytes a file name may hold.
// The plans: BurstEngine's 14B 1M case as read from its file, and the same with hostile names.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "plan/plan.hpp"
#include "planner/export/export.hpp"
#include "planner/launch/launch_script.hpp"
#include "tests/support/read_back.hpp"
#include "tests/support/temp_dir.hpp"

using namespace burst;
using test::raw_control_at;
using test::sh_quoted;

// A namespace of its own: the unity build compiles this file with the others of its test.
namespace burst::test::escaped_output_test {
namespace {

// A file name may hold any byte but '/' and NUL.
const std::string kSource = "/plans/p\ntouch PWNED_PATH\nkey_from_path: 1\n[table_from_path]\n\x1b[31m.json";

// BurstEngine's 14B 1M case, whose cluster can be simulated (the equivalent's cost) and has NICs.
plan::Plan plain_plan() { return plan::read_plan(std::string(BURST_TEST_DATA) + "/plans/a800x4-burst14b-1M.json"); }

plan::Plan hostile_plan() {
  plan::Plan p = plain_plan();
  p.job.model.name = "m\ntouch PWNED_MODEL\nkey_from_model: 1\n[table_from_model]\n\xc2\x85key_after_nel: 1";
  p.topology_name = "t\ntouch PWNED_TOPOLOGY\n[table_from_topology]\nkey = 1\n\xe2\x80\xa8key_after_ls: 1";
  for (plan::Alternative& a : p.alternatives) a.reason += "r\ntouch PWNED_REASON\n\x1b[2J";
  return p;
}

std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

// A stand-in for a launcher (srun, mpirun) that records its arguments, NUL-separated.
void fake_launcher(const std::filesystem::path& bin, const std::string& name) {
  std::filesystem::create_directories(bin);
  write(bin / name, "#!/bin/sh\nprintf '%s\\0' \"$@\" > \"$(dirname \"$0\")/../" + name + "-args\"\n");
  std::filesystem::permissions(bin / name, std::filesystem::perms::owner_all);
}

std::vector<std::string> recorded_args(const std::filesystem::path& file) {
  const std::string text = slurp(file);
  std::vector<std::string> args;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\0', at);
    args.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return args;
}

// The settings file of `framework` for the plain and the hostile plan, read back by `loader`.
std::pair<Json, Json> loaded_both(const std::string& framework, const std::string& loader, int nemo_version = 2) {
  test::TempDir dir("escaped-" + framework);
  const std::string plain =
      exporter::export_plan(plain_plan(), "/plans/plan.json", framework, "--to", true, nemo_version).text;
  const std::string hostile =
      exporter::export_plan(hostile_plan(), kSource, framework, "--to", true, nemo_version).text;
  CHECK(raw_control_at(hostile) == std::string::npos);
  const test::ShellRun a = test::python_loaded(dir.path, plain, loader);
  const test::ShellRun b = test::python_loaded(dir.path, hostile, loader);
  INFO(hostile << "\n" << b.out);
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  return {Json::parse(a.out), Json::parse(b.out)};
}

}  // namespace

TEST_CASE("Megatron export: names and the plan path stay in the comments when bash sources the file") {
  test::TempDir dir("escaped-megatron");
  const std::string text = exporter::export_plan(hostile_plan(), kSource, "megatron").text;
  CHECK(raw_control_at(text) == std::string::npos);
  CHECK_THAT(text, Catch::Contains("p\\ntouch PWNED_PATH\\n"));  // shown in the comment, escaped
  CHECK_THAT(text, Catch::Contains("m\\ntouch PWNED_MODEL\\n"));
  // Every line is a comment or the array, as in a plan with plain names.
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    CHECK((line.rfind("# ", 0) == 0 || line == "MEGATRON_ARGS=(" || line.rfind("  --", 0) == 0 || line == ")"));
  }
  write(dir.path / "megatron.sh", text);
  const auto sourced = [&](const std::string& file) {
    return test::shell_run("cd " + sh_quoted(dir.path.string()) + " && bash -c 'source ./" + file +
                           " && printf \"%s\\n\" \"${MEGATRON_ARGS[@]}\"' 2>&1");
  };
  const test::ShellRun hostile = sourced("megatron.sh");
  INFO(hostile.out);
  CHECK(hostile.status == 0);
  CHECK(dir.entries() == std::vector<std::string>{"megatron.sh"});  // no PWNED_* file
  write(dir.path / "plain.sh", exporter::export_plan(plain_plan(), "/plans/plan.json", "megatron").text);
  CHECK(hostile.out == sourced("plain.sh").out);  // the same arguments
}

TEST_CASE("NeMo 2 recipe: names and the plan path add no code") {
  // The recipe as Python parses it: comments are dropped, so the hostile plan's must leave the same tree.
  const auto [plain, hostile] = loaded_both("nemo", "__import__(\"ast\").dump(__import__(\"ast\").parse(f.read()))");
  CHECK(hostile == plain);
}

TEST_CASE("NeMo export: names and the plan path add no YAML key") {
  const auto [plain, hostile] = loaded_both("nemo", "yaml.safe_load(f)", 1);
  CHECK(hostile == plain);
  std::vector<std::string> keys;
  for (const auto& [key, value] : hostile.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"trainer", "model"});
}

TEST_CASE("TorchTitan export: names and the plan path add no TOML key or table") {
  const auto [plain, hostile] = loaded_both("torchtitan", "tomllib.load(f)");
  CHECK(hostile == plain);
  std::vector<std::string> keys;
  for (const auto& [key, value] : hostile.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"model", "training", "parallelism", "activation_checkpoint"});
  CHECK(hostile["model"].empty());
}

TEST_CASE("DeepSpeed export: JSON carries the names exactly, a path that is not UTF-8 too") {
  const Json plain =
      Json::parse(exporter::export_plan(plain_plan(), "/plans/plan.json", "deepspeed", "--to", true).text);
  const Json hostile =
      Json::parse(exporter::export_plan(hostile_plan(), kSource + "\xff", "deepspeed", "--to", true).text);
  CHECK(hostile.size() == plain.size());
  for (const auto& [key, value] : plain.items()) {
    if (key != "_burst_notes") CHECK(hostile[key] == value);
  }
  CHECK_THAT(hostile["_burst_notes"][1].get<std::string>(), Catch::Contains(hostile_plan().job.model.name));
  CHECK_THAT(hostile["_burst_notes"][1].get<std::string>(), Catch::Contains(".json\xef\xbf\xbd"));  // U+FFFD
}

TEST_CASE("the Slurm script: names in comments, every path one quoted word; srun gets them exactly") {
  test::TempDir dir("escaped-slurm");
  launch::LaunchRequest request;
  request.burst = "/opt/burst dir/bin/burst\n";
  request.plan_path = kSource;
  request.run_args = {"--data", "corpus\ntouch PWNED_ARG", "it's"};
  const std::string script = launch::slurm_script(hostile_plan(), request);
  CHECK(raw_control_at(script) == std::string::npos);
  std::istringstream lines(script);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.rfind("#", 0) == 0 || line.rfind("export ", 0) == 0 || line == "set -euo pipefail")
      continue;
    CHECK_THAT(line, Catch::StartsWith("srun "));  // the one command
  }
  write(dir.path / "job.sbatch", script);
  fake_launcher(dir.path / "bin", "srun");
  const test::ShellRun ran =
      test::shell_run("cd " + sh_quoted(dir.path.string()) + " && PATH=\"$PWD/bin:$PATH\" bash job.sbatch 2>&1");
  INFO(script << "\n" << ran.out);
  CHECK(ran.status == 0);
  CHECK(dir.entries() == std::vector<std::string>{"bin", "job.sbatch", "srun-args"});  // no PWNED_* file
  CHECK(recorded_args(dir.path / "srun-args") == std::vector<std::string>{"--mpi=pmix", request.burst, "run", kSource,
                                                                          "--data", "corpus\ntouch PWNED_ARG", "it's"});
}

TEST_CASE("the mpirun line: one line, and mpirun gets every word exactly") {
  test::TempDir dir("escaped-mpirun");
  launch::LaunchRequest request;
  request.burst = "burst";
  request.plan_path = kSource;
  request.hostfile = "hosts\n; touch PWNED_HOSTS";
  const std::vector<std::string> argv = launch::mpirun_command(hostile_plan(), request);
  const std::string line = launch::shell_line(argv);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(raw_control_at(line) == std::string::npos);
  write(dir.path / "line.sh", line + "\n");
  fake_launcher(dir.path / "bin", "mpirun");
  const test::ShellRun ran =
      test::shell_run("cd " + sh_quoted(dir.path.string()) + " && PATH=\"$PWD/bin:$PATH\" bash line.sh 2>&1");
  INFO(line << "\n" << ran.out);
  CHECK(ran.status == 0);
  CHECK(dir.entries() == std::vector<std::string>{"bin", "line.sh", "mpirun-args"});
  CHECK(recorded_args(dir.path / "mpirun-args") == std::vector<std::string>(argv.begin() + 1, argv.end()));
}

}  // namespace burst::test::escaped_output_test
