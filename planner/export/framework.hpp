// The training frameworks a plan can be exported to, as data: what each can express of a
// plan, the version whose flags we follow, and the writer of its own settings format.
//
// A plan says more than any framework can: a query-side (Q-ring) backward, a double ring, a
// sequence-level stash of a kept fraction, an LM head fused in chunks. A framework's
// capabilities list what it can do; nearest_equivalent (equivalent.hpp) maps every knob the
// framework lacks to the closest one it has, and `limits` says, per knob, why it lacks it, in
// the framework's own terms (the flag that does not exist, the ring it runs instead). The
// writers (writers.hpp) only format: they never decide what a framework can do.
//
// Versions followed (docs/export-and-launch.md has the files read and what was not verified):
// Megatron-LM core_v0.14.0, NeMo v2.4.0 (the megatron_gpt_config.yaml keys), DeepSpeed
// v0.18.0, TorchTitan v0.2.0.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/parallelism.hpp"
#include "simulator/training/training.hpp"

namespace burst::exporter {

struct ExportInput;

// A knob of the plan's strategy that a framework may be unable to express.
enum class Knob {
  TensorParallel,
  Attention,
  Layout,
  Backward,
  Precision,
  Overlap,
  Checkpoint,
  LmHead,
  Zero,
  Offload,
  Linears
};
[[nodiscard]] const char* to_string(Knob knob);  // "attention", "layout", ...

struct Capabilities {
  bool tensor_parallel = false;    // Megatron-style tensor parallelism with sequence parallelism
  bool ring = false;               // a context-parallel ring over the sequence (K,V pass by)
  bool ulysses = false;            // a head split by all-to-all (DeepSpeed-Ulysses)
  bool ulysses_with_ring = false;  // both at once: Ulysses groups inside, a ring across them
  bool double_ring = false;        // a ring of rings (inner within a node, outer across)
  std::vector<Layout> layouts;     // of the ring; the first is the one it runs by default
  std::vector<BackwardMode> backwards;
  std::vector<CheckpointPolicy> checkpoints;
  bool chunked_lm_head = false;  // the LM head fused with the loss over sequence chunks
  std::vector<int> zero_stages;  // optimizer-state, gradient and parameter sharding it has
  bool offload = false;          // the optimizer on the CPU
  bool fp8_linears = false;      // FP8 GEMMs in the linear layers (plan /job/linears)
};

struct Limit {
  Knob knob;
  std::string why;  // "TransformerEngine's p2p ring circulates K,V with dK,dV"
};

struct Framework {
  std::string name;     // as --to spells it: megatron, nemo, deepspeed, torchtitan
  std::string title;    // "Megatron-LM"
  std::string version;  // "core_v0.14.0 (23e00ed0, 2025-10-08)"
  std::string format;   // what the writer produces: "bash array of arguments", "YAML", ...
  Capabilities can;
  std::vector<Limit> limits;
  // How it allocates memory beyond what the knobs imply: the strategy family whose
  // FrameworkMemory row (simulator/attention/families.hpp) it shares, so the export's
  // equivalent is costed as the framework allocates (the note describes that row). Empty:
  // burst's own allocation, and `allocation_note` says why.
  std::string allocates_like;
  std::string allocation_note;
  // The library its FP8 linear layers run on (can.fp8_linears): TransformerEngine, what burst's
  // plans price, or torchao, whose casts and memory differ (sim::Fp8Library).
  sim::Fp8Library fp8_library = sim::Fp8Library::TransformerEngine;
  std::string (*write)(const ExportInput& input) = nullptr;

  // Why the framework lacks `knob` ("" when it has no entry).
  [[nodiscard]] std::string why_not(Knob knob) const;
};

// Every framework, in the order --help lists them.
[[nodiscard]] const std::vector<Framework>& frameworks();
[[nodiscard]] std::vector<std::string> framework_names();
// Throws burst::Error naming `field`, the valid names and a did-you-mean.
[[nodiscard]] const Framework& find_framework(std::string_view name, std::string_view field);

}  // namespace burst::exporter
