// Flows in flight and how they share links: max-min fairness by progressive filling, as in
// SimGrid's flow model (LMM) without weights.
//
// Progressive filling: raise every flow's rate together; when a link runs full, the flows
// crossing it are frozen at its fair share (remaining capacity / unfrozen flows on it); when a
// flow reaches its own cap (the slowest FatPipe link on its route: a FatPipe gives every flow
// its full capacity and never couples flows), it is frozen there. Repeat until all are frozen.
//
// The trick that keeps this fast: flows only influence each other through Shared links, so
// when a flow starts or ends only its connected component (flows reachable through Shared
// links carrying active flows) can change rate. We find it by BFS over link -> active flows,
// solve just that component, and reschedule only flows whose rate actually changed. Bytes left
// are updated lazily: a flow stores (remaining, rate, since) and is brought up to date only
// when its rate changes. Versions on flows let the event queue drop stale completion events.
// All buffers are kept between events, so the steady state does not allocate.
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/engine/engine.hpp"
#include "simulator/engine/routes.hpp"

namespace burst::sim {

class FlowNetwork {
 public:
  FlowNetwork(const Routes& routes, bool record_links);

  // A flow of `bytes` (> 0) for `task` on route `route` starts at `now`; returns its slot.
  std::int32_t add(TaskId task, std::int32_t route, double bytes, double now);
  // The flow in `slot` has finished.
  void remove(std::int32_t slot);

  // Re-solves the components touched by add/remove since the last call and calls
  // schedule(slot, finish_time, version) for every flow whose rate changed. With record_links,
  // appends a LinkSample for every link whose total rate changed.
  template <class Schedule>
  void reshare(double now, Schedule&& schedule, std::vector<LinkSample>& samples);

  [[nodiscard]] TaskId task(std::int32_t slot) const { return flows_[static_cast<std::size_t>(slot)].task; }
  // Versions are compared modulo 2^30 (the event queue keeps 30 bits).
  [[nodiscard]] bool current(std::int32_t slot, std::uint32_t version) const {
    const Flow& f = flows_[static_cast<std::size_t>(slot)];
    return f.active && ((f.version ^ version) & 0x3FFFFFFFu) == 0;
  }
  [[nodiscard]] double rate(std::int32_t slot) const { return flows_[static_cast<std::size_t>(slot)].rate; }

 private:
  struct Flow {
    TaskId task = -1;
    std::int32_t route = 0;
    double remaining = 0;  // bytes left at time `since`
    double rate = 0;
    double since = 0;
    std::uint32_t version = 0;
    bool active = false;
  };
  struct LinkEntry {
    std::int32_t slot;
    std::int32_t index;  // position of the link in the flow's shared_links()
  };

  // The component reached from a seed flow or link not yet visited in this reshare; false when
  // it holds no flow.
  bool collect_component(std::int32_t seed_flow, topo::LinkId seed_link);
  // A new flow that shares none of its Shared links: its rate is its route's bottleneck.
  [[nodiscard]] bool alone(std::int32_t slot) const;
  void solve();
  void freeze(std::int32_t slot, double rate);
  void set_rate(std::int32_t slot, double rate, double now);
  void flush_samples(double now, std::vector<LinkSample>& samples);
  [[nodiscard]] std::int32_t& position(std::int32_t slot, std::int32_t index) {
    return positions_[static_cast<std::size_t>(slot) * stride_ + static_cast<std::size_t>(index)];
  }

  const Routes& routes_;
  bool record_links_;
  std::size_t stride_;
  std::vector<Flow> flows_;
  std::vector<std::int32_t> free_slots_;
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

template <class Schedule>
void FlowNetwork::reshare(double now, Schedule&& schedule, std::vector<LinkSample>& samples) {
  if (!seed_flows_.empty() || !seed_links_.empty()) {
    ++epoch_;
    auto solve_and_apply = [&] {
      solve();
      for (const std::int32_t slot : component_flows_) {
        const Flow& f = flows_[static_cast<std::size_t>(slot)];
        const double r = new_rate_[static_cast<std::size_t>(slot)];
        if (r == f.rate) continue;
        set_rate(slot, r, now);
        schedule(slot, now + f.remaining / r, f.version);
      }
    };
    for (const std::int32_t slot : seed_flows_) {
      if (alone(slot)) {  // the common case in a ring: no BFS, no solve, the route's bottleneck
        flow_mark_[static_cast<std::size_t>(slot)] = epoch_;
        const double r = routes_.route(flows_[static_cast<std::size_t>(slot)].route).bottleneck_Bps;
        set_rate(slot, r, now);
        schedule(slot, now + flows_[static_cast<std::size_t>(slot)].remaining / r,
                 flows_[static_cast<std::size_t>(slot)].version);
      } else if (collect_component(slot, -1)) {
        solve_and_apply();
      }
    }
    for (const topo::LinkId link : seed_links_) {
      if (collect_component(-1, link)) solve_and_apply();
    }
    seed_flows_.clear();
    seed_links_.clear();
  }
  if (record_links_) flush_samples(now, samples);
}

}  // namespace burst::sim
