// Published performance figures that the cost model is checked against (docs/fidelity.md):
// single-GPU FlashAttention runs and ring attention across GPUs, each row copied from a text
// source (README, paper table, issue) that published_figures.csv names beside the value.
//
// The table ships inside the library (published_figures.csv, embedded at build time), so the
// check runs anywhere, without ../shared or a network. Each row says whether it was used to
// set a calibration constant ("fit") or kept out of every fit ("held_out"), so the two errors
// can be reported apart.
#pragma once

#include <string>
#include <vector>

namespace burst::sim {

struct PublishedFigure {
  std::string id;
  std::string kind;  // attention_kernel, distributed_attention, end_to_end, collective
  std::string gpu;   // as the source names it: A100, A800, H800, ...
  int gpus = 0;
  int nodes = 1;
  int heads = 0, kv_heads = 0, head_dim = 0;  // 0: not stated
  double seq = 0;                             // tokens per sequence, over all GPUs
  int batch = 0;                              // 0: not stated
  std::string mask;                           // causal, full or empty
  std::string layout;                         // contiguous, zigzag, striped, none
  std::string method;                         // fa2, ring, zigzag_ring, stripe_ring, burst, a family, ...
  std::string phase;                          // fwd, fwd_bwd, step, unknown
  std::string metric;                         // iter_per_s, ms, tflops_per_gpu, ...
  double value = 0;
  // How a TFLOP/s figure counts its FLOPs, when the source gives no time: "flash_attention"
  // (FlashAttention's benchmarks: 4 b S^2 H D, halved under a causal mask, x 3.5 for forward +
  // backward, over the GPUs); empty where the figure restates a time listed apart.
  std::string flop_count;
  std::string source;
  bool fit = false;  // used to set a constant of the default calibration
};

// Every row of the embedded table. Throws std::logic_error if the embedded file is malformed
// (a build defect, checked by the tests).
[[nodiscard]] const std::vector<PublishedFigure>& published_figures();

// Whether a table's "role" field says fit (true) or held_out (false); throws burst::Error at
// `where` for anything else.
[[nodiscard]] bool fit_role(const std::string& role, const std::string& where);

// Parses a table in published_figures.csv's format (RFC 4180 quoting); `origin` names it in
// errors (burst::Error with the line).
[[nodiscard]] std::vector<PublishedFigure> parse_published_figures(const std::string& csv, const std::string& origin);

}  // namespace burst::sim
