// Model and optimizer state on disk, written atomically and verified on load, so a run can stop
// at any point and resume exactly.
//
// File format, version 1:
//   burst.training_state/1\n                       the magic line
//   {"meta":...,"step":S,"adam_step":A,"params":P,"adam_m":M,"adam_v":V,"crc32":C}\n
//   body: P + M + V float32, little-endian: params, then adam_m, then adam_v
// The header line is compact JSON (no raw newline inside). P, M, V count floats; C is the
// CRC-32 (boost::crc_32_type) of the body. `meta` is whatever the caller wants checked on
// resume (model dims, plan strategy, data path); this module stores it, the caller compares.
//
// Saving goes through write_file_atomically (a temporary beside the file, then a rename), so a
// crash mid-write leaves the old file or the new one, never half of one. Loading checks the
// magic, the header, the body's exact length and its checksum, so a truncated or corrupted
// file never loads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json_reader.hpp"

namespace burst::rt {

inline constexpr const char* kTrainingStateMagic = "burst.training_state/1";

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
// state (bad magic), a bad header, a body shorter or longer than the header says, a checksum
// mismatch, or m, v lengths other than 0 or that of params.
[[nodiscard]] TrainingState load_training_state(const std::string& path);

}  // namespace burst::rt
