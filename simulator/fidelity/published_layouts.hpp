// Published whole-training runs under tensor x context x data parallelism (docs/fidelity.md,
// "Layouts"): each row a model, a cluster, a sequence length, a global batch, the degrees the
// source ran (TP, CP, PP, DP) and what it measured (model TFLOP/s or tokens/s per GPU, peak
// memory), copied from the text of the source that published_layouts.csv names beside it.
//
// Embedded at build time like published_figures.csv, so the check runs without ../shared.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/parallelism.hpp"
#include "simulator/fidelity/source_flop_count.hpp"
#include "simulator/training/training.hpp"

namespace burst::sim {

struct PublishedLayout {
  std::string id;
  std::string model;  // a model preset (simulator/models)
  std::string gpu;    // as the source names it: H100, ...
  int gpus = 0;
  double seq = 0;        // tokens per sequence
  int global_batch = 0;  // sequences per optimizer step
  int micro_batch = 1;
  int tp = 1, cp = 1, pp = 1, dp = 1;
  std::string family;            // the strategy family the source's framework runs
  std::optional<Layout> layout;  // the ring's, where the source's code differs from its family's default
  std::string checkpoint;        // "" : the family's default; else a checkpoint policy
  std::string gradients;  // "" : the family's default; bf16 or fp32: the dtype the source's framework keeps them in
  std::string precision;  // bf16, fp8
  Fp8Library fp8_library = Fp8Library::TransformerEngine;  // the library an fp8 row's framework runs
  std::string metric;                                      // model_tflops_per_gpu, tokens_per_s_per_gpu
  // How the source counts a TFLOP/s metric's FLOPs (source_flop_count.hpp); empty for tokens/s.
  std::optional<FlopCount> flop_count;
  double value = 0;
  double memory_gib = 0;  // 0: not published
  std::string source;
  bool fit = false;
};

// Every row of the embedded table. Throws std::logic_error if the embedded file is malformed.
[[nodiscard]] const std::vector<PublishedLayout>& published_layouts();
// Parses a table in published_layouts.csv's format; `origin` names it in errors (burst::Error).
[[nodiscard]] std::vector<PublishedLayout> parse_published_layouts(const std::string& csv, const std::string& origin);

}  // namespace burst::sim
