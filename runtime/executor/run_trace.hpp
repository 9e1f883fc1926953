// The measured timeline of a run, as a Chrome trace (Perfetto) shaped like the simulator's
// predicted one (simulator/engine/chrome_trace.hpp), so the two open side by side.
//
// Recording: the ring loop (ring_pass.hpp) tells a TraceRecorder, when it has one, about every
// step's compute span (which block), every wait for a message (peer, channel, step), every send
// it posts (an instant: sends complete at the end of their step, recorded as one "sends done"
// span). Times are steady-clock seconds since an origin each rank takes right after one
// barrier, so ranks agree to within the barrier's release skew (microseconds on one node).
//
// Gathering: gather_to_root moves equal-sized buffers, so every event is encoded in
// kFieldsPerEvent doubles (kind, phase, step, block, peer, channel, start, end: small integers
// and seconds, all exact in fp64), the ranks first learn the largest event count (an allreduce
// max), and each pads its events to it; a rank's own count travels as its first value.
//
// Layout of the file: one process per rank, "node N gpu L (rank R)", with a compute thread
// "gpu L stream 0" (one slice per block computed, "attn_fwd step S" / "attn_bwd step S") and a
// "gpu L send/wait" thread (waits as slices, posted sends as instants); the event category is
// the phase, "forward" or "backward", as the simulator names its runs. On the CUDA kernels a
// third thread, "gpu L kernels (CUDA events)", holds each block's kernel time as CUDA events
// measured it, a slice ending where the host span ends (the call returns once the kernels and
// the copy back are done), so the gap before it is the staging and launch cost.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "runtime/comm/communicator.hpp"

namespace burst::rt {

enum class TracePhase : std::uint8_t { Forward, Backward };
enum class TraceKind : std::uint8_t { Compute, Receive, Send, SendsDone };

struct TraceEvent {
  TraceKind kind = TraceKind::Compute;
  TracePhase phase = TracePhase::Forward;
  int step = 0;                           // the ring step (Compute, SendsDone) or the message's step (Receive, Send)
  int block = -1;                         // Compute: the block computed with
  int peer = -1;                          // Receive, Send: the other rank (world rank)
  Channel channel = Channel::Collective;  // Receive, Send
  double start_s = 0, end_s = 0;          // since the origin; a Send's end is its start
  double device_s = 0;                    // Compute: the kernels' time by CUDA events (0: not measured, CPU kernels)
};

class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;

  // Times count from `origin` (take it right after a barrier); events belong to the last phase
  // set. Events recorded before (a warm-up's, an earlier run's) are dropped.
  void start(Clock::time_point origin) {
    origin_ = origin;
    events_.clear();
  }
  void set_phase(TracePhase phase) { phase_ = phase; }
  [[nodiscard]] double now() const { return std::chrono::duration<double>(Clock::now() - origin_).count(); }

  // Each span ends now.
  void compute(int step, int block, double start_s, double device_s = 0);
  void receive(const Envelope& message, double start_s);
  void sends_done(int step, double start_s);
  void send(const Envelope& message);

  [[nodiscard]] const std::vector<TraceEvent>& events() const { return events_; }

 private:
  Clock::time_point origin_ = Clock::now();
  TracePhase phase_ = TracePhase::Forward;
  std::vector<TraceEvent> events_;
};

// Every rank's events on rank 0, by world rank, with where each rank runs.
struct RunTrace {
  struct Rank {
    int node = 0, local = 0;
    std::vector<TraceEvent> events;
  };
  std::vector<Rank> ranks;
};

// Collective: every rank calls it with its recorder; rank 0 returns every rank's events (placed
// by `placements`, the plan's ranks), the others an empty trace.
[[nodiscard]] RunTrace gather_trace(Communicator& comm, const TraceRecorder& recorder,
                                    const std::vector<plan::RankPlacement>& placements);

void write_run_trace(std::ostream& out, const RunTrace& trace);
// To a file; throws burst::Error naming `path` if it cannot be written.
void write_run_trace(const std::string& path, const RunTrace& trace);

}  // namespace burst::rt
