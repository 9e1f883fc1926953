// The step's forward, loss and backward with the plan's checkpoint policy (see train_step.hpp),
// every operation a StepKernels call on tensors in its memory.
#include "runtime/training/train_step.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/stopwatch.hpp"

namespace burst::rt {
namespace {

// A step tensor as the attention executor reads it, or writes it: `shape` in the same memory.
Shape checked(StepTensor t, Shape shape) {
  if (t.count != static_cast<std::size_t>(shape.elements())) {
    throw Error(Problem{
        "training step",
        fmt::format("{} values seen as a [{}, {}, {}] tensor", t.count, shape.tokens, shape.heads, shape.head_dim),
        "a tensor of that shape", "a bug in the training step: please report it"});
  }
  return shape;
}
Operand operand(StepTensor t, Shape shape) { return {t.data, t.dtype, checked(t, shape)}; }
Destination destination(StepTensor t, Shape shape) { return {t.data, t.dtype, checked(t, shape)}; }

// One tensor of a bound unit's parameters (or gradients).
StepTensor of(const TrainingStep::BoundUnit& unit, const Slice& slice) {
  return unit.bound.tensor.part(slice.offset, slice.count);
}

}  // namespace

// A layer's activations between its forward and its backward; which are alive depends on the
// policy and on where the step is (see the header).
// Rows: c is all m c rows of the micro-batch, c' the held ones (c / tp; c at tp 1).
struct TrainingStep::Layer {
  StepBuffer x;                  // input [c', hidden]
  StepBuffer a, inv_rms_attn;    // RMSNorm(x) [c', hidden] and its 1/rms
  StepBuffer q, k, v;            // after RoPE: [c, H, d], [c, Hkv, d]
  StepBuffer o, lse;             // attention output [c, H, d] and its lse [c * H]
  StepBuffer h, b, inv_rms_mlp;  // h = x + o Wo, b = RMSNorm(h): [c', hidden]
  StepBuffer u, w, m;            // gate, up, silu(u) * w: [c, ffn]
  StepBuffer o_kept, lse_kept;   // seq_stash: o and lse of the later rows only
  BoundUnit params;              // the layer's bound parameters, kept for its backward (keep_units_bound_)
};

TrainingStep::TrainingStep(const plan::Plan& plan, const ModelLayout& model, std::int64_t seq, Communicator& comm,
                           MemoryLedger& ledger, StepBackend backend, TensorParallelGroup group)
    : model_(model),
      ledger_(ledger),
      comm_(comm),
      own_kernels_(backend.step == nullptr ? std::make_unique<HostStepKernels>() : nullptr),
      kernels_(backend.step != nullptr ? *backend.step : *own_kernels_),
      own_attention_(backend.attention == nullptr
                         ? std::make_unique<CpuAttentionKernels>(KernelOptions{}, &kernels_.memory())
                         : nullptr),
      execution_{precision_of(plan), plan.strategy.overlap,
                 backend.attention != nullptr ? backend.attention : own_attention_.get()},
      ring_transport_(std::move(backend.ring_transport)),
      policy_(plan.strategy.checkpoint.policy),
      backward_(plan.strategy.backward),
      lm_head_chunks_(plan.strategy.lm_head_chunks),
      sequences_(plan.strategy.micro_batch),
      tp_(std::max(1, plan.strategy.tp)),
      tp_comm_(group.comm) {
  const std::vector<Slice> units = model.units();
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    local_layers_.push_back(model.layers[l].relative_to(units[ModelLayout::layer_unit(l)].offset));
  }
  local_final_norm_ = model.final_norm.relative_to(units[model.head_unit()].offset);
  local_lm_head_ = model.lm_head.relative_to(units[model.head_unit()].offset);
  Problems problems;
  if (lm_head_chunks_ < 1) {
    problems.add("plan:/strategy/lm_head/chunks", fmt::format("{} chunks", lm_head_chunks_), "at least 1");
  }
  if (sequences_ < 1) {
    problems.add("plan:/strategy/micro_batch", fmt::format("{} sequences", sequences_), "at least 1");
  }
  if (policy_ == CheckpointPolicy::SeqStash) {
    if (plan.strategy.layout != Layout::Striped) {
      problems.add(
          "plan:/strategy/layout",
          fmt::format("seq_stash runs on the striped layout only, this plan is {}", to_string(plan.strategy.layout)),
          "striped", "only under striped is the first part of every rank's tokens the first part of the sequence");
    }
    if (plan.strategy.ulysses > 1) {
      problems.add("plan:/strategy/checkpoint/policy",
                   fmt::format("seq_stash with Ulysses degree {}: a rank's first rows are not the first tokens of the "
                               "sequence once its group splits them",
                               plan.strategy.ulysses),
                   "none, full, attn_stash", "seq_stash runs on rings without a Ulysses split (ulysses = 1)");
    }
    if (plan.job.mask.kind == MaskKind::Full) {
      problems.add("plan:/job/mask", "seq_stash needs a mask under which no token attends a later one",
                   "causal, sliding:W, document:L");
    }
    if (!(plan.strategy.checkpoint.kept_fraction > 0 && plan.strategy.checkpoint.kept_fraction < 1)) {
      problems.add("plan:/strategy/checkpoint/kept_fraction", fmt::format("{}", plan.strategy.checkpoint.kept_fraction),
                   "a fraction strictly between 0 and 1");
    }
  }
  problems.throw_if_any();
  if (backend.attention != nullptr)
    require_kernel_limits(*backend.attention, model.spec().head_dim, precision_of(plan));
  // The executor reads the step's tensors in place and writes its results into the step's buffers.
  if (kernels_.memory().space() == MemorySpace::Device && &execution_.kernels->memory() != &kernels_.memory()) {
    throw Error(Problem{"training step", "the attention kernels compute in device memory of their own, not the step's",
                        "attention kernels sharing the step kernels' memory",
                        "make them with the step kernels (make_attention_kernels(..., &step_kernels))"});
  }

  const int context = RingSchedule::context_of(plan, comm.rank());
  schedule_ = std::make_unique<RingSchedule>(std::move(RingSchedule::every_context(plan, seq)[context]));
  schedule_->require_complete();
  positions_ = schedule_->rank_positions(comm.rank());
  sequence_rows_ = static_cast<std::int64_t>(positions_.size());
  rows_ = sequence_rows_ * sequences_;
  for (int e = 0; e < sequences_; ++e)
    row_positions_.insert(row_positions_.end(), positions_.begin(), positions_.end());
  kernels_.set_positions(row_positions_);  // a view: the member outlives the kernels' use
  held_ = rows_;
  if (tp_ > 1) {
    if (group.comm == nullptr || group.shard == nullptr || group.comm->size() != tp_ ||
        &group.shard->local() != &model) {
      throw Error(Problem{"training step",
                          fmt::format("a plan of tp {} without its group and its part of the model", tp_), "",
                          "a bug in the training runtime: please report it"});
    }
    if (rows_ % tp_ != 0) {
      throw Error(Problem{
          "plan:/strategy/tp",
          fmt::format("this rank's {} rows of a micro-batch do not split over {} tensor-parallel ranks", rows_, tp_),
          "seq x micro_batch / (cp x ulysses) a multiple of tp", ""});
    }
    held_ = rows_ / tp_;
    held_first_ = static_cast<std::int64_t>(group.comm->rank()) * held_;
  }
  // A device copy of a unit (an offloaded state's upload) stays valid whatever the host does with
  // its own; under ZeRO 3 the device would then hold every gathered unit at once, which stage 3
  // exists to avoid. A unit bound in place (the state in GPU memory) costs nothing to keep.
  keep_units_bound_ = kernels_.memory().space() == MemorySpace::Device && plan.strategy.zero.stage < 3;
  if (policy_ != CheckpointPolicy::SeqStash) return;
  short_rows_ = std::llround((1.0 - plan.strategy.checkpoint.kept_fraction) * static_cast<double>(sequence_rows_));
  if (short_rows_ == 0) return;
  short_schedule_ = std::make_unique<RingSchedule>(plan, short_rows_ * schedule_->ring_size(), context);
  short_schedule_->require_complete();
  const auto short_positions = short_schedule_->rank_positions(comm.rank());
  if (!std::equal(short_positions.begin(), short_positions.end(), positions_.begin())) {
    throw Error(Problem{"seq_stash", "the short ring's tokens are not the first tokens of this rank", "",
                        "a bug in the striped layout: please report it"});
  }
}

// Each ring's communicator is the transport's for its schedule (made here, on the first run: a
// transport's set-up is collective), else the job's.
void TrainingStep::connect_rings() {
  if (attention_) return;
  const ModelSpec& m = model_.spec();
  const auto connect = [&](const RingSchedule& schedule, std::unique_ptr<Communicator>& transport, std::int64_t rows) {
    if (ring_transport_) transport = ring_transport_(schedule.seq());
    return std::make_unique<DistributedAttention>(schedule, transport ? *transport : comm_,
                                                  Shape{rows, m.heads, m.head_dim}, Shape{rows, m.kv_heads, m.head_dim},
                                                  execution_);
  };
  attention_ = connect(*schedule_, transport_, sequence_rows_);
  if (short_schedule_) short_attention_ = connect(*short_schedule_, short_transport_, short_rows_);
}

StepBuffer TrainingStep::buffer(std::size_t n, MemoryUse use, Stored stored) {
  return {kernels_, ledger_, use, n, stored};
}

void TrainingStep::carry_tensor_parallel_on(Communicator& transport) {
  if (tp_comm_ == nullptr || transport.size() != tp_comm_->size() || transport.rank() != tp_comm_->rank()) {
    throw Error(Problem{"training step",
                        fmt::format("a tensor-parallel transport of {} ranks, this rank {}, for a group of {} ranks, "
                                    "this rank {}",
                                    transport.size(), transport.rank(), tp_comm_ != nullptr ? tp_comm_->size() : 0,
                                    tp_comm_ != nullptr ? tp_comm_->rank() : -1),
                        "the group's ranks in its order", "a bug in the training runtime: please report it"});
  }
  tp_comm_ = &transport;
}

void TrainingStep::require_tensor_transport() const {
  if (kernels_.memory().space() == MemorySpace::Device && !tp_comm_->reads_device_memory()) {
    throw Error(Problem{"the sequence-parallel collectives",
                        "the step's activations are in GPU memory, and the tensor-parallel group's communicator "
                        "reads host memory only",
                        "NCCL between processes, or a loopback sub-job with the GPU copy",
                        "burst run --device cuda does this itself (TrainingOptions::device_collectives)"});
  }
}

StepTensor TrainingStep::all_rows(const StepBuffer& held, StepBuffer& gathered, std::size_t per_row) {
  if (tp_ == 1) return held.tensor();
  require_tensor_transport();
  gathered = buffer(static_cast<std::size_t>(rows_) * per_row);
  const ConstBuffer mine = buffer_of(held.tensor());
  tp_comm_->allgather(mine, buffer_of(gathered.tensor()));
  sequence_parallel_bytes_ += static_cast<std::uint64_t>(tp_ - 1) * mine.bytes();
  return gathered.tensor();
}

StepBuffer TrainingStep::held_part(StepBuffer partial, std::size_t per_row) {
  if (tp_ == 1) return partial;
  require_tensor_transport();
  StepBuffer mine = buffer(static_cast<std::size_t>(held_) * per_row);
  const MutBuffer share = buffer_of(mine.tensor());
  tp_comm_->reduce_scatter(buffer_of(partial.tensor()), share, ReduceOp::Sum);
  sequence_parallel_bytes_ += static_cast<std::uint64_t>(tp_ - 1) * share.bytes();
  return mine;
}

void TrainingStep::note_ring(const RingAttentionStats& stats) {
  ledger_.transient(MemoryUse::RingBuffers, stats.ring_buffer_bytes);
}

void TrainingStep::attention_inputs(const BoundUnit& params, const LayerSlices& w, Layer& s) {
  const ModelSpec& m = model_.spec();
  const auto c = static_cast<std::size_t>(rows_);
  const auto hidden = static_cast<std::size_t>(m.hidden);
  s.a = buffer(static_cast<std::size_t>(held_) * hidden);
  s.inv_rms_attn = buffer(static_cast<std::size_t>(held_), MemoryUse::Activations, Stored::Fp32);
  kernels_.rms_norm_forward(s.x.tensor(), of(params, w.attn_norm), held_, m.hidden, s.a.tensor(),
                            s.inv_rms_attn.tensor());
  StepBuffer gathered;
  const StepTensor a = all_rows(s.a, gathered, hidden);
  s.q = buffer(c * static_cast<std::size_t>(model_.q_dim()));
  s.k = buffer(c * static_cast<std::size_t>(model_.kv_dim()));
  s.v = buffer(c * static_cast<std::size_t>(model_.kv_dim()));
  kernels_.linear_forward(a, rows_, m.hidden, of(params, w.wq), model_.q_dim(), s.q.tensor());
  kernels_.linear_forward(a, rows_, m.hidden, of(params, w.wk), model_.kv_dim(), s.k.tensor());
  kernels_.linear_forward(a, rows_, m.hidden, of(params, w.wv), model_.kv_dim(), s.v.tensor());
  kernels_.rope(s.q.tensor(), m.heads, s.k.tensor(), m.kv_heads, m.head_dim, static_cast<float>(m.rope_base), false);
}

RingAttentionStats TrainingStep::ring_forward(DistributedAttention& attention, const Layer& s, std::int64_t first,
                                              std::int64_t rows) {
  const ModelSpec& m = model_.spec();
  const Shape q_shape{rows, m.heads, m.head_dim}, kv_shape{rows, m.kv_heads, m.head_dim};
  const auto q = [&](std::int64_t r) { return static_cast<std::size_t>(r * model_.q_dim()); };
  const auto kv = [&](std::int64_t r) { return static_cast<std::size_t>(r * model_.kv_dim()); };
  const auto lse = [&](std::int64_t r) { return static_cast<std::size_t>(r * m.heads); };
  // Rows [first, first + rows) of q, k, v in, of o and lse out: one sequence's, or the first rows
  // of one sequence (seq_stash's short ring).
  return attention.forward(operand(s.q.tensor().part(q(first), q(rows)), q_shape),
                           operand(s.k.tensor().part(kv(first), kv(rows)), kv_shape),
                           operand(s.v.tensor().part(kv(first), kv(rows)), kv_shape),
                           destination(s.o.tensor().part(q(first), q(rows)), q_shape),
                           destination(s.lse.tensor().part(lse(first), lse(rows)), {rows, m.heads, 1}));
}

void TrainingStep::attention_output(Layer& s, bool recompute, StepOutcome& out) {
  if (recompute && policy_ == CheckpointPolicy::AttnStash) return;  // o and lse were kept
  const auto q_floats = static_cast<std::size_t>(model_.q_dim());
  const auto heads = static_cast<std::size_t>(model_.spec().heads);
  const auto c = static_cast<std::size_t>(rows_);
  s.o = buffer(c * q_floats);
  s.lse = buffer(c * heads, MemoryUse::Activations, Stored::Fp32);
  if (recompute && policy_ == CheckpointPolicy::SeqStash) {
    // Each sequence's earlier rows on the short ring, its later ones from the stash.
    if (short_attention_) attend_sequences(*short_attention_, s, short_rows_, out, out.attention_recompute_s);
    copy_kept_rows(s, false);
    s.o_kept.clear();
    s.lse_kept.clear();
    return;
  }
  attend_sequences(*attention_, s, sequence_rows_, out, recompute ? out.attention_recompute_s : out.attention_s);
}

void TrainingStep::attend_sequences(DistributedAttention& attention, const Layer& s, std::int64_t rows,
                                    StepOutcome& out, double& seconds) {
  for (std::int64_t e = 0; e < sequences_; ++e) {
    kernels_.time_span([&] { note_ring(ring_forward(attention, s, e * sequence_rows_, rows)); }, seconds);
    ++out.ring_passes;
  }
}

void TrainingStep::mlp_inputs(const BoundUnit& params, const LayerSlices& w, Layer& s) {
  const ModelSpec& m = model_.spec();
  const auto c = static_cast<std::size_t>(rows_);
  const auto hidden = static_cast<std::size_t>(m.hidden), ffn = static_cast<std::size_t>(m.ffn);
  StepBuffer partial = buffer(c * hidden);
  kernels_.linear_forward(s.o.tensor(), rows_, model_.q_dim(), of(params, w.wo), m.hidden, partial.tensor());
  s.h = held_part(std::move(partial), hidden);
  s.b = buffer(static_cast<std::size_t>(held_) * hidden);
  s.inv_rms_mlp = buffer(static_cast<std::size_t>(held_), MemoryUse::Activations, Stored::Fp32);
  // h = x + o Wo, b = RMSNorm(h): one fused call.
  kernels_.add_rms_norm_forward(s.h.tensor(), s.x.tensor(), s.h.tensor(), of(params, w.mlp_norm), held_, m.hidden,
                                s.b.tensor(), s.inv_rms_mlp.tensor());
  StepBuffer gathered;  // b over all rows (tp > 1): freed before m is made
  const StepTensor b = all_rows(s.b, gathered, hidden);
  s.u = buffer(c * ffn);
  s.w = buffer(c * ffn);
  kernels_.linear_forward(b, rows_, m.hidden, of(params, w.w_gate), m.ffn, s.u.tensor());
  kernels_.linear_forward(b, rows_, m.hidden, of(params, w.w_up), m.ffn, s.w.tensor());
  gathered.clear();
  s.m = buffer(c * ffn);
  kernels_.swiglu_forward(s.u.tensor(), s.w.tensor(), s.m.tensor());
}

StepBuffer TrainingStep::forward_layer(const BoundUnit& params, const LayerSlices& w, Layer& s, StepOutcome& out) {
  const ModelSpec& m = model_.spec();
  attention_inputs(params, w, s);
  attention_output(s, false, out);
  mlp_inputs(params, w, s);
  const auto hidden = static_cast<std::size_t>(m.hidden);
  StepBuffer partial = buffer(static_cast<std::size_t>(rows_) * hidden);
  kernels_.linear_forward(s.m.tensor(), rows_, m.ffn, of(params, w.w_down), m.hidden, partial.tensor());
  StepBuffer y = held_part(std::move(partial), hidden);
  kernels_.residual_add(y.tensor(), s.h.tensor(), y.tensor());
  return y;
}

void TrainingStep::keep_per_policy(Layer& s) {
  if (policy_ == CheckpointPolicy::None) return;
  for (StepBuffer* t : {&s.a, &s.inv_rms_attn, &s.q, &s.k, &s.v, &s.h, &s.b, &s.inv_rms_mlp, &s.u, &s.w, &s.m})
    t->clear();
  switch (policy_) {
    case CheckpointPolicy::AttnStash:
      s.o.charge_to(ledger_, MemoryUse::AttentionStash);
      s.lse.charge_to(ledger_, MemoryUse::AttentionStash);
      return;
    case CheckpointPolicy::SeqStash: {
      const auto kept_rows = static_cast<std::size_t>(sequences_ * (sequence_rows_ - short_rows_));
      s.o_kept = buffer(kept_rows * static_cast<std::size_t>(model_.q_dim()), MemoryUse::AttentionStash);
      s.lse_kept =
          buffer(kept_rows * static_cast<std::size_t>(model_.spec().heads), MemoryUse::AttentionStash, Stored::Fp32);
      copy_kept_rows(s, true);
      break;
    }
    default: break;
  }
  s.o.clear();
  s.lse.clear();
}

// seq_stash's stash: the later rows of each sequence (all but its first short_rows_), sequence
// after sequence, between o, lse and o_kept, lse_kept: into the stash, or back from it.
void TrainingStep::copy_kept_rows(Layer& s, bool into_stash) {
  const auto n = static_cast<std::size_t>(sequence_rows_), r = static_cast<std::size_t>(short_rows_);
  for (const auto& [full, kept, per_row] :
       {std::tuple{&s.o, &s.o_kept, static_cast<std::size_t>(model_.q_dim())},
        std::tuple{&s.lse, &s.lse_kept, static_cast<std::size_t>(model_.spec().heads)}}) {
    for (std::size_t e = 0; e < static_cast<std::size_t>(sequences_); ++e) {
      const StepTensor rows = full->tensor().part((e * n + r) * per_row, (n - r) * per_row);
      const StepTensor stashed = kept->tensor().part(e * (n - r) * per_row, (n - r) * per_row);
      kernels_.copy(into_stash ? rows : stashed, into_stash ? stashed : rows);
    }
  }
}

void TrainingStep::recompute_layer(const BoundUnit& params, const LayerSlices& w, Layer& s, StepOutcome& out) {
  if (policy_ == CheckpointPolicy::None) return;
  kernels_.time_span(
      [&] {
        attention_inputs(params, w, s);
        attention_output(s, true, out);
        mlp_inputs(params, w, s);
      },
      out.recompute_s);
}

StepBuffer TrainingStep::backward_layer(const BoundUnit& params, const BoundUnit& grads, const LayerSlices& w, Layer& s,
                                        const StepBuffer& dy, StepOutcome& out) {
  const ModelSpec& m = model_.spec();
  const auto c = static_cast<std::size_t>(rows_), held = static_cast<std::size_t>(held_);
  const auto hidden = static_cast<std::size_t>(m.hidden), ffn = static_cast<std::size_t>(m.ffn);
  const std::int64_t qd = model_.q_dim(), kvd = model_.kv_dim();
  StepBuffer gathered;  // a held tensor over all rows, while one is needed (tp > 1)

  // MLP: y = h + (silu(b Wgate) * (b Wup)) Wdown, b = RMSNorm(h). The gradient of the
  // reduce-scatter after Wdown is an all-gather of dy.
  StepBuffer dm = buffer(c * ffn);
  kernels_.linear_backward(s.m.tensor(), rows_, m.ffn, of(params, w.w_down), m.hidden, all_rows(dy, gathered, hidden),
                           dm.tensor(), of(grads, w.w_down), false);
  gathered.clear();
  s.m.clear();
  StepBuffer du = buffer(c * ffn), dw = buffer(c * ffn);
  kernels_.swiglu_backward(s.u.tensor(), s.w.tensor(), dm.tensor(), du.tensor(), dw.tensor());
  dm.clear();
  s.u.clear();
  s.w.clear();
  // The column-parallel pair's input over all rows again (Megatron keeps the held rows only and
  // gathers them anew for the weight gradients).
  StepBuffer db = buffer(c * hidden);
  const StepTensor b = all_rows(s.b, gathered, hidden);
  kernels_.linear_backward(b, rows_, m.hidden, of(params, w.w_gate), m.ffn, du.tensor(), db.tensor(),
                           of(grads, w.w_gate), false);
  kernels_.linear_backward(b, rows_, m.hidden, of(params, w.w_up), m.ffn, dw.tensor(), db.tensor(), of(grads, w.w_up),
                           true);
  gathered.clear();
  du.clear();
  dw.clear();
  s.b.clear();
  db = held_part(std::move(db), hidden);
  StepBuffer dh = buffer(held * hidden);
  // dh = the norm's backward of db plus dy, the residual's gradient: one fused call.
  kernels_.rms_norm_backward(s.h.tensor(), of(params, w.mlp_norm), s.inv_rms_mlp.tensor(), db.tensor(), held_, m.hidden,
                             dy.tensor(), dh.tensor(), of(grads, w.mlp_norm));
  db.clear();
  s.h.clear();
  s.inv_rms_mlp.clear();

  // Attention: h = x + o Wo, o = attention(RoPE(a Wq), RoPE(a Wk), a Wv), a = RMSNorm(x).
  StepBuffer d_o = buffer(c * static_cast<std::size_t>(qd));
  kernels_.linear_backward(s.o.tensor(), rows_, qd, of(params, w.wo), m.hidden, all_rows(dh, gathered, hidden),
                           d_o.tensor(), of(grads, w.wo), false);
  gathered.clear();
  StepBuffer dq = buffer(c * static_cast<std::size_t>(qd)), dk = buffer(c * static_cast<std::size_t>(kvd)),
             dv = buffer(c * static_cast<std::size_t>(kvd));
  const std::int64_t n = sequence_rows_;
  const Shape q_shape{n, m.heads, m.head_dim}, kv_shape{n, m.kv_heads, m.head_dim};
  for (std::int64_t e = 0; e < sequences_; ++e) {
    // Sequence e's rows of every tensor.
    const auto rows = [&](const StepBuffer& t, std::int64_t per_row) {
      return t.tensor().part(static_cast<std::size_t>(e * n * per_row), static_cast<std::size_t>(n * per_row));
    };
    kernels_.time_span(
        [&] {
          // The attention kernels accumulate dQ, dK, dV in fp32; the executor stores them as the
          // projections read them (activations).
          note_ring(attention_->backward(backward_, operand(rows(s.q, qd), q_shape), operand(rows(s.k, kvd), kv_shape),
                                         operand(rows(s.v, kvd), kv_shape), operand(rows(s.o, qd), q_shape),
                                         operand(rows(s.lse, m.heads), {n, m.heads, 1}),
                                         operand(rows(d_o, qd), q_shape), destination(rows(dq, qd), q_shape),
                                         destination(rows(dk, kvd), kv_shape), destination(rows(dv, kvd), kv_shape)));
        },
        out.attention_s);
    ++out.ring_passes;
  }
  d_o.clear();
  s.o.clear();
  s.lse.clear();
  kernels_.rope(dq.tensor(), m.heads, dk.tensor(), m.kv_heads, m.head_dim, static_cast<float>(m.rope_base), true);
  StepBuffer da = buffer(c * hidden);
  const StepTensor a = all_rows(s.a, gathered, hidden);
  kernels_.linear_backward(a, rows_, m.hidden, of(params, w.wq), qd, dq.tensor(), da.tensor(), of(grads, w.wq), false);
  kernels_.linear_backward(a, rows_, m.hidden, of(params, w.wk), kvd, dk.tensor(), da.tensor(), of(grads, w.wk), true);
  kernels_.linear_backward(a, rows_, m.hidden, of(params, w.wv), kvd, dv.tensor(), da.tensor(), of(grads, w.wv), true);
  for (StepBuffer* t : {&gathered, &dq, &dk, &dv, &s.q, &s.k, &s.v, &s.a}) t->clear();
  da = held_part(std::move(da), hidden);
  StepBuffer dx = buffer(held * hidden);
  kernels_.rms_norm_backward(s.x.tensor(), of(params, w.attn_norm), s.inv_rms_attn.tensor(), da.tensor(), held_,
                             m.hidden, dh.tensor(), dx.tensor(), of(grads, w.attn_norm));
  return dx;
}

// What lives from the forward to the backward besides the layers' activations.
struct TrainingStep::Pass {
  std::vector<Layer> layers;
  StepBuffer x;                 // the last layer's output
  StepBuffer z, inv_rms_final;  // the final norm's output and its 1/rms
  BoundUnit head;               // the head unit's parameters, bound from its forward to its backward
  StepOutcome out;
};

StepOutcome TrainingStep::run(std::span<const float> params, std::span<float> grads, const StepTokens& in) {
  if (params.size() != model_.size() || grads.size() != model_.size()) {
    throw Error(Problem{"TrainingStep::run",
                        fmt::format("{} parameters, {} gradients for a model of {} parameters", params.size(),
                                    grads.size(), model_.size()),
                        "", ""});
  }
  WholeModel whole(model_, params, grads);
  return run(whole, in);
}

StepOutcome TrainingStep::run(WeightSource& weights, const StepTokens& in) {
  const auto held = static_cast<std::size_t>(held_);
  if (in.tokens.size() != held || in.targets.size() != held) {
    throw Error(Problem{"TrainingStep::run",
                        fmt::format("{} tokens, {} targets; this rank holds {} tokens ({} of each of {} sequences{})",
                                    in.tokens.size(), in.targets.size(), held, sequence_rows_, sequences_,
                                    tp_ > 1 ? fmt::format(", over {} tensor-parallel ranks", tp_) : ""),
                        "", ""});
  }
  connect_rings();
  Pass pass;
  pass.layers.resize(model_.layers.size());
  ChunkedLmHeadLoss head(kernels_, lm_head_chunks_, &ledger_);
  try {
    kernels_.time_span([&] { forward(weights, in, head, pass); }, pass.out.forward_s);
    kernels_.time_span([&] { backward(weights, in, head, pass); }, pass.out.backward_s);
  } catch (...) {
    kernels_.discard_times();  // the spans' seconds were in `pass`
    throw;
  }
  kernels_.settle_times();  // the spans' seconds into pass.out
  pass.out.sequence_parallel_bytes = std::exchange(sequence_parallel_bytes_, 0);
  return pass.out;
}

void TrainingStep::forward(WeightSource& weights, const StepTokens& in, ChunkedLmHeadLoss& head, Pass& pass) {
  const ModelSpec& m = model_.spec();
  const auto c = static_cast<std::size_t>(held_);
  const auto hidden = static_cast<std::size_t>(m.hidden);
  pass.x = buffer(c * hidden);
  {
    const BoundUnit table = bind_params(weights.acquire(ModelLayout::embedding_unit()));
    weights.prefetch(pass.layers.empty() ? model_.head_unit() : ModelLayout::layer_unit(0));
    kernels_.embedding_forward(in.tokens, table.bound.tensor, m.vocab, m.hidden, pass.x.tensor());
  }
  weights.release(ModelLayout::embedding_unit());
  for (std::size_t l = 0; l < pass.layers.size(); ++l) {
    {
      BoundUnit params = bind_params(weights.acquire(ModelLayout::layer_unit(l)));
      weights.prefetch(l + 1 < pass.layers.size() ? ModelLayout::layer_unit(l + 1) : model_.head_unit());
      pass.layers[l].x = std::move(pass.x);
      pass.x = forward_layer(params, local_layers_[l], pass.layers[l], pass.out);
      keep_per_policy(pass.layers[l]);
      if (keep_units_bound_) pass.layers[l].params = std::move(params);
    }
    weights.release(ModelLayout::layer_unit(l));
  }
  pass.head = bind_params(weights.acquire(model_.head_unit()));
  if (!pass.layers.empty()) weights.prefetch(ModelLayout::layer_unit(pass.layers.size() - 1));  // the backward's first
  pass.z = buffer(c * hidden);
  pass.inv_rms_final = buffer(c, MemoryUse::Activations, Stored::Fp32);
  kernels_.rms_norm_forward(pass.x.tensor(), of(pass.head, local_final_norm_), held_, m.hidden, pass.z.tensor(),
                            pass.inv_rms_final.tensor());
  kernels_.time_span(
      [&] {
        const LmHeadForward loss =
            head.forward(pass.z.tensor(), held_, m.hidden, of(pass.head, local_lm_head_), m.vocab, in.targets);
        pass.out.loss_sum = loss.loss_sum;
        pass.out.counted = loss.counted;
      },
      pass.out.loss_s);
}

// A copy the kernels made (the GPU's upload of host state) is device memory the ledger holds
// while it lives; the model state's own memory, bound in place, is the weight source's, counted there.
TrainingStep::BoundUnit TrainingStep::bound(MemoryUse use, BoundTensor tensor) {
  const std::size_t bytes = tensor.storage.bytes();
  return {std::move(tensor), bytes > 0 ? ledger_.hold(use, 0, bytes) : MemoryLedger::Hold{}};
}

TrainingStep::BoundUnit TrainingStep::bind_params(StepTensor params) {
  return bound(MemoryUse::Params,
               allocating_for(ledger_, MemoryUse::Params, [&] { return kernels_.bind_params(params); }));
}

// Binds unit u's gradients, runs `body` on them, and hands them back to the weight source.
template <typename Body>
void TrainingStep::with_gradients(WeightSource& weights, std::size_t unit, Body&& body) {
  const StepTensor held = weights.gradients(unit);
  const BoundUnit grads = bound(MemoryUse::Gradients, allocating_for(ledger_, MemoryUse::Gradients,
                                                                     [&] { return kernels_.bind_gradients(held); }));
  body(grads);
  kernels_.return_gradients(grads.bound, held);
  weights.gradients_done(unit);
}

void TrainingStep::backward(WeightSource& weights, const StepTokens& in, ChunkedLmHeadLoss& head, Pass& pass) {
  const ModelSpec& m = model_.spec();
  const auto c = static_cast<std::size_t>(held_);
  const auto hidden = static_cast<std::size_t>(m.hidden);
  StepBuffer dy;
  with_gradients(weights, model_.head_unit(), [&](const BoundUnit& grads) {
    StepBuffer dz = buffer(c * hidden);
    const double scale = in.global_counted > 0 ? 1.0 / static_cast<double>(in.global_counted) : 0.0;
    kernels_.time_span(
        [&] {
          head.backward(pass.z.tensor(), held_, m.hidden, of(pass.head, local_lm_head_), m.vocab, in.targets, scale,
                        dz.tensor(), of(grads, local_lm_head_));
        },
        pass.out.loss_s);
    pass.z.clear();
    dy = buffer(c * hidden);
    kernels_.rms_norm_backward(pass.x.tensor(), of(pass.head, local_final_norm_), pass.inv_rms_final.tensor(),
                               dz.tensor(), held_, m.hidden, {}, dy.tensor(), of(grads, local_final_norm_));
  });
  pass.head = {};
  weights.release(model_.head_unit());
  pass.x.clear();
  pass.inv_rms_final.clear();
  for (std::size_t l = pass.layers.size(); l-- > 0;) {
    const std::size_t unit = ModelLayout::layer_unit(l);
    {
      const StepTensor held = weights.acquire(unit);
      if (l > 0) weights.prefetch(ModelLayout::layer_unit(l - 1));
      const BoundUnit params = keep_units_bound_ ? std::move(pass.layers[l].params) : bind_params(held);
      recompute_layer(params, local_layers_[l], pass.layers[l], pass.out);
      with_gradients(weights, unit, [&](const BoundUnit& grads) {
        dy = backward_layer(params, grads, local_layers_[l], pass.layers[l], dy, pass.out);
      });
    }
    weights.release(unit);
    pass.layers[l] = Layer{};
  }
  with_gradients(weights, ModelLayout::embedding_unit(), [&](const BoundUnit& grads) {
    kernels_.embedding_backward(in.tokens, dy.tensor(), m.vocab, m.hidden, grads.bound.tensor);
  });
}

}  // namespace burst::rt
