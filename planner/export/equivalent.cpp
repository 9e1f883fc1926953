// The nearest equivalent of a plan in a framework (see equivalent.hpp).
#include "planner/detail/export/equivalent.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace burst::exporter {
namespace {

template <class T>
bool has(const std::vector<T>& values, T value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

std::string describe_checkpoint(const plan::Strategy& s) {
  std::string text = to_string(s.checkpoint.policy);
  if (s.checkpoint.policy == CheckpointPolicy::SeqStash)
    text += fmt::format(" (kept {:.2f})", s.checkpoint.kept_fraction);
  return text;
}

std::string describe_zero(const plan::Strategy& s) { return fmt::format("ZeRO-{}", s.zero.stage); }

class Mapper {
 public:
  Mapper(const plan::Plan& plan, const Framework& framework)
      : plan_(plan), framework_(framework), capable_(framework.can) {
    out_.strategy = plan.strategy;
    out_.strategy.name = framework.name;
  }

  Equivalent map() {
    tensor_parallelism();
    attention();
    ring_knobs();
    checkpoint();
    lm_head();
    zero();
    linears();
    return std::move(out_);
  }

 private:
  void deviate(Knob knob, std::string asked, std::string written) {
    out_.deviations.push_back({knob, std::move(asked), std::move(written), framework_.why_not(knob)});
  }

  // A framework without tensor parallelism runs the same ranks as a longer sequence split.
  void tensor_parallelism() {
    plan::Strategy& s = out_.strategy;
    if (s.tp <= 1 || capable_.tensor_parallel) return;
    const int asked = s.tp;
    s.cp *= s.tp;
    s.outer *= s.tp;
    s.tp = 1;
    deviate(Knob::TensorParallel, fmt::format("tensor parallelism {}", asked),
            "none: its ranks join the sequence split");
  }

  // Ulysses x ring, flat or double, as the framework can run it over the same ranks.
  void attention() {
    plan::Strategy& s = out_.strategy;
    const int world = s.cp * s.ulysses;
    const bool ring = s.cp > 1, ulysses = s.ulysses > 1;
    const std::string asked = describe_attention(s);
    const auto flat_ring = [&] {
      s.cp = world;
      s.ulysses = 1;
      s.ring = RingKind::Flat;
    };
    const auto all_ulysses = [&] {
      s.ulysses = world;
      s.cp = 1;
      s.ring = RingKind::Flat;
    };
    if (ring && ulysses && !capable_.ulysses_with_ring) {
      if (capable_.ring) {
        flat_ring();
      } else {
        all_ulysses();
      }
    } else if (ring && !capable_.ring) {
      all_ulysses();
    } else if (ulysses && !capable_.ulysses) {
      flat_ring();
    }
    if (s.cp > 1 && s.ring == RingKind::Double && !capable_.double_ring) s.ring = RingKind::Flat;
    if (s.cp <= 1 || s.ring == RingKind::Flat) {
      s.ring = RingKind::Flat;
      s.inner = s.cp;
      s.outer = 1;
    }
    const std::string written = describe_attention(s);
    if (written != asked) deviate(Knob::Attention, asked, written);
  }

  // Layout, backward, the travelling accumulators' precision and overlap: knobs of the ring.
  void ring_knobs() {
    plan::Strategy& s = out_.strategy;
    if (s.cp <= 1) return;  // no ring: these knobs mean nothing
    if (!capable_.layouts.empty() && !has(capable_.layouts, s.layout)) {
      const Layout asked = s.layout;
      s.layout = capable_.layouts.front();
      deviate(Knob::Layout, to_string(asked), to_string(s.layout));
    }
    if (!capable_.backwards.empty() && !has(capable_.backwards, s.backward)) {
      const BackwardMode asked = s.backward;
      s.backward = capable_.backwards.front();
      deviate(Knob::Backward, to_string(asked), to_string(s.backward));
    }
    const int activation_bytes = plan_.job.dtype == "fp32" ? 4 : 2;
    if (s.backward == BackwardMode::KvRing && s.dkv_bytes != activation_bytes) {
      deviate(Knob::Precision, fmt::format("dK,dV sent in {} bytes", s.dkv_bytes),
              fmt::format("{} bytes (the job's {})", activation_bytes, plan_.job.dtype));
      s.dkv_bytes = activation_bytes;
    }
    if (!s.overlap) {
      s.overlap = true;
      deviate(Knob::Overlap, "transfers then compute", "transfers overlapped with compute");
    }
  }

  void checkpoint() {
    plan::Strategy& s = out_.strategy;
    if (has(capable_.checkpoints, s.checkpoint.policy)) return;
    const std::string asked = describe_checkpoint(s);
    const bool keeps_attention = has(capable_.checkpoints, CheckpointPolicy::AttnStash);
    s.checkpoint.policy = s.checkpoint.policy == CheckpointPolicy::SeqStash && keeps_attention
                              ? CheckpointPolicy::AttnStash
                              : CheckpointPolicy::Full;
    s.checkpoint.kept_fraction = 0;
    deviate(Knob::Checkpoint, asked, describe_checkpoint(s));
  }

  void lm_head() {
    plan::Strategy& s = out_.strategy;
    if (s.lm_head_chunks <= 1 || capable_.chunked_lm_head) return;
    deviate(Knob::LmHead, fmt::format("fused with the loss in {} chunks", s.lm_head_chunks), "unfused");
    s.lm_head_chunks = 1;
  }

  void zero() {
    plan::Strategy& s = out_.strategy;
    const std::vector<int>& stages = capable_.zero_stages;
    if (!stages.empty() && !has(stages, s.zero.stage)) {
      const std::string asked = describe_zero(s);
      // The nearest stage that shards at least as much; else the most sharding it has.
      int chosen = *std::max_element(stages.begin(), stages.end());
      for (int stage : stages) {
        if (stage >= s.zero.stage) chosen = std::min(chosen, stage);
      }
      s.zero.stage = chosen;
      deviate(Knob::Zero, asked, describe_zero(s));
    }
    if (s.zero.offload && !capable_.offload) {
      s.zero.offload = false;
      deviate(Knob::Offload, "optimizer on the CPU", "optimizer on the GPU");
    }
  }

  void linears() {
    out_.linears = sim::parse_linears(plan_.job.linears, "plan:/job/linears");
    if (out_.linears == sim::LinearPrecision::Bf16) return;
    if (!capable_.fp8_linears) {
      deviate(Knob::Linears, plan_.job.linears + " linear layers", plan_.job.dtype + " linear layers");
      out_.linears = sim::LinearPrecision::Bf16;
      return;
    }
    // The plan priced TransformerEngine's FP8 (plan_builder.hpp); another library costs otherwise.
    out_.fp8_library = framework_.fp8_library;
    if (out_.fp8_library == sim::Fp8Library::TransformerEngine) return;
    const auto on = [&](sim::Fp8Library library) {
      return fmt::format("{} linear layers on {}", plan_.job.linears, sim::to_string(library));
    };
    deviate(Knob::Linears, on(sim::Fp8Library::TransformerEngine), on(out_.fp8_library));
  }

  const plan::Plan& plan_;
  const Framework& framework_;
  const Capabilities& capable_;
  Equivalent out_;
};

}  // namespace

std::string describe_attention(const plan::Strategy& s) {
  std::string ring;
  if (s.cp > 1) {
    ring = s.ring == RingKind::Double ? fmt::format("double ring {}x{}", s.inner, s.outer)
                                      : fmt::format("flat ring of {}", s.cp);
  }
  if (s.ulysses > 1)
    return ring.empty() ? fmt::format("Ulysses {}", s.ulysses) : fmt::format("Ulysses {} x {}", s.ulysses, ring);
  return ring.empty() ? "1 rank" : ring;
}

Equivalent nearest_equivalent(const plan::Plan& plan, const Framework& framework) {
  return Mapper(plan, framework).map();
}

}  // namespace burst::exporter
