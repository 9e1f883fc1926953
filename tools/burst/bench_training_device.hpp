// `burst bench training --device cuda|cpu`: the training step's speed on this machine, beside the
// tool users would otherwise pick. Each row plans a model on P ranks of this machine (`burst plan
// --topology local`), keeps the model state where the device computes (offload off), trains it
// for a few steps on P loopback ranks sharing the device (`burst run --loopback --json`, in a
// process of its own, so a row that fails or runs out of memory is reported and the next runs),
// and prints:
//   step_s        the median step after the first (which fills the pools and builds the plans)
//   tokens/s      the row's tokens over that step
//   MFU           model FLOPs over the step and --peak-tflops (989: an H100 or H200 SXM's dense
//                 bf16): 6 T x the matrix parameters (every weight matrix, not the embedding
//                 lookup nor the norm gains) + 6 L H d T (T + 1) for causal attention, 12 L H d T^2
//                 for a full mask; tools/bench/torch_step.py counts the same
//   vs P x 1      a P-rank row's step over P times the one-rank step on 1/P of its tokens (the
//                 loopback's goal: 1.15 at most)
//   predicted     the plan's predicted step, and measured / predicted
//   traffic       what the warm steps moved between host and device (device_traffic.hpp)
// and, for each one-rank row on cuda, PyTorch's step on the same model, shapes and tokens
// (tools/bench/torch_step.py: bf16 weights with fp32 AdamW master state, scaled_dot_product_
// attention, CUDA events), with its parameter count beside burst's; or why that column is empty.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace burst::cli {

struct DeviceTrainingBench {
  std::string device;                // cuda, cpu
  std::string model;                 // a model file (Hugging Face config.json or burst's)
  std::vector<std::int64_t> tokens;  // one-rank rows' sequence lengths
  std::vector<int> ranks;            // loopback rows: P ranks on P x the first length
  int steps = 6;
  double peak_tflops = 0;  // 0: 989 on cuda, no MFU on cpu
  std::string data;
  bool torch = true;
  bool json = false;
};

// Throws burst::Error for bad options (exit 2); a row that fails is reported in its place.
void run_training_bench_device(const DeviceTrainingBench& bench);

}  // namespace burst::cli
