// The memory side of a rank: its share of the machine's memory, and the bandwidth of a
// streaming copy while every rank copies at once (the ranks of one machine share its memory
// channels, so a rank alone would see several times its share).
//
// Copy bandwidth counts the bytes read and the bytes written (STREAM's convention for Copy):
// 2 x size / seconds, median round of the slowest rank (together.hpp).
#pragma once

#include <cstddef>

#include "runtime/comm/communicator.hpp"

namespace burst::rt {

// Physical memory of the machine (sysconf), in bytes.
[[nodiscard]] double machine_memory_bytes();

// Every rank calls it; the result is meaningful on rank 0.
[[nodiscard]] double copy_bandwidth_per_rank(Communicator& comm, std::size_t bytes, int rounds);

}  // namespace burst::rt
