// Measured kernel speeds as a calibration file's efficiency curves: the one conversion from
// raw (work, seconds) to [block, efficiency] points, used by the CPU and the GPU calibration.
//
// A curve's efficiency is a fraction of a peak: FLOP/s over the peak FLOP/s for the compute
// kernels, and for `elementwise` bytes moved per second over the peak memory bandwidth (its
// KernelSpeed counts bytes in `flops`, as the simulator's elementwise tasks count bytes in
// their amount). Runs of one curve and block size add up (work and seconds), then the point
// is rounded to 3 decimals and kept in [0.001, 1], the range a calibration file accepts.
// Curve names: attention on the full mask gives attn_fwd / attn_bwd, on the causal mask
// (partly allowed diagonal blocks) attn_fwd_masked / attn_bwd_masked; gemm and elementwise
// as measured. A curve with no measurement is left out (the file then keeps its default).
#pragma once

#include <string>
#include <vector>

#include "common/json_reader.hpp"
#include "runtime/calibration/kernel_speed.hpp"

namespace burst::rt {

struct Peaks {
  double flops_per_s = 0;  // what the compute curves are fractions of
  double bytes_per_s = 0;  // what the elementwise curve is a fraction of (0: none measured)
};

// The efficiency of `work` done in `seconds` against `peak`, rounded and clamped as above.
[[nodiscard]] double efficiency_point(double work, double seconds, double peak);

// {"gpu": gpu, "<curve>": [[block, efficiency], ...], ...} for the curves measured.
// `attention_path` names the attention kernels' implementation the curves are of ("cpu",
// "mma.sync", ...); attention measured on other paths (KernelSpeed::path) goes apart, under
// "attention_paths": {"<path>": {"<curve>": [...], ...}}.
[[nodiscard]] Json compute_entry(const std::string& gpu, const std::vector<KernelSpeed>& speeds, const Peaks& peaks,
                                 const std::string& attention_path);

}  // namespace burst::rt
