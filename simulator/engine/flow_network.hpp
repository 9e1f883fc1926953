// Flows in flight and how they share links: max-min fairness by progressive filling, as in
// SimGrid's flow model (LMM) without weights.
//
// Progressive filling: raise every flow's rate together; when a link runs full, the flows
// crossing it are frozen at its fair share (remaining capacity / unfrozen flows on it); when a
// flow reaches its own cap (the slowest FatPipe link on its route: a FatPipe gives every flow
// its full capacity and never couples flows), it is frozen there. Repeat until all are frozen.
//
// The tricks that keep this fast:
//  - flows only influence each other through Shared links, so when a flow starts or ends only
//    its connected component (flows reachable through Shared links carrying active flows) can
//    change rate. We find it by BFS over link -> active flows and solve just that component; a
//    new flow alone on its links skips both (its rate is its route's bottleneck);
//  - bytes left are updated lazily: a flow stores (remaining, rate, since) and is brought up
//    to date only when its rate changes;
//  - finish times live in an indexed min-heap, one entry per flow, updated in place when a
//    rate changes: a component of F flows where every completion re-rates the others costs
//    O(F log F) per completion and O(F) memory, not a queue growing by F stale events each time;
//  - all buffers are kept between events, so the steady state does not allocate.
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/engine/engine.hpp"
#include "simulator/engine/routes.hpp"

namespace burst::sim {

class FlowNetwork {
 public:
  FlowNetwork(const Routes& routes, bool record_links);

  // A flow of `bytes` (> 0) for `task` on route `route` starts at `now`.
  void add(TaskId task, std::int32_t route, double bytes, double now);

  // Re-solves the components touched since the last call (flows added or finished) and updates
  // the finish times of flows whose rate changed. With record_links, appends a LinkSample for
  // every link whose total rate changed.
  void reshare(double now, std::vector<LinkSample>& samples);

  // The earliest finish time of an active flow (infinity if none).
  [[nodiscard]] double next_finish() const;
  // Removes one flow finishing at or before `now` and returns its task, or -1 if none is.
  TaskId pop_finished(double now);

  // The current rate of `task`'s flow, or 0 if it has none (a linear scan, for tests).
  [[nodiscard]] double rate_of(TaskId task) const;

 private:
  struct Flow {
    TaskId task = -1;
    std::int32_t route = 0;
    double remaining = 0;  // bytes left at time `since`
    double rate = 0;
    double since = 0;
    double finish = 0;     // since + remaining / rate
    std::int32_t heap_pos = -1;
    bool active = false;
  };
  struct LinkEntry {
    std::int32_t slot;
    std::int32_t index;  // position of the link in the flow's shared_links()
  };

  void remove(std::int32_t slot);
  // The component reached from a seed flow or link not yet visited in this reshare; false when
  // it holds no flow.
  bool collect_component(std::int32_t seed_flow, topo::LinkId seed_link);
  // A new flow that shares none of its Shared links: its rate is its route's bottleneck.
  [[nodiscard]] bool alone(std::int32_t slot) const;
  void solve();
  void apply(double now);
  void freeze(std::int32_t slot, double rate);
  void set_rate(std::int32_t slot, double rate, double now);
  void flush_samples(double now, std::vector<LinkSample>& samples);
  [[nodiscard]] std::int32_t& position(std::int32_t slot, std::int32_t index) {
    return positions_[static_cast<std::size_t>(slot) * stride_ + static_cast<std::size_t>(index)];
  }
  // Indexed min-heap of active flows by finish time.
  [[nodiscard]] bool earlier(std::int32_t a, std::int32_t b) const;
  void heap_place(std::size_t at, std::int32_t slot);
  void heap_up(std::size_t at);
  void heap_down(std::size_t at);
  void heap_update(std::int32_t slot);
  void heap_erase(std::int32_t slot);

  const Routes& routes_;
  bool record_links_;
  std::size_t stride_;
  std::vector<Flow> flows_;
  std::vector<std::int32_t> free_slots_;
  std::vector<std::int32_t> heap_;                     // slots, by finish time
  std::vector<std::int32_t> positions_;                // slot x stride: index in link_flows_[link]
  std::vector<std::vector<LinkEntry>> link_flows_;     // per Shared link: active flows on it
  std::vector<double> link_rate_;                      // per link: sum of active flow rates
  std::vector<std::int32_t> link_active_;              // per link: active flows on it
  // Scratch for one reshare, reused.
  std::vector<std::int32_t> seed_flows_;
  std::vector<topo::LinkId> seed_links_;
  std::vector<std::int32_t> component_flows_;
  std::vector<topo::LinkId> component_links_;
  std::vector<std::int32_t> bounded_;                  // component flows with a FatPipe cap, by cap
  std::vector<topo::LinkId> open_links_;               // component links with unfrozen flows
  std::vector<std::uint32_t> flow_mark_, link_mark_, frozen_mark_;
  std::uint32_t epoch_ = 0;
  std::int32_t unfrozen_ = 0;
  std::vector<double> new_rate_;                       // per slot
  std::vector<double> remaining_capacity_;             // per link
  std::vector<std::int32_t> unfrozen_on_link_;         // per link
  std::vector<topo::LinkId> dirty_links_;
  std::vector<std::uint8_t> dirty_;
  std::vector<double> recorded_;                       // per link: last sampled rate
};

}  // namespace burst::sim
