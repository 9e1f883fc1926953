#include "simulator/engine/flow_network.hpp"

#include <algorithm>
#include <limits>

namespace burst::sim {

FlowNetwork::FlowNetwork(const Routes& routes, bool record_links)
    : routes_(routes),
      record_links_(record_links),
      stride_(static_cast<std::size_t>(std::max(1, routes.max_shared_per_route()))) {
  const auto links = static_cast<std::size_t>(routes.link_count());
  link_flows_.resize(links);
  link_rate_.assign(links, 0.0);
  link_active_.assign(links, 0);
  link_mark_.assign(links, 0);
  remaining_capacity_.assign(links, 0.0);
  unfrozen_on_link_.assign(links, 0);
  dirty_.assign(links, 0);
  recorded_.assign(links, 0.0);
}

std::int32_t FlowNetwork::add(TaskId task, std::int32_t route, double bytes, double now) {
  std::int32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::int32_t>(flows_.size());
    flows_.emplace_back();
    positions_.resize(positions_.size() + stride_);
    flow_mark_.push_back(0);
    frozen_mark_.push_back(0);
    new_rate_.push_back(0.0);
  }
  Flow& f = flows_[static_cast<std::size_t>(slot)];
  f.task = task;
  f.route = route;
  f.remaining = bytes;
  f.rate = 0;
  f.since = now;
  f.active = true;  // the version carries on from the slot's previous flow
  const Route& r = routes_.route(route);
  for (const topo::LinkId l : routes_.links(r)) ++link_active_[static_cast<std::size_t>(l)];
  std::int32_t index = 0;
  for (const topo::LinkId l : routes_.shared_links(r)) {
    auto& list = link_flows_[static_cast<std::size_t>(l)];
    position(slot, index) = static_cast<std::int32_t>(list.size());
    list.push_back({slot, index});
    ++index;
  }
  seed_flows_.push_back(slot);
  return slot;
}

void FlowNetwork::remove(std::int32_t slot) {
  Flow& f = flows_[static_cast<std::size_t>(slot)];
  const Route& r = routes_.route(f.route);
  set_rate(slot, 0.0, f.since);  // takes its rate off its links' totals
  for (const topo::LinkId l : routes_.links(r)) --link_active_[static_cast<std::size_t>(l)];
  std::int32_t index = 0;
  for (const topo::LinkId l : routes_.shared_links(r)) {
    auto& list = link_flows_[static_cast<std::size_t>(l)];
    const std::int32_t at = position(slot, index);
    const LinkEntry moved = list.back();
    list[static_cast<std::size_t>(at)] = moved;
    position(moved.slot, moved.index) = at;
    list.pop_back();
    seed_links_.push_back(l);
    ++index;
  }
  f.active = false;
  ++f.version;
  free_slots_.push_back(slot);
}

// BFS from one seed through Shared links to every active flow that can feel the change.
// Marks persist for the whole reshare (one epoch), so each component is solved once.
bool FlowNetwork::collect_component(std::int32_t seed_flow, topo::LinkId seed_link) {
  component_flows_.clear();
  component_links_.clear();
  auto visit_link = [&](topo::LinkId l) {
    if (link_mark_[static_cast<std::size_t>(l)] == epoch_) return;
    link_mark_[static_cast<std::size_t>(l)] = epoch_;
    component_links_.push_back(l);
  };
  auto visit_flow = [&](std::int32_t slot) {
    const auto s = static_cast<std::size_t>(slot);
    if (!flows_[s].active || flow_mark_[s] == epoch_) return;
    flow_mark_[s] = epoch_;
    component_flows_.push_back(slot);
    for (const topo::LinkId l : routes_.shared_links(routes_.route(flows_[s].route))) visit_link(l);
  };
  if (seed_flow >= 0) visit_flow(seed_flow);
  if (seed_link >= 0) visit_link(seed_link);
  for (std::size_t i = 0; i < component_links_.size(); ++i) {
    for (const LinkEntry& e : link_flows_[static_cast<std::size_t>(component_links_[i])]) visit_flow(e.slot);
  }
  return !component_flows_.empty();
}

bool FlowNetwork::alone(std::int32_t slot) const {
  const Flow& f = flows_[static_cast<std::size_t>(slot)];
  if (!f.active || flow_mark_[static_cast<std::size_t>(slot)] == epoch_ || f.rate != 0) return false;
  for (const topo::LinkId l : routes_.shared_links(routes_.route(f.route))) {
    if (link_flows_[static_cast<std::size_t>(l)].size() != 1) return false;
  }
  return true;
}

void FlowNetwork::freeze(std::int32_t slot, double rate) {
  const auto s = static_cast<std::size_t>(slot);
  frozen_mark_[s] = epoch_;
  new_rate_[s] = rate;
  --unfrozen_;
  for (const topo::LinkId l : routes_.shared_links(routes_.route(flows_[s].route))) {
    const auto li = static_cast<std::size_t>(l);
    remaining_capacity_[li] = std::max(0.0, remaining_capacity_[li] - rate);
    --unfrozen_on_link_[li];
  }
}

// Progressive filling over the component (see the head comment of flow_network.hpp).
void FlowNetwork::solve() {
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (const topo::LinkId l : component_links_) {
    const auto li = static_cast<std::size_t>(l);
    remaining_capacity_[li] = routes_.capacity(l);
    unfrozen_on_link_[li] = static_cast<std::int32_t>(link_flows_[li].size());
  }
  bounded_.clear();
  for (const std::int32_t slot : component_flows_) {
    if (routes_.route(flows_[static_cast<std::size_t>(slot)].route).fatpipe_Bps < inf) bounded_.push_back(slot);
  }
  auto cap = [&](std::int32_t slot) { return routes_.route(flows_[static_cast<std::size_t>(slot)].route).fatpipe_Bps; };
  std::sort(bounded_.begin(), bounded_.end(), [&](std::int32_t a, std::int32_t b) { return cap(a) < cap(b); });
  unfrozen_ = static_cast<std::int32_t>(component_flows_.size());
  std::size_t next_bounded = 0;
  while (unfrozen_ > 0) {
    while (next_bounded < bounded_.size() && frozen_mark_[static_cast<std::size_t>(bounded_[next_bounded])] == epoch_) {
      ++next_bounded;
    }
    double share = inf;
    topo::LinkId bottleneck = -1;
    for (const topo::LinkId l : component_links_) {
      const auto li = static_cast<std::size_t>(l);
      if (unfrozen_on_link_[li] <= 0) continue;
      const double s = remaining_capacity_[li] / unfrozen_on_link_[li];
      if (s < share) {
        share = s;
        bottleneck = l;
      }
    }
    if (next_bounded < bounded_.size() && cap(bounded_[next_bounded]) <= share) {
      freeze(bounded_[next_bounded], cap(bounded_[next_bounded]));
    } else if (bottleneck >= 0) {
      for (const LinkEntry& e : link_flows_[static_cast<std::size_t>(bottleneck)]) {
        if (frozen_mark_[static_cast<std::size_t>(e.slot)] != epoch_) freeze(e.slot, share);
      }
    } else {
      break;  // unreachable: every flow has a Shared link or a FatPipe cap
    }
  }
}

// Brings the flow's remaining bytes up to `now` and moves its links' totals to the new rate.
void FlowNetwork::set_rate(std::int32_t slot, double rate, double now) {
  Flow& f = flows_[static_cast<std::size_t>(slot)];
  if (f.rate > 0) f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.since));
  f.since = now;
  const double delta = rate - f.rate;
  f.rate = rate;
  ++f.version;
  for (const topo::LinkId l : routes_.links(routes_.route(f.route))) {
    const auto li = static_cast<std::size_t>(l);
    link_rate_[li] += delta;
    if (record_links_ && !dirty_[li]) {
      dirty_[li] = 1;
      dirty_links_.push_back(l);
    }
  }
}

void FlowNetwork::flush_samples(double now, std::vector<LinkSample>& samples) {
  for (const topo::LinkId l : dirty_links_) {
    const auto li = static_cast<std::size_t>(l);
    dirty_[li] = 0;
    if (link_active_[li] == 0) link_rate_[li] = 0;  // no drift left behind by += and -=
    if (link_rate_[li] != recorded_[li]) {
      recorded_[li] = link_rate_[li];
      samples.push_back({l, now, link_rate_[li]});
    }
  }
  dirty_links_.clear();
}

}  // namespace burst::sim
