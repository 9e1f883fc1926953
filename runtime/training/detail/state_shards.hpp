// Saving and resuming under ZeRO, a save at a time as one set: every rank writes its own shard
// into a new generation, rank 0 completes the set by flipping the manifest, and a resumed run of
// any rank count or stage reads them all back.
//
// Files for --save F, generation N being the save after step S (a stage-0 run saves one shard,
// rank 0's, of the whole state; stages 1-3 one per rank):
//   F.gen<N>-step<S>/            the set, a directory of its own (N: one above every generation of F
//     rank<r>-of-<P>             on disk); rank r's shard (shard_map.hpp): params, adam_m, adam_v of its
//                                pieces, meta.zero = {stage, ranks, rank, total, pieces: [[flat, count,
//                                at], ...]}: floats [flat, flat + count) of the whole are at [at, at + count)
//     manifest                   written by rank 0 once every shard is on disk: the run's meta (what a
//                                resume must match), meta.zero = {stage, ranks, total, files,
//                                generation: {number, directory}}, no floats; files relative to it
//   F                            the same manifest, files relative to F's directory: written last
// Each file is a training state (training_state.hpp): written atomically, CRC-checked on load.
// Replacing F is the one atomic step that makes a new set current; until then F names the
// previous set, whose files nothing touched. So a save cut short (a rank killed, a full disk)
// leaves a generation without its manifest, which the resume never reads, and the previous
// checkpoint whole. After the flip rank 0 keeps the newest `keep` complete generations and
// removes the others older than the new one, half-written ones included (--keep, default 2).
// An older kept set stays resumable by its own manifest: --resume F.gen<N>-step<S>/manifest.
//
// Resuming reads F. A whole state (an older burst's stage-0 save) is used as it is; a manifest's
// shards are each loaded (a corrupt or truncated one is refused by its name), checked to belong
// to the manifest, and their pieces put back into whole parameters and moments. The resumed run
// then takes its own shard under its own stage and rank count: re-sharding is this reassembly,
// so a state saved by 4 ranks at stage 3 resumes on 2 ranks at stage 1, or on one rank. Manifests
// of an older burst (shards F.rank<r>-of-<P> beside F) load the same way: their files are
// relative to F's directory too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/training/shard_map.hpp"
#include "runtime/training/training_state.hpp"

namespace burst::rt {

// One save's set: generation `number` of --save `path`, the state after `step` steps.
struct SaveSet {
  std::string path;
  std::int64_t number = 1;
  std::int64_t step = 0;
  // "<path>.gen<number>-step<step>"
  [[nodiscard]] std::string directory() const;
};

// The number of the next generation of `path`: one above every "<path>.gen<N>-step<S>" on disk,
// complete or not (1 when there is none). Rank 0's, sent to the others.
[[nodiscard]] std::int64_t next_generation(const std::string& path);

// "rank<r>-of-<P>": rank r's shard file in its set's directory.
[[nodiscard]] std::string shard_name(int rank, int ranks);

// Writes rank `rank`'s shard file into the set's directory (made if missing): `part` is its
// shard (ZeroModel::saved_part; a stage-0 run's whole state, with a one-rank map) with the step.
void save_shard(const SaveSet& set, const ShardMap& shards, int stage, int rank, TrainingState part);

// Completes the set, after every rank's save_shard: its own manifest, then F replaced by the same
// (`header` carries meta, step and adam_step).
void save_manifest(const SaveSet& set, const ShardMap& shards, int stage, TrainingState header);

// After save_manifest: keeps the newest `keep` complete generations of set.path (`set` one of
// them) and removes every other generation older than `set`; says on stderr which half-written
// ones it removed and what it could not remove.
void remove_old_generations(const SaveSet& set, int keep);

// "generation 3 (s.state.gen3-step20), the state after step 20, 2 shards of a ZeRO-3 save": what
// `state` (a manifest or a whole state, as read from its file) holds, for the resume to say.
[[nodiscard]] std::string describe_saved(const TrainingState& state);

// The file a resume of --resume `path` reads: `path` itself where it exists; where it does not
// (deleted, lost with its disk's directory entry), the manifest of the newest complete
// generation of `path` on disk, which the resume says it took; `path` again when there is none
// (the load then says "no such file").
[[nodiscard]] std::string resume_source(const std::string& path);

// The shard files the manifest `manifest` (read from `path`) names, resolved against its
// directory. Throws burst::Error naming `path` when 'zero/files' is not 'zero/ranks' file names.
[[nodiscard]] std::vector<std::string> shard_files(const TrainingState& manifest, const std::string& path);

// The most shard files a manifest may name (one per rank of the job that saved it).
inline constexpr std::int64_t kMaxShardFiles = 1 << 16;

// The whole state saved at `path`, reassembled from its shards when it is a manifest of a model
// of `model_size` parameters. Throws burst::Error naming the file at fault: load_training_state's
// checks, a manifest whose total or rank count does not fit the model (before anything is
// allocated), then each shard's, every piece bounds-checked without overflow; and a whole state
// that cannot train (check_trainable_values: a NaN or an infinity, by array and index).
[[nodiscard]] TrainingState load_whole_state(const std::string& path, std::uint64_t model_size);
// The same from `state`, the file at `path` already read (a manifest gets its shards; a whole
// state is returned as it is).
[[nodiscard]] TrainingState assemble_shards(TrainingState state, const std::string& path, std::uint64_t model_size);

}  // namespace burst::rt
