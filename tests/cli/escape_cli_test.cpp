// Names and paths with control characters, end to end. A plan file whose name holds a line
// break and a line of shell: `burst export` and `burst launch --slurm` write it into comments
// and quoted words only (bash sourcing or running the file creates nothing; Python reads the
// NeMo YAML and TorchTitan TOML with the keys of a plainly named plan). A plan whose names hold
// ESC or a line break, or whose /cluster/name is not a string: every command that reads it
// stops with one clear line naming the field and the byte, no raw control character, no
// "internal error". A run's JSON with NUL and ESC in a name: the HTML report still parses.
// What a run prints of a path (--data) shows ESC as \x1b.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/json_reader.hpp"
#include "tests/cli/run_cli.hpp"
#include "tests/support/read_back.hpp"
#include "tests/support/temp_dir.hpp"

using burst::Json;
using burst::test::raw_control_at;
using burst::test::run_cli;
using burst::test::sh_quoted;

// A namespace of its own: the unity build compiles this file with the others of its test.
namespace burst::test::escape_cli_test {
namespace {

const std::string kGolden = std::string(BURST_TEST_DATA) + "/plans/a800x4-burst14b-1M.json";
const std::string kTrainPlan = std::string(BURST_TEST_DATA) + "/run/local-1x2-tiny-train-256-seqstash.json";
const std::string kCorpus = std::string(BURST_TEST_DATA) + "/corpus";
const std::string kRunPlan = std::string(BURST_TEST_DATA) + "/run/local-2x2-tiny-train-256.json";
const std::string kRunJson = std::string(BURST_TEST_DATA) + "/../report/data/local-2x2-tiny-train-256.run.json";

// A file name may hold any byte but '/' and NUL.
const std::string kHostileName = "p\ntouch PWNED\nkey_from_path: 1\n[table_from_path]\n\x1b[31m.json";

std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

burst::test::CliRun succeeded(const std::string& args) {
  const auto run = run_cli(args);
  INFO(args << "\n" << run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(raw_control_at(run.err) == std::string::npos);
  return run;
}

// The golden plan with `edit` applied, in `dir`.
template <class Edit>
std::string edited_plan(const burst::test::TempDir& dir, Edit edit) {
  Json doc = burst::read_json_file(kGolden);
  edit(doc);
  const std::filesystem::path file = dir.path / "edited.json";
  write(file, doc.dump(2));
  return file.string();
}

// Every command that reads a plan, on `plan`: each must fail with exit code 2 and `message`.
void every_command_refuses(const burst::test::TempDir& dir, const std::string& plan, const std::string& message) {
  const std::string p = sh_quoted(plan);
  const std::string out = sh_quoted((dir.path / "out.html").string());
  for (const std::string& args :
       {"explain " + p, "export " + p + " --to nemo", "launch " + p, "launch " + p + " --slurm",
        "report " + p + " -o " + out + " --no-scaling --no-timeline", "run " + p + " --dry-run --loopback"}) {
    const auto run = run_cli(args);
    INFO(args << "\n" << run.err);
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Catch::Contains(message));
    CHECK_THAT(run.err, !Catch::Contains("internal error"));
    CHECK(raw_control_at(run.err) == std::string::npos);
    CHECK(raw_control_at(run.out) == std::string::npos);
  }
}

}  // namespace

TEST_CASE("a plan file named with a line of shell: export writes it into comments only") {
  burst::test::TempDir dir("escape-cli-export");
  const std::filesystem::path hostile = dir.path / kHostileName;
  std::filesystem::copy_file(kGolden, hostile);
  const std::filesystem::path plain = dir.path / "plain.json";
  std::filesystem::copy_file(kGolden, plain);

  const std::string megatron = succeeded("export " + sh_quoted(hostile.string()) + " --to megatron").out;
  CHECK(raw_control_at(megatron) == std::string::npos);
  CHECK_THAT(megatron, Catch::Contains("p\\ntouch PWNED\\nkey_from_path: 1\\n[table_from_path]\\n\\x1b[31m.json"));
  burst::test::TempDir run_dir("escape-cli-source");
  write(run_dir.path / "megatron.sh", megatron);
  const auto sourced = burst::test::shell_run("cd " + sh_quoted(run_dir.path.string()) +
                                              " && bash -c 'source ./megatron.sh && echo \"${#MEGATRON_ARGS[@]}\"'");
  CHECK(sourced.status == 0);
  CHECK(run_dir.entries() == std::vector<std::string>{"megatron.sh"});  // no PWNED

  // The recipe's code, as Python parses it (comments dropped), and the YAML and TOML documents.
  for (const auto& [framework, loader] :
       {std::pair<std::string, std::string>{"nemo", "__import__(\"ast\").dump(__import__(\"ast\").parse(f.read()))"},
        {"nemo --nemo-version 1", "yaml.safe_load(f)"},
        {"torchtitan", "tomllib.load(f)"}}) {
    const std::string text = succeeded("export " + sh_quoted(hostile.string()) + " --to " + framework + " --force").out;
    CHECK(raw_control_at(text) == std::string::npos);
    const auto a = burst::test::python_loaded(run_dir.path, text, loader);
    const auto b = burst::test::python_loaded(
        run_dir.path, succeeded("export " + sh_quoted(plain.string()) + " --to " + framework + " --force").out, loader);
    INFO(text << "\n" << a.out);
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    CHECK(Json::parse(a.out) == Json::parse(b.out));  // the same keys and values: nothing added
  }

  // -o: the file is written where asked; the terminal shows the name escaped.
  const std::filesystem::path output = dir.path / "out\x1b[2J.yaml";
  const auto written = succeeded("export " + sh_quoted(plain.string()) + " --to nemo -o " + sh_quoted(output.string()));
  CHECK(std::filesystem::exists(output));
  CHECK_THAT(written.err, Catch::Contains("out\\x1b[2J.yaml"));
}

TEST_CASE("a plan file named with a line of shell: the Slurm script runs srun on exactly that path") {
  burst::test::TempDir dir("escape-cli-slurm");
  const std::filesystem::path hostile = dir.path / kHostileName;
  std::filesystem::copy_file(kGolden, hostile);
  const std::string script =
      succeeded("launch " + sh_quoted(hostile.string()) + " --slurm -- --data " + sh_quoted("d\ntouch PWNED_ARG")).out;
  CHECK(raw_control_at(script) == std::string::npos);
  burst::test::TempDir run_dir("escape-cli-sbatch");
  write(run_dir.path / "job.sbatch", script);
  std::filesystem::create_directories(run_dir.path / "bin");
  write(run_dir.path / "bin" / "srun", "#!/bin/sh\nprintf '%s\\0' \"$@\" > \"$(dirname \"$0\")/../srun-args\"\n");
  std::filesystem::permissions(run_dir.path / "bin" / "srun", std::filesystem::perms::owner_all);
  const auto ran = burst::test::shell_run("cd " + sh_quoted(run_dir.path.string()) +
                                          " && PATH=\"$PWD/bin:$PATH\" bash job.sbatch 2>&1");
  INFO(script << "\n" << ran.out);
  CHECK(ran.status == 0);
  CHECK(run_dir.entries() == std::vector<std::string>{"bin", "job.sbatch", "srun-args"});  // no PWNED
  const std::string args = slurp(run_dir.path / "srun-args");
  // srun --mpi=pmix BURST run PLAN --data ARG, NUL-separated: the plan's path and the argument exactly.
  const std::string nul(1, '\0');
  CHECK_THAT(args,
             Catch::Contains(nul + "run" + nul + hostile.string() + nul + "--data" + nul + "d\ntouch PWNED_ARG" + nul));
}

TEST_CASE("names with control characters: every command that reads the plan stops with one clear line") {
  burst::test::TempDir dir("escape-cli-names");
  every_command_refuses(dir, edited_plan(dir, [](Json& d) { d["job"]["model"]["name"] = "x\x1b[31m"; }),
                        "edited.json:/job/model/name: 'x\\x1b[31m': byte 2 is a control character (\\x1b)");
  every_command_refuses(dir, edited_plan(dir, [](Json& d) { d["meta"]["topology"] = "t\ntouch PWNED"; }),
                        "edited.json:/meta/topology: 't\\ntouch PWNED': byte 2 is a control character (\\n)");
  // A path with ESC is shown escaped in the error about it.
  const auto missing = run_cli("explain " + sh_quoted((dir.path / "no\x1b[2Jplan.json").string()));
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("no\\x1b[2Jplan.json"));
  CHECK(raw_control_at(missing.err) == std::string::npos);
}

TEST_CASE("/cluster/name that is not a string is a clear error, not an internal one") {
  burst::test::TempDir dir("escape-cli-cluster");
  every_command_refuses(dir, edited_plan(dir, [](Json& d) { d["cluster"]["name"] = 5; }),
                        "edited.json:/cluster/name: expected a string, found number");
}

TEST_CASE("a run's JSON with NUL and ESC in a name: the HTML report parses and shows them escaped") {
  burst::test::TempDir dir("escape-cli-report");
  Json run = burst::read_json_file(kRunJson);
  run["memory_items"][0]["item"] = std::string("item\0nul\x1b[31m", 13);
  write(dir.path / "run.json", run.dump());
  const std::string html = (dir.path / "report.html").string();
  succeeded("report " + sh_quoted(kRunPlan) + " --run " + sh_quoted((dir.path / "run.json").string()) + " -o " +
            sh_quoted(html) + " --no-scaling --no-timeline");
  const std::string text = slurp(html);
  CHECK(raw_control_at(text) == std::string::npos);
  CHECK_THAT(text, Catch::Contains("item\\x00nul\\x1b[31m"));
  const auto parsed = burst::test::shell_run(
      "python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' " + sh_quoted(html) + " 2>&1");
  INFO(parsed.out);
  CHECK(parsed.status == 0);
}

TEST_CASE("burst run prints a data path with ESC escaped") {
  burst::test::TempDir dir("escape-cli-run");
  const std::filesystem::path data = dir.path / "corpus\x1b[31m";
  std::filesystem::copy(kCorpus, data, std::filesystem::copy_options::recursive);
  const auto run =
      succeeded("run " + sh_quoted(kTrainPlan) + " --loopback --steps 1 --data " + sh_quoted(data.string()));
  CHECK(raw_control_at(run.out) == std::string::npos);
  CHECK_THAT(run.out, Catch::Contains("corpus\\x1b[31m"));
}

}  // namespace burst::test::escape_cli_test
