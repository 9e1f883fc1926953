// Recording, gathering and writing the measured timeline (see run_trace.hpp).
#include "runtime/executor/run_trace.hpp"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "common/chrome_trace.hpp"
#include "common/error.hpp"

namespace burst::rt {
namespace {

// The fp64 encoding of one event for gather_to_root.
enum Field : std::size_t { kKind, kPhase, kStep, kBlock, kPeer, kChannel, kStart, kEnd, kDevice, kFieldsPerEvent };

void encode(const TraceEvent& e, double* out) {
  out[kKind] = static_cast<double>(e.kind);
  out[kPhase] = static_cast<double>(e.phase);
  out[kStep] = e.step;
  out[kBlock] = e.block;
  out[kPeer] = e.peer;
  out[kChannel] = static_cast<double>(e.channel);
  out[kStart] = e.start_s;
  out[kEnd] = e.end_s;
  out[kDevice] = e.device_s;
}

TraceEvent decode(const double* in) {
  return {static_cast<TraceKind>(in[kKind]),
          static_cast<TracePhase>(in[kPhase]),
          static_cast<int>(in[kStep]),
          static_cast<int>(in[kBlock]),
          static_cast<int>(in[kPeer]),
          static_cast<Channel>(in[kChannel]),
          in[kStart],
          in[kEnd],
          in[kDevice]};
}

const char* phase_name(TracePhase phase) { return phase == TracePhase::Forward ? "forward" : "backward"; }

// "attn_fwd step 3" (the simulator's kernel names), "wait kv ring <- rank 2", "sends done step 3",
// "q ring -> rank 1".
std::string event_name(const TraceEvent& e) {
  switch (e.kind) {
    case TraceKind::Compute:
      return fmt::format("{} step {}", e.phase == TracePhase::Forward ? "attn_fwd" : "attn_bwd", e.step);
    case TraceKind::Receive: return fmt::format("wait {} <- rank {}", to_string(e.channel), e.peer);
    case TraceKind::SendsDone: return fmt::format("sends done step {}", e.step);
    case TraceKind::Send: return fmt::format("{} -> rank {}", to_string(e.channel), e.peer);
  }
  return {};
}

constexpr int kComputeTid = 0, kCommTid = 1, kDeviceTid = 2;

}  // namespace

void TraceRecorder::compute(int step, int block, double start_s, double device_s) {
  events_.push_back({TraceKind::Compute, phase_, step, block, -1, Channel::Collective, start_s, now(), device_s});
}

void TraceRecorder::receive(const Envelope& message, double start_s) {
  events_.push_back({TraceKind::Receive, phase_, message.step, -1, message.peer, message.channel, start_s, now()});
}

void TraceRecorder::sends_done(int step, double start_s) {
  events_.push_back({TraceKind::SendsDone, phase_, step, -1, -1, Channel::Collective, start_s, now()});
}

void TraceRecorder::send(const Envelope& message) {
  const double t = now();
  events_.push_back({TraceKind::Send, phase_, message.step, -1, message.peer, message.channel, t, t});
}

RunTrace gather_trace(Communicator& comm, const TraceRecorder& recorder,
                      const std::vector<plan::RankPlacement>& placements) {
  const auto world = static_cast<std::size_t>(comm.size());
  const auto me = static_cast<std::size_t>(comm.rank());
  std::vector<std::int64_t> most{static_cast<std::int64_t>(recorder.events().size())};
  comm.allreduce(std::span<std::int64_t>(most), ReduceOp::Max);

  // [own count, events..., padding]
  const std::size_t stride = 1 + static_cast<std::size_t>(most[0]) * kFieldsPerEvent;
  std::vector<double> mine(stride, 0.0);
  mine[0] = static_cast<double>(recorder.events().size());
  for (std::size_t i = 0; i < recorder.events().size(); ++i)
    encode(recorder.events()[i], &mine[1 + i * kFieldsPerEvent]);
  std::vector<double> all(me == 0 ? stride * world : 0);
  comm.gather_to_root(std::span<const double>(mine), std::span<double>(all));

  RunTrace trace;
  if (me != 0) return trace;
  trace.ranks.resize(world);
  for (const plan::RankPlacement& p : placements) {
    trace.ranks[static_cast<std::size_t>(p.rank)].node = p.node;
    trace.ranks[static_cast<std::size_t>(p.rank)].local = p.local;
  }
  for (std::size_t r = 0; r < world; ++r) {
    const double* row = all.data() + r * stride;
    for (std::size_t i = 0; i < static_cast<std::size_t>(row[0]); ++i) {
      trace.ranks[r].events.push_back(decode(row + 1 + i * kFieldsPerEvent));
    }
  }
  return trace;
}

void write_run_trace(std::ostream& out, const RunTrace& trace) {
  trace::ChromeTraceWriter writer(out);
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    const auto rank = static_cast<int>(r);
    const RunTrace::Rank& place = trace.ranks[r];
    writer.process(rank, fmt::format("node {} gpu {} (rank {})", place.node, place.local, rank), rank);
    writer.thread(rank, kComputeTid, fmt::format("gpu {} stream 0", place.local), kComputeTid);
    writer.thread(rank, kCommTid, fmt::format("gpu {} send/wait", place.local), kCommTid);
    const bool measured_on_device =
        std::any_of(place.events.begin(), place.events.end(), [](const TraceEvent& e) { return e.device_s > 0; });
    if (measured_on_device)
      writer.thread(rank, kDeviceTid, fmt::format("gpu {} kernels (CUDA events)", place.local), kDeviceTid);
  }
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    for (const TraceEvent& e : trace.ranks[r].events) {
      const std::string name = event_name(e);
      const trace::Slice slice{.name = name,
                               .category = phase_name(e.phase),
                               .pid = static_cast<int>(r),
                               .tid = e.kind == TraceKind::Compute ? kComputeTid : kCommTid,
                               .start_s = e.start_s,
                               .duration_s = e.end_s - e.start_s};
      switch (e.kind) {
        case TraceKind::Compute:
          writer.complete(slice, {{"step", e.step}, {"block", e.block}});
          if (e.device_s > 0) {
            trace::Slice kernels = slice;
            kernels.tid = kDeviceTid;
            kernels.start_s = e.end_s - e.device_s;
            kernels.duration_s = e.device_s;
            writer.complete(kernels,
                            {{"step", e.step}, {"block", e.block}, {"host_span_ms", (e.end_s - e.start_s) * 1e3}});
          }
          break;
        case TraceKind::Receive:
          writer.complete(slice, {{"peer", e.peer}, {"channel", to_string(e.channel)}, {"step", e.step}});
          break;
        case TraceKind::SendsDone: writer.complete(slice, {{"step", e.step}}); break;
        case TraceKind::Send:
          writer.instant(slice, {{"dst", e.peer}, {"channel", to_string(e.channel)}, {"step", e.step}});
          break;
      }
    }
  }
  writer.finish();
}

void write_run_trace(const std::string& path, const RunTrace& trace) {
  std::ofstream out(path);
  if (!out) {
    throw Error(Problem{"--trace", fmt::format("cannot write '{}'", path), "a writable file path",
                        "check that the directory exists and is writable"});
  }
  write_run_trace(out, trace);
  out.flush();
  if (!out) throw Error(Problem{"--trace", fmt::format("writing '{}' failed", path), "", "check free disk space"});
}

}  // namespace burst::rt
