// burst bench attention: how fast the runtime's CPU attention kernels are, next to the BLAS
// they are built on (runtime/calibration/cpu_attention_bench.hpp measures): forward and
// backward GFLOP/s over one whole-sequence block pair, and sgemm GFLOP/s at a tile-sized and a
// large size, on the same threads in the same run. The goal: forward at least half of large sgemm.
// Figures, not assertions: speed goals live here. --device cuda measures the CUDA kernels
// instead (bench_attention_gpu.hpp).

#include <optional>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/parallelism.hpp"
#include "common/units.hpp"
#include "runtime/calibration/cpu_attention_bench.hpp"
#include "simulator/attention/attention.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/models/model.hpp"
#include "common/interrupt.hpp"
#include "tools/burst/bench_attention_gpu.hpp"
#include "tools/burst/cut_short.hpp"
#include "tools/burst/commands.hpp"
#include "topologies/load.hpp"
#include "tools/burst/validators.hpp"
#include "runtime/cuda/kernel_path.hpp"

namespace burst::cli {
namespace {

struct AttentionBenchOptions {
  std::string tokens = "4K";
  int heads = 16;
  int kv_heads = 4;
  int head_dim = 128;
  std::string mask = "causal";
  int repeat = 3;
  int threads = 2;
  int tile_q = 128;
  int tile_k = 128;
  bool json = false;
  std::string device = "cpu";
  bool deterministic = false;
  std::string kernel_path = "auto";
};

struct AttentionBenchSetup {
  std::int64_t tokens = 0;
  std::vector<Mask> masks;  // one, or every kind for --mask all (cuda)
  rt::gpu::KernelPathChoice path = rt::gpu::KernelPathChoice::Auto;
  bool all_paths = false;
};

// --mask all: each kind once, windows and documents scaled to the sequence.
std::vector<Mask> every_mask(std::int64_t tokens) {
  return {Mask{MaskKind::Full}, Mask{MaskKind::Causal},
          Mask{MaskKind::SlidingWindow, std::max<std::int64_t>(1, tokens / 8)},
          Mask{MaskKind::Document, 0, std::max<std::int64_t>(1, tokens / 4)}};
}

// Every bad option at once.
AttentionBenchSetup resolve(const AttentionBenchOptions& o) {
  Problems problems;
  AttentionBenchSetup setup;
  try {
    setup.tokens = units::parse_tokens(o.tokens, "--tokens");
    if (setup.tokens < 1) problems.add("--tokens", "must be at least 1 token", "a positive whole number, e.g. 4K");
  } catch (const Error& e) {
    for (const auto& p : e.problems()) problems.add(p);
  }
  if (o.mask == "all") {
    if (o.device != "cuda") problems.add("--mask", "all runs every mask on the GPU", "with --device cuda", "");
    setup.masks = every_mask(setup.tokens);
  } else {
    try {
      setup.masks = {parse_mask(o.mask, "--mask")};
    } catch (const Error& e) {
      for (const auto& p : e.problems()) problems.add(p);
    }
  }
  if (o.deterministic && o.device != "cuda") {
    problems.add("--deterministic", "chooses the CUDA backward's mode", "with --device cuda", "");
  }
  const std::optional<rt::gpu::KernelPathChoice> path = rt::gpu::parse_kernel_path_choice(o.kernel_path);
  setup.all_paths = o.kernel_path == "all";
  if (path) setup.path = *path;
  if (!path && !setup.all_paths) {
    problems.add("--kernel-path", fmt::format("unknown kernel path '{}'", o.kernel_path),
                 std::string(rt::gpu::kernel_path_choices()) + ", all", "");
  } else if (o.kernel_path != "auto" && o.device != "cuda") {
    problems.add("--kernel-path", "chooses the CUDA kernels' implementation", "with --device cuda", "");
  }
  if (o.heads % o.kv_heads != 0) {
    problems.add("--kv-heads", fmt::format("{} kv heads do not divide the {} query heads", o.kv_heads, o.heads),
                 "a divisor of --heads",
                 "grouped-query attention shares each kv head among heads / kv_heads query heads");
  }
  problems.throw_if_any();
  return setup;
}

void run_attention(const AttentionBenchOptions& o) {
  const AttentionBenchSetup setup = resolve(o);
  const InterruptScope ctrl_c;
  if (o.device == "cuda") {
    return run_attention_bench_gpu({setup.tokens, o.heads, o.kv_heads, o.head_dim, setup.masks, o.repeat,
                                    o.deterministic, o.json, setup.path, setup.all_paths});
  }
  const Mask& mask_kind = setup.masks.front();
  const std::int64_t n = setup.tokens;
  const rt::CpuAttentionFigures f =
      rt::bench_cpu_attention({n, o.heads, o.kv_heads, o.head_dim, mask_kind, o.repeat, o.threads, o.tile_q, o.tile_k});
  const double fwd_s = f.forward_s, bwd_s = f.backward_s;
  const double fwd_gflops = f.forward.flops / fwd_s / 1e9, bwd_gflops = f.backward.flops / bwd_s / 1e9;
  const double sgemm_gflops = f.sgemm_gflops;
  // The FLOPs the mask asks for (allowed pairs only), per second: what a perfect skip would reach.
  const double useful_gflops = 4.0 * static_cast<double>(o.head_dim) * f.forward.allowed_pairs / fwd_s / 1e9;

  const Json result{{"tokens", n},
                    {"heads", o.heads},
                    {"kv_heads", o.kv_heads},
                    {"head_dim", o.head_dim},
                    {"mask", to_string(mask_kind)},
                    {"threads", o.threads},
                    {"tile_q", o.tile_q},
                    {"tile_k", o.tile_k},
                    {"repeat", o.repeat},
                    {"forward_s", fwd_s},
                    {"backward_s", bwd_s},
                    {"forward_flops", f.forward.flops},
                    {"backward_flops", f.backward.flops},
                    {"tiles_computed", f.forward.tiles_computed},
                    {"tiles_skipped", f.forward.tiles_skipped},
                    {"forward_gflops", fwd_gflops},
                    {"forward_useful_gflops", useful_gflops},
                    {"backward_gflops", bwd_gflops},
                    {"sgemm_size", f.sgemm_size},
                    {"sgemm_gflops", sgemm_gflops},
                    {"sgemm_tile_gflops", f.sgemm_tile_gflops},
                    {"forward_over_sgemm", fwd_gflops / sgemm_gflops},
                    {"backward_over_sgemm", bwd_gflops / sgemm_gflops}};
  if (o.json) {
    fmt::print("{}\n", result.dump(2));
    return;
  }
  fmt::print("attention over {} tokens, {} heads / {} kv heads, head_dim {}, {} mask; {} threads, tiles {} x {}\n",
             units::format_tokens(n), o.heads, o.kv_heads, o.head_dim, to_string(mask_kind), o.threads, o.tile_q,
             o.tile_k);
  fmt::print("{:<34} {:>9} {:>10}\n", "measure", "GFLOP/s", "time ms");
  fmt::print("{:<34} {:>9.1f}\n", fmt::format("sgemm {0}x{0}x{0}", f.sgemm_size), sgemm_gflops);
  fmt::print("{:<34} {:>9.1f}\n", fmt::format("sgemm tile {}x{}x{}", o.tile_q, o.tile_k, o.head_dim),
             f.sgemm_tile_gflops);
  fmt::print("{:<34} {:>9.1f} {:>10.1f}\n", "attention forward", fwd_gflops, fwd_s * 1e3);
  fmt::print("{:<34} {:>9.1f}\n", "  counting allowed pairs only", useful_gflops);
  fmt::print("{:<34} {:>9.1f} {:>10.1f}\n", "attention backward", bwd_gflops, bwd_s * 1e3);
  fmt::print("forward / sgemm {:.2f} (goal >= 0.5: {}), backward / sgemm {:.2f}\n", fwd_gflops / sgemm_gflops,
             fwd_gflops >= 0.5 * sgemm_gflops ? "met" : "NOT met", bwd_gflops / sgemm_gflops);
}

}  // namespace

void add_bench_attention_command(CLI::App& bench) {
  auto a = std::make_shared<AttentionBenchOptions>();
  CLI::App* attention = bench.add_subcommand(
      "attention", "Speed of the attention kernels: CPU against sgemm, or CUDA (--device cuda) against PyTorch SDPA");
  attention->add_option("--tokens", a->tokens, "Sequence length (one block pair), e.g. 4K")->capture_default_str();
  attention->add_option("--heads", a->heads, "Query heads")->check(kAtLeastOne)->capture_default_str();
  attention->add_option("--kv-heads", a->kv_heads, "Key/value heads (a divisor of --heads)")
      ->check(kAtLeastOne)
      ->capture_default_str();
  attention->add_option("--head-dim", a->head_dim, "Head dimension")->check(kAtLeastOne)->capture_default_str();
  attention->add_option("--mask", a->mask, "full, causal, sliding:W or document:L; all: each kind (cuda)")
      ->capture_default_str();
  attention->add_option("--device", a->device, "cpu: the tiled CPU kernels; cuda: the CUDA kernels on GPU 0")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  attention->add_flag("--deterministic", a->deterministic, "cuda: the backward without float atomics");
  attention
      ->add_option("--kernel-path", a->kernel_path,
                   "cuda: auto, mma.sync (Ampere and up), wgmma (Hopper), or all: a row per path the GPU "
                   "supports, with each other path's largest differences from mma.sync's")
      ->capture_default_str();
  attention->add_option("--repeat,--repeats", a->repeat, "Runs per measure; the best is reported")
      ->check(kAtLeastOne)
      ->capture_default_str();
  attention->add_option("--threads", a->threads, "Worker threads (BLAS runs single-threaded in each)")
      ->check(kAtLeastOne)
      ->capture_default_str();
  attention->add_option("--tile-q", a->tile_q, "Queries per tile")->check(kAtLeastOne)->capture_default_str();
  attention->add_option("--tile-k", a->tile_k, "Keys per tile")->check(kAtLeastOne)->capture_default_str();
  attention->add_flag("--json", a->json, "Print the figures as JSON");
  attention->callback([a] {
    run_attention(*a);
    if (interrupt_requested())
      throw CutShort("bench attention: cut short by Ctrl-C; the figures are the best of the rounds run");
  });
}

}  // namespace burst::cli
