// The training runtime on every rank of the job, against the single-rank step (TrainingRun's
// --check: the first step's loss and every weight gradient within 1e-3 relative): every
// checkpoint policy x backward mode x layout, several masks, a double ring, a chunked LM head;
// then the memory each policy and the chunking hold, determinism and save/resume. Then ZeRO:
// every stage against one rank and against each other, what each stage holds, and shards saved
// by one stage and rank count resumed by another. The hand-made plans keep the plan's default
// ZeRO stage (3) unless a test sets another.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/comm/mpi_communicator.hpp"
#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/training/detail/state_shards.hpp"
#include "runtime/training/training_run.hpp"
#include "tests/support/bf16_step_kernels.hpp"
#include "tests/support/ring_plan.hpp"
#include "tests/support/training_options.hpp"

using namespace burst;

namespace {

using test::training_plan;

rt::TrainingOptions options(int steps, bool check) { return test::training_options(steps, check); }

// The report as `burst run --json` writes it (TrainingReport::to_json, the document scripts
// read) on rank 0, null elsewhere.
Json train(const plan::Plan& plan, rt::Communicator& comm, const rt::TrainingOptions& o) {
  rt::TrainingRun run(plan, comm, o);
  const std::optional<rt::TrainingReport> report = run.run();
  return report ? report->to_json() : Json();
}

// On rank 0: the check passed, with its figures in the failure message.
void require_check(const Json& report, const std::string& what) {
  INFO(what << ": " << report["check"].dump());
  CHECK(report["check"]["max_rel_err_grad"].get<double>() < 1e-3);
  CHECK(report["check"]["loss_rel_err"].get<double>() < 1e-3);
  CHECK(report["check"]["passed"].get<bool>());
}

std::uint64_t peak(const Json& report) { return report["peak_memory_bytes"].get<std::uint64_t>(); }

using test::remove_saved_state;

// Rank r's shard file of the set the manifest at `path` names.
std::string shard_file(const std::string& path, int r) {
  return rt::shard_files(rt::load_training_state(path), path).at(static_cast<std::size_t>(r));
}

std::string temp_state(const std::string& name, int world) {
  return (std::filesystem::temp_directory_path() / fmt::format("burst-training-test-{}-np{}.state", name, world))
      .string();
}

plan::Plan zero_plan(int world, int stage, std::int64_t tokens_per_rank = 16) {
  plan::Plan p = training_plan(world, world, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::AttnStash, 0, 2,
                               "causal", 8, tokens_per_rank);
  p.strategy.zero.stage = stage;
  return p;
}

}  // namespace

TEST_CASE("a training step on every rank matches the single-rank step for every policy, backward and layout",
          "[training][mpi]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  struct Policy {
    CheckpointPolicy policy;
    double kept;
  };
  for (const Layout layout : {Layout::Contiguous, Layout::Zigzag, Layout::Striped}) {
    std::vector<Policy> policies = {
        {CheckpointPolicy::None, 0}, {CheckpointPolicy::Full, 0}, {CheckpointPolicy::AttnStash, 0}};
    if (layout == Layout::Striped)
      policies.insert(policies.end(), {{CheckpointPolicy::SeqStash, 0.5}, {CheckpointPolicy::SeqStash, 0.3}});
    for (const Policy& p : policies) {
      for (const BackwardMode backward : {BackwardMode::KvRing, BackwardMode::QRing}) {
        const plan::Plan plan = training_plan(world, world, layout, backward, p.policy, p.kept, 3);
        const Json report = train(plan, *comm, options(1, true));
        if (comm->rank() == 0) {
          require_check(report, fmt::format("{} ranks, {}, {} {}, {}", world, to_string(layout), to_string(p.policy),
                                            p.kept, to_string(backward)));
        }
      }
    }
  }
}

TEST_CASE("masks that look back only, and a double ring, train like one rank", "[training][mpi]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  for (const std::string mask : {"document:16", "sliding:12", "full"}) {
    const auto policy = mask == "full" ? CheckpointPolicy::Full : CheckpointPolicy::SeqStash;
    const plan::Plan plan = training_plan(world, world, Layout::Striped, BackwardMode::QRing, policy, 0.5, 2, mask);
    const Json report = train(plan, *comm, options(1, true));
    if (comm->rank() == 0) require_check(report, mask);
  }
  if (world % 2 == 0 && world > 2) {
    const plan::Plan plan = training_plan(world, 2, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::Full, 0, 1);
    const Json report = train(plan, *comm, options(1, true));
    if (comm->rank() == 0) require_check(report, "double ring");
  }
}

TEST_CASE("Ulysses groups, alone or around a ring, train like one rank", "[training][mpi]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  // ds-ulysses (the whole world one group) when the 2 KV heads split that far; groups of 2 around
  // a ring (burst-usp) otherwise.
  const int ulysses = 2, inner = world / ulysses;
  for (const CheckpointPolicy policy : {CheckpointPolicy::None, CheckpointPolicy::Full, CheckpointPolicy::AttnStash}) {
    for (const BackwardMode backward : {BackwardMode::KvRing, BackwardMode::QRing}) {
      const plan::Plan plan =
          training_plan(world, inner, Layout::Zigzag, backward, policy, 0, 2, "causal", 8, 16, ulysses);
      const Json report = train(plan, *comm, options(1, true));
      if (comm->rank() == 0)
        require_check(report, fmt::format("ulysses {} x ring {}, {}, {}", ulysses, inner, to_string(policy),
                                          to_string(backward)));
    }
  }
  // seq_stash's short ring needs a rank's first rows to be the sequence's first tokens: refused.
  const plan::Plan stash = training_plan(world, inner, Layout::Striped, BackwardMode::QRing, CheckpointPolicy::SeqStash,
                                         0.5, 1, "causal", 8, 16, ulysses);
  CHECK_THROWS_WITH(train(stash, *comm, options(1, false)),
                    Catch::Contains("plan:/strategy/checkpoint/policy: seq_stash with Ulysses degree 2"));
}

TEST_CASE("what each policy keeps, and the chunked LM head, show in the measured peak", "[training][mpi]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  // Without ZeRO's overlap: its second gathered unit and second unit of gradients in flight
  // outweigh this tiny model's activations, so the peak would not show what the policies keep.
  const auto run = [&](CheckpointPolicy policy, double kept, int chunks) {
    plan::Plan p = training_plan(world, world, Layout::Striped, BackwardMode::QRing, policy, kept, chunks);
    p.strategy.overlap = false;
    return train(p, *comm, options(1, false));
  };
  const Json none = run(CheckpointPolicy::None, 0, 1), stash = run(CheckpointPolicy::AttnStash, 0, 1),
             seq = run(CheckpointPolicy::SeqStash, 0.5, 1), full = run(CheckpointPolicy::Full, 0, 1),
             chunked = run(CheckpointPolicy::None, 0, 4);
  if (comm->rank() != 0) return;
  CHECK(peak(none) > peak(stash));
  CHECK(peak(stash) > peak(seq));
  CHECK(peak(seq) > peak(full));
  // The same step: the stash changes what is kept, never the numbers.
  CHECK(none["losses"][0].get<double>() == Approx(full["losses"][0].get<double>()).epsilon(1e-6));
  // 16 tokens per rank in 4 chunks: the loss workspace is a quarter of the whole logits.
  const auto workspace = [](const Json& r) { return r["memory"]["peak_by_use"]["lm_head"].get<std::uint64_t>(); };
  CHECK(workspace(chunked) * 4 == workspace(none));
  CHECK(peak(chunked) < peak(none));
  CHECK(chunked["losses"][0].get<double>() == Approx(none["losses"][0].get<double>()).epsilon(1e-6));
}

TEST_CASE("the loss falls, the same seed gives the same losses, and a resumed run continues the curve",
          "[training][mpi]") {
  auto comm = rt::make_mpi_communicator({});
  const plan::Plan plan =
      training_plan(comm->size(), comm->size(), Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::AttnStash, 0, 2);
  const std::string state =
      (std::filesystem::temp_directory_path() / fmt::format("burst-training-test-np{}.state", comm->size())).string();
  const Json straight = train(plan, *comm, options(8, false));
  rt::TrainingOptions first = options(5, false);
  first.save = state;
  const Json saved = train(plan, *comm, first);
  rt::TrainingOptions second = options(3, false);
  second.resume = state;
  const Json resumed = train(plan, *comm, second);
  if (comm->rank() == 0) {
    const Json& losses = straight["losses"];
    REQUIRE(losses.size() == 8);
    CHECK(losses[7].get<double>() < 0.9 * losses[0].get<double>());
    for (std::size_t i = 0; i < 5; ++i) CHECK(saved["losses"][i].get<double>() == losses[i].get<double>());
    CHECK(resumed["run"]["first_step"].get<int>() == 5);
    for (std::size_t i = 0; i < 3; ++i) CHECK(resumed["losses"][i].get<double>() == losses[5 + i].get<double>());
  }
  comm->barrier();
  if (comm->rank() == 0) remove_saved_state(state);
}

TEST_CASE(
    "a state of another model or run, a bad data path, an unwritable --save or FP8 linears fail on every rank before "
    "any message",
    "[training][mpi]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  const std::string state =
      (std::filesystem::temp_directory_path() / fmt::format("burst-training-test-other-np{}.state", world)).string();
  plan::Plan plan = training_plan(world, world, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::Full, 0, 1);
  rt::TrainingOptions save = options(1, false);
  save.save = state;
  (void)train(plan, *comm, save);
  plan.job.model.hidden = 40;
  rt::TrainingOptions resume = options(1, false);
  resume.resume = state;
  CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, resume),
                    Catch::Contains(state + ": the saved run has hidden 32, this run has 40"));
  plan.job.model.hidden = 32;
  resume.lr.peak = 0.01f;
  CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, resume), Catch::Contains(state + ": the saved run has lr"));
  rt::TrainingOptions into_directory = options(1, false);
  into_directory.save = std::filesystem::temp_directory_path().string();
  CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, into_directory),
                    Catch::Contains("--save: " + into_directory.save + ": is a directory"));
  rt::TrainingOptions missing = options(1, false);
  missing.data = "/nonexistent/corpus";
  CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, missing), Catch::Contains("/nonexistent/corpus"));
  plan.strategy.checkpoint.policy = CheckpointPolicy::SeqStash;
  plan.strategy.checkpoint.kept_fraction = 0.5;
  CHECK_THROWS_WITH(
      rt::TrainingRun(plan, *comm, options(1, false)),
      Catch::Contains("plan:/strategy/layout: seq_stash runs on the striped layout only, this plan is zigzag"));
  plan.strategy.checkpoint.policy = CheckpointPolicy::Full;
  plan.job.linears = "fp8";  // priced for the frameworks the exports write; this runtime's GEMMs are bf16 or fp32
  CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, options(1, false)),
                    Catch::Contains("plan:/job/linears: 'fp8' linear layers have no path in the runtime"));
  comm->barrier();
  if (comm->rank() == 0) remove_saved_state(state);
}

TEST_CASE("every ZeRO stage matches one rank, and the stages train the same losses", "[training][mpi][zero]") {
  auto comm = rt::make_mpi_communicator({});
  std::vector<Json> reports;
  for (int stage = 0; stage <= 3; ++stage) {
    reports.push_back(train(zero_plan(comm->size(), stage), *comm, options(3, true)));
    if (comm->rank() == 0) require_check(reports.back(), fmt::format("ZeRO stage {}", stage));
  }
  if (comm->rank() != 0) return;
  // Bit for bit: every stage computes each float of the update with the same code (adamw.hpp);
  // OpenMPI's reduce-scatter and all-reduce give the same sums here (an MPI that added the ranks
  // in another order would fail this, by rounding only); and the shard-by-shard squared norm,
  // which may differ from the whole one in its last bits (the reported grad norms do, at 1e-15),
  // rounds to the same fp32 clipping factor.
  for (int stage = 1; stage <= 3; ++stage) {
    for (std::size_t i = 0; i < 3; ++i) {
      const double base = reports[0]["losses"][i].get<double>(),
                   loss = reports[static_cast<std::size_t>(stage)]["losses"][i].get<double>();
      INFO(fmt::format("stage {} step {}: {:.17g} vs stage 0 {:.17g}", stage, i + 1, loss, base));
      CHECK(loss == base);
    }
  }
}

TEST_CASE("each ZeRO stage holds its share of the model state", "[training][mpi][zero]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  std::vector<Json> reports;
  for (int stage = 0; stage <= 3; ++stage) reports.push_back(train(zero_plan(world, stage), *comm, options(1, false)));
  std::vector<Json> serial;  // stages 1, 2 and 3 without the plan's overlap
  for (int stage = 1; stage <= 3; ++stage) {
    plan::Plan p = zero_plan(world, stage);
    p.strategy.overlap = false;
    serial.push_back(train(p, *comm, options(1, false)));
  }
  if (comm->rank() != 0) return;
  const rt::ModelLayout model(zero_plan(world, 0).job.model);
  const rt::ShardMap shards(model.units(), world);
  std::uint64_t unit = 0;  // the largest unit's bytes, padded: one gathered or full-size gradient buffer
  for (std::size_t u = 0; u < shards.unit_count(); ++u) unit = std::max<std::uint64_t>(unit, 4 * shards.padded_size(u));
  const std::uint64_t n = 4 * model.size(), s = 4 * shards.shard_size();
  const auto held = [&](int stage, const char* use) {
    return reports[static_cast<std::size_t>(stage)]["memory"]["model_state_by_use"][use].get<std::uint64_t>();
  };
  const auto peak_of = [&](int stage, const char* use) {
    return reports[static_cast<std::size_t>(stage)]["memory"]["peak_by_use"][use].get<std::uint64_t>();
  };
  CHECK((held(0, "params") == n && held(0, "gradients") == n && held(0, "optimizer") == 2 * n));
  CHECK((held(1, "params") == n && held(1, "gradients") == n && held(1, "optimizer") == 2 * s));  // optimizer / P
  CHECK((held(2, "params") == n && held(2, "gradients") == s && held(2, "optimizer") == 2 * s));  // + gradients / P
  CHECK((held(3, "params") == s && held(3, "gradients") == s && held(3, "optimizer") == 2 * s));  // + params / P
  CHECK(s * static_cast<std::uint64_t>(world) <
        n + 4 * shards.unit_count() * static_cast<std::uint64_t>(world));  // padding only
  // The transients without overlap: one unit's full-size gradients (2, 3) and one gathered unit
  // (3) at a time. With it (the plans' default): a second of each, in flight while the step computes.
  const auto serial_peak = [&](int stage, const char* use) {
    return serial[static_cast<std::size_t>(stage) - 1]["memory"]["peak_by_use"][use].get<std::uint64_t>();
  };
  CHECK(serial_peak(2, "gradients") == s + unit);
  CHECK(serial_peak(3, "gradients") == s + unit);
  CHECK(serial_peak(3, "params") == s + unit);
  for (const auto& [stage, use] : {std::pair{2, "gradients"}, std::pair{3, "gradients"}, std::pair{3, "params"}}) {
    INFO("stage " << stage << " " << use << " with overlap");
    CHECK(peak_of(stage, use) > s + unit);
    CHECK(peak_of(stage, use) <= s + 2 * unit);
  }
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(serial[i]["losses"] == reports[i + 1]["losses"]);  // overlap changes no number
  // The all-gathers of the updated pieces: one at a time without overlap; with it every unit's
  // piece until the next step needs it, and at most one padded whole (a unit that does not divide
  // is gathered at once).
  CHECK(serial_peak(1, "params") <= n + unit);
  std::uint64_t largest_padded = 0;
  bool any_in_place = false;
  for (std::size_t u = 0; u < shards.unit_count(); ++u) {
    const bool padded = shards.padded_size(u) != shards.unit(u).count;
    if (padded) largest_padded = std::max<std::uint64_t>(largest_padded, 4 * shards.padded_size(u));
    any_in_place = any_in_place || !padded;
  }
  CHECK(peak_of(1, "params") <= n + s + largest_padded);
  if (any_in_place) CHECK(peak_of(1, "params") > serial_peak(1, "params"));
  for (int stage = 1; stage <= 3; ++stage) {
    CHECK(reports[static_cast<std::size_t>(stage)]["memory"]["model_state"].get<std::uint64_t>() <
          reports[static_cast<std::size_t>(stage) - 1]["memory"]["model_state"].get<std::uint64_t>());
  }
}

TEST_CASE("the GPU layout column: bf16 model state with an fp32 master, bf16 activations, offload",
          "[training][mpi][zero]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  const auto bf16_plan = [&](int stage, bool offload) {
    plan::Plan p = zero_plan(world, stage);
    p.job.dtype = "bf16";
    p.strategy.zero.offload = offload;
    return p;
  };
  const Json whole = train(bf16_plan(0, false), *comm, options(1, false)),
             sharded = train(bf16_plan(3, false), *comm, options(1, false)),
             offloaded = train(bf16_plan(1, true), *comm, options(1, false));
  if (comm->rank() != 0) return;
  const rt::ModelLayout model(zero_plan(world, 0).job.model);
  const rt::ShardMap shards(model.units(), world);
  const std::uint64_t n = model.size(), s = shards.shard_size();
  const auto gpu = [](const Json& r, const char* use) {
    return r["memory_on_gpu"]["model_state_by_use"][use].get<std::uint64_t>();
  };
  const auto here = [](const Json& r, const char* use) {
    return r["memory"]["model_state_by_use"][use].get<std::uint64_t>();
  };
  // bf16 parameters, fp32 gradients (the step sums them in fp32); the optimizer is the fp32
  // master beside m and v.
  CHECK((gpu(whole, "params") == 2 * n && gpu(whole, "gradients") == 4 * n && gpu(whole, "optimizer") == 12 * n));
  CHECK((gpu(sharded, "params") == 2 * s && gpu(sharded, "gradients") == 4 * s && gpu(sharded, "optimizer") == 12 * s));
  CHECK(here(whole, "optimizer") == 8 * n);
  CHECK(gpu(offloaded, "optimizer") == 0);
  CHECK(here(offloaded, "optimizer") == 8 * s);
  // Activations: bf16 but for the fp32 statistics (lse, inverse RMS).
  const auto activations = [](const Json& r, const char* column) {
    return r[column]["peak_by_use"]["activations"].get<std::uint64_t>();
  };
  CHECK(2 * activations(whole, "memory_on_gpu") > activations(whole, "memory"));
  CHECK(activations(whole, "memory_on_gpu") < activations(whole, "memory"));
  // The LM head: fp32 logits in both, plus their bf16 dl on the GPU (6 bytes a logit against 4).
  CHECK(2 * whole["memory_on_gpu"]["peak_by_use"]["lm_head"].get<std::uint64_t>() ==
        3 * whole["memory"]["peak_by_use"]["lm_head"].get<std::uint64_t>());
  // Every held item stands beside the plan in both columns.
  for (const Json& item : whole["memory_items"]) {
    if (item["item"] == "reserve") continue;
    INFO(item.dump());
    CHECK(item["on_gpu"].is_number());
    CHECK(item.contains("on_gpu_note"));
  }
}

TEST_CASE("the GPU step's data flow through whole runs: bf16 storage passes --check, fills its column, resumes",
          "[training][mpi][bf16]") {
  // The step on StepKernels that store what the GPU step stores (tests/support/bf16_step_kernels.hpp),
  // under TrainingRun as `burst run --device cuda` drives CudaStepKernels.
  // The plan offloads, so the model state stays on the host (MPI reads host memory only; the
  // state in device memory is tests/train/device_state_test.cpp's).
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  plan::Plan plan = zero_plan(world, 0);
  plan.strategy.zero.offload = true;
  test::Bf16StepKernels kernels;
  const auto on_bf16 = [&kernels](int steps, bool check) {
    rt::TrainingOptions o = options(steps, check);
    o.backend.step = &kernels;
    return o;
  };
  const std::string state = temp_state("bf16", world);
  const Json straight = train(plan, *comm, on_bf16(4, true));
  rt::TrainingOptions first = on_bf16(2, false);
  first.save = state;
  (void)train(plan, *comm, first);
  rt::TrainingOptions second = on_bf16(2, false);
  second.resume = state;
  const Json resumed = train(plan, *comm, second);
  if (comm->rank() == 0) {
    CHECK(straight["run"]["device"] == "cpu-bf16");
    INFO(straight["check"].dump());
    CHECK(straight["check"]["tolerance"].get<double>() == 5e-2);  // the bf16 step's own
    CHECK(straight["check"]["passed"].get<bool>());
    CHECK(straight["check"]["max_rel_err_grad"].get<double>() > 1e-5);  // it is not the fp32 step
    const Json& losses = straight["losses"];
    CHECK(losses[3].get<double>() < losses[0].get<double>());
    for (std::size_t i = 0; i < 2; ++i) CHECK(resumed["losses"][i].get<double>() == losses[2 + i].get<double>());
    // The device column: no model state (offloaded to the host), the bound units, 6 bytes a logit.
    const Json& gpu = straight["memory_on_gpu"];
    for (const char* use : {"params", "gradients", "optimizer"})
      CHECK(gpu["model_state_by_use"][use].get<std::uint64_t>() == 0);
    CHECK(gpu["peak_by_use"]["params"].get<std::uint64_t>() > 0);
    CHECK(gpu["peak_by_use"]["gradients"].get<std::uint64_t>() > 0);
    CHECK(2 * gpu["peak_by_use"]["lm_head"].get<std::uint64_t>() ==
          3 * straight["memory"]["peak_by_use"]["lm_head"].get<std::uint64_t>());
  }
  comm->barrier();
  if (comm->rank() == 0) remove_saved_state(state);
}

TEST_CASE("shards saved at one stage resume at another, and on one rank; a corrupt shard is refused",
          "[training][mpi][zero]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  const std::string state = temp_state("zero", world);
  const Json straight = train(zero_plan(world, 3), *comm, options(5, false));
  rt::TrainingOptions first = options(3, false);
  first.save = state;
  (void)train(zero_plan(world, 3), *comm, first);
  rt::TrainingOptions second = options(2, false);
  second.resume = state;
  const Json resumed = train(zero_plan(world, 1), *comm, second);  // stage 3 shards, stage 1 run
  if (comm->rank() == 0) {
    CHECK(resumed["run"]["first_step"].get<int>() == 3);
    for (std::size_t i = 0; i < 2; ++i) {
      CHECK(resumed["losses"][i].get<double>() == straight["losses"][3 + i].get<double>());  // the same curve
    }
    // The same shards on ONE rank (the whole sequence there, stage 0): every shard file read back,
    // the curve continued up to the rounding of attention on one rank instead of a ring.
    auto self = rt::make_self_communicator();
    const Json alone = train(zero_plan(1, 0, 16 * world), *self, second);
    for (std::size_t i = 0; i < 2; ++i) {
      CHECK(alone["losses"][i].get<double>() == Approx(straight["losses"][3 + i].get<double>()).epsilon(1e-5));
    }
    // A damaged shard: every rank reads every shard, so every rank refuses it, by its name.
    std::fstream f(shard_file(state, world - 1), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-5, std::ios::end);
    const auto byte = static_cast<char>(f.get() ^ 0x55);
    f.seekp(-5, std::ios::end);
    f.put(byte);
  }
  comm->barrier();
  CHECK_THROWS_WITH(rt::TrainingRun(zero_plan(world, 2), *comm, second),
                    Catch::Contains(shard_file(state, world - 1) + ": corrupt: checksum"));
  comm->barrier();
  if (comm->rank() == 0) remove_saved_state(state);
}

TEST_CASE(
    "saving every N steps saves during the run, the last save holds the last step, and a resume continues from it",
    "[training][mpi][zero]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  const std::string state = temp_state("save-every", world);
  const Json straight = train(zero_plan(world, 3), *comm, options(4, false));
  rt::TrainingOptions every = options(3, false);
  every.save = state;
  every.save_every = 2;
  // Rank 0 reads the manifest and its own shard as step 3 reports: they name the set saved after
  // step 2 (the final save's set is written into a new generation, and the manifest replaced,
  // only after this callback returns).
  std::int64_t saved_before_step_3 = -1;
  every.progress = [&](const rt::StepProgress& s) {
    if (s.step == 3) {
      const rt::TrainingState manifest = rt::load_training_state(state);
      CHECK(rt::load_training_state(shard_file(state, 0)).step == manifest.step);
      saved_before_step_3 = manifest.step;
    }
  };
  (void)train(zero_plan(world, 3), *comm, every);
  rt::TrainingOptions second = options(1, false);
  second.resume = state;
  const Json resumed = train(zero_plan(world, 3), *comm, second);
  if (comm->rank() == 0) {
    CHECK(saved_before_step_3 == 2);
    CHECK(resumed["run"]["first_step"].get<int>() == 3);
    CHECK(resumed["losses"][0].get<double>() == straight["losses"][3].get<double>());
  }
  rt::TrainingOptions no_save = options(1, false);
  no_save.save_every = 2;
  CHECK_THROWS_WITH(rt::TrainingRun(zero_plan(world, 3), *comm, no_save),
                    Catch::Contains("--save-every: needs --save"));
  comm->barrier();
  if (comm->rank() == 0) remove_saved_state(state);
}
