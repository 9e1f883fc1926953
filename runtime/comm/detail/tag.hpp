// The message tag: what makes two point-to-point messages match or not.
//
// MPI matches a receive to a send by (communicator, source, tag), in posting order. The ring
// executor keeps several transfers in flight between the same two ranks (the kv ring and the
// q ring of a backward step, next step's blocks while this step computes), so the tag carries
// everything that tells them apart:
//
//   tag = (step * kRingLevelCount + level) * kChannelCount + channel
//       = step * 12 + level * 4 + channel        (channel in the low 2 bits)
//
// Distinct (step, level, channel) give distinct tags, so messages of different channels,
// levels or steps can never match each other, whatever order they are posted in. The largest
// step is (MPI_TAG_UB - 11) / 12: MPI guarantees MPI_TAG_UB >= 32767 (steps up to 2729),
// OpenMPI gives 2^31 - 1 (steps up to 178956969); the MPI backend checks every tag against the
// MPI_TAG_UB of its communicator and says so when a step is too large.
#pragma once

#include "runtime/comm/communicator.hpp"

namespace burst::rt {

inline constexpr long long kTagsPerStep = static_cast<long long>(kRingLevelCount) * kChannelCount;

constexpr long long message_tag(Channel channel, int step, RingLevel level) {
  return (static_cast<long long>(step) * kRingLevelCount + static_cast<int>(level)) * kChannelCount +
         static_cast<int>(channel);
}

// The largest step whose every tag stays within `tag_ub`.
constexpr long long max_step_for_tag_ub(long long tag_ub) { return (tag_ub - (kTagsPerStep - 1)) / kTagsPerStep; }

}  // namespace burst::rt
