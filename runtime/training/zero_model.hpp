// This rank's parameters, gradients and AdamW moments under the plan's ZeRO stage
// (plan:/strategy/zero/stage), and the collectives each stage adds to a training step.
//
// Every rank holds a model replica (context parallel and Ulysses share the weights), so ZeRO
// shards over all P ranks (under tensor parallelism: over the P / tp ranks holding one part, its
// `comm`; TensorParallelParts below), unit by unit (shard_map.hpp: N parameters, a shard S = about N / P).
// What a rank holds between steps, and a step's collectives (fp32, 4 bytes a float):
//
//   stage  params      gradients   AdamW m, v   collectives of one step
//   0      N           N           2N           all-reduce the N gradients
//   1      N           N           2S           all-reduce N; AdamW on its shard; all-gather
//                                                the updated parameters, unit by unit
//   2      N           S           2S           reduce-scatter each unit's gradients the moment
//                                                its backward is done; all-gather as stage 1
//   3      S           S           2S           all-gather each unit before its forward and
//                                                again before its backward; reduce-scatter as 2
//
// With the plan's overlap (plan:/strategy/overlap) the collectives of stages 2-3 run while the
// step computes: stage 3 starts gathering the unit the step names next (WeightSource::prefetch)
// as soon as it is named, so at most two units are gathered at once (the planner's count), and
// a unit's reduce-scatter is posted when its backward is done and waited for when the next
// unit's is posted (or by reduce_gradients), so it runs during that unit's backward. Stages 1-2
// post the all-gathers of the updated parameters after AdamW and wait for each unit's when the
// next step first acquires it, so the gathers of later units run during the forward of earlier
// ones. Only the time the step then still waits counts as collective time.
//
// Stages 1-3 also all-reduce one double, the shards' squared gradient norms, so clipping uses
// the global norm (adamw.hpp): every shard's update is then what the whole update does to it.
// Transients: stage 3's gathered units (the head's from its forward to its backward; one at a
// time, or with overlap the next one beside it) and stages 2-3's full-size gradients of the unit
// whose backward runs (with overlap also the previous unit's, until its reduce-scatter is done).
// Every buffer is in the ledger, under params, gradients or optimizer, for as long as it lives.
//
// Where the state lives: in the memory of `state`, a StepKernels (step_kernels.hpp), so one
// class serves every layout, and the optimizer runs there (squared_norm, adamw_update):
//   host fp32 (the CPU run; a GPU run whose plan offloads): the parameters are the master weights
//     themselves, and the layers read them in place or upload a unit at a time;
//   the GPU's memory (a GPU run that does not offload): the layers read a working copy in the
//     activation dtype (bf16), sharded as the table's params column says; the fp32 master weights
//     live beside m and v, whole at stage 0 and this rank's shard from stage 1 (the optimizer's
//     share), and AdamW rewrites the working copy from them. The stage 1-3 all-gathers then move
//     bf16 parameters, half the bytes; gradients stay fp32 (what the step accumulates).
// The collectives on the state run on `comm`, which must read that memory
// (Communicator::reads_device_memory: NCCL, or the loopback's device copy); host values (the
// shards' squared gradient norms) go over `host`, the job's communicator. Saving and --check load
// what they need to the host.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "runtime/comm/communicator.hpp"
#include "runtime/training/adamw.hpp"
#include "runtime/training/memory_ledger.hpp"
#include "runtime/training/model.hpp"
#include "runtime/training/shard_map.hpp"
#include "runtime/training/step_buffer.hpp"
#include "runtime/training/step_kernels.hpp"
#include "runtime/training/training_state.hpp"
#include "runtime/training/weight_source.hpp"

namespace burst::rt {

// Under tensor parallelism (tensor_parallel.hpp) a ZeroModel holds one tensor-parallel rank's part
// of the model and shards it over the ranks holding the same part (its `comm`). The tensors every
// part holds (`replicated`: norms, embedding, LM head) saw only the rank's rows, so once a step,
// after the sharding group's reduction, their gradients are summed over the tensor-parallel
// `group` (what this rank holds of them: all at stages 0-1, its shard's at 2-3); and the gradient
// norm that clipping uses adds the other parts' over the group, counting them once.
struct TensorParallelParts {
  // Not owned; null: no tensor parallelism. `group` reads the state's memory (its gradient sums;
  // on a GPU-resident state a device transport, as `comm` below), `host_group` the same ranks'
  // host values (the norms), as `host` below; null `host_group`: `group` itself.
  Communicator* group = nullptr;
  Communicator* host_group = nullptr;
  std::vector<Slice> replicated;
};

class ZeroModel final : public WeightSource {
 public:
  // Bytes held between steps, by use.
  struct Resident {
    std::uint64_t params = 0, gradients = 0, optimizer = 0;
  };

  // From the whole parameters and AdamW state (the same on every rank; m, v empty before the
  // first step) keeps what `stage` gives this rank in the memory of `state`. Throws burst::Error
  // naming plan:/strategy/zero/stage when the stage is not 0..3, and naming the transport when
  // the state is device memory `comm` cannot read.
  // `overlap`: the plan's (above); `comm` and `host` as above (the same one for host state).
  ZeroModel(int stage, bool overlap, const ModelLayout& model, StepKernels& state, Communicator& comm,
            Communicator& host, MemoryLedger& ledger, std::vector<float> params, AdamWState adam,
            TensorParallelParts tensor_parallel = {});

  [[nodiscard]] StepTensor acquire(std::size_t unit) override;
  void release(std::size_t unit) override;
  [[nodiscard]] StepTensor gradients(std::size_t unit) override;
  void gradients_done(std::size_t unit) override;
  void prefetch(std::size_t unit) override;

  // Before each micro-batch's step: the first of an optimizer step starts the gradients from
  // zero, every later one adds to them (gradient accumulation). A later micro-batch's unit
  // gradients arrive in a zeroed buffer beside the sum (the step may hand back a device copy
  // over what it was given) and are added to it: stages 0-1 when the unit's backward is done,
  // into the whole gradient; stages 2-3 after each micro-batch's reduce-scatter, into the shard.
  void start_micro_batch(bool first);
  // Collective, after the last micro-batch's backward: stages 0-1 all-reduce the whole gradient
  // (2-3 have reduce-scattered theirs unit by unit; the last of those is waited for here); under
  // tensor parallelism the replicated tensors' are then summed over the group.
  void reduce_gradients();
  // Collective: clips to the global norm and steps AdamW on what this rank owns (all of it at
  // stage 0); stages 1-2 then all-gather the updated parameters. The norm before clipping; a
  // norm that is not finite changes nothing (the run stops on it: training diverged).
  double optimizer_step(const AdamWConfig& config);
  // Collective: completes the collectives still in flight (stages 1-2's gathers of the updated
  // parameters, with overlap), as every rank must before the run ends.
  void finish_collectives();
  // Collective: the whole fp32 parameters and summed gradients on rank 0, empty elsewhere (--check).
  [[nodiscard]] std::pair<std::vector<float>, std::vector<float>> whole_on_root();
  // Collective: the whole fp32 parameters, AdamW m and v and step on rank 0, empty elsewhere (a
  // tensor-parallel part's, which its run saves whole).
  [[nodiscard]] TrainingState whole_state_on_root();
  // What this rank saves: params (fp32), adam_m, adam_v and adam_step, whole (stage 0) or its shard.
  [[nodiscard]] TrainingState saved_part();

  [[nodiscard]] int stage() const { return stage_; }
  [[nodiscard]] const ShardMap& shards() const { return shards_; }
  // What this rank holds between steps, as this run holds it or as the GPU step would
  // (memory_ledger.hpp).
  [[nodiscard]] Resident resident(Column column = Column::Host) const;
  // Where the state lives, and the bytes of a parameter as the layers read it (and ZeRO's
  // all-gathers move it): 4 on the host, the activation dtype's on the GPU.
  [[nodiscard]] MemorySpace state_space() const { return working_.tensor.space; }
  [[nodiscard]] std::size_t parameter_bytes() const { return dtype_size(working_.tensor.dtype); }
  // Whether the layers read a working copy beside separate fp32 master weights (state in a
  // memory whose activation dtype is narrower than fp32: the GPU's).
  [[nodiscard]] bool separate_master() const { return !master_.empty(); }
  // Seconds spent in ZeRO's collectives (gradient reduction included) since the last call.
  [[nodiscard]] double take_collective_s() { return std::exchange(collective_s_, 0.0); }

 private:
  // One vector of the state in the state kernels' memory.
  struct StateVector {
    MemoryBlock block;
    StepTensor tensor;
    [[nodiscard]] bool empty() const { return tensor.count == 0; }
  };
  [[nodiscard]] std::vector<float> whole_params_on_root();
  [[nodiscard]] StateVector upload(std::span<const float> values, DType dtype, MemoryUse use);
  [[nodiscard]] std::vector<float> download(const StepTensor& t);
  // Unit u's piece of a shard-sized tensor.
  [[nodiscard]] StepTensor piece(const StepTensor& shard, std::size_t unit) const;
  // Where piece p of this rank lives in the master weights, the working copy and the gradients.
  [[nodiscard]] StepTensor master_of(const ShardPiece& p) const;
  [[nodiscard]] StepTensor working_of(const ShardPiece& p) const;
  [[nodiscard]] StepTensor grads_of(const ShardPiece& p) const;
  [[nodiscard]] double global_norm();
  // Where `pieces` (of this rank's gradients) cover the replicated tensors (TensorParallelParts).
  [[nodiscard]] std::vector<ShardPiece> replicated_in(const std::vector<ShardPiece>& pieces) const;
  // Starts gathering unit u's parameters into gathered_[u] (stage 3).
  [[nodiscard]] Request start_gather(std::size_t unit);
  // sum += arrived, fp32, in the state's memory.
  void add_into(const StepTensor& sum, const StepTensor& arrived);
  // Waits for the reduce-scatter in flight, if any, and frees its unit's full-size gradients.
  void finish_reduce_scatter();
  // Waits for unit u's gather of its updated parameters, if one is in flight, and puts it in place.
  void finish_update(std::size_t unit);
  void gather_updated_params();
  // The whole of a vector that is whole on every rank or sharded over them, on rank 0 (fp32).
  [[nodiscard]] std::vector<float> whole_of(const StepTensor& held, bool sharded, MemoryUse use);

  int stage_;
  bool overlap_;
  ShardMap shards_;
  std::vector<ParamGroup> groups_;
  StepKernels& state_;
  // Where the transients live (gathered units, full-size unit gradients, the gathers' pieces):
  // the state's memory on the GPU; on the host pageable memory, since a state the plan offloads
  // is page-locked, and page-locking and freeing a buffer per unit per step would synchronise
  // the device each time.
  HostStepKernels pageable_;
  StepKernels& scratch_;
  Communicator& comm_;
  Communicator& host_;
  MemoryLedger& ledger_;
  std::vector<ShardPiece> mine_;  // this rank's pieces
  // The layers' parameters (activation dtype; the master weights too where that is fp32), the
  // separate fp32 master weights (else empty), the gradients and AdamW's moments.
  StateVector working_, master_, grads_, m_, v_;
  std::int64_t adam_step_ = 0;
  MemoryLedger::Hold params_hold_, grads_hold_, adam_hold_;
  // Per unit, while alive: stage 3's gathered parameters; stages 2-3's full-size gradients, and
  // stages 0-1's of a later micro-batch.
  std::vector<StepBuffer> gathered_, unit_grads_;
  std::vector<Request> gathering_;  // per unit: a prefetched gather in flight
  struct Reducing {
    std::size_t unit = 0;
    StepBuffer arriving;  // accumulating: the micro-batch's reduced piece, added to the shard when it arrives
    Request request;      // last: withdrawn before its buffers go, on an exception's way out
  };
  std::optional<Reducing> reducing_;  // the reduce-scatter in flight
  bool accumulating_ = false;         // a later micro-batch of the step: gradients add up
  struct Updating {                   // a gather of a unit's updated parameters in flight
    StepBuffer mine, padded;          // this rank's piece; the padded whole where the unit does not divide
    Request request;                  // last: withdrawn before its buffers go, on an exception's way out
  };
  std::vector<std::optional<Updating>> updating_;  // per unit
  double collective_s_ = 0;
  TensorParallelParts tensor_parallel_;
};

}  // namespace burst::rt
