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

void FlowNetwork::add(TaskId task, std::int32_t route, double bytes, double now) {
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
  f.finish = now;
  f.heap_pos = -1;
  f.active = true;
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
  heap_erase(slot);
  f.active = false;
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

// Progressive filling over the component (see the head comment of flow_network.hpp). Each
// round finds the lowest fair share among links that still have unfrozen flows and freezes
// every link at that level at once (links tied at one level stay tied while the others are
// frozen, so this is exact), dropping finished links from the scan: rounds = distinct levels.
void FlowNetwork::solve() {
  constexpr double inf = std::numeric_limits<double>::infinity();
  constexpr double tie = 1 + 1e-12;  // shares equal but for rounding belong to one level
  open_links_.clear();
  for (const topo::LinkId l : component_links_) {
    const auto li = static_cast<std::size_t>(l);
    remaining_capacity_[li] = routes_.capacity(l);
    unfrozen_on_link_[li] = static_cast<std::int32_t>(link_flows_[li].size());
    if (unfrozen_on_link_[li] > 0) open_links_.push_back(l);
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
    std::size_t kept = 0;
    for (const topo::LinkId l : open_links_) {  // compacts open_links_ to links with unfrozen flows
      const auto li = static_cast<std::size_t>(l);
      if (unfrozen_on_link_[li] <= 0) continue;
      open_links_[kept++] = l;
      share = std::min(share, remaining_capacity_[li] / unfrozen_on_link_[li]);
    }
    open_links_.resize(kept);
    if (next_bounded < bounded_.size() && cap(bounded_[next_bounded]) <= share) {
      freeze(bounded_[next_bounded], cap(bounded_[next_bounded]));
      continue;
    }
    if (open_links_.empty()) break;  // unreachable: every flow has a Shared link or a FatPipe cap
    for (const topo::LinkId l : open_links_) {
      const auto li = static_cast<std::size_t>(l);
      if (unfrozen_on_link_[li] <= 0 || remaining_capacity_[li] / unfrozen_on_link_[li] > share * tie) continue;
      for (const LinkEntry& e : link_flows_[li]) {
        if (frozen_mark_[static_cast<std::size_t>(e.slot)] != epoch_) freeze(e.slot, share);
      }
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


void FlowNetwork::reshare(double now, std::vector<LinkSample>& samples) {
  if (!seed_flows_.empty() || !seed_links_.empty()) {
    ++epoch_;
    for (const std::int32_t slot : seed_flows_) {
      if (alone(slot)) {  // the common case in a ring: no BFS, no solve, the route's bottleneck
        flow_mark_[static_cast<std::size_t>(slot)] = epoch_;
        component_flows_.assign(1, slot);
        new_rate_[static_cast<std::size_t>(slot)] = routes_.route(flows_[static_cast<std::size_t>(slot)].route).bottleneck_Bps;
        apply(now);
      } else if (collect_component(slot, -1)) {
        solve();
        apply(now);
      }
    }
    for (const topo::LinkId link : seed_links_) {
      if (collect_component(-1, link)) {
        solve();
        apply(now);
      }
    }
    seed_flows_.clear();
    seed_links_.clear();
  }
  if (record_links_) flush_samples(now, samples);
}

// New rates of the component's flows take effect at `now`; finish times move with them.
void FlowNetwork::apply(double now) {
  for (const std::int32_t slot : component_flows_) {
    Flow& f = flows_[static_cast<std::size_t>(slot)];
    const double r = new_rate_[static_cast<std::size_t>(slot)];
    if (r == f.rate) continue;
    set_rate(slot, r, now);
    f.finish = now + f.remaining / r;
    heap_update(slot);
  }
}

double FlowNetwork::next_finish() const {
  return heap_.empty() ? std::numeric_limits<double>::infinity()
                       : flows_[static_cast<std::size_t>(heap_.front())].finish;
}

TaskId FlowNetwork::pop_finished(double now) {
  if (heap_.empty() || flows_[static_cast<std::size_t>(heap_.front())].finish > now) return -1;
  const std::int32_t slot = heap_.front();
  const TaskId task = flows_[static_cast<std::size_t>(slot)].task;
  remove(slot);
  return task;
}

double FlowNetwork::rate_of(TaskId task) const {
  for (const Flow& f : flows_) {
    if (f.active && f.task == task) return f.rate;
  }
  return 0;
}

bool FlowNetwork::earlier(std::int32_t a, std::int32_t b) const {
  const Flow& fa = flows_[static_cast<std::size_t>(a)];
  const Flow& fb = flows_[static_cast<std::size_t>(b)];
  return fa.finish < fb.finish || (fa.finish == fb.finish && fa.task < fb.task);
}

void FlowNetwork::heap_place(std::size_t at, std::int32_t slot) {
  heap_[at] = slot;
  flows_[static_cast<std::size_t>(slot)].heap_pos = static_cast<std::int32_t>(at);
}

void FlowNetwork::heap_up(std::size_t at) {
  const std::int32_t slot = heap_[at];
  while (at > 0) {
    const std::size_t parent = (at - 1) / 2;
    if (!earlier(slot, heap_[parent])) break;
    heap_place(at, heap_[parent]);
    at = parent;
  }
  heap_place(at, slot);
}

void FlowNetwork::heap_down(std::size_t at) {
  const std::int32_t slot = heap_[at];
  const std::size_t n = heap_.size();
  while (true) {
    std::size_t child = 2 * at + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], slot)) break;
    heap_place(at, heap_[child]);
    at = child;
  }
  heap_place(at, slot);
}

void FlowNetwork::heap_update(std::int32_t slot) {
  Flow& f = flows_[static_cast<std::size_t>(slot)];
  if (f.heap_pos < 0) {
    heap_.push_back(slot);
    heap_up(heap_.size() - 1);
    return;
  }
  const auto at = static_cast<std::size_t>(f.heap_pos);
  heap_up(at);
  heap_down(static_cast<std::size_t>(f.heap_pos));
}

void FlowNetwork::heap_erase(std::int32_t slot) {
  Flow& f = flows_[static_cast<std::size_t>(slot)];
  if (f.heap_pos < 0) return;
  const auto at = static_cast<std::size_t>(f.heap_pos);
  f.heap_pos = -1;
  const std::int32_t last = heap_.back();
  heap_.pop_back();
  if (last == slot) return;
  heap_place(at, last);
  heap_up(at);
  heap_down(static_cast<std::size_t>(flows_[static_cast<std::size_t>(last)].heap_pos));
}

}  // namespace burst::sim
