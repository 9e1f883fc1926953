#include "simulator/detail/engine/flow_network.hpp"

#include <algorithm>
#include <limits>

namespace burst::sim {

FlowNetwork::FlowNetwork(const Routes& routes, bool record_links)
    : routes_(routes),
      record_links_(record_links),
      stride_(static_cast<std::size_t>(std::max(1, routes.max_shared_per_route()))) {
  const auto links = static_cast<std::size_t>(routes.link_count());
  links_.resize(links);
  link_rate_.assign(links, 0.0);
  link_active_.assign(links, 0);
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
  }
  Flow& f = flows_[static_cast<std::size_t>(slot)];
  f.task = task;
  f.route = route;
  f.remaining = bytes;
  f.rate = 0;
  f.since = now;
  f.active = true;
  const Route& r = routes_.route(route);
  if (record_links_) {
    for (const topo::LinkId l : routes_.links(r)) ++link_active_[static_cast<std::size_t>(l)];
  }
  std::int32_t index = 0;
  for (const topo::LinkId l : routes_.shared_links(r)) {
    auto& list = links_[static_cast<std::size_t>(l)].flows;
    position(slot, index) = static_cast<std::int32_t>(list.size());
    list.push_back({slot, index});
    ++index;
  }
  seed_flows_.push_back(slot);
}

void FlowNetwork::remove(std::int32_t slot) {
  Flow& f = flows_[static_cast<std::size_t>(slot)];
  const Route& r = routes_.route(f.route);
  if (record_links_) {
    set_rate(slot, 0.0, f.since);  // takes its rate off its links' totals
    for (const topo::LinkId l : routes_.links(r)) --link_active_[static_cast<std::size_t>(l)];
  }
  std::int32_t index = 0;
  for (const topo::LinkId l : routes_.shared_links(r)) {
    auto& list = links_[static_cast<std::size_t>(l)].flows;
    const std::int32_t at = position(slot, index);
    const LinkEntry moved = list.back();
    list[static_cast<std::size_t>(at)] = moved;
    position(moved.slot, moved.index) = at;
    list.pop_back();
    if (!list.empty()) seed_links_.push_back(l);
    ++index;
  }
  finish_.erase(slot);
  f.active = false;
  free_slots_.push_back(slot);
}

// BFS from one seed through Shared links to every active flow that can feel the change.
// Marks persist for the whole reshare (one epoch), so each component is solved once.
bool FlowNetwork::collect_component(std::int32_t seed_flow, topo::LinkId seed_link) {
  component_flows_.clear();
  component_links_.clear();
  auto visit_link = [&](topo::LinkId l) {
    Link& link = links_[static_cast<std::size_t>(l)];
    if (link.mark == epoch_) return;
    link.mark = epoch_;
    component_links_.push_back(l);
  };
  auto visit_flow = [&](std::int32_t slot) {
    Flow& f = flows_[static_cast<std::size_t>(slot)];
    if (!f.active || f.mark == epoch_) return;
    f.mark = epoch_;
    component_flows_.push_back(slot);
    for (const topo::LinkId l : routes_.shared_links(routes_.route(f.route))) visit_link(l);
  };
  if (seed_flow >= 0) visit_flow(seed_flow);
  if (seed_link >= 0) visit_link(seed_link);
  for (std::size_t i = 0; i < component_links_.size(); ++i) {
    links_[static_cast<std::size_t>(component_links_[i])].flows.for_each(
        [&](const LinkEntry& e) { visit_flow(e.slot); });
  }
  return !component_flows_.empty();
}

bool FlowNetwork::alone(std::int32_t slot) const {
  const Flow& f = flows_[static_cast<std::size_t>(slot)];
  if (!f.active || f.mark == epoch_ || f.rate != 0) return false;
  for (const topo::LinkId l : routes_.shared_links(routes_.route(f.route))) {
    if (links_[static_cast<std::size_t>(l)].flows.size() != 1) return false;
  }
  return true;
}

void FlowNetwork::freeze(std::int32_t slot, double rate) {
  Flow& f = flows_[static_cast<std::size_t>(slot)];
  f.frozen = epoch_;
  f.new_rate = rate;
  --unfrozen_;
  for (const topo::LinkId l : routes_.shared_links(routes_.route(f.route))) {
    Link& link = links_[static_cast<std::size_t>(l)];
    link.remaining = std::max(0.0, link.remaining - rate);
    --link.unfrozen;
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
    Link& link = links_[static_cast<std::size_t>(l)];
    link.remaining = routes_.capacity(l);
    link.unfrozen = static_cast<std::int32_t>(link.flows.size());
    if (link.unfrozen > 0) open_links_.push_back(l);
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
    while (next_bounded < bounded_.size() &&
           flows_[static_cast<std::size_t>(bounded_[next_bounded])].frozen == epoch_) {
      ++next_bounded;
    }
    double share = inf;
    std::size_t kept = 0;
    for (const topo::LinkId l : open_links_) {  // compacts open_links_ to links with unfrozen flows
      const Link& link = links_[static_cast<std::size_t>(l)];
      if (link.unfrozen <= 0) continue;
      open_links_[kept++] = l;
      share = std::min(share, link.remaining / link.unfrozen);
    }
    open_links_.resize(kept);
    if (next_bounded < bounded_.size() && cap(bounded_[next_bounded]) <= share) {
      freeze(bounded_[next_bounded], cap(bounded_[next_bounded]));
      continue;
    }
    if (open_links_.empty()) break;  // unreachable: every flow has a Shared link or a FatPipe cap
    for (const topo::LinkId l : open_links_) {
      const Link& link = links_[static_cast<std::size_t>(l)];
      if (link.unfrozen <= 0 || link.remaining / link.unfrozen > share * tie) continue;
      link.flows.for_each([&](const LinkEntry& e) {
        if (flows_[static_cast<std::size_t>(e.slot)].frozen != epoch_) freeze(e.slot, share);
      });
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
  if (!record_links_) return;
  for (const topo::LinkId l : routes_.links(routes_.route(f.route))) {
    const auto li = static_cast<std::size_t>(l);
    link_rate_[li] += delta;
    if (!dirty_[li]) {
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
        Flow& f = flows_[static_cast<std::size_t>(slot)];
        f.mark = epoch_;
        f.new_rate = routes_.route(f.route).bottleneck_Bps;
        component_flows_.assign(1, slot);
        apply(now);
      } else if (collect_component(slot, -1)) {
        solve();
        apply(now);
      }
    }
    for (const topo::LinkId link : seed_links_) {
      if (!collect_component(-1, link)) continue;
      if (component_flows_.size() == 1) {  // left alone: what solve() gives one flow, its bottleneck
        Flow& f = flows_[static_cast<std::size_t>(component_flows_.front())];
        f.new_rate = routes_.route(f.route).bottleneck_Bps;
      } else {
        solve();
      }
      apply(now);
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
    const double r = f.new_rate;
    if (r == f.rate) continue;
    set_rate(slot, r, now);
    finish_.set(slot, f.task, now + f.remaining / r);
  }
}

double FlowNetwork::next_finish() const { return finish_.min_finish(); }

TaskId FlowNetwork::pop_finished(double now) {
  const std::int32_t slot = finish_.pop(now);
  if (slot < 0) return -1;
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

}  // namespace burst::sim
