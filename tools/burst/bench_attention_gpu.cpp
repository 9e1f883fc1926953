// burst bench attention --device cuda (see bench_attention_gpu.hpp).
#include "tools/burst/bench_attention_gpu.hpp"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/json_reader.hpp"
#include "common/units.hpp"
#include "runtime/device/device.hpp"
#include "tools/burst/subprocess_json.hpp"

#ifdef BURST_HAVE_CUDA
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/flash_bench.hpp"
#endif

namespace burst::cli {
namespace {

#ifdef BURST_HAVE_CUDA
// PyTorch SDPA on the same shape, or {"unavailable": why}. Only full and causal masks.
Json sdpa_figures(const GpuAttentionBench& b, const Mask& mask) {
  if (mask.kind != MaskKind::Full && mask.kind != MaskKind::Causal) {
    return {{"unavailable", "SDPA has no " + to_string(mask) + " mask (full and causal only)"}};
  }
  const CommandResult r = run_command(fmt::format(
      "python3 {} --tokens {} --heads {} --kv-heads {} --head-dim {} --mask {} --repeat {} 2>&1",
      escape::shell_word(BURST_SDPA_SCRIPT), b.tokens, b.heads, b.kv_heads, b.head_dim, to_string(mask), b.repeat));
  if (r.status < 0) return {{"unavailable", "could not start python3"}};
  const Json parsed = r.json();
  if (parsed.is_discarded()) return {{"unavailable", "sdpa_bench.py printed no JSON: " + r.output}};
  return parsed;
}

Json bench_row(const GpuAttentionBench& b, const Mask& mask, rt::gpu::KernelPathChoice path, const Json& sdpa) {
  rt::gpu::FlashBenchCase c{b.tokens, b.heads, b.kv_heads, b.head_dim, {mask, {}}, b.repeat, b.deterministic, 0};
  c.path = path;
  const rt::gpu::FlashBenchResult r = rt::gpu::bench_flash(c);
  Json row{{"mask", to_string(mask)},
           {"device", r.device_name},
           {"forward_path", rt::gpu::kernel_path_name(r.forward_path)},
           {"backward_path", rt::gpu::kernel_path_name(r.backward_path)},
           {"forward_s", r.forward_s},
           {"backward_s", r.backward_s},
           {"forward_tflops", r.forward_pair_flops / r.forward_s / 1e12},
           {"backward_tflops", r.backward_pair_flops / r.backward_s / 1e12},
           {"forward_computed_tflops", r.forward_flops / r.forward_s / 1e12},
           {"backward_computed_tflops", r.backward_flops / r.backward_s / 1e12},
           {"tiles_computed", r.tiles_computed},
           {"tiles_skipped", r.tiles_skipped},
           {"sdpa", sdpa}};
  if (r.o_max_diff >= 0)
    row["forward_vs_mma_sync"] = {{"o_max_abs_diff", r.o_max_diff}, {"lse_max_abs_diff", r.lse_max_diff}};
  if (r.d_q_max_diff >= 0) {
    row["backward_vs_mma_sync"] = {{"d_q_max_abs_diff", r.d_q_max_diff},
                                   {"d_k_max_abs_diff", r.d_k_max_diff},
                                   {"d_v_max_abs_diff", r.d_v_max_diff}};
  }
  return row;
}
#endif

}  // namespace

void run_attention_bench_gpu(const GpuAttentionBench& b) {
#ifdef BURST_HAVE_CUDA
  (void)rt::choose_device("cuda", rt::probe_gpus(), "--device");  // one clear line where no GPU is visible
  // A path this GPU cannot run is refused here, by the option's name, before any measuring.
  (void)rt::gpu::choose_path(b.path, rt::gpu::current_device_arch(), true, "--kernel-path");
  std::vector<rt::gpu::KernelPathChoice> paths{b.path};
  if (b.all_paths) {
    paths.clear();
    for (const rt::gpu::KernelPath p : rt::gpu::supported_paths(rt::gpu::current_device_arch())) {
      paths.push_back(rt::gpu::choice_of(p));
    }
  }
  Json rows = Json::array();
  for (const Mask& mask : b.masks) {
    const Json sdpa = sdpa_figures(b, mask);
    for (const rt::gpu::KernelPathChoice path : paths) {
      fmt::print(stderr, "bench: {} mask, kernel path {} ...\n", to_string(mask),
                 rt::gpu::kernel_path_choice_name(path));
      rows.push_back(bench_row(b, mask, path, sdpa));
    }
  }
  const Json result{{"tokens", b.tokens},
                    {"heads", b.heads},
                    {"kv_heads", b.kv_heads},
                    {"head_dim", b.head_dim},
                    {"deterministic", b.deterministic},
                    {"masks", rows}};
  if (b.json) {
    fmt::print("{}\n", result.dump(2));
    return;
  }
  fmt::print("CUDA attention kernels on {}: {} tokens, {} heads / {} kv heads, head_dim {}{}\n",
             rows.front()["device"].get<std::string>(), units::format_tokens(b.tokens), b.heads, b.kv_heads, b.head_dim,
             b.deterministic ? ", deterministic backward" : "");
  fmt::print(
      "TF/s count the attending (query, key) pairs, 4 d FLOPs each forward and 10 d backward, as FlashAttention "
      "counts them; x: burst / SDPA\n");
  fmt::print("{:<16} {:<15} {:>9} {:>9} {:>8} {:>8} {:>9} {:>9} {:>7} {:>7}\n", "mask", "path fwd/bwd", "fwd TF/s",
             "bwd TF/s", "fwd ms", "bwd ms", "SDPA fwd", "SDPA bwd", "x fwd", "x bwd");
  for (const Json& row : rows) {
    const Json& sdpa = row["sdpa"];
    const bool have = sdpa.contains("forward_tflops");
    const double fwd = row["forward_tflops"].get<double>(), bwd = row["backward_tflops"].get<double>();
    const auto figure = [&](const char* key, double ours) {
      return have ? std::pair{fmt::format("{:.1f}", sdpa[key].get<double>()),
                              fmt::format("{:.2f}", ours / sdpa[key].get<double>())}
                  : std::pair<std::string, std::string>{"-", "-"};
    };
    const auto [sdpa_fwd, ratio_fwd] = figure("forward_tflops", fwd);
    const auto [sdpa_bwd, ratio_bwd] = figure("backward_tflops", bwd);
    fmt::print("{:<16} {:<15} {:>9.1f} {:>9.1f} {:>8.2f} {:>8.2f} {:>9} {:>9} {:>7} {:>7}\n",
               row["mask"].get<std::string>(),
               row["forward_path"].get<std::string>() + "/" + row["backward_path"].get<std::string>(), fwd, bwd,
               row["forward_s"].get<double>() * 1e3, row["backward_s"].get<double>() * 1e3, sdpa_fwd, sdpa_bwd,
               ratio_fwd, ratio_bwd);
    if (!have) fmt::print("  SDPA: {}\n", sdpa["unavailable"].get<std::string>());
    if (row.contains("forward_vs_mma_sync")) {
      const Json& diff = row["forward_vs_mma_sync"];
      fmt::print("  forward against mma.sync on the same inputs: max |dO| {:.3g}, max |dlse| {:.3g}\n",
                 diff["o_max_abs_diff"].get<double>(), diff["lse_max_abs_diff"].get<double>());
    }
    if (row.contains("backward_vs_mma_sync")) {
      const Json& diff = row["backward_vs_mma_sync"];
      fmt::print(
          "  backward against mma.sync on the same inputs: max |ddQ| {:.3g}, max |ddK| {:.3g}, max |ddV| {:.3g}\n",
          diff["d_q_max_abs_diff"].get<double>(), diff["d_k_max_abs_diff"].get<double>(),
          diff["d_v_max_abs_diff"].get<double>());
    }
  }
#else
  (void)b;
  (void)rt::choose_device("cuda", rt::probe_gpus(), "--device");  // throws: built without CUDA
#endif
}

}  // namespace burst::cli
