// The step's forward, loss and backward with the plan's checkpoint policy (see train_step.hpp).
#include "runtime/training/train_step.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/stopwatch.hpp"
#include "runtime/training/layer_ops.hpp"

namespace burst::rt {
namespace {

void add_into(std::span<float> to, std::span<const float> from) {
  for (std::size_t i = 0; i < to.size(); ++i) to[i] += from[i];
}

}  // namespace

// A layer's activations between its forward and its backward; which are alive depends on the
// policy and on where the step is (see the header).
struct TrainingStep::Layer {
  TrackedBuffer x;                    // input [c, hidden]
  TrackedBuffer a, inv_rms_attn;      // RMSNorm(x) and its 1/rms
  TrackedBuffer q, k, v;              // after RoPE: [c, H, d], [c, Hkv, d]
  TrackedBuffer o, lse;               // attention output [c, H, d] and its lse [c * H]
  TrackedBuffer h, b, inv_rms_mlp;    // h = x + o Wo, b = RMSNorm(h)
  TrackedBuffer u, w, m;              // gate, up, silu(u) * w: [c, ffn]
  TrackedBuffer o_kept, lse_kept;     // seq_stash: o and lse of the later rows only
};

TrainingStep::TrainingStep(const plan::Plan& plan, const ModelLayout& model, std::int64_t seq, Communicator& comm,
                           MemoryLedger& ledger)
    : model_(model),
      ledger_(ledger),
      policy_(plan.strategy.checkpoint.policy),
      backward_(plan.strategy.backward),
      lm_head_chunks_(plan.strategy.lm_head_chunks) {
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
  if (policy_ == CheckpointPolicy::SeqStash) {
    if (plan.strategy.layout != Layout::Striped) {
      problems.add("plan:/strategy/layout",
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
      problems.add("plan:/job/mask", "seq_stash needs a mask under which no token attends a later one", "causal, sliding:W, document:L");
    }
    if (!(plan.strategy.checkpoint.kept_fraction > 0 && plan.strategy.checkpoint.kept_fraction < 1)) {
      problems.add("plan:/strategy/checkpoint/kept_fraction", fmt::format("{}", plan.strategy.checkpoint.kept_fraction),
                   "a fraction strictly between 0 and 1");
    }
  }
  problems.throw_if_any();

  schedule_ = std::make_unique<RingSchedule>(plan, seq);
  schedule_->require_complete();
  positions_ = schedule_->rank_positions(comm.rank());
  rows_ = static_cast<std::int64_t>(positions_.size());
  const ModelSpec& m = model.spec();
  const AttentionExecution execution{precision_of(plan), plan.strategy.overlap};  // CPU kernels (GPU training: issue 12)
  attention_ = std::make_unique<DistributedAttention>(*schedule_, comm, Shape{rows_, m.heads, m.head_dim},
                                                      Shape{rows_, m.kv_heads, m.head_dim}, execution);
  if (policy_ != CheckpointPolicy::SeqStash) return;
  short_rows_ = std::llround((1.0 - plan.strategy.checkpoint.kept_fraction) * static_cast<double>(rows_));
  if (short_rows_ == 0) return;
  short_schedule_ = std::make_unique<RingSchedule>(plan, short_rows_ * schedule_->ring_size());
  short_schedule_->require_complete();
  const auto short_positions = short_schedule_->rank_positions(comm.rank());
  if (!std::equal(short_positions.begin(), short_positions.end(), positions_.begin())) {
    throw Error(Problem{"seq_stash", "the short ring's tokens are not the first tokens of this rank", "",
                        "a bug in the striped layout: please report it"});
  }
  short_attention_ = std::make_unique<DistributedAttention>(*short_schedule_, comm, Shape{short_rows_, m.heads, m.head_dim},
                                                            Shape{short_rows_, m.kv_heads, m.head_dim}, execution);
}

TrackedBuffer TrainingStep::buffer(std::size_t floats, MemoryUse use, Stored stored) { return {ledger_, use, floats, stored}; }

void TrainingStep::note_ring(const RingAttentionStats& stats) { ledger_.transient(MemoryUse::RingBuffers, stats.ring_buffer_bytes); }

void TrainingStep::attention_inputs(std::span<const float> params, const LayerSlices& w, Layer& s) {
  const ModelSpec& m = model_.spec();
  const auto c = static_cast<std::size_t>(rows_);
  s.a = buffer(c * static_cast<std::size_t>(m.hidden));
  s.inv_rms_attn = buffer(c, MemoryUse::Activations, Stored::Fp32);
  rms_norm_forward(s.x.span(), w.attn_norm.of(params), rows_, m.hidden, kNormEps, s.a.span(), s.inv_rms_attn.span());
  s.q = buffer(c * static_cast<std::size_t>(model_.q_dim()));
  s.k = buffer(c * static_cast<std::size_t>(model_.kv_dim()));
  s.v = buffer(c * static_cast<std::size_t>(model_.kv_dim()));
  linear_forward(s.a.span(), rows_, m.hidden, w.wq.of(params), model_.q_dim(), s.q.span());
  linear_forward(s.a.span(), rows_, m.hidden, w.wk.of(params), model_.kv_dim(), s.k.span());
  linear_forward(s.a.span(), rows_, m.hidden, w.wv.of(params), model_.kv_dim(), s.v.span());
  rope_forward(View{s.q.data(), {rows_, m.heads, m.head_dim}}, positions_, kRopeBase);
  rope_forward(View{s.k.data(), {rows_, m.kv_heads, m.head_dim}}, positions_, kRopeBase);
}

void TrainingStep::attention_output(Layer& s, bool recompute, StepOutcome& out) {
  const ModelSpec& m = model_.spec();
  if (recompute && policy_ == CheckpointPolicy::AttnStash) return;  // o and lse were kept
  if (recompute && policy_ == CheckpointPolicy::SeqStash) {
    // The earlier rows on the short ring, the later ones from the stash.
    const auto q_floats = static_cast<std::size_t>(model_.q_dim());
    const auto heads = static_cast<std::size_t>(m.heads);
    const auto c = static_cast<std::size_t>(rows_), r = static_cast<std::size_t>(short_rows_);
    s.o = buffer(c * q_floats);
    s.lse = buffer(c * heads, MemoryUse::Activations, Stored::Fp32);
    if (short_attention_) {
      const Shape q_shape{short_rows_, m.heads, m.head_dim}, kv_shape{short_rows_, m.kv_heads, m.head_dim};
      timed([&] {
        RingForward f = short_attention_->forward({s.q.data(), q_shape}, {s.k.data(), kv_shape}, {s.v.data(), kv_shape});
        const TrackedBuffer o_short(ledger_, MemoryUse::Activations, std::move(f.o).take());
        const TrackedBuffer lse_short(ledger_, MemoryUse::Activations, std::move(f.lse), Stored::Fp32);
        note_ring(f.stats);  // the pass's buffers lived beside its outputs
        std::copy(o_short.span().begin(), o_short.span().end(), s.o.data());
        std::copy(lse_short.span().begin(), lse_short.span().end(), s.lse.data());
      }, out.attention_s);
      ++out.ring_passes;
    }
    std::copy(s.o_kept.span().begin(), s.o_kept.span().end(), s.o.data() + r * q_floats);
    std::copy(s.lse_kept.span().begin(), s.lse_kept.span().end(), s.lse.data() + r * heads);
    s.o_kept.clear();
    s.lse_kept.clear();
    return;
  }
  const Shape q_shape{rows_, m.heads, m.head_dim}, kv_shape{rows_, m.kv_heads, m.head_dim};
  timed([&] {
    RingForward f = attention_->forward({s.q.data(), q_shape}, {s.k.data(), kv_shape}, {s.v.data(), kv_shape});
    s.o = TrackedBuffer(ledger_, MemoryUse::Activations, std::move(f.o).take());
    s.lse = TrackedBuffer(ledger_, MemoryUse::Activations, std::move(f.lse), Stored::Fp32);
    note_ring(f.stats);  // the pass's buffers lived beside its outputs
  }, out.attention_s);
  ++out.ring_passes;
}

void TrainingStep::mlp_inputs(std::span<const float> params, const LayerSlices& w, Layer& s) {
  const ModelSpec& m = model_.spec();
  const auto c = static_cast<std::size_t>(rows_);
  const auto hidden = static_cast<std::size_t>(m.hidden), ffn = static_cast<std::size_t>(m.ffn);
  s.h = buffer(c * hidden);
  linear_forward(s.o.span(), rows_, model_.q_dim(), w.wo.of(params), m.hidden, s.h.span());
  add_into(s.h.span(), s.x.span());
  s.b = buffer(c * hidden);
  s.inv_rms_mlp = buffer(c, MemoryUse::Activations, Stored::Fp32);
  rms_norm_forward(s.h.span(), w.mlp_norm.of(params), rows_, m.hidden, kNormEps, s.b.span(), s.inv_rms_mlp.span());
  s.u = buffer(c * ffn);
  s.w = buffer(c * ffn);
  s.m = buffer(c * ffn);
  linear_forward(s.b.span(), rows_, m.hidden, w.w_gate.of(params), m.ffn, s.u.span());
  linear_forward(s.b.span(), rows_, m.hidden, w.w_up.of(params), m.ffn, s.w.span());
  swiglu_forward(s.u.span(), s.w.span(), s.m.span());
}

TrackedBuffer TrainingStep::forward_layer(std::span<const float> params, const LayerSlices& w, Layer& s, StepOutcome& out) {
  const ModelSpec& m = model_.spec();
  attention_inputs(params, w, s);
  attention_output(s, false, out);
  mlp_inputs(params, w, s);
  TrackedBuffer y = buffer(static_cast<std::size_t>(rows_) * static_cast<std::size_t>(m.hidden));
  linear_forward(s.m.span(), rows_, m.ffn, w.w_down.of(params), m.hidden, y.span());
  add_into(y.span(), s.h.span());
  return y;
}

void TrainingStep::keep_per_policy(Layer& s) {
  if (policy_ == CheckpointPolicy::None) return;
  for (TrackedBuffer* t : {&s.a, &s.inv_rms_attn, &s.q, &s.k, &s.v, &s.h, &s.b, &s.inv_rms_mlp, &s.u, &s.w, &s.m}) t->clear();
  switch (policy_) {
    case CheckpointPolicy::AttnStash:
      s.o.charge_to(ledger_, MemoryUse::AttentionStash);
      s.lse.charge_to(ledger_, MemoryUse::AttentionStash);
      return;
    case CheckpointPolicy::SeqStash: {
      const auto r_o = static_cast<std::ptrdiff_t>(short_rows_ * model_.q_dim());
      const auto r_lse = static_cast<std::ptrdiff_t>(short_rows_ * model_.spec().heads);
      s.o_kept = buffer(s.o.size() - static_cast<std::size_t>(r_o), MemoryUse::AttentionStash);
      s.lse_kept = buffer(s.lse.size() - static_cast<std::size_t>(r_lse), MemoryUse::AttentionStash, Stored::Fp32);
      std::copy(s.o.span().begin() + r_o, s.o.span().end(), s.o_kept.data());
      std::copy(s.lse.span().begin() + r_lse, s.lse.span().end(), s.lse_kept.data());
      break;
    }
    default: break;
  }
  s.o.clear();
  s.lse.clear();
}

void TrainingStep::recompute_layer(std::span<const float> params, const LayerSlices& w, Layer& s, StepOutcome& out) {
  if (policy_ == CheckpointPolicy::None) return;
  timed([&] {
    attention_inputs(params, w, s);
    attention_output(s, true, out);
    mlp_inputs(params, w, s);
  }, out.recompute_s);
}

TrackedBuffer TrainingStep::backward_layer(std::span<const float> params, std::span<float> grads, const LayerSlices& w,
                                           Layer& s, const TrackedBuffer& dy, StepOutcome& out) {
  const ModelSpec& m = model_.spec();
  const auto c = static_cast<std::size_t>(rows_);
  const auto hidden = static_cast<std::size_t>(m.hidden), ffn = static_cast<std::size_t>(m.ffn);
  const std::int64_t qd = model_.q_dim(), kvd = model_.kv_dim();

  // MLP: y = h + (silu(b Wgate) * (b Wup)) Wdown, b = RMSNorm(h).
  TrackedBuffer dm = buffer(c * ffn);
  linear_backward(s.m.span(), rows_, m.ffn, w.w_down.of(params), m.hidden, dy.span(), dm.span(), w.w_down.of(grads), false);
  s.m.clear();
  TrackedBuffer du = buffer(c * ffn), dw = buffer(c * ffn);
  swiglu_backward(s.u.span(), s.w.span(), dm.span(), du.span(), dw.span());
  dm.clear();
  s.u.clear();
  s.w.clear();
  TrackedBuffer db = buffer(c * hidden);
  linear_backward(s.b.span(), rows_, m.hidden, w.w_gate.of(params), m.ffn, du.span(), db.span(), w.w_gate.of(grads), false);
  linear_backward(s.b.span(), rows_, m.hidden, w.w_up.of(params), m.ffn, dw.span(), db.span(), w.w_up.of(grads), true);
  du.clear();
  dw.clear();
  s.b.clear();
  TrackedBuffer dh = buffer(c * hidden);
  rms_norm_backward(s.h.span(), w.mlp_norm.of(params), s.inv_rms_mlp.span(), db.span(), rows_, m.hidden, dh.span(),
                    w.mlp_norm.of(grads));
  add_into(dh.span(), dy.span());
  db.clear();
  s.h.clear();
  s.inv_rms_mlp.clear();

  // Attention: h = x + o Wo, o = attention(RoPE(a Wq), RoPE(a Wk), a Wv), a = RMSNorm(x).
  TrackedBuffer d_o = buffer(c * static_cast<std::size_t>(qd));
  linear_backward(s.o.span(), rows_, qd, w.wo.of(params), m.hidden, dh.span(), d_o.span(), w.wo.of(grads), false);
  const Shape q_shape{rows_, m.heads, m.head_dim}, kv_shape{rows_, m.kv_heads, m.head_dim};
  TrackedBuffer dq, dk, dv;
  timed([&] {
    RingBackward g = attention_->backward(backward_, {s.q.data(), q_shape}, {s.k.data(), kv_shape}, {s.v.data(), kv_shape},
                                          {s.o.data(), q_shape}, s.lse.span(), {d_o.data(), q_shape});
    // The attention kernels accumulate dQ, dK, dV in fp32.
    dq = TrackedBuffer(ledger_, MemoryUse::Activations, std::move(g.d_q).take(), Stored::Fp32);
    dk = TrackedBuffer(ledger_, MemoryUse::Activations, std::move(g.d_k).take(), Stored::Fp32);
    dv = TrackedBuffer(ledger_, MemoryUse::Activations, std::move(g.d_v).take(), Stored::Fp32);
    note_ring(g.stats);  // the pass's buffers lived beside its outputs
  }, out.attention_s);
  ++out.ring_passes;
  d_o.clear();
  s.o.clear();
  s.lse.clear();
  rope_backward(View{dq.data(), q_shape}, positions_, kRopeBase);
  rope_backward(View{dk.data(), kv_shape}, positions_, kRopeBase);
  TrackedBuffer da = buffer(c * hidden);
  linear_backward(s.a.span(), rows_, m.hidden, w.wq.of(params), qd, dq.span(), da.span(), w.wq.of(grads), false);
  linear_backward(s.a.span(), rows_, m.hidden, w.wk.of(params), kvd, dk.span(), da.span(), w.wk.of(grads), true);
  linear_backward(s.a.span(), rows_, m.hidden, w.wv.of(params), kvd, dv.span(), da.span(), w.wv.of(grads), true);
  for (TrackedBuffer* t : {&dq, &dk, &dv, &s.q, &s.k, &s.v, &s.a}) t->clear();
  TrackedBuffer dx = buffer(c * hidden);
  rms_norm_backward(s.x.span(), w.attn_norm.of(params), s.inv_rms_attn.span(), da.span(), rows_, m.hidden, dx.span(),
                    w.attn_norm.of(grads));
  add_into(dx.span(), dh.span());
  return dx;
}

// What lives from the forward to the backward besides the layers' activations.
struct TrainingStep::Pass {
  std::vector<Layer> layers;
  TrackedBuffer x;                 // the last layer's output
  TrackedBuffer z, inv_rms_final;  // the final norm's output and its 1/rms
  std::span<const float> head;     // the head unit's parameters, acquired from its forward to its backward
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
  const auto c = static_cast<std::size_t>(rows_);
  if (in.tokens.size() != c || in.targets.size() != c) {
    throw Error(Problem{"TrainingStep::run",
                        fmt::format("{} tokens, {} targets; this rank holds {} tokens", in.tokens.size(),
                                    in.targets.size(), c),
                        "", ""});
  }
  Pass pass;
  pass.layers.resize(model_.layers.size());
  ChunkedLmHeadLoss head(lm_head_chunks_, &ledger_);
  timed([&] { forward(weights, in, head, pass); }, pass.out.forward_s);
  timed([&] { backward(weights, in, head, pass); }, pass.out.backward_s);
  return pass.out;
}

void TrainingStep::forward(WeightSource& weights, const StepTokens& in, ChunkedLmHeadLoss& head, Pass& pass) {
  const ModelSpec& m = model_.spec();
  const auto c = static_cast<std::size_t>(rows_);
  const auto hidden = static_cast<std::size_t>(m.hidden);
  pass.x = buffer(c * hidden);
  embedding_forward(in.tokens, weights.acquire(ModelLayout::embedding_unit()), m.vocab, m.hidden, pass.x.span());
  weights.release(ModelLayout::embedding_unit());
  for (std::size_t l = 0; l < pass.layers.size(); ++l) {
    const std::span<const float> params = weights.acquire(ModelLayout::layer_unit(l));
    pass.layers[l].x = std::move(pass.x);
    pass.x = forward_layer(params, local_layers_[l], pass.layers[l], pass.out);
    keep_per_policy(pass.layers[l]);
    weights.release(ModelLayout::layer_unit(l));
  }
  pass.head = weights.acquire(model_.head_unit());
  pass.z = buffer(c * hidden);
  pass.inv_rms_final = buffer(c, MemoryUse::Activations, Stored::Fp32);
  rms_norm_forward(pass.x.span(), local_final_norm_.of(pass.head), rows_, m.hidden, kNormEps, pass.z.span(),
                   pass.inv_rms_final.span());
  timed([&] {
    const LmHeadForward loss = head.forward(pass.z.span(), rows_, m.hidden, local_lm_head_.of(pass.head), m.vocab, in.targets);
    pass.out.loss_sum = loss.loss_sum;
    pass.out.counted = loss.counted;
  }, pass.out.loss_s);
}

void TrainingStep::backward(WeightSource& weights, const StepTokens& in, ChunkedLmHeadLoss& head, Pass& pass) {
  const ModelSpec& m = model_.spec();
  const auto c = static_cast<std::size_t>(rows_);
  const auto hidden = static_cast<std::size_t>(m.hidden);
  const std::span<float> head_grads = weights.gradients(model_.head_unit());
  TrackedBuffer dz = buffer(c * hidden);
  const double scale = in.global_counted > 0 ? 1.0 / static_cast<double>(in.global_counted) : 0.0;
  timed([&] {
    head.backward(pass.z.span(), rows_, m.hidden, local_lm_head_.of(pass.head), m.vocab, in.targets, scale, dz.span(),
                  local_lm_head_.of(head_grads));
  }, pass.out.loss_s);
  pass.z.clear();
  TrackedBuffer dy = buffer(c * hidden);
  rms_norm_backward(pass.x.span(), local_final_norm_.of(pass.head), pass.inv_rms_final.span(), dz.span(), rows_, m.hidden,
                    dy.span(), local_final_norm_.of(head_grads));
  weights.gradients_done(model_.head_unit());
  weights.release(model_.head_unit());
  dz.clear();
  pass.x.clear();
  pass.inv_rms_final.clear();
  for (std::size_t l = pass.layers.size(); l-- > 0;) {
    const std::size_t unit = ModelLayout::layer_unit(l);
    const std::span<const float> params = weights.acquire(unit);
    recompute_layer(params, local_layers_[l], pass.layers[l], pass.out);
    dy = backward_layer(params, weights.gradients(unit), local_layers_[l], pass.layers[l], dy, pass.out);
    weights.gradients_done(unit);
    weights.release(unit);
    pass.layers[l] = Layer{};
  }
  embedding_backward(in.tokens, dy.span(), m.vocab, m.hidden, weights.gradients(ModelLayout::embedding_unit()));
  weights.gradients_done(ModelLayout::embedding_unit());
}

}  // namespace burst::rt
