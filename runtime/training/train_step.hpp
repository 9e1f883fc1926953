// One training step of this rank's part of the sequence: the model forward (model.hpp) with
// attention distributed as the plan says (Ulysses groups around rings, distributed_attention.hpp), the fused LM head
// and loss, and the backward, keeping and recomputing activations exactly as the plan's checkpoint policy says.
//
// What each layer keeps from its forward until its backward (c local tokens, f the kept fraction):
//   none        every intermediate (x, norms, q, k, v, o, lse, h, MLP): no recompute
//   full        the layer input x only; the backward recomputes the layer, ring attention included
//   attn_stash  x, plus o and lse of all c tokens: the recompute runs no ring
//   seq_stash   x, plus o and lse of the LATER f c tokens only. The recompute runs attention for
//               the earlier (1 - f) c tokens on a shorter ring: under the striped layout the first
//               (1 - f) c tokens of every rank are exactly the first (1 - f) S tokens of the
//               sequence, and under a mask that never looks ahead (causal, sliding, document)
//               those queries see only those keys. So the short ring is the same plan over a
//               (1 - f) S sequence: (1 - f)^2 of causal attention's work, and f of the stash.
// Whatever a layer drops, its backward recomputes from x just before it is needed, and frees
// at its end. The LM head runs in the plan's lm_head chunks (lm_head_loss.hpp).
//
// Every operation is a StepKernels call (step_kernels.hpp) on tensors in its memory: the CPU's
// fp32 ops, or the GPU's bf16 kernels and cuBLASLt. Attention goes through the distributed
// executor with the attention kernels of the same device computing in the same memory: it
// reads Q, K, V (and O, lse, dO) where the step keeps them and writes O, lse (and dQ, dK, dV)
// into the step's buffers, so no tensor of a step crosses to the host (on the GPU: the loss and
// the gradient norm are all a step brings back, device_traffic.hpp counts it). The rings run over
// the job's communicator or, where the backend gives one, each ring's own transport
// (StepBackend::ring_transport: NCCL on GPUs). A unit's parameters are
// bound to the kernels while the step uses them (read in place where the model state is the
// kernels' own memory: the CPU's, or the GPU's bf16 working copy; uploaded as bf16 from an
// offloaded host state), and its gradients accumulate in a bound fp32 buffer (the state's own,
// or one handed back to the host) when the unit's backward is done. A layer's upload is kept
// from its forward to its backward under ZeRO 0-2 (one upload a unit a step); under ZeRO 3 each
// use uploads anew.
//
// Every buffer whose size the policy or the chunking changes is a StepBuffer of the step's
// MemoryLedger; the rings' in-flight blocks are charged as transients. Weight gradients are
// this rank's share only: the caller all-reduces them (or the WeightSource reduce-scatters each
// unit's as soon as its backward is done, ZeRO 2-3).
//
// Tensor parallelism (tensor_parallel.hpp; plan:/strategy/tp > 1): the step runs one rank's part
// of the decoder (heads, KV heads and ffn / tp) as Megatron-LM runs it with sequence parallelism.
// Of the m c rows its context-parallel rank holds, the rank keeps 1 / tp outside the matrix
// pairs (held_rows(): the embedding, the norms, the residual stream, the LM head and the loss):
//   a = RMSNorm(x)             [m c / tp rows]  all-gather ->  q, k, v on all m c rows, its heads
//   o Wo (a partial sum)       [m c rows]       reduce-scatter ->  h = x + ..., b = RMSNorm(h)
//   b                          all-gather ->  gate, up, silu on all rows, its ffn / tp features
//   m Wdown (a partial sum)    reduce-scatter ->  y = h + ...
// and the backward mirrors each (an all-gather's gradient is a reduce-scatter and back): dy and
// dh all-gathered, db and da reduce-scattered, and b and a, kept as held rows only, gathered
// again for the weight gradients: 4 collectives a layer forward (3 again in a recompute, which
// does not recompute the layer's output) and 6 backward, each moving (tp - 1) / tp of m c rows out of every rank, as
// the simulator counts them (simulator/training/tp_collectives.cpp). The attention runs on its own context-parallel
// group's rings (ring_schedule.hpp) with its heads. The replicated tensors (norm gains, embedding, LM head) saw only
// the rank's rows: their gradients here are the rank's share, which the weight source sums over the group once a step
// (ZeroModel::reduce_gradients, TensorParallelParts). The collectives move the step's own
// activations in place, in their dtype: fp32 on the CPU over the group's SubgroupCommunicator, bf16 in
// GPU memory over a device transport (carry_tensor_parallel_on: NCCL between processes, a loopback
// sub-job on one GPU), whose reduce-scatter sums bf16 in fp32 (comm/detail/reduce_in_order.hpp).
//
// Parameters come from a WeightSource (weight_source.hpp), one unit at a time: the embedding
// for its forward, each layer for its forward and again for its recompute and backward, the
// head (final norm and LM head) from its forward to its backward. So the same step runs on a
// whole replica and under ZeRO 3, where only the unit in use is gathered.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "plan/plan.hpp"
#include "runtime/comm/communicator.hpp"
#include "runtime/comm/subgroup_communicator.hpp"
#include "runtime/executor/distributed_attention.hpp"
#include "runtime/schedule/ring_schedule.hpp"
#include "runtime/training/lm_head_loss.hpp"
#include "runtime/training/memory_ledger.hpp"
#include "runtime/training/model.hpp"
#include "runtime/training/step_buffer.hpp"
#include "runtime/training/step_kernels.hpp"
#include "runtime/training/tensor_parallel.hpp"
#include "runtime/training/weight_source.hpp"

namespace burst::rt {

struct StepTokens {
  std::span<const std::int32_t> tokens;   // this rank's held rows' tokens (held_rows() of the positions())
  std::span<const std::int32_t> targets;  // their next tokens; -1 is not counted
  std::int64_t global_counted = 0;        // counted targets of the whole sequence: the loss is their mean
};

struct StepOutcome {
  double loss_sum = 0;       // this rank's summed cross-entropy
  std::int64_t counted = 0;  // and how many targets it counted
  double forward_s = 0, backward_s = 0;
  double attention_s = 0;            // in ring attention, forward and backward (not in the recompute)
  double recompute_s = 0;            // recomputing what the checkpoint policy dropped (attention included)
  double attention_recompute_s = 0;  // the recompute's ring attention (part of recompute_s)
  double loss_s = 0;                 // LM head and loss, forward and backward
  int ring_passes = 0;               // ring attention calls, recompute included
  // Bytes this rank sent in the sequence-parallel all-gathers and reduce-scatters (tp > 1).
  std::uint64_t sequence_parallel_bytes = 0;
  // The micro-batches of one optimizer step, summed.
  StepOutcome& operator+=(const StepOutcome& o) {
    loss_sum += o.loss_sum;
    counted += o.counted;
    forward_s += o.forward_s;
    backward_s += o.backward_s;
    attention_s += o.attention_s;
    recompute_s += o.recompute_s;
    attention_recompute_s += o.attention_recompute_s;
    loss_s += o.loss_s;
    ring_passes += o.ring_passes;
    sequence_parallel_bytes += o.sequence_parallel_bytes;
    return *this;
  }
};

// The communicator that carries a ring schedule's transfers, for a schedule of `seq` tokens of
// the step's plan: the NCCL transport of its op lists (nccl_op_list.hpp) on GPUs over several
// processes. Called collectively (every rank, the same schedules in the same order).
using RingTransport = std::function<std::unique_ptr<Communicator>(std::int64_t seq)>;

// What a step computes with; null: the CPU's (an owned HostStepKernels, CPU attention, the
// job's communicator for the rings).
struct StepBackend {
  StepKernels* step = nullptr;  // not owned
  // Not owned; the same device as `step`, computing in its memory (on a GPU: the same memory
  // object, whose stream orders both). Null: the CPU attention kernels over `step`'s memory,
  // which they read directly (host memory, or the CPU tests' stand-in for device memory).
  AttentionKernels* attention = nullptr;
  RingTransport ring_transport;  // empty: the rings' transfers go over the job's communicator
};

// A tensor-parallel step's group: its communicator (the tp consecutive world ranks, this rank's
// index its tensor-parallel rank) and this rank's part of the model, which the step runs.
struct TensorParallelGroup {
  SubgroupCommunicator* comm = nullptr;        // not owned; the host collectives (and, until
                                               // carry_tensor_parallel_on, the step's)
  const TensorParallelShard* shard = nullptr;  // not owned
};

class TrainingStep {
 public:
  // Checks everything the step needs from the plan (no communication, so every rank of a job
  // fails the same way): the ring, the layout's split of `seq`, seq_stash's layout and mask,
  // the LM-head chunk count. Throws burst::Error naming the plan field.
  // `model`: the whole model, or under tensor parallelism the rank's part (group.shard->local()).
  TrainingStep(const plan::Plan& plan, const ModelLayout& model, std::int64_t seq, Communicator& comm,
               MemoryLedger& ledger, StepBackend backend = {}, TensorParallelGroup group = {});

  // Global positions of this rank's tokens of one sequence, in the order it holds them. A
  // micro-batch of m sequences (plan:/strategy/micro_batch) is m such row blocks, one after another.
  [[nodiscard]] const std::vector<std::int64_t>& positions() const { return positions_; }
  [[nodiscard]] int sequences() const { return sequences_; }
  // Rows of each local sequence whose attention a seq_stash recompute redoes (0 for other policies).
  [[nodiscard]] std::int64_t recomputed_rows() const { return short_rows_; }
  // The rows of the micro-batch (positions() m times) this rank holds outside the tensor-parallel
  // pairs, [first, first + count): all of them at tp 1. StepTokens carries theirs.
  struct HeldRows {
    std::int64_t first = 0, count = 0;
  };
  [[nodiscard]] HeldRows held_rows() const { return {held_first_, held_}; }

  // The sequence-parallel collectives over `transport` (the tensor-parallel group's ranks, in the
  // same order; not owned, outliving the step) from now on: a GPU step's device collectives,
  // where the group's own communicator reads host memory only. The first run throws burst::Error
  // naming the transport when the step's tensors are device memory it cannot read.
  // Throws burst::Error (a bug) when `transport` is not the group's size, or ranks this rank otherwise.
  void carry_tensor_parallel_on(Communicator& transport);

  // Forward and backward; each unit's gradients (WeightSource::gradients) receive this rank's
  // share of the gradient of (sum of losses over the sequence / global_counted).
  StepOutcome run(WeightSource& weights, const StepTokens& in);
  // The same on a whole replica: `grads` (the model's size) is overwritten.
  StepOutcome run(std::span<const float> params, std::span<float> grads, const StepTokens& in);

 public:
  // A unit bound to the kernels, with the ledger's hold of the device copy (if the kernels made one).
  struct BoundUnit {
    BoundTensor bound;
    MemoryLedger::Hold held;
  };

 private:
  struct Layer;
  struct Pass;
  void forward(WeightSource& weights, const StepTokens& in, ChunkedLmHeadLoss& head, Pass& pass);
  void backward(WeightSource& weights, const StepTokens& in, ChunkedLmHeadLoss& head, Pass& pass);
  void connect_rings();
  void attention_inputs(const BoundUnit& params, const LayerSlices& w, Layer& s);
  // Attention of the first `rows` rows (all, or seq_stash's short ring) into s.o and s.lse.
  RingAttentionStats ring_forward(DistributedAttention& attention, const Layer& s, std::int64_t first,
                                  std::int64_t rows);
  void attention_output(Layer& s, bool recompute, StepOutcome& out);
  // Attention of the first `rows` rows of each sequence of the micro-batch, one ring pass each.
  // The ring over each sequence, its time into `seconds` (out's attention_s, or its
  // attention_recompute_s in the recompute).
  void attend_sequences(DistributedAttention& attention, const Layer& s, std::int64_t rows, StepOutcome& out,
                        double& seconds);
  void mlp_inputs(const BoundUnit& params, const LayerSlices& w, Layer& s);
  [[nodiscard]] StepBuffer forward_layer(const BoundUnit& params, const LayerSlices& w, Layer& s, StepOutcome& out);
  void keep_per_policy(Layer& s);
  void copy_kept_rows(Layer& s, bool into_stash);
  void recompute_layer(const BoundUnit& params, const LayerSlices& w, Layer& s, StepOutcome& out);
  [[nodiscard]] StepBuffer backward_layer(const BoundUnit& params, const BoundUnit& grads, const LayerSlices& w,
                                          Layer& s, const StepBuffer& dy, StepOutcome& out);
  // A unit's parameters bound to the kernels (an allocation that does not fit names the item).
  [[nodiscard]] BoundUnit bind_params(StepTensor params);
  [[nodiscard]] BoundUnit bound(MemoryUse use, BoundTensor tensor);
  template <typename Body>
  void with_gradients(WeightSource& weights, std::size_t unit, Body&& body);
  [[nodiscard]] StepBuffer buffer(std::size_t n, MemoryUse use = MemoryUse::Activations,
                                  Stored stored = Stored::Activation);
  // Throws burst::Error when the step's tensors are in device memory and tp_comm_ reads host memory only.
  void require_tensor_transport() const;
  // Sequence parallelism's collectives over the tensor-parallel group, `per_row` floats a row:
  // every rank's held rows gathered into all m c rows (in `gathered`; the held tensor itself at
  // tp 1), and the sum over the group of a partial [m c] result, this rank's held rows of it
  // (the partial itself at tp 1).
  [[nodiscard]] StepTensor all_rows(const StepBuffer& held, StepBuffer& gathered, std::size_t per_row);
  [[nodiscard]] StepBuffer held_part(StepBuffer partial, std::size_t per_row);
  void note_ring(const RingAttentionStats& stats);

  const ModelLayout& model_;
  std::vector<LayerSlices> local_layers_;   // each layer's tensors within its unit
  Slice local_final_norm_, local_lm_head_;  // within the head unit
  MemoryLedger& ledger_;
  Communicator& comm_;
  std::unique_ptr<StepKernels> own_kernels_;  // the CPU's, when the backend names none
  StepKernels& kernels_;
  std::unique_ptr<AttentionKernels> own_attention_;  // the CPU's over the step's memory, when the backend names none
  AttentionExecution execution_;
  RingTransport ring_transport_;
  std::unique_ptr<Communicator> transport_, short_transport_;  // the rings' (ring_transport_), outlive them
  CheckpointPolicy policy_;
  BackwardMode backward_;
  int lm_head_chunks_;
  std::unique_ptr<RingSchedule> schedule_, short_schedule_;
  std::unique_ptr<DistributedAttention> attention_, short_attention_;
  std::vector<std::int64_t> positions_;      // one sequence's rows
  std::vector<std::int64_t> row_positions_;  // RoPE's: every row of the micro-batch (positions_ m times)
  int sequences_ = 1;                        // m: the micro-batch's sequences, side by side
  std::int64_t sequence_rows_ = 0;           // c: this rank's tokens of one sequence
  std::int64_t rows_ = 0;                    // m c: its tokens of the micro-batch
  std::int64_t short_rows_ = 0;              // seq_stash: each sequence's earlier rows recomputed on the short ring
  bool keep_units_bound_ = false;            // a layer's device copy lives from its forward to its backward
  int tp_ = 1;
  Communicator* tp_comm_ = nullptr;  // the tensor-parallel group's collectives (tp > 1)
  // Sent in all_rows and held_part, this run: (tp - 1) held blocks a call, what leaves each rank
  // in a ring's or the direct exchange's all-gather or reduce-scatter (subgroup_communicator.hpp).
  std::uint64_t sequence_parallel_bytes_ = 0;
  std::int64_t held_first_ = 0, held_ = 0;  // the held rows (held_rows())
};

}  // namespace burst::rt
