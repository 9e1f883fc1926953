// One pass around the ring, the loop both attention phases share: a payload per block travels
// the read ring, this rank computes with every block it needs, and (optionally) a gradient
// accumulator per block follows its contributors and returns home. See ring_attention.hpp for
// what travels in each phase and ring_schedule.hpp for the hops.
//
// Step s on ring rank k: wait for the payload of block b = block_at(k, s) (its receive was posted
// at an earlier step), post the receives and read-ring sends whose send_step is s (the next
// blocks travel while this step computes; without overlap they complete first), then, if k
// needs b, compute into a zeroed partial accumulator, add the accumulator arriving
// from b's previous contributor, and send it to the next one (or home). Sends posted at s are
// completed at the end of s; a rank only ever waits for messages sent at earlier steps or for
// receives posted at the same step, so no cycle of waits can form.
//
// Memory: every block lives in the kernels' memory (kernel_memory.hpp), in its wire format: this
// rank's own block as the caller assembled it there, a received block computed with where it
// landed and forwarded as the same bytes; a partial accumulator is fp32 there, an arriving one
// is added into it and the sum converted to the wire dtype before it is sent on, and the home
// accumulator ends there in fp32. Host memory is never touched: with the CUDA kernels the whole
// pass stays on the GPU, and with the CPU kernels the same code runs in host memory.
//
// With a TraceRecorder (run_trace.hpp) the loop records every compute span, every wait for a
// message, every send it posts and the end-of-step wait for its sends; without one it only
// tests a null pointer.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "runtime/comm/communicator.hpp"
#include "runtime/executor/run_trace.hpp"
#include "runtime/kernels/kernel_memory.hpp"
#include "runtime/schedule/ring_schedule.hpp"

namespace burst::rt {

struct RingPassSpec {
  Travel travel = Travel::KeysAndValues;
  Channel read_channel = Channel::KvRing;
  MemoryBlock own_payload;           // this rank's block in `memory`, in its wire format; every block has its size
  std::size_t accumulator_size = 0;  // floats per block accumulator; 0: none travel
  Channel accumulator_channel = Channel::DqRing;
  DType accumulator_dtype = DType::F32;  // on the wire: fp32, or bf16 rounded at every hop
  KernelMemory* memory = nullptr;        // where blocks live (the kernels'); required
  // Computes with `block`'s payload (payload_wire's parts back to back, in `memory`); writes
  // this rank's share of the block's accumulator into `partial` (accumulator_size fp32 in
  // `memory`, zeroed; null when there are no accumulators). Returns the kernels' device time
  // (KernelStats::device_s; 0 when not measured), for the trace.
  std::function<double(int block, const std::byte* payload, float* partial)> compute;
  TraceRecorder* recorder = nullptr;  // when set, the loop's timeline is recorded there
  // false: each step's read transfers complete before it computes (no double buffering), so
  // transfer and compute run one after the other, as the plan's overlap: false says.
  bool overlap = true;
};

struct RingPassResult {
  MemoryBlock
      home_accumulator;  // fp32, the full accumulator of this rank's own block, in the kernels' memory (zeros if none)
  int blocks_computed = 0;
  int messages_sent = 0;
  int messages_received = 0;
  // The most bytes the pass held at once in blocks, inboxes and travelling accumulators (its own
  // block included), each at its wire size as a device would hold it, plus the fp32 partial and
  // home accumulators: what its double buffering costs in memory.
  std::size_t peak_buffer_bytes = 0;
};

[[nodiscard]] RingPassResult run_ring_pass(const RingSchedule& schedule, Communicator& comm, RingPassSpec spec);

}  // namespace burst::rt
