// This rank's parameters, gradients and AdamW moments under the plan's ZeRO stage
// (plan:/strategy/zero/stage), and the collectives each stage adds to a training step.
//
// Every rank holds a model replica (context parallel and Ulysses share the weights), so ZeRO
// shards over all P ranks, unit by unit (shard_map.hpp: N parameters, a shard S = about N / P).
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
// Stages 1-3 also all-reduce one double, the shards' squared gradient norms, so clipping uses
// the global norm (adamw.hpp): every shard's update is then what the whole update does to it.
// Transients: stage 3's gathered unit (one at a time; the head's from its forward to its
// backward) and stages 2-3's full-size gradients of the unit whose backward runs. Every buffer
// is in the ledger, under params, gradients or optimizer, for as long as it lives.
//
// The AdamW state already lives in host memory (this is the CPU runtime), so a plan's
// `offload: true` changes nothing here; the run's report says so.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "runtime/comm/communicator.hpp"
#include "runtime/training/adamw.hpp"
#include "runtime/training/memory_ledger.hpp"
#include "runtime/training/model.hpp"
#include "runtime/training/shard_map.hpp"
#include "runtime/training/training_state.hpp"
#include "runtime/training/weight_source.hpp"

namespace burst::rt {

class ZeroModel final : public WeightSource {
 public:
  // Bytes held between steps, by use.
  struct Resident {
    std::uint64_t params = 0, gradients = 0, optimizer = 0;
  };

  // From the whole parameters and AdamW state (the same on every rank; m, v empty before the
  // first step) keeps what `stage` gives this rank. Throws burst::Error naming
  // plan:/strategy/zero/stage when the stage is not 0..3.
  ZeroModel(int stage, const ModelLayout& model, Communicator& comm, MemoryLedger& ledger, std::vector<float> params,
            AdamWState adam);

  [[nodiscard]] std::span<const float> acquire(std::size_t unit) override;
  void release(std::size_t unit) override;
  [[nodiscard]] std::span<float> gradients(std::size_t unit) override;
  void gradients_done(std::size_t unit) override;

  // Collective, after the backward: stages 0-1 all-reduce the whole gradient (2-3 have
  // reduce-scattered theirs unit by unit).
  void reduce_gradients();
  // Collective: clips to the global norm and steps AdamW on what this rank owns (all of it at
  // stage 0); stages 1-2 then all-gather the updated parameters. The norm before clipping.
  double optimizer_step(const AdamWConfig& config);
  // Collective: the whole parameters and summed gradients on rank 0, empty elsewhere (--check).
  [[nodiscard]] std::pair<std::vector<float>, std::vector<float>> whole_on_root();
  // What this rank saves: params, adam_m, adam_v and adam_step, whole (stage 0) or its shard.
  [[nodiscard]] TrainingState saved_part() const;

  [[nodiscard]] int stage() const { return stage_; }
  [[nodiscard]] const ShardMap& shards() const { return shards_; }
  // What this rank holds between steps, as this run holds it or as the GPU step would
  // (memory_ledger.hpp).
  [[nodiscard]] Resident resident(Column column = Column::Host) const;
  // Seconds spent in ZeRO's collectives (gradient reduction included) since the last call.
  [[nodiscard]] double take_collective_s() { return std::exchange(collective_s_, 0.0); }

 private:
  // Unit u's piece of a shard-sized vector.
  [[nodiscard]] std::span<float> piece(std::vector<float>& shard, std::size_t unit);
  // Where piece p of this rank lives in params_ and grads_ (whole vectors or shards).
  [[nodiscard]] std::span<float> params_of(const ShardPiece& p);
  [[nodiscard]] std::span<float> grads_of(const ShardPiece& p);
  void gather_updated_params();

  int stage_;
  ShardMap shards_;
  std::vector<ParamGroup> groups_;
  Communicator& comm_;
  MemoryLedger& ledger_;
  std::vector<ShardPiece> mine_;  // this rank's pieces
  std::vector<float> params_, grads_;
  AdamWState adam_;
  MemoryLedger::Hold params_hold_, grads_hold_, adam_hold_;
  std::vector<TrackedBuffer> gathered_, unit_grads_;  // per unit, while alive (stage 3; stages 2-3)
  double collective_s_ = 0;
};

}  // namespace burst::rt
