// Saving and resuming under ZeRO: every rank writes its own shard, and a resumed run of any rank
// count or stage reads them all back.
//
// Files for --save F, by a run of P ranks at ZeRO stage 1-3 (a stage-0 run writes F alone, the
// whole state, as before):
//   F.rank<r>-of-<P>  rank r's shard (shard_map.hpp): params, adam_m, adam_v of its pieces,
//                     meta.zero = {stage, ranks, rank, total, pieces: [[flat, count, at], ...]}:
//                     floats [flat, flat + count) of the whole vector are at [at, at + count)
//   F                 the manifest, written by rank 0 once every shard is on disk: the run's meta
//                     (what a resume must match), meta.zero = {stage, ranks, total, files}, no floats
// Each file is a training state (training_state.hpp): written atomically, CRC-checked on load.
// The manifest comes last, so a save cut short leaves the previous manifest, whose step the
// shards must then all carry: a mix of two saves is refused, naming the shard that differs.
//
// Resuming reads F. A whole state is used as it is; a manifest's shards are each loaded (a
// corrupt or truncated one is refused by its name), checked to belong to the manifest, and
// their pieces put back into whole parameters and moments. The resumed run then takes its own
// shard under its own stage and rank count: re-sharding is this reassembly, so a state saved by
// 4 ranks at stage 3 resumes on 2 ranks at stage 1, or on one rank.
#pragma once

#include <string>

#include "runtime/training/shard_map.hpp"
#include "runtime/training/training_state.hpp"

namespace burst::rt {

[[nodiscard]] std::string shard_path(const std::string& path, int rank, int ranks);

// Writes rank `rank`'s shard file: `part` is its shard (ZeroModel::saved_part) with the step.
void save_shard(const std::string& path, const ShardMap& shards, int stage, int rank, TrainingState part);

// Writes the manifest, after every rank's save_shard: `header` carries meta, step and adam_step.
void save_manifest(const std::string& path, const ShardMap& shards, int stage, TrainingState header);

// The most shard files a manifest may name (one per rank of the job that saved it).
inline constexpr std::int64_t kMaxShardFiles = 1 << 16;

// The whole state saved at `path`, reassembled from its shards when it is a manifest of a model
// of `model_size` parameters. Throws burst::Error naming the file at fault: load_training_state's
// checks, a manifest whose total or rank count does not fit the model (before anything is
// allocated), then each shard's, every piece bounds-checked without overflow.
[[nodiscard]] TrainingState load_whole_state(const std::string& path, std::uint64_t model_size);
// The same from `state`, the file at `path` already read (a manifest gets its shards; a whole
// state is returned as it is).
[[nodiscard]] TrainingState assemble_shards(TrainingState state, const std::string& path, std::uint64_t model_size);

}  // namespace burst::rt
