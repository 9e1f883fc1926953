// Model and optimizer state on disk, written atomically and verified on load, so a run can stop
// at any point and resume exactly.
//
// File format, version 2:
//   burst.training_state/2\n                       the magic line
//   {"meta":...,"step":S,"adam_step":A,"params":P,"adam_m":M,"adam_v":V}\n   the header line
//   crc32 XXXXXXXX\n                               the checksum line: 8 lowercase hex digits
//   body: P + M + V float32, little-endian: params, then adam_m, then adam_v
// The header line is compact JSON (no raw newline inside). P, M, V count floats; XXXXXXXX is the
// CRC-32 (boost::crc_32_type) of every other byte of the file: the magic line, the header line
// and the body, in that order. So a step or adam_step edited by hand is refused like a flipped
// body byte. (Version 1 kept the CRC inside the header and covered the body only; such a file
// is refused with a message saying an older burst wrote it.) `meta` is whatever the caller
// wants checked on resume (model dims, plan strategy, data path); this module stores it, the
// caller compares.
//
// Saving goes through write_file_atomically (a temporary beside the file, fsynced, renamed, the
// directory fsynced), so a crash or a power loss mid-write leaves the old file or the new one,
// never half of one. Loading checks the magic, the header, the body's exact length and the
// checksum, so a truncated, corrupted or edited file never loads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_reader.hpp"

namespace burst::rt {

inline constexpr const char* kTrainingStateMagic = "burst.training_state/2";
// A state file is at most this big: 12 bytes a parameter (params, m, v) of a 90B-parameter model
// saved whole; ZeRO shards are smaller.
inline constexpr FileCap kTrainingStateFileCap{"a training state", std::uint64_t{1} << 40};

// NOLINTNEXTLINE(bugprone-exception-escape): its implicit moves are noexcept (nlohmann::json's move only asserts)
struct TrainingState {
  Json meta;                                  // checked by the caller on resume
  std::int64_t step = 0;                      // steps completed
  std::vector<float> params, adam_m, adam_v;  // m, v: empty before the first step, else as long as params
  std::int64_t adam_step = 0;
};

// Throws burst::Error naming `path` when adam_m or adam_v has a length other than 0 or that of
// params, or when the file cannot be written (missing directory, say).
void save_training_state(const std::string& path, const TrainingState& state);

// Throws burst::Error naming `path` and exactly what is wrong: no such file, not a training
// state (bad magic), a version-1 file (an older burst's), a bad header or checksum line, a body
// shorter or longer than the header says, a checksum mismatch, or m, v lengths other than 0 or
// that of params.
[[nodiscard]] TrainingState load_training_state(const std::string& path);
// The same checks on a file's bytes already in memory; `path` names it in errors.
[[nodiscard]] TrainingState parse_training_state(std::string_view text, const std::string& path);

// A file holds any floats (a round trip is bit-exact); a state to train from must not hold a NaN
// or an infinity in params, adam_m or adam_v, nor a negative adam_v (AdamW divides by its square
// root): one would make every step after the first NaN, while that first step's loss still looks
// fine. Throws burst::Error naming `path`, the array, the index of its first bad value and how
// many there are.
void check_trainable_values(const TrainingState& state, const std::string& path);

}  // namespace burst::rt
