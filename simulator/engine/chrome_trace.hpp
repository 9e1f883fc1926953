// Chrome trace (the JSON "traceEvents" format that Perfetto and chrome://tracing open) of a
// simulated run: what every GPU stream did when, which transfers were in flight, and how busy
// every link was.
//
// Layout: one process per node (pid = node, named "node N"); in it, one thread per GPU compute
// stream ("gpu L stream S") with a complete ("X") event per compute task, and a "gpu L send"
// thread with an event per outgoing transfer (latency included), plus "gpu L send K" lanes
// when sends of one GPU overlap, since viewers want a thread's slices nested. Link utilisation becomes one
// counter track ("C" events, GB/s) per link that carried traffic, in a last process named
// "links"; it needs the run to have been made with EngineOptions::record_links. Times are in
// microseconds, as the format wants, with nanosecond decimals. The format itself is
// common/chrome_trace.hpp, which the runtime's measured traces share (docs/runtime-trace.md).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "simulator/engine/engine.hpp"

namespace burst::sim {

// One simulated graph; several runs (e.g. forward then backward) are laid end to end in time.
struct TraceRun {
  std::string name;  // becomes the events' category, e.g. "forward"
  const TaskGraph* graph = nullptr;
  const SimResult* result = nullptr;
};

void write_chrome_trace(std::ostream& out, const std::vector<TraceRun>& runs, const topo::Topology& topology);

// What write_chrome_trace will write, before it does: one event per task and per link sample
// (the metadata is negligible), at about kTraceBytesPerEvent each (measured on a 16-node
// dgx-a100 layer: 255 778 events, 28.7 MB). Lets a command warn before writing gigabytes.
[[nodiscard]] std::uint64_t trace_event_count(const std::vector<TraceRun>& runs);
inline constexpr std::uint64_t kTraceBytesPerEvent = 112;
void write_chrome_trace(std::ostream& out, const TaskGraph& graph, const SimResult& result,
                        const topo::Topology& topology);

}  // namespace burst::sim
