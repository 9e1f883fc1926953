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
//  - finish times live in a FinishQueue (finish_queue.hpp), one entry per flow, updated in
//    place when a rate changes: a component of F flows where every completion re-rates the
//    others costs O(F log F) per completion and O(F) memory, not a queue growing by F stale
//    events each time. It groups flows by finish time, so the thousand flows of a ring step
//    that end together cost one heap operation, not a thousand;
//  - a flow that leaves a link alone on it re-seeds nothing there: only links that still carry
//    flows can change anyone's rate;
//  - per-link totals (rate, active flows) exist only for link samples and are kept only with
//    record_links;
//  - all buffers are kept between events, so the steady state does not allocate.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "simulator/engine/engine.hpp"
#include "simulator/detail/engine/finish_queue.hpp"
#include "simulator/detail/engine/routes.hpp"

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
  // Per-flow and per-link state each sit in one record (the search, the solve and the
  // bookkeeping all touch them together), so an operation costs one cache line per flow or
  // link it visits rather than one per array.
  struct Flow {
    TaskId task = -1;
    std::int32_t route = 0;
    std::uint32_t mark = 0;    // epoch of the reshare whose component search reached it
    std::uint32_t frozen = 0;  // epoch of the solve that froze its rate
    double remaining = 0;      // bytes left at time `since`
    double rate = 0;
    double since = 0;
    double new_rate = 0;  // its rate as solved, before apply()
    bool active = false;
  };
  struct LinkEntry {
    std::int32_t slot;
    std::int32_t index;  // position of the link in the flow's shared_links()
  };
  // A vector whose first two entries live in the object itself: most links carry one or two
  // flows, so visiting one costs the link's own cache line and no second one.
  class FlowList {
   public:
    [[nodiscard]] std::size_t size() const { return size_; }
    [[nodiscard]] bool empty() const { return size_ == 0; }
    [[nodiscard]] LinkEntry& operator[](std::size_t i) { return i < kInline ? inline_[i] : more_[i - kInline]; }
    [[nodiscard]] const LinkEntry& operator[](std::size_t i) const {
      return i < kInline ? inline_[i] : more_[i - kInline];
    }
    [[nodiscard]] const LinkEntry& back() const { return (*this)[size_ - 1]; }
    // Calls f on every entry, in order (a loop per part: long lists pay no branch per entry).
    template <class F>
    void for_each(F&& f) const {
      const std::size_t head = size_ < kInline ? size_ : kInline;
      for (std::size_t i = 0; i < head; ++i) f(inline_[i]);
      for (const LinkEntry& entry : more_) f(entry);
    }
    void push_back(const LinkEntry& entry) {
      if (size_ < kInline) {
        inline_[size_] = entry;
      } else {
        more_.push_back(entry);
      }
      ++size_;
    }
    void pop_back() {
      --size_;
      if (size_ >= kInline) more_.pop_back();
    }

   private:
    static constexpr std::size_t kInline = 2;
    std::uint32_t size_ = 0;
    std::array<LinkEntry, kInline> inline_{};
    std::vector<LinkEntry> more_;
  };
  struct alignas(64) Link {
    FlowList flows;             // Shared links: the active flows on it
    std::uint32_t mark = 0;     // epoch of the reshare whose component search reached it
    std::int32_t unfrozen = 0;  // in a solve: flows on it not yet frozen
    double remaining = 0;       // in a solve: capacity not yet given to frozen flows
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

  const Routes& routes_;
  bool record_links_;
  std::size_t stride_;
  std::vector<Flow> flows_;
  std::vector<std::int32_t> free_slots_;
  FinishQueue finish_;                     // active flows by (since + remaining / rate, task)
  std::vector<std::int32_t> positions_;    // slot x stride: index in links_[link].flows
  std::vector<Link> links_;                // per LinkId
  std::vector<double> link_rate_;          // per link: sum of active flow rates (record_links)
  std::vector<std::int32_t> link_active_;  // per link: active flows on it (record_links)
  // Scratch for one reshare, reused.
  std::vector<std::int32_t> seed_flows_;
  std::vector<topo::LinkId> seed_links_;
  std::vector<std::int32_t> component_flows_;
  std::vector<topo::LinkId> component_links_;
  std::vector<std::int32_t> bounded_;     // component flows with a FatPipe cap, by cap
  std::vector<topo::LinkId> open_links_;  // component links with unfrozen flows
  std::uint32_t epoch_ = 0;
  std::int32_t unfrozen_ = 0;
  std::vector<topo::LinkId> dirty_links_;
  std::vector<std::uint8_t> dirty_;
  std::vector<double> recorded_;  // per link: last sampled rate
};

}  // namespace burst::sim
